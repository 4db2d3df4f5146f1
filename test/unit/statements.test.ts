/** The statement builder and catalogue (`sql/Statements.ts`), without a database. */
import { Option } from "effect"
import { describe, expect, it } from "vitest"
import type { PutCall, WritesCall } from "../../src/internal/sql/Calls.ts"
import * as Statements from "../../src/internal/sql/Statements.ts"
import { SPELLED } from "../../src/internal/sql/statements/Rows.ts"
import * as Tables from "../../src/internal/sql/Tables.ts"
import { tupleRow } from "../support/rows.ts"

describe("statement", () => {
  const select = Statements.statement({
    params: (input: { readonly a: number; readonly b: string }) => ({ b: input.b, a: input.a, unused: true }),
    text: (param) => `SELECT ${param.b}, ${param.a} WHERE x = ${param.b}`
  })

  it("numbers each parameter where the text first names it, and reuses its number", () => {
    expect(select.text).toBe("SELECT $1, $2 WHERE x = $1")
  })

  it("gives the values in the order of their numbers, leaving out what the text never names", () => {
    expect(select.params({ a: 1, b: "two" })).toEqual(["two", 1])
  })

  it("without a decoder, the rows mean nothing", () => {
    expect(select.decode([], { a: 1, b: "" })).toBeUndefined()
  })

  it("numbers a value taken by position where the text names it, each time anew, among the named ones", () => {
    const mixed = Statements.statement({
      params: (input: { readonly a: number }) => ({ a: input.a }),
      text: (param, value) =>
        `SELECT ${value(({ a }) => a + 1)}, ${param.a}, ${value((_, input) => input.a * 10)}, ${param.a}`
    })
    expect(mixed.text).toBe("SELECT $1, $2, $3, $2")
    expect(mixed.params({ a: 1 })).toEqual([2, 1, 10])
  })
})

describe("the catalogue", () => {
  const t = Tables.make("s")
  const catalogue = Statements.statements(t)

  /** A lone put of `n` blobs, required bases and pieces; a lone task's `n` writes and pieces. */
  const putCall = (n: number): PutCall => ({
    row: {
      thread_id: "t",
      checkpoint_ns: "",
      checkpoint_id: "c",
      parent_checkpoint_id: undefined,
      checkpoint: { v: 4, ts: "", channel_versions: {}, versions_seen: {} },
      metadata: "{}"
    },
    blobs: Array.from(
      { length: n },
      (_, i) => ({ channel: `c${i}`, version: "1", type: "json", bytes: new Uint8Array() })
    ),
    shared: {
      requires: Array.from({ length: n }, (_, i) => ({ channel: `c${i}`, version: "0" })),
      pieces: Array.from({ length: n }, () => ({ hash: new Uint8Array(16), bytes: new Uint8Array(1) }))
    }
  })
  const writesCall = (n: number): WritesCall => ({
    checkpoint: { thread_id: "t", checkpoint_ns: "", checkpoint_id: "c" },
    writes: Array.from({ length: Math.max(n, 1) }, (_, idx) => ({
      task_id: "k",
      task_path: "",
      idx,
      channel: "c",
      type: "json",
      bytes: new Uint8Array()
    })),
    pieces: Array.from({ length: n }, () => ({ hash: new Uint8Array(16), bytes: new Uint8Array(1) }))
  })
  const shapes = [0, 1, SPELLED, SPELLED + 1]
  /** Each write statement: a batch's, and a lone call's of each shape. */
  const writeStatements = (catalogue: Statements.Statements) =>
    [
      ["put", catalogue.put([putCall(1)])],
      ["putWrites", catalogue.putWrites([writesCall(1)])],
      ["put fenced", catalogue.put([putCall(1), { ...putCall(1), epoch: 1 }])],
      ["putWrites fenced", catalogue.putWrites([writesCall(1), { ...writesCall(1), epoch: 1 }])],
      ...shapes.flatMap((n) => [
        [`putOne of ${n}`, catalogue.putOne(putCall(n))] as const,
        [`putWritesOne of ${n}`, catalogue.putWritesOne(writesCall(n))] as const,
        [`putOne of ${n} fenced`, catalogue.putOne({ ...putCall(n), epoch: 2 })] as const,
        [`putWritesOne of ${n} fenced`, catalogue.putWritesOne({ ...writesCall(n), epoch: 2 })] as const
      ])
    ] as const

  it("every statement numbers its parameters from $1 without gaps", () => {
    const all: Array<readonly [string, { readonly text: string }]> = [
      ...Object.entries(catalogue).flatMap(([name, entry]): Array<readonly [string, { readonly text: string }]> =>
        typeof entry === "function" ? [] : [[name, entry]]
      ),
      ...writeStatements(catalogue),
      ...[undefined, "{}"].flatMap((metadata) =>
        [undefined, "busy"].flatMap((status) =>
          [undefined, ["a"]].map((ids) =>
            [
              `search ${metadata} ${status} ${ids}`,
              catalogue.searchThreadRecords({
                metadata,
                values: metadata,
                status,
                ids,
                limit: 1,
                offset: 0,
                sort_by: "updated_at",
                sort_order: "asc"
              })
            ] as const
          )
        )
      ),
      ["runRecords", catalogue.runRecords(undefined)],
      ["runRecords of a status", catalogue.runRecords("running")]
    ]
    expect(all.length).toBeGreaterThan(Object.keys(catalogue).length)
    for (const [name, statement] of all) {
      const numbers = [...new Set([...statement.text.matchAll(/\$(\d+)/g)].map((match) => Number(match[1])))]
      expect(numbers.sort((a, b) => a - b), name).toEqual(numbers.map((_, i) => i + 1))
    }
  })

  it("a lone call spells its rows out as scalars, up to SPELLED of a kind; a batch, and more rows, go as arrays", () => {
    const arrays = (values: ReadonlyArray<unknown>) => values.filter(Array.isArray).length
    expect(arrays(catalogue.putOne(putCall(SPELLED)).params([putCall(SPELLED)]))).toBe(0)
    expect(arrays(catalogue.putWritesOne(writesCall(SPELLED)).params([writesCall(SPELLED)]))).toBe(0)
    // Blobs, required bases and pieces as arrays; the put itself still spelled.
    expect(arrays(catalogue.putOne(putCall(SPELLED + 1)).params([putCall(SPELLED + 1)]))).toBe(7 + 3 + 3)
    const batch = catalogue.put([putCall(1), putCall(2)])
    expect(arrays(batch.params([putCall(1), putCall(2)]))).toBe(batch.params([]).length)
    // One statement per shape, built once.
    expect(catalogue.putOne(putCall(2))).toBe(catalogue.putOne(putCall(2)))
  })

  it("the writes lock the rows they rely on, but not on PGlite, one session nothing runs beside", () => {
    const locks = /\bFOR (NO KEY UPDATE|UPDATE|SHARE|KEY SHARE)\b/g
    const unlocked = writeStatements(Statements.statements(t, "pglite"))
    for (const [i, [name, statement]] of writeStatements(catalogue).entries()) {
      expect(statement.text.match(locks)?.length, name).toBeGreaterThan(0)
      expect(unlocked[i]![1].text.match(locks), name).toBeNull()
      // The same parameters, numbered alike: one driver passes them whatever the dialect.
      const numbers = (text: string) => [...new Set(text.match(/\$\d+/g))].sort()
      expect(numbers(unlocked[i]![1].text), name).toEqual(numbers(statement.text))
    }
  })

  it("deleteThread empties every table of the thread in one statement", () => {
    const { text, params } = catalogue.deleteThread
    for (const table of [t.writes, t.blobs, t.pieces, t.checkpoints, t.threads]) {
      expect(text).toContain(`DELETE FROM ${table} WHERE thread_id = $1`)
    }
    expect(params({ thread_id: "t" })).toEqual(["t"])
  })

  it("a list over every thread does not name one; a list of a thread does", () => {
    expect(catalogue.listAll.text).toContain("$1::text IS NULL")
    expect(catalogue.listThread.text).toContain("cp.thread_id = $1")
  })

  it("a list's metadata filter goes as one jsonb object, absent selections as null", () => {
    const params = catalogue.listAll.params({
      selection: {
        thread_id: undefined,
        checkpoint_ns: undefined,
        checkpoint_id: undefined,
        before: undefined,
        limit: undefined,
        filter: [["source", "\"loop\""], ["step", "1"]]
      },
      after: undefined,
      limit: 10
    })
    expect(params).toContain("{\"source\":\"loop\",\"step\":1}")
    expect(params).toContain(10)
    expect(params.filter((value) => value === null)).toHaveLength(7)
  })

  it("a tuple read of no rows is no checkpoint", () => {
    const input = { thread_id: "t", checkpoint_ns: "", checkpoint_id: undefined, known: new Uint8Array() }
    expect(catalogue.getLatest.decode([], input)).toEqual(Option.none())
    expect(catalogue.getLatest.text).toContain("ORDER BY checkpoint_id DESC LIMIT 1")
    expect(catalogue.getTuple.text).not.toContain("ORDER BY checkpoint_id DESC LIMIT 1")
  })

  it("an ancestors walk whose last row looped ends before it and says where", () => {
    const row = (checkpoint_id: string, looped: boolean) => tupleRow(checkpoint_id, { looped })
    const input = {
      thread_id: "t",
      checkpoint_ns: "",
      checkpoint_id: "3",
      channels: ["a"],
      known: { blobs: [], pieces: new Uint8Array() }
    }
    const looped = catalogue.ancestorsOf.decode([row("2", false), row("1", false), row("3", true)], input)
    expect(looped.loopsAt).toBe("3")
    expect(looped.chain.map((stored) => stored.row.checkpoint_id)).toEqual(["2", "1"])
    const plain = catalogue.ancestorsOf.decode([row("2", false)], input)
    expect(plain).toMatchObject({ loopsAt: undefined, chain: [{ row: { checkpoint_id: "2" } }] })
  })
})
