/**
 * Read-only opens (`readOnly: true`): nothing is created, migrated or
 * written, and a database only LangGraph's own saver wrote reads back as
 * that saver reads it. Real databases only: PostgreSQL, PGlite in a
 * directory.
 */
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { AIMessage, HumanMessage } from "@langchain/core/messages"
import { Annotation, Command, END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph"
import type { BaseCheckpointSaver, CheckpointTuple } from "@langchain/langgraph-checkpoint"
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres"
import { Effect, Layer, Option, Redacted, Stream } from "effect"
import { SqlClient } from "effect/sql"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll } from "vitest"
import { admin, createDatabase } from "../../harness/databases.ts"
import { nestedGraph, stepsGraph, view } from "../../harness/inspectedGraph.ts"
import { CheckpointStorage, EffectCheckpointSaver } from "../../src/index.ts"
import { type Statement, statements } from "../../src/internal/sql/Statements.ts"
import * as TableOwner from "../../src/internal/sql/TableOwner.ts"
import * as Pglite from "../../src/pglite.ts"
import * as Postgres from "../../src/postgres.ts"
import * as Retry from "../../src/Retry.ts"
import { checkpoint, metadata } from "../support/fixtures.ts"

const { CheckpointStorage: Storage } = CheckpointStorage

type Database = Awaited<ReturnType<typeof createDatabase>>

const nameOf = (url: string) => decodeURIComponent(new URL(url).pathname.slice(1))

/** A copy of the database at `url` (which must have no connections), dropped with the returned `drop`. */
const copyDatabase = async (url: string, prefix: string): Promise<Database> => {
  const copy = await createDatabase(prefix)
  await admin(async (client) => {
    await client.query(`DROP DATABASE "${nameOf(copy.url)}"`)
    await client.query(`CREATE DATABASE "${nameOf(copy.url)}" TEMPLATE "${nameOf(url)}"`)
  })
  return copy
}

/**
 * Everything a read-only open must leave as it was: the schemas, every
 * table of every schema with its row count and a digest of its rows, and
 * the applied migrations.
 */
const snapshot = (url: string) =>
  admin(async (client) => {
    const schemas = await client.query<{ nspname: string }>(
      "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg_%' ORDER BY nspname"
    )
    const tables = await client.query<{ table_schema: string; table_name: string }>(
      `SELECT table_schema, table_name FROM information_schema.tables
       WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY table_schema, table_name`
    )
    const contents: Record<string, unknown> = {}
    for (const { table_name, table_schema } of tables.rows) {
      const result = await client.query(
        `SELECT count(*)::int AS rows, md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS digest
         FROM "${table_schema}"."${table_name}" t`
      )
      contents[`${table_schema}.${table_name}`] = result.rows[0]
    }
    const migrations = tables.rows.some((table) => table.table_name === "checkpoint_migrations")
      ? (await client.query<{ v: number }>("SELECT v FROM checkpoint_migrations ORDER BY v")).rows.map((row) => row.v)
      : []
    return { schemas: schemas.rows.map((row) => row.nspname), contents, migrations }
  }, url)

const collect = async (saver: BaseCheckpointSaver, config: Parameters<BaseCheckpointSaver["list"]>[0]) => {
  const tuples: Array<CheckpointTuple> = []
  for await (const tuple of saver.list(config)) tuples.push(tuple)
  return tuples
}

const byAddress = (a: CheckpointTuple, b: CheckpointTuple) => {
  const key = (t: CheckpointTuple) =>
    `${t.config.configurable?.thread_id}\u0000${t.config.configurable?.checkpoint_ns}\u0000${t.config.configurable?.checkpoint_id}`
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0
}

const text = (message: { content: unknown }) => String(message.content)

/** Writes, through the official saver only, threads that use what LangGraph stores. */
const writeWithOfficialSaver = async (saver: PostgresSaver) => {
  // A conversation of three turns.
  const chat = new StateGraph(MessagesAnnotation)
    .addNode("model", (state) => ({ messages: [new AIMessage(`heard ${text(state.messages.at(-1)!)}`)] }))
    .addEdge(START, "model")
    .addEdge("model", END)
    .compile({ checkpointer: saver })
  for (const turn of ["one", "two", "three"]) {
    await chat.invoke({ messages: [new HumanMessage(turn)] }, { configurable: { thread_id: "chat" } })
  }

  // Paused at interrupt(): its latest checkpoint has the interrupt as a pending write.
  const Review = Annotation.Root({ request: Annotation<string>, decision: Annotation<string> })
  const review = new StateGraph(Review)
    .addNode("review", (state) => ({ decision: interrupt<string, string>(`approve ${state.request}?`) }))
    .addEdge(START, "review")
    .addEdge("review", END)
    .compile({ checkpointer: saver })
  await review.invoke({ request: "deploy" }, { configurable: { thread_id: "review" } })

  // A fork: the state of an older checkpoint changed with updateState, then run on.
  const steps = stepsGraph(saver)
  const fork = { configurable: { thread_id: "fork" } }
  await steps.invoke({ steps: [] }, fork)
  const history = []
  for await (const state of steps.getStateHistory(fork)) history.push(state)
  const forked = await steps.updateState(history[2]!.config, { steps: ["edited"] })
  await steps.invoke(null, forked)

  // A subgraph paused inside: checkpoints in the child's namespace too.
  const outer = nestedGraph(saver)
  const sub = { configurable: { thread_id: "sub" } }
  await outer.invoke({ value: "x" }, sub)
  await outer.invoke(new Command({ resume: "answer" }), sub)
  await outer.invoke({ value: "y" }, sub)
}

const threads = ["chat", "review", "fork", "sub"]

/** What the official saver reads: each thread's list (every namespace), and the whole list. */
const readAll = async (saver: BaseCheckpointSaver) => {
  const perThread = Object.fromEntries(
    await Promise.all(
      threads.map(async (thread_id) => [thread_id, await collect(saver, { configurable: { thread_id } })])
    )
  ) as Record<string, Array<CheckpointTuple>>
  const all = (await collect(saver, {})).sort(byAddress)
  return { perThread, all }
}

/** Runs a statement of the SQL driver on the client in context. */
const run = <Input, Row extends object, Output>(statement: Statement<Input, Row, Output>, input: Input) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return statement.decode(yield* sql.unsafe<Row>(statement.text, statement.params(input)), input)
  })

const failureOf = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.flip(effect)

describe("a database only @langchain/langgraph-checkpoint-postgres wrote, opened read-only", () => {
  let database: Database
  let expected: Awaited<ReturnType<typeof readAll>>
  let before: Awaited<ReturnType<typeof snapshot>>
  let official: PostgresSaver
  /** Copies made before any test runs (a database with open connections cannot be copied). */
  let copies: Record<"python" | "newer", Database>

  beforeAll(async () => {
    database = await createDatabase("readonly_langgraph")
    const writer = PostgresSaver.fromConnString(database.url)
    await writer.setup()
    await writeWithOfficialSaver(writer)
    await writer.end()
    copies = {
      python: await copyDatabase(database.url, "readonly_python"),
      newer: await copyDatabase(database.url, "readonly_newer")
    }
    official = PostgresSaver.fromConnString(database.url)
    expected = await readAll(official)
    before = await snapshot(database.url)
  }, 120_000)

  afterAll(async () => {
    await official.end()
    await Promise.all([database, ...Object.values(copies)].map((copy) => copy.drop()))
  })

  it("is what the official saver wrote: LangGraph's tables and migrations only", () => {
    expect(before.migrations).toEqual([0, 1, 2, 3, 4])
    expect(Object.keys(before.contents)).toEqual([
      "public.checkpoint_blobs",
      "public.checkpoint_migrations",
      "public.checkpoint_writes",
      "public.checkpoints"
    ])
    const namespaces = new Set(expected.perThread.sub!.map((t) => t.config.configurable?.checkpoint_ns))
    expect([...namespaces].some((ns) => String(ns).startsWith("child:"))).toBe(true)
    const paused = expected.perThread.review![0]!
    expect(paused.pendingWrites?.some(([, channel]) => channel === "__interrupt__")).toBe(true)
    // The fork: two checkpoints with one parent.
    const parents = expected.perThread.fork!.map((t) => t.parentConfig?.configurable?.checkpoint_id)
    expect(new Set(parents).size).toBeLessThan(parents.length)
    expect(expected.all.length).toBeGreaterThan(25)
  })

  it.live(
    "getTuple, list and getDeltaChannelHistory read what the official saver reads; nothing changes",
    () =>
      Effect.gen(function*() {
        const ours = EffectCheckpointSaver.fromLayer(Postgres.layer({ url: database.url, readOnly: true }))
        yield* Effect.promise(async () => {
          try {
            const read = await readAll(ours)
            for (const thread of threads) {
              expect(read.perThread[thread]!.map(view)).toEqual(expected.perThread[thread]!.map(view))
            }
            expect(read.all.map(view)).toEqual(expected.all.map(view))

            for (const tuple of expected.all) {
              // Each checkpoint by its id, and each namespace's latest.
              expect(view(await ours.getTuple(tuple.config))).toEqual(view(await official.getTuple(tuple.config)))
              const latest = { configurable: { ...tuple.config.configurable, checkpoint_id: undefined } }
              expect(view(await ours.getTuple(latest))).toEqual(view(await official.getTuple(latest)))
            }
            expect(await ours.getTuple({ configurable: { thread_id: "none" } })).toBeUndefined()

            let seeded = 0
            for (const tuple of expected.all) {
              const options = { config: tuple.config, channels: ["messages", "steps", "value", "decision"] }
              const history = await official.getDeltaChannelHistory(options)
              expect(await ours.getDeltaChannelHistory(options)).toEqual(history)
              seeded += Object.values(history).filter((channel) => channel.seed !== undefined).length
            }
            expect(seeded).toBeGreaterThan(10)
          } finally {
            await ours.close()
          }
        })
        expect(yield* Effect.promise(() => snapshot(database.url))).toEqual(before)
      }),
    120_000
  )

  it.live("every read statement of the SQL driver runs over LangGraph's tables", () =>
    Effect.gen(function*() {
      const tables = yield* TableOwner.resolve({ readOnly: true })
      expect(tables.layout).toBe("langgraph")
      const q = statements(tables)
      const count = (table: string, thread_id: string) =>
        Effect.promise(() =>
          admin(
            (client) =>
              client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE thread_id = $1`, [
                thread_id
              ]),
            database.url
          )
        ).pipe(Effect.map((result) => result.rows[0]!.n))

      const listed = yield* run(q.threads, {})
      expect(listed.map((thread) => thread.thread_id).sort()).toEqual([...threads].sort())
      for (const { last_activity, thread_id } of listed) {
        // A thread's last activity: its latest checkpoint's `ts`.
        const latest = Math.max(...expected.perThread[thread_id]!.map((t) => Date.parse(t.checkpoint.ts)))
        expect(last_activity.getTime()).toBe(latest)
      }
      for (const thread_id of threads) {
        const rows = yield* run(q.threadRows, { thread_id })
        expect(rows.checkpoints).toHaveLength(expected.perThread[thread_id]!.length)
        expect(rows.blobs).toHaveLength(yield* count("checkpoint_blobs", thread_id))
        expect(rows.writes).toHaveLength(yield* count("checkpoint_writes", thread_id))
        expect(rows.writes.every((write) => write.task_path === "")).toBe(true)
        expect(rows.blobs.every((blob) => blob.base === undefined)).toBe(true)
        expect(rows.pieces).toEqual([])
        expect(yield* run(q.threadIndex, { thread_id })).toHaveLength(expected.perThread[thread_id]!.length)
        expect(yield* run(q.threadExists, { thread_id })).toBe(true)
      }
      expect(yield* run(q.threadExists, { thread_id: "none" })).toBe(false)
      expect(yield* run(q.threadsOfRuns, { run_ids: ["none"] })).toEqual([])
      const paused = expected.perThread.review![0]!.config.configurable!
      const interrupts = yield* run(q.channelWrites, {
        thread_id: "review",
        checkpoint_ns: "",
        checkpoint_id: paused.checkpoint_id as string,
        channel: "__interrupt__"
      })
      expect(interrupts.length).toBeGreaterThan(0)
      expect(yield* Effect.promise(() => snapshot(database.url))).toEqual(before)
    }).pipe(Effect.provide(Postgres.layerSqlClient({ url: database.url, readOnly: true }))), 60_000)

  it.live(
    "a write fails with a StorageFailure and changes nothing; the server refuses writes in the pool's transactions",
    () =>
      Effect.gen(function*() {
        const storage = Postgres.layer({ url: database.url, readOnly: true })
        const failures = yield* Effect.gen(function*() {
          const s = yield* Storage
          const latest = {
            thread_id: "chat",
            checkpoint_id: String(expected.perThread.chat![0]!.config.configurable!.checkpoint_id)
          }
          return [
            yield* failureOf(s.put(latest, checkpoint({ a: 1 }), metadata(), { a: 1 })),
            yield* failureOf(s.putWrites(latest, [["messages", []]], { task_id: "t" })),
            yield* failureOf(s.deleteThread("chat")),
            yield* failureOf(s.copyThread("chat", "chat-copy")),
            yield* failureOf(s.prune(["chat"], { strategy: "keep_latest" }))
          ]
        }).pipe(Effect.provide(storage))
        for (const failure of failures) {
          expect(failure._tag).toBe("StorageFailure")
          expect(failure.message).toContain("read-only")
        }

        // Beneath the storage, the pool's transactions begin READ ONLY: the server refuses
        // writes too (SQLSTATE 25006), with no session setting a pooler would refuse.
        const refused = yield* Effect.flip(Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          return yield* sql.withTransaction(sql`INSERT INTO checkpoint_migrations (v) VALUES (77)`)
        })).pipe(Effect.provide(Postgres.layerSqlClient({ url: database.url, readOnly: true })))
        expect(Retry.sqlState(refused)).toBe("25006")
        expect(yield* Effect.promise(() => snapshot(database.url))).toEqual(before)
      }),
    60_000
  )

  it.live("with LangGraph's Python layout (migrations 0–9, writes with task_path) too", () =>
    Effect.gen(function*() {
      const copy = copies.python
      yield* Effect.promise(() =>
        admin(async (client) => {
          await client.query("ALTER TABLE checkpoint_writes ADD COLUMN task_path TEXT NOT NULL DEFAULT ''")
          await client.query("INSERT INTO checkpoint_migrations (v) SELECT generate_series(5, 9)")
        }, copy.url)
      )
      const python = yield* Effect.promise(() => snapshot(copy.url))
      const tables = yield* TableOwner.resolve({ readOnly: true }).pipe(
        Effect.provide(Postgres.layerSqlClient({ url: copy.url, readOnly: true }))
      )
      expect(tables.layout).toBe("langgraph")
      expect(tables.writes).toBe(`"public".checkpoint_writes`)
      const ours = EffectCheckpointSaver.fromLayer(Postgres.layer({ url: copy.url, readOnly: true }))
      const read = yield* Effect.promise(() => readAll(ours).finally(() => ours.close()))
      expect(read.all.map(view)).toEqual(expected.all.map(view))
      expect(yield* Effect.promise(() => snapshot(copy.url))).toEqual(python)
    }).pipe(Effect.scoped), 60_000)

  it.live("a schema newer than the library is IncompatibleSchema", () =>
    Effect.gen(function*() {
      const copy = copies.newer
      yield* Effect.promise(() =>
        admin((client) => client.query("INSERT INTO checkpoint_migrations VALUES (999)"), copy.url)
      )
      const newer = yield* Effect.promise(() => snapshot(copy.url))
      const error = yield* Effect.flip(Layer.build(Postgres.layer({ url: copy.url, readOnly: true })))
      expect(error._tag).toBe("IncompatibleSchema")
      expect(error.message).toBe(
        "the database schema is at migration 999, newer than this library knows (up to 105): upgrade langgraph-checkpoint-effect"
      )
      expect(yield* Effect.promise(() => snapshot(copy.url))).toEqual(newer)
    }).pipe(Effect.scoped), 60_000)
})

describe("other databases opened read-only", () => {
  it.live("an empty database: no checkpoint tables, in one line, and nothing created", () =>
    Effect.gen(function*() {
      const empty = yield* Effect.acquireRelease(
        Effect.promise(() => createDatabase("readonly_empty")),
        (database) => Effect.promise(() => database.drop())
      )
      const before = yield* Effect.promise(() => snapshot(empty.url))
      const error = yield* Effect.flip(Layer.build(Postgres.layer({ url: empty.url, readOnly: true })))
      expect(error._tag).toBe("IncompatibleSchema")
      expect(error.message).toContain("has no checkpoint tables")
      expect(error.message).not.toContain("\n")
      // So is a schema that does not exist.
      const elsewhere = yield* Effect.flip(
        Layer.build(Postgres.layer({ url: empty.url, readOnly: true, schema: "nowhere" }))
      )
      expect(elsewhere.message).toContain("has no checkpoint tables")
      expect(yield* Effect.promise(() => snapshot(empty.url))).toEqual(before)
    }).pipe(Effect.scoped), 60_000)

  it.live("this library's own schema: reads work, writes fail, nothing changes", () =>
    Effect.gen(function*() {
      const database = yield* Effect.acquireRelease(
        Effect.promise(() => createDatabase("readonly_current")),
        (database) => Effect.promise(() => database.drop())
      )
      const url = database.url
      const stored = yield* Effect.gen(function*() {
        const s = yield* Storage
        const first = yield* s.put({ thread_id: "t" }, checkpoint({ items: ["a", "b"] }), metadata(), { items: 1 })
        yield* s.putWrites(first, [["items", ["c"]]], { task_id: "task", task_path: "~0" })
        return first
      }).pipe(Effect.provide(Postgres.layer({ url })))
      const before = yield* Effect.promise(() => snapshot(url))

      const tables = yield* TableOwner.resolve({ readOnly: true }).pipe(
        Effect.provide(Postgres.layerSqlClient({ url, readOnly: true }))
      )
      expect(tables.layout).toBe("current")
      const check = (storage: Layer.Layer<CheckpointStorage.CheckpointStorage, unknown>) =>
        Effect.gen(function*() {
          const s = yield* Storage
          const tuple = Option.getOrThrow(yield* s.getTuple(stored))
          expect(tuple.checkpoint.channel_values).toEqual({ items: ["a", "b"] })
          expect(tuple.pendingWrites).toEqual([["task", "items", ["c"]]])
          expect(yield* Stream.runCollect(s.list({ thread_id: "t" }))).toHaveLength(1)
          const failure = yield* failureOf(s.put(stored, checkpoint({ items: ["x"] }), metadata(), { items: 2 }))
          expect(failure._tag).toBe("StorageFailure")
          expect((yield* failureOf(s.deleteThread("t")))._tag).toBe("StorageFailure")
        }).pipe(Effect.provide(storage))
      yield* check(Postgres.layer({ url, readOnly: true }))
      // Over the application's own client, which accepts writes: the storage refuses them itself.
      yield* check(
        Postgres.layerClient({ readOnly: true }).pipe(Layer.provide(PgClient.layer({ url: Redacted.make(url) })))
      )
      expect(yield* Effect.promise(() => snapshot(url))).toEqual(before)
    }).pipe(Effect.scoped), 60_000)
})

describe("a PGlite directory opened read-only", () => {
  it.live("reads what was written; writes fail; the session refuses writes", () =>
    Effect.gen(function*() {
      const dataDir = mkdtempSync(join(tmpdir(), "lce-pglite-ro-"))
      try {
        const stored = yield* Storage.use((s) =>
          s.put({ thread_id: "kept" }, checkpoint({ a: [1, 2] }), metadata(), { a: 1 })
        ).pipe(Effect.provide(Pglite.layer({ dataDir })))

        yield* Effect.gen(function*() {
          const s = yield* Storage
          const tuple = Option.getOrThrow(yield* s.getTuple({ thread_id: "kept" }))
          expect(tuple.checkpoint.channel_values).toEqual({ a: [1, 2] })
          expect(yield* Stream.runCollect(s.list({}))).toHaveLength(1)
          const failure = yield* failureOf(s.put(stored, checkpoint({ a: [3] }), metadata(), { a: 2 }))
          expect(failure._tag).toBe("StorageFailure")
          expect(failure.message).toContain("read-only")
        }).pipe(Effect.provide(Pglite.layer({ dataDir, readOnly: true })))

        const refused = yield* Effect.flip(Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          return yield* sql`INSERT INTO checkpoint_threads (thread_id) VALUES ('other')`
        })).pipe(Effect.provide(Pglite.layerSqlClient({ dataDir, readOnly: true })))
        expect(Retry.sqlState(refused)).toBe("25006")

        // Still one checkpoint, and one thread.
        const count = yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          return yield* sql<{ n: number }>`SELECT (SELECT count(*) FROM checkpoints)::int
            + (SELECT count(*) FROM checkpoint_threads)::int AS n`
        }).pipe(Effect.provide(Pglite.layerSqlClient({ dataDir, readOnly: true })))
        expect(count[0]!.n).toBe(2)
      } finally {
        rmSync(dataDir, { recursive: true, force: true })
      }
    }), 60_000)

  it.live("a directory that holds no database is an InvalidConfig, and is not created", () =>
    Effect.gen(function*() {
      const parent = mkdtempSync(join(tmpdir(), "lce-pglite-ro-"))
      try {
        const missing = join(parent, "missing", "db")
        const error = yield* Effect.flip(Layer.build(Pglite.layer({ dataDir: missing, readOnly: true })))
        expect(error._tag).toBe("InvalidConfig")
        expect(error.message).toBe(
          `connect: invalid config: there is no database at ${missing} (a read-only open never creates one)`
        )
        expect(existsSync(join(parent, "missing"))).toBe(false)

        // An empty directory is no database either, and stays empty.
        const empty = join(parent, "empty")
        mkdirSync(empty)
        const again = yield* Effect.flip(Layer.build(Pglite.layerSqlClient({ dataDir: empty, readOnly: true })))
        expect(again._tag).toBe("InvalidConfig")
        expect(readdirSync(empty)).toEqual([])
      } finally {
        rmSync(parent, { recursive: true, force: true })
      }
    }).pipe(Effect.scoped))
})
