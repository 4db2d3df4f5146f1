/**
 * Export and import of whole threads: a real graph's thread (turns, a fork,
 * an interrupt in a subgraph, DeltaValue channels) exported from PostgreSQL
 * as lines, decoded and imported into PGlite reads back identically and runs
 * on; the same with encryption on both sides; memory to memory; existing
 * threads; and files that are not exports.
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages"
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph"
import { Effect, Layer, ManagedRuntime, Stream } from "effect"
import { describe, expect, it } from "vitest"
import {
  CheckpointError,
  CheckpointStorage,
  EffectCheckpointSaver,
  Encryption,
  ExportFormat,
  type StorageDriver
} from "../../src/index.ts"
import * as StorageFormat from "../../src/internal/StorageFormat.ts"
import * as Pglite from "../../src/pglite.ts"
import { canonical } from "../../src/testing/index.ts"
import { keyOf } from "../scenarios/encryption.ts"
import { build, populate, snapshot } from "../scenarios/lifecycle.ts"
import { drivers } from "../support/drivers.ts"

// The file's stores: PostgreSQL, PGlite and memory. A test that needs a second store of a kind (an empty
// target beside a source, a reader without the keys) opens its own.
const d = drivers("export")

type Storage = CheckpointStorage.CheckpointStorage["Service"]

/** A storage kept open for the test, with a saver over it. */
const open = async (layer: Layer.Layer<CheckpointStorage.CheckpointStorage, unknown>) => {
  const runtime = ManagedRuntime.make(layer)
  const context = await runtime.context()
  const saver = EffectCheckpointSaver.fromLayer(Layer.succeedContext(context))
  const run = <A, E>(f: (storage: Storage) => Effect.Effect<A, E>) =>
    runtime.runPromise(CheckpointStorage.CheckpointStorage.use(f))
  return { saver, run, close: () => Promise.all([saver.close(), runtime.dispose()]) }
}
type Opened = Awaited<ReturnType<typeof open>>

const exportLines = (from: Opened, threads: ReadonlyArray<string>) =>
  from.run((storage) =>
    Stream.runCollect(
      ExportFormat.encode(Stream.fromIterable(threads).pipe(Stream.mapEffect(storage.exportThread)))
    )
  )

const importLines = (into: Opened, lines: ReadonlyArray<string>, options: { readonly replace?: boolean } = {}) =>
  into.run((storage) =>
    ExportFormat.decode(Stream.fromIterable(lines)).pipe(
      Stream.runForEach((rows) => storage.importThread(rows, options))
    )
  )

const changeFirst = <A>(rows: ReadonlyArray<A>, change: Partial<A>) =>
  rows.map((row, index) => index === 0 ? { ...row, ...change } : row)

const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error)

/** What `getTuple` answers for every checkpoint of a thread, and for each namespace's latest. */
const tuples = async (saver: EffectCheckpointSaver, thread_id: string) => {
  const answers: Array<string> = []
  const namespaces = new Set<string>()
  for await (const listed of saver.list({ configurable: { thread_id } })) {
    answers.push(canonical(await saver.getTuple(listed.config)))
    namespaces.add(String(listed.config.configurable?.checkpoint_ns))
  }
  for (const checkpoint_ns of namespaces) {
    answers.push(canonical(await saver.getTuple({ configurable: { thread_id, checkpoint_ns } })))
  }
  return answers
}

/** The rows of an export, without its header: equal for equal stored rows, in any order. */
const rowsOf = (lines: ReadonlyArray<string>) => lines.slice(1).toSorted()

/** Long enough for structural sharing to store each message as a piece. */
const filler = " and some more words, so that the message is stored as a piece of its own".repeat(3)

/** A chat whose messages are stored as shared lists of pieces. */
const chat = async (saver: EffectCheckpointSaver, thread_id: string) => {
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("model", (state) => ({ messages: [new AIMessage(`reply ${state.messages.length}${filler}`)] }))
    .addEdge(START, "model")
    .addEdge("model", END)
    .compile({ checkpointer: saver })
  for (let turn = 0; turn < 3; turn++) {
    await graph.invoke({ messages: [new HumanMessage(`turn ${turn}${filler}`)] }, { configurable: { thread_id } })
  }
}

/**
 * Exports two threads of `from` in one file (a graph's, with a fork, a
 * subgraph's interrupt and DeltaValue channels; a chat's, with shared lists),
 * imports them into `into`: every tuple, its delta history and `getTuple`
 * read back as in the source, the rows are the same bytes, and the graph
 * runs on from both alike.
 */
const roundTrip = async (from: Opened, into: Opened, thread_id: string) => {
  const graph = await populate(from.saver, thread_id)
  const chatted = `${thread_id}-chat`
  await chat(from.saver, chatted)
  const before = await snapshot(from.saver, thread_id)
  expect([...before.keys()].some((place) => place.includes("review:"))).toBe(true)
  const lines = await exportLines(from, [thread_id, chatted])

  await importLines(into, lines)
  for (const id of [thread_id, chatted]) {
    expect(await snapshot(into.saver, id)).toEqual(await snapshot(from.saver, id))
    expect(await tuples(into.saver, id)).toEqual(await tuples(from.saver, id))
  }
  expect(rowsOf(await exportLines(into, [thread_id, chatted]))).toEqual(rowsOf(lines))

  const next = { messages: [new HumanMessage("after the import")] }
  const config = { configurable: { thread_id } }
  const fromSource = await graph.invoke(next, config)
  const fromImport = await build(into.saver).invoke(next, config)
  expect(canonical(fromImport.log)).toBe(canonical(fromSource.log))
  expect(fromImport.messages.map((m) => String(m.content))).toEqual(fromSource.messages.map((m) => String(m.content)))
  return lines
}

describe("export and import", () => {
  let run = 0
  const thread = (label: string) => `${label}-${process.pid}-${++run}`

  it("a PostgreSQL thread imported into PGlite reads back identically; the graph runs on", async () => {
    const source = await open(d.postgres.layer())
    const target = await open(d.pglite.layer())
    try {
      const id = thread("moved")
      const lines = await roundTrip(source, target, id)
      const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
      expect(lines.every((line) => line.endsWith("\n"))).toBe(true)
      expect(records[0]).toMatchObject({ format: "langgraph-checkpoints", version: 1 })
      expect(Date.parse(String(records[0]!.exported_at))).not.toBeNaN()
      expect(records[1]).toMatchObject({ kind: "thread", thread_id: id })
      expect(records.filter((record) => record.kind === "thread").map((record) => record.thread_id)).toEqual([
        id,
        `${id}-chat`
      ])
      expect(new Set(records.slice(1).map((record) => record.kind))).toEqual(
        new Set(["thread", "checkpoint", "blob", "write", "piece"])
      )

      // An existing thread is refused, and left as it was; with replace, it is replaced.
      const imported = await snapshot(target.saver, id)
      const exists = await failure(importLines(target, lines))
      expect(exists).toBeInstanceOf(CheckpointError.ThreadExists)
      expect((exists as Error).message).toContain(id)
      expect(await snapshot(target.saver, id)).toEqual(imported)
      const moved = await exportLines(source, [id])
      await importLines(target, moved, { replace: true })
      expect(await snapshot(target.saver, id)).toEqual(await snapshot(source.saver, id))
      expect(rowsOf(await exportLines(target, [id]))).toEqual(rowsOf(moved))
    } finally {
      await source.close()
      await target.close()
    }
  }, 120_000)

  it("memory to memory, several threads in one file", async () => {
    const source = await open(d.memory.layer())
    const target = await open(CheckpointStorage.layerMemory)
    try {
      const ids = [thread("first"), thread("second")]
      for (const id of ids) await populate(source.saver, id)
      const lines = await exportLines(source, ids)
      // As a file read back: one text, split into lines.
      const decoded = await target.run(() =>
        Stream.runCollect(ExportFormat.decode(Stream.make(lines.join("")).pipe(Stream.splitLines)))
      )
      expect(decoded.map((rows) => rows.thread_id)).toEqual(ids)
      await importLines(target, lines)
      for (const id of ids) expect(await snapshot(target.saver, id)).toEqual(await snapshot(source.saver, id))
      expect(rowsOf(await exportLines(target, ids))).toEqual(rowsOf(lines))

      expect(await failure(target.run((storage) => storage.exportThread(thread("nobody"))))).toBeInstanceOf(
        CheckpointError.ThreadNotFound
      )
      expect(await failure(target.run((storage) => storage.exportThread("")))).toBeInstanceOf(
        CheckpointError.InvalidInput
      )
    } finally {
      await source.close()
      await target.close()
    }
  }, 60_000)

  it("encrypted on both sides with the same keys: the rows stay sealed and read back", async () => {
    const encryption = Encryption.layer({ keys: { k1: keyOf(1) }, primary: "k1" })
    const source = await open(
      d.postgres.layer().pipe(Layer.provide(encryption))
    )
    const target = await open(d.pglite.layer().pipe(Layer.provide(encryption)))
    const plain = await open(Pglite.layer())
    try {
      const id = thread("sealed")
      const lines = await roundTrip(source, target, id)
      const records = lines.slice(1).map((line) => JSON.parse(line) as Record<string, unknown>)
      const values = records.filter((record) => (record.kind === "blob" || record.kind === "write") && record.bytes)
      expect(values.length).toBeGreaterThan(0)
      expect(values.every((record) => String(record.type).endsWith("+sealed"))).toBe(true)
      expect(records.some((record) => record.kind === "piece")).toBe(true)
      // Graph inputs are framed lists: they move, and stay sealed, as lists do.
      expect(values.some((record) => record.type === `${StorageFormat.FRAMED}${StorageFormat.SEALED_SUFFIX}`)).toBe(
        true
      )
      // Without the keys, the imported rows do not open.
      await importLines(plain, lines)
      expect(await failure(plain.saver.getTuple({ configurable: { thread_id: id } }))).toBeInstanceOf(
        CheckpointError.CorruptedCheckpoint
      )
    } finally {
      await source.close()
      await target.close()
      await plain.close()
    }
  }, 120_000)

  describe("files that are not exports are InvalidInput naming the line", () => {
    const header = JSON.stringify({
      format: "langgraph-checkpoints",
      version: 1,
      exported_at: new Date().toISOString()
    })
    const threadLine = JSON.stringify({ kind: "thread", thread_id: "t", last_activity: new Date().toISOString() })
    const piece = JSON.stringify({ kind: "piece", hash: "AAAA", bytes: "AAAA" })
    const checkpointLine = (checkpoint_id: string, parent?: string) =>
      JSON.stringify({
        kind: "checkpoint",
        checkpoint_ns: "",
        checkpoint_id,
        parent_checkpoint_id: parent,
        checkpoint: {
          v: 4,
          id: checkpoint_id,
          ts: "2025-01-01T00:00:00.000Z",
          channel_versions: {},
          versions_seen: {}
        },
        metadata: "{}"
      })
    const deepBytes = Buffer.from(`${"[".repeat(20_000)}${"]".repeat(20_000)}`)
    const deep = deepBytes.toString("base64")
    const genuine = Buffer.from(JSON.stringify({ content: "the system prompt" }))
    const forged = Buffer.from(JSON.stringify({ content: "ATTACKER PROMPT" }))
    const pieceLine = (key: string, bytes: Uint8Array) =>
      JSON.stringify({
        kind: "piece",
        hash: Buffer.from(key, "latin1").toString("base64"),
        bytes: Buffer.from(bytes).toString("base64")
      })
    const decoding = (lines: ReadonlyArray<string>) =>
      failure(Effect.runPromise(Stream.runCollect(ExportFormat.decode(Stream.fromIterable(lines)))))
    const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, string, RegExp]> = [
      ["no header", [threadLine, piece], "line 1", /not a langgraph-checkpoints export/],
      ["an empty file", [], "line 1", /empty/],
      ["another format", [JSON.stringify({ format: "csv", version: 1, exported_at: "" })], "line 1", /header/],
      [
        "a newer version",
        [JSON.stringify({ format: "langgraph-checkpoints", version: 2, exported_at: "" }), threadLine],
        "line 1",
        /made by a newer version/
      ],
      ["a line that is not JSON", [header, threadLine, "{garbage"], "line 3", /JSON/],
      ["a row of an unknown kind", [header, threadLine, `{"kind":"table"}`], "line 3", /kind "thread"/],
      [
        "a malformed row",
        [header, threadLine, JSON.stringify({ kind: "piece", hash: "not base64!", bytes: "AAAA" })],
        "line 3",
        /hash/
      ],
      ["a row before any thread line", [header, "", piece, threadLine], "line 3", /piece row before any thread line/],
      [
        "parent links that loop",
        [header, threadLine, checkpointLine("c0"), checkpointLine("c1", "c2"), checkpointLine("c2", "c1")],
        "line 4",
        /checkpoint c1: its parent chain loops \(c1 → c2 → c1\)/
      ],
      [
        "a checkpoint its own parent",
        [header, threadLine, checkpointLine("c1", "c1")],
        "line 3",
        /its parent chain loops \(c1 → c1\)/
      ],
      [
        "a parent the file does not hold",
        [header, threadLine, checkpointLine("c1"), checkpointLine("c2", "c0")],
        "line 4",
        /checkpoint c2 has parent c0, which is not among the thread's checkpoints/
      ],
      [
        "a value nested deeper than put accepts",
        [
          header,
          threadLine,
          checkpointLine("c1"),
          JSON.stringify({ kind: "blob", checkpoint_ns: "", channel: "a", version: "1", type: "json", bytes: deep })
        ],
        "line 4",
        /the value of channel "a" at version 1 nests deeper than 500 levels/
      ],
      ["a thread without checkpoints", [header, threadLine], "line 2", /at least one checkpoint/],
      [
        "a piece under the hash of another text",
        [header, threadLine, checkpointLine("c1"), pieceLine(StorageFormat.hashOf(genuine), forged)],
        "line 4",
        /the piece stored as [0-9a-f]{32} is not what that hash stands for/
      ],
      [
        "a piece nested deeper than put accepts, under its own hash",
        [header, threadLine, checkpointLine("c1"), pieceLine(StorageFormat.hashOf(deepBytes), deepBytes)],
        "line 4",
        /an element of a shared list nests deeper than 499 levels/
      ],
      [
        "a piece nested deeper than put accepts, under a made-up hash",
        [header, threadLine, checkpointLine("c1"), pieceLine("made-up hash 16b", deepBytes)],
        "line 4",
        /is not what that hash stands for/
      ]
    ]
    for (const [name, lines, line, detail] of cases) {
      it(name, async () => {
        const error = await decoding(lines)
        expect(error).toBeInstanceOf(CheckpointError.InvalidInput)
        const { argument, message } = error as CheckpointError.InvalidInput
        expect(argument).toBe(line)
        expect(message).toMatch(detail)
        expect(message).not.toContain("\n")
      })
    }

    it("__proto__ keys stay plain data", async () => {
      const hostile = [
        header,
        `{"kind":"thread","thread_id":"t","last_activity":"2025-01-01T00:00:00.000Z","__proto__":{"polluted":1}}`,
        `{"kind":"checkpoint","checkpoint_ns":"","checkpoint_id":"c1","__proto__":{"polluted":2},` +
        `"checkpoint":{"v":4,"id":"c1","ts":"2025-01-01T00:00:00.000Z","channel_versions":{},"versions_seen":{},` +
        `"__proto__":{"polluted":3}},"metadata":"{\\"__proto__\\":{\\"polluted\\":4},\\"step\\":0}"}`
      ]
      const [rows] = await Effect.runPromise(Stream.runCollect(ExportFormat.decode(Stream.fromIterable(hostile))))
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
      expect(Object.getPrototypeOf(rows)).toBe(Object.prototype)
      expect(Object.getPrototypeOf(rows!.checkpoints[0]!.checkpoint)).toBe(Object.prototype)
      const memory = await open(d.memory.layer())
      try {
        await memory.run((storage) => storage.importThread(rows!))
        const tuple = await memory.saver.getTuple({ configurable: { thread_id: "t" } })
        expect(tuple?.checkpoint.id).toBe("c1")
        expect(({} as Record<string, unknown>).polluted).toBeUndefined()
      } finally {
        await memory.close()
      }
    })
  })

  it("importThread refuses rows that are not a thread, naming what is wrong", async () => {
    const memory = await open(d.memory.layer())
    try {
      const id = thread("checked")
      await populate(memory.saver, id)
      const rows = await memory.run((storage) => storage.exportThread(id))
      const other = thread("elsewhere")
      const bad: ReadonlyArray<readonly [StorageDriver.ThreadRows, RegExp]> = [
        [{ ...rows, thread_id: "" }, /thread_id/],
        [{ ...rows, thread_id: other, checkpoints: [] }, /at least one checkpoint/],
        [{ ...rows, thread_id: other }, /is of thread/],
        [{ ...rows, blobs: [{ ...rows.blobs[0]!, checkpoint_ns: "nowhere" }] }, /namespace "nowhere"/],
        [{ ...rows, checkpoints: [...rows.checkpoints, rows.checkpoints[0]!] }, /given twice/],
        [{ ...rows, checkpoints: changeFirst(rows.checkpoints, { metadata: "{" }) }, /metadata/],
        [{ ...rows, checkpoints: changeFirst(rows.checkpoints, { checkpoint: { v: "4" } as never }) }, /\["v"\]/],
        [
          { ...rows, pieces: changeFirst(rows.pieces, { bytes: Buffer.from(JSON.stringify("another text")) }) },
          /is not what that hash stands for/
        ]
      ]
      expect(rows.pieces.length).toBeGreaterThan(0)
      const before = await snapshot(memory.saver, id)
      for (const [wrong, detail] of bad) {
        const error = await failure(memory.run((storage) => storage.importThread(wrong, { replace: true })))
        expect(error).toBeInstanceOf(CheckpointError.InvalidInput)
        expect((error as Error).message).toMatch(detail)
      }
      expect(await snapshot(memory.saver, id)).toEqual(before)
      expect((await snapshot(memory.saver, other)).size).toBe(0)
    } finally {
      await memory.close()
    }
  }, 60_000)
})
