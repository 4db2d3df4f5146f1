/**
 * Thread records (LangGraph's thread API: metadata, created_at, updated_at)
 * on every driver: set and patched, kept by graphs' puts, found by metadata
 * containment in both orders of each key, paged, refused when malformed,
 * removed with the thread, read safely when stored data is hostile; on the
 * SQL drivers, the migration that holds them runs only when asked for.
 */
import { Effect, Layer } from "effect"
import type { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { admin, createDatabase, withSaverOn } from "../../harness/databases.ts"
import { stepsGraph } from "../../harness/inspectedGraph.ts"
import * as Cockroach from "../../src/cockroach.ts"
import { CheckpointError, EffectCheckpointSaver, type ThreadRecord } from "../../src/index.ts"
import * as Migrations from "../../src/internal/sql/Migrations.ts"
import * as Tables from "../../src/internal/sql/Tables.ts"
import * as Pglite from "../../src/pglite.ts"
import * as Postgres from "../../src/postgres.ts"
import { type Driver, type DriverName, drivers } from "../support/drivers.ts"

const d = drivers("threads")

type Rows = ReadonlyArray<Record<string, unknown>>

/** Raw SQL on a SQL driver's store (its schema first on the search path); undefined for memory. */
const rawSql = (name: DriverName): ((text: string, params?: Array<unknown>) => Promise<Rows>) | undefined => {
  switch (name) {
    case "memory":
      return undefined
    case "pglite":
      return async (text, params) => (await (await d.pgliteInstance()).query(text, params)).rows as Rows
    case "postgres":
      return (text, params) => admin((client) => client.query(text, params), d.databaseUrl()).then((r) => r.rows)
    case "cockroach dialect":
      return (text, params) => d.crdb.admin((client) => client.query(text, params)).then((r) => r.rows)
  }
}

/** `Migrations.check` on a SQL driver's store. */
const checkSchema = async (name: Exclude<DriverName, "memory">) => {
  const [client, tables]: [Layer.Layer<SqlClient.SqlClient, unknown>, Tables.Tables] = name === "pglite"
    ? [Pglite.layerSqlClient({ pglite: await d.pgliteInstance() }), Tables.make()]
    : name === "postgres"
    ? [Postgres.layerSqlClient({ url: d.databaseUrl(), poolSize: 1 }), Tables.make()]
    : [Cockroach.layerSqlClient({ url: d.crdb.url(), poolSize: 1 }), Tables.make(d.crdb.schema)]
  return Effect.runPromise(Effect.provide(Migrations.check(tables), Layer.orDie(client)))
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error)

/** Runs `f` with a fresh saver of the driver, closed afterwards. */
const using = async <A>(driver: Driver, f: (saver: EffectCheckpointSaver) => Promise<A>): Promise<A> => {
  const saver = driver.saver()
  try {
    return await f(saver)
  } finally {
    await saver.close()
  }
}

/** A graph run of three steps on the thread. */
const runGraph = (saver: EffectCheckpointSaver, thread_id: string) =>
  stepsGraph(saver).invoke({ steps: [] }, { configurable: { thread_id } })

const ids = (threads: ReadonlyArray<ThreadRecord>) => threads.map((thread) => thread.thread_id)

for (const driver of d.all) {
  const sql = rawSql(driver.name)
  const name = driver.name

  describe(`thread records on ${name}`, () => {
    // First in the file: the store has only been migrated the normal way.
    if (sql !== undefined && name !== "memory") {
      it("are opt-in: a normal open leaves migration 1000 out; the first record call applies it", async () => {
        const features = async () =>
          (await sql("SELECT v FROM checkpoint_migrations WHERE v >= 1000 ORDER BY v")).map((row) => Number(row.v))
        await using(driver, async (saver) => {
          await runGraph(saver, "before-records")
          expect(await features()).toEqual([])
          expect(await checkSchema(name)).toEqual({ layout: "current" })
          // A thread a graph wrote before records existed is found, with no metadata, created when they were.
          const enabling = Date.now()
          const record = await saver.getThread("before-records")
          expect(record?.metadata).toEqual({})
          expect(record!.created_at.getTime()).toBeGreaterThanOrEqual(enabling - 1000)
          expect(record!.created_at.getTime()).toBeLessThanOrEqual(Date.now() + 1000)
          expect(await features()).toEqual([1000, 1001, 1002])
          expect(await checkSchema(name)).toEqual({ layout: "current" })
          const page = await saver.searchThreads()
          expect(ids(page.threads)).toEqual(["before-records"])
          expect(page.total).toBe(1)
        })
        // A store that has them opens as before, and enabling again changes nothing.
        await using(driver, async (saver) => {
          expect((await saver.getThread("before-records"))?.metadata).toEqual({})
          expect(await features()).toEqual([1000, 1001, 1002])
        })
      }, 60_000)
    }

    it("a thread a graph wrote is found, with no metadata, created at its first put", async () => {
      await driver.clear()
      await using(driver, async (saver) => {
        const before = Date.now()
        await runGraph(saver, "graph-thread")
        const record = await saver.getThread("graph-thread")
        expect(record?.thread_id).toBe("graph-thread")
        expect(record?.metadata).toEqual({})
        expect(record!.created_at.getTime()).toBeGreaterThanOrEqual(before - 1000)
        expect(record!.updated_at.getTime()).toBeGreaterThanOrEqual(record!.created_at.getTime())
        expect(ids((await saver.searchThreads({})).threads)).toEqual(["graph-thread"])
        expect(await saver.getThread("never-written")).toBeUndefined()
      })
    })

    it("put replaces metadata, patch merges it at the top level; created_at stays, updated_at moves", async () => {
      await driver.clear()
      await using(driver, async (saver) => {
        const created = await saver.setThread("t1", { kind: "put", metadata: { a: 1, b: { c: 2 }, s: "x" } })
        expect(created.metadata).toEqual({ a: 1, b: { c: 2 }, s: "x" })
        expect(await saver.getThread("t1")).toEqual(created)
        await sleep(5)
        const patched = await saver.setThread("t1", { kind: "patch", metadata: { b: { d: 3 }, e: null } })
        expect(patched.metadata).toEqual({ a: 1, b: { d: 3 }, s: "x", e: null })
        expect(patched.created_at).toEqual(created.created_at)
        expect(patched.updated_at.getTime()).toBeGreaterThan(created.updated_at.getTime())
        await sleep(5)
        const touched = await saver.setThread("t1", { kind: "patch" })
        expect(touched.metadata).toEqual(patched.metadata)
        expect(touched.updated_at.getTime()).toBeGreaterThan(patched.updated_at.getTime())
        const replaced = await saver.setThread("t1", { kind: "put", metadata: { x: [1, "two", { three: 3 }] } })
        expect(replaced.metadata).toEqual({ x: [1, "two", { three: 3 }] })
        expect(replaced.created_at).toEqual(created.created_at)
        expect(await saver.getThread("t1")).toEqual(replaced)
        // Strings JSON holds that jsonb does not (NUL, a lone surrogate) come back exactly.
        const odd = { "k\u0000": "v\u0000\ud800", "\uE000": "\uE000" }
        expect((await saver.setThread("t2", { kind: "put", metadata: odd })).metadata).toEqual(odd)
        expect((await saver.getThread("t2"))?.metadata).toEqual(odd)
        expect(ids((await saver.searchThreads({ metadata: { "k\u0000": "v\u0000\ud800" } })).threads)).toEqual(["t2"])
      })
    })

    it("createThread creates only what is not there, and of concurrent creators exactly one", async () => {
      await driver.clear()
      await using(driver, async (saver) => {
        const created = await saver.createThread("new", { owner: "alice" })
        expect(created?.metadata).toEqual({ owner: "alice" })
        expect(await saver.getThread("new")).toEqual(created)
        // Taken: nothing changes, whoever asks.
        expect(await saver.createThread("new", { owner: "bob" })).toBeUndefined()
        expect(await saver.getThread("new")).toEqual(created)
        // A thread a graph wrote is taken too.
        await runGraph(saver, "ran")
        expect(await saver.createThread("ran", { owner: "bob" })).toBeUndefined()
        expect((await saver.getThread("ran"))?.metadata).toEqual({})
        // 30 at once: one record, holding the winner's metadata.
        const results = await Promise.all(
          Array.from({ length: 30 }, (_, i) => saver.createThread("raced", { owner: `user-${i}` }))
        )
        const winners = results.filter((result) => result !== undefined)
        expect(winners).toHaveLength(1)
        expect((await saver.getThread("raced"))?.metadata).toEqual(winners[0]!.metadata)
        // Deleted, it can be created again; bad metadata changes nothing.
        await saver.deleteThread("new")
        expect((await saver.createThread("new"))?.metadata).toEqual({})
        expect(await failure(saver.createThread("bad", { f: () => 1 } as never))).toBeInstanceOf(
          CheckpointError.InvalidInput
        )
        expect(await saver.getThread("bad")).toBeUndefined()
      })
    })

    it("a graph's puts keep a record's metadata and created_at; a record alone is no thread to anything else", async () => {
      await driver.clear()
      await using(driver, async (saver) => {
        const set = await saver.setThread("owned", { kind: "put", metadata: { owner: "me", graph_id: "steps" } })
        // A record without checkpoints: no tuple, no list, nothing to copy or prune, retention passes it by.
        expect(await saver.getTuple({ configurable: { thread_id: "owned" } })).toBeUndefined()
        const listed: Array<unknown> = []
        for await (const tuple of saver.list({ configurable: { thread_id: "owned" } })) listed.push(tuple)
        expect(listed).toEqual([])
        expect(await failure(saver.copyThread("owned", "elsewhere"))).toBeInstanceOf(CheckpointError.ThreadNotFound)
        expect(await failure(saver.prune(["owned"], { strategy: "keep_latest" }))).toBeInstanceOf(
          CheckpointError.ThreadNotFound
        )
        expect((await saver.applyRetention({ keepLast: 1 })).checkpointsRemoved).toBe(0)

        await runGraph(saver, "owned")
        await runGraph(saver, "owned")
        const after = await saver.getThread("owned")
        expect(after?.metadata).toEqual({ owner: "me", graph_id: "steps" })
        expect(after?.created_at).toEqual(set.created_at)
        const state = await stepsGraph(saver).getState({ configurable: { thread_id: "owned" } })
        expect(state.values.steps).toEqual(["a", "b", "c", "a", "b", "c"])

        // A copy onto a thread that has only a record keeps that record's metadata.
        await saver.setThread("copy-target", { kind: "put", metadata: { kept: true } })
        await saver.copyThread("owned", "copy-target")
        expect((await saver.getThread("copy-target"))?.metadata).toEqual({ kept: true })
        const copied = await stepsGraph(saver).getState({ configurable: { thread_id: "copy-target" } })
        expect(copied.values.steps).toEqual(["a", "b", "c", "a", "b", "c"])
        // A copy onto a new thread makes it a record with no metadata.
        await saver.copyThread("owned", "fresh-copy")
        expect((await saver.getThread("fresh-copy"))?.metadata).toEqual({})

        // Pruning and retention leave records as they are.
        await saver.prune(["owned"], { strategy: "keep_latest" })
        expect((await saver.getThread("owned"))?.metadata).toEqual({ owner: "me", graph_id: "steps" })

        // Deleting a thread with only a record removes it.
        await saver.setThread("alone", { kind: "put", metadata: { a: 1 } })
        await saver.deleteThread("alone")
        expect(await saver.getThread("alone")).toBeUndefined()
      })
    })

    it("finds records by metadata containment: nested objects by keys, arrays by elements", async () => {
      await driver.clear()
      await using(driver, async (saver) => {
        await saver.setThread("c1", {
          kind: "put",
          metadata: { kind: "a", tags: ["x", "y"], nested: { deep: { v: 1 }, w: 2 }, n: 1.5 }
        })
        await saver.setThread("c2", { kind: "put", metadata: { kind: "a", tags: ["y"], nested: { deep: { v: 2 } } } })
        await saver.setThread("c3", {
          kind: "put",
          metadata: { kind: "b", tags: [["x"]], list: [{ id: 1, name: "p" }, { id: 2 }], flag: false }
        })
        await runGraph(saver, "c4")
        const found = async (metadata: Record<string, unknown> | undefined) => {
          const page = await saver.searchThreads({ metadata, sort_by: "thread_id", sort_order: "asc" })
          expect(page.total).toBe(page.threads.length)
          return ids(page.threads)
        }
        expect(await found(undefined)).toEqual(["c1", "c2", "c3", "c4"])
        expect(await found({})).toEqual(["c1", "c2", "c3", "c4"])
        expect(await found({ kind: "a" })).toEqual(["c1", "c2"])
        expect(await found({ kind: "a", nested: { w: 2 } })).toEqual(["c1"])
        expect(await found({ nested: { deep: { v: 1 } } })).toEqual(["c1"])
        expect(await found({ nested: { deep: {} } })).toEqual(["c1", "c2"])
        expect(await found({ nested: {} })).toEqual(["c1", "c2"])
        expect(await found({ tags: ["y"] })).toEqual(["c1", "c2"])
        expect(await found({ tags: ["y", "x"] })).toEqual(["c1"])
        // An element of an array is contained in an equal element, never in an array holding it.
        expect(await found({ tags: ["x"] })).toEqual(["c1"])
        expect(await found({ tags: [["x"]] })).toEqual(["c3"])
        expect(await found({ tags: [] })).toEqual(["c1", "c2", "c3"])
        // Below the top level, an array contains no scalar, and an object no array.
        expect(await found({ tags: "x" })).toEqual([])
        expect(await found({ nested: [] })).toEqual([])
        expect(await found({ list: [{ id: 2 }] })).toEqual(["c3"])
        expect(await found({ list: [{ id: 1, name: "p" }] })).toEqual(["c3"])
        expect(await found({ list: [{ id: 2, name: "p" }] })).toEqual([])
        expect(await found({ n: 1.5, flag: false })).toEqual([])
        expect(await found({ flag: false })).toEqual(["c3"])
        expect(await found({ kind: null })).toEqual([])
        expect(await found({ missing: "x" })).toEqual([])
        // Keys that are Object.prototype's are data like any other.
        expect(await found({ constructor: {} })).toEqual([])
        expect(await found({ toString: "x" })).toEqual([])
      })
    })

    it("sorts by each key both ways (ties by thread_id the same way) and pages with offset, limit and total", async () => {
      await driver.clear()
      await using(driver, async (saver) => {
        const all = ["r1", "r2", "r3", "r4", "r5"]
        for (const thread_id of all) {
          await saver.setThread(thread_id, { kind: "put", metadata: { group: "g", i: thread_id } })
          await sleep(5)
        }
        for (const thread_id of ["r3", "r1", "r5", "r2", "r4"]) {
          await saver.setThread(thread_id, { kind: "patch", metadata: { touched: true } })
          await sleep(5)
        }
        const order = async (
          sort_by: "created_at" | "updated_at" | "thread_id",
          sort_order: "asc" | "desc"
        ) => ids((await saver.searchThreads({ sort_by, sort_order, metadata: { group: "g" } })).threads)
        expect(await order("created_at", "asc")).toEqual(all)
        expect(await order("created_at", "desc")).toEqual([...all].reverse())
        expect(await order("updated_at", "asc")).toEqual(["r3", "r1", "r5", "r2", "r4"])
        expect(await order("updated_at", "desc")).toEqual(["r4", "r2", "r5", "r1", "r3"])
        expect(await order("thread_id", "asc")).toEqual(all)
        expect(await order("thread_id", "desc")).toEqual([...all].reverse())
        // The defaults: newest created first, ten at a time.
        expect(ids((await saver.searchThreads()).threads)).toEqual([...all].reverse())

        const page = (offset: number, limit: number, sort_order: "asc" | "desc" = "asc") =>
          saver.searchThreads({ offset, limit, sort_by: "created_at", sort_order })
        expect(await page(0, 2)).toMatchObject({ total: 5 })
        expect(ids((await page(0, 2)).threads)).toEqual(["r1", "r2"])
        expect(ids((await page(2, 2)).threads)).toEqual(["r3", "r4"])
        expect(ids((await page(4, 2)).threads)).toEqual(["r5"])
        expect(ids((await page(1, 3, "desc")).threads)).toEqual(["r4", "r3", "r2"])
        expect(await page(10, 2)).toEqual({ threads: [], total: 5 })
        expect(await page(0, 0)).toEqual({ threads: [], total: 5 })
        expect((await saver.searchThreads({ metadata: { i: "r2" }, limit: 0 })).total).toBe(1)
        const many = await saver.searchThreads({ limit: 1000 })
        expect(many.total).toBe(5)

        if (sql !== undefined) {
          // Equal times: thread ids decide, in the same direction.
          await sql(
            "UPDATE checkpoint_threads SET created_at = '2020-01-01T00:00:00Z', last_activity = '2020-01-01T00:00:00Z'"
          )
          for (const by of ["created_at", "updated_at"] as const) {
            expect(await order(by, "asc")).toEqual(all)
            expect(await order(by, "desc")).toEqual([...all].reverse())
          }
          expect(ids((await saver.searchThreads({ sort_order: "asc", offset: 1, limit: 2 })).threads)).toEqual([
            "r2",
            "r3"
          ])
        }
      })
    })

    it("refuses malformed input as InvalidInput (a thread id as InvalidConfig), writing nothing", async () => {
      await driver.clear()
      await using(driver, async (saver) => {
        await saver.setThread("v", { kind: "put", metadata: { ok: true } })
        class Custom {
          readonly a = 1
        }
        const cycle: Record<string, unknown> = { a: 1 }
        cycle.self = { back: cycle }
        let deep: Record<string, unknown> = {}
        for (let i = 0; i < 40; i++) deep = { d: deep }
        let deepest: Record<string, unknown> = {}
        for (let i = 0; i < 31; i++) deepest = { d: deepest }
        const bad: ReadonlyArray<unknown> = [
          [],
          "text",
          null,
          42,
          new Custom(),
          new Map(),
          { f: () => 1 },
          { n: Number.NaN },
          { n: Number.POSITIVE_INFINITY },
          { big: 1n },
          { s: Symbol("s") },
          { when: new Date(0) },
          { custom: new Custom() },
          { list: [1, undefined] },
          cycle,
          deep,
          { long: "x".repeat(256 * 1024) }
        ]
        for (const metadata of bad) {
          const error = await failure(
            saver.setThread("v", { kind: "patch", metadata: metadata as Record<string, unknown> })
          )
          expect(error, String(metadata)).toBeInstanceOf(CheckpointError.InvalidInput)
          expect(
            await failure(saver.searchThreads({ metadata: metadata as Record<string, unknown> })),
            String(metadata)
          ).toBeInstanceOf(CheckpointError.InvalidInput)
        }
        expect(String(await failure(saver.setThread("v", { kind: "put", metadata: cycle })))).toContain("cycle")
        expect(String(await failure(saver.setThread("v", { kind: "put", metadata: { when: new Date(0) } })))).toContain(
          "metadata.when is an instance of Date"
        )
        expect(
          await failure(saver.setThread("v", { kind: "replace" as "put", metadata: {} }))
        ).toBeInstanceOf(CheckpointError.InvalidInput)
        expect(await failure(saver.setThread("", { kind: "put" }))).toBeInstanceOf(CheckpointError.InvalidConfig)
        expect(await failure(saver.getThread(""))).toBeInstanceOf(CheckpointError.InvalidConfig)
        for (
          const query of [
            { limit: 1001 },
            { limit: -1 },
            { limit: 1.5 },
            { offset: -1 },
            { offset: Number.NaN },
            { sort_by: "name" },
            { sort_order: "up" }
          ]
        ) {
          expect(await failure(saver.searchThreads(query as never)), JSON.stringify(query)).toBeInstanceOf(
            CheckpointError.InvalidInput
          )
        }
        expect(await saver.getThread("v")).toMatchObject({ metadata: { ok: true } })
        expect((await saver.searchThreads()).total).toBe(1)

        // What JSON holds is accepted: undefined properties left out, null prototypes, the deepest allowed.
        const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 })
        expect((await saver.setThread("w", { kind: "put", metadata: { bare, gone: undefined } })).metadata).toEqual({
          bare: { a: 1 }
        })
        expect((await saver.setThread("w", { kind: "put", metadata: deepest })).metadata).toEqual(deepest)
      })
    })

    it("an own __proto__ key is data, going in and coming out", async () => {
      await driver.clear()
      await using(driver, async (saver) => {
        const given = JSON.parse(`{"__proto__":{"polluted":true},"a":1}`) as Record<string, unknown>
        const record = await saver.setThread("p", { kind: "put", metadata: given })
        expect(Object.hasOwn(record.metadata, "__proto__")).toBe(true)
        expect(Object.getPrototypeOf(record.metadata)).toBe(Object.prototype)
        expect(({} as Record<string, unknown>).polluted).toBeUndefined()
        const patched = await saver.setThread("p", { kind: "patch", metadata: given })
        expect(JSON.stringify(patched.metadata)).toContain(`"__proto__":{"polluted":true}`)
        expect(({} as Record<string, unknown>).polluted).toBeUndefined()
        const found = await saver.searchThreads({ metadata: JSON.parse(`{"__proto__":{"polluted":true}}`) })
        expect(ids(found.threads)).toEqual(["p"])
        expect(({} as Record<string, unknown>).polluted).toBeUndefined()
      })
    })

    it("deleteThread removes the record with the thread's checkpoints, writes and pieces", async () => {
      await driver.clear()
      await using(driver, async (saver) => {
        await runGraph(saver, "doomed")
        await saver.setThread("doomed", { kind: "patch", metadata: { doomed: true } })
        await runGraph(saver, "kept")
        expect((await saver.searchThreads()).total).toBe(2)
        await saver.deleteThread("doomed")
        expect(await saver.getThread("doomed")).toBeUndefined()
        const left = await saver.searchThreads()
        expect(ids(left.threads)).toEqual(["kept"])
        expect(left.total).toBe(1)
        expect((await saver.searchThreads({ metadata: { doomed: true } })).total).toBe(0)
        if (sql !== undefined) {
          for (
            const table of [
              "checkpoints",
              "checkpoint_blobs",
              "checkpoint_writes",
              "checkpoint_pieces",
              "checkpoint_threads"
            ]
          ) {
            const [row] = await sql(`SELECT count(*)::int AS n FROM ${table} WHERE thread_id = $1`, ["doomed"])
            expect(row?.n, table).toBe(0)
          }
        }
      })
    })

    if (sql !== undefined) {
      it("reads hostile stored metadata safely: __proto__ stays data, a non-object reads as {}", async () => {
        await driver.clear()
        await using(driver, async (saver) => {
          for (const thread_id of ["h-proto", "h-array", "h-string"]) await runGraph(saver, thread_id)
          await saver.getThread("h-proto") // records enabled
          await sql(`UPDATE checkpoint_threads SET metadata = '{"__proto__":{"polluted":true}}' WHERE thread_id = $1`, [
            "h-proto"
          ])
          await sql(`UPDATE checkpoint_threads SET metadata = '[1, {"a": 2}]' WHERE thread_id = $1`, ["h-array"])
          await sql(`UPDATE checkpoint_threads SET metadata = '"text"' WHERE thread_id = $1`, ["h-string"])
          const proto = await saver.getThread("h-proto")
          expect(Object.hasOwn(proto!.metadata, "__proto__")).toBe(true)
          expect(Object.getPrototypeOf(proto!.metadata)).toBe(Object.prototype)
          expect((proto!.metadata as { polluted?: unknown }).polluted).toBeUndefined()
          expect(({} as Record<string, unknown>).polluted).toBeUndefined()
          expect((await saver.getThread("h-array"))?.metadata).toEqual({})
          expect((await saver.getThread("h-string"))?.metadata).toEqual({})
          const page = await saver.searchThreads({ sort_by: "thread_id", sort_order: "asc" })
          expect(ids(page.threads)).toEqual(["h-array", "h-proto", "h-string"])
          expect(page.threads.map((thread) => Object.keys(thread.metadata).length)).toEqual([0, 1, 0])
          expect(({} as Record<string, unknown>).polluted).toBeUndefined()
          // A patch of a record that is not an object replaces it; the thread reads on.
          expect((await saver.setThread("h-array", { kind: "patch", metadata: { a: 1 } })).metadata).toEqual({ a: 1 })
          const state = await stepsGraph(saver).getState({ configurable: { thread_id: "h-string" } })
          expect(state.values.steps).toEqual(["a", "b", "c"])
        })
      })
    }
  })
}

describe("thread records on PostgreSQL, opened otherwise", () => {
  it(
    "many services enabling them at once apply the step once; read-only, a store reads the records a writer enabled",
    async () => {
      const database = await createDatabase("threads_many")
      try {
        const versions = async () =>
          (await admin((client) => client.query("SELECT v FROM checkpoint_migrations WHERE v >= 1000"), database.url))
            .rows.map((row) => Number(row.v))
        await withSaverOn(database.url, (saver) => runGraph(saver, "g"))
        // Read-only, before any writer enabled them: refused, as any write.
        const reader = EffectCheckpointSaver.fromLayer(Postgres.layer({ url: database.url, readOnly: true }))
        try {
          expect(await failure(reader.getThread("g"))).toBeInstanceOf(CheckpointError.StorageFailure)
          expect(await versions()).toEqual([])
          const savers = Array.from(
            { length: 6 },
            () => EffectCheckpointSaver.fromLayer(Postgres.layer({ url: database.url, poolSize: 1 }))
          )
          try {
            const found = await Promise.all(savers.map((saver) => saver.getThread("g")))
            expect(found.map((record) => record?.metadata)).toEqual(Array.from({ length: 6 }, () => ({})))
            await savers[0]!.setThread("g", { kind: "patch", metadata: { seen: 6 } })
          } finally {
            await Promise.all(savers.map((saver) => saver.close()))
          }
          expect(await versions()).toEqual([1000, 1001, 1002])
          // Now the reader reads them; it still sets none.
          expect((await reader.getThread("g"))?.metadata).toEqual({ seen: 6 })
          expect((await reader.searchThreads({ metadata: { seen: 6 } })).total).toBe(1)
          expect(await failure(reader.setThread("g", { kind: "put" }))).toBeInstanceOf(CheckpointError.StorageFailure)
          // A storage that only checks the schema (migrate: false) opens on it.
          const checking = EffectCheckpointSaver.fromLayer(Postgres.layer({ url: database.url, migrate: false }))
          try {
            expect((await checking.getThread("g"))?.metadata).toEqual({ seen: 6 })
          } finally {
            await checking.close()
          }
        } finally {
          await reader.close()
        }
      } finally {
        await database.drop()
      }
    },
    60_000
  )
})
