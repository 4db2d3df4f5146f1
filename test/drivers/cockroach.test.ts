/**
 * The CockroachDB dialect: every statement it sends checked against the
 * constructs CockroachDB rejects, migrations under concurrency, the thread
 * cascade TTL relies on, TTL itself and the storage contract. They run on the
 * cluster in COCKROACH_URL, or without one on PostgreSQL in SERIALIZABLE mode
 * (see `support/cockroach.ts`); the statement check and the URL handling run
 * on the test server either way.
 */
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Config, ConfigProvider, Effect, Layer, Option, Redacted, Schedule, Stream } from "effect"
import { SqlClient } from "effect/sql"
import { makeCountingSocket } from "../../harness/countingSocket.ts"
import { createDatabase, withDatabase } from "../../harness/databases.ts"
import * as Cockroach from "../../src/cockroach.ts"
import { CheckpointStorage, EffectCheckpointSaver } from "../../src/index.ts"
import * as Postgres from "../../src/postgres.ts"
import { storageScenarios } from "../scenarios/storage.ts"
import { cockroachSuite } from "../support/cockroach.ts"
import { checkpoint, metadata } from "../support/fixtures.ts"

const { CheckpointStorage: Storage } = CheckpointStorage

const cockroachUrl = (url: string) => url.replace(/^postgres(ql)?:\/\//, "cockroachdb://")

/** Runs `f` in a schema of its own on the CockroachDB target, dropped afterwards. */
const onTarget = <A, E, R>(prefix: string, f: (target: ReturnType<typeof cockroachSuite>) => Effect.Effect<A, E, R>) =>
  withDatabase(`crdb_${prefix}`, (url) => {
    const target = cockroachSuite(prefix, () => url)
    return f(target).pipe(Effect.ensuring(Effect.promise(() => target.drop())))
  })

/** The storage over the target's own client, for statements the test runs itself. */
const withClient = (target: ReturnType<typeof cockroachSuite>) =>
  Postgres.layerClient({ dialect: "cockroach", schema: target.schema }).pipe(
    Layer.provideMerge(Cockroach.layerSqlClient({ url: target.url() }))
  )

/** What CockroachDB rejects, or accepts without doing what PostgreSQL does. */
const rejectedByCockroach: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bpg_advisory/i, "advisory locks (no-op stubs in CockroachDB)"],
  [/\bpg_[a-z_]+\s*\(/i, "PostgreSQL system functions"],
  [/\bINDEX\s+CONCURRENTLY\b/i, "CREATE INDEX CONCURRENTLY"],
  [/array\s*\[\s*array\s*\[|array_agg\s*\(\s*array\s*\[|\[\]\s*\[\]/i, "multidimensional arrays"],
  [/\bLOCK\s+TABLE\b/i, "LOCK TABLE"],
  [/\bplpgsql\b|\bCREATE\s+(OR\s+REPLACE\s+)?(FUNCTION|TRIGGER)\b|\bDO\s+\$/i, "functions, triggers, DO blocks"],
  [/\b(LISTEN|NOTIFY|UNLISTEN)\b/i, "LISTEN/NOTIFY"],
  [/\b(xmin|xmax|ctid)\b|::regclass|\bto_regclass\b/i, "system columns and regclass"],
  [/\bTEMP(ORARY)?\s+TABLE\b/i, "temporary tables"],
  [/\(\s*WITH\b/i, "common table expressions inside subqueries (CockroachDB cannot correlate them)"]
]

const violations = (statements: ReadonlyArray<string>) =>
  statements.flatMap((statement) =>
    rejectedByCockroach.filter(([pattern]) => pattern.test(statement)).map(([, what]) => `${what}: ${statement}`)
  )

describe("the CockroachDB dialect", () => {
  it.live("sends only statements CockroachDB accepts, through migrations, every operation and expiry", () =>
    withDatabase("crdb_statements", (url) =>
      Effect.gen(function*() {
        const socket = makeCountingSocket(url)
        const client = PgClient.layerFrom(PgClient.make({
          url: Redacted.make(url),
          stream: socket.open,
          startupParameters: { default_transaction_isolation: "serializable" }
        }))
        const storage = Postgres.layerClient({ dialect: "cockroach" })
        yield* Effect.gen(function*() {
          yield* Cockroach.enableThreadCascade()
          const s = yield* Storage
          const ref = yield* s.put({ thread_id: "t" }, checkpoint({ a: [1], b: "x" }), metadata(), { a: 1, b: 1 })
          const child = yield* s.put(ref, { ...checkpoint(), channel_versions: { a: 2, b: 1 } }, metadata(), { a: 2 })
          yield* s.putWrites(child, [["a", 1], ["__error__", "e"]], { task_id: "task", task_path: "~0" })
          yield* s.getTuple({ thread_id: "t" })
          yield* s.getTuple(ref)
          yield* Stream.runDrain(s.list({ thread_id: "t", filter: { source: "loop" }, before: child.checkpoint_id }))
          yield* Stream.runDrain(s.list({ limit: 1 }))
          yield* s.getDeltaChannelHistory(child, ["a"])
          yield* s.setThread("t", { kind: "put", metadata: { a: [1], b: { c: "x" } } })
          yield* s.setThread("t", { kind: "patch", metadata: { d: 1 } })
          yield* s.getThread("t")
          yield* s.searchThreads({ metadata: { a: [1] }, sort_by: "updated_at", sort_order: "asc", offset: 1 })
          yield* s.searchThreads({ sort_by: "thread_id" })
          yield* s.deleteThread("t")
        }).pipe(Effect.provide(storage.pipe(Layer.provideMerge(client))))
        const sent = socket.statements()
        expect(sent.length).toBeGreaterThan(20)
        expect(sent.some((statement) => statement.includes("checkpoint_migration_lock"))).toBe(true)
        expect(sent.some((statement) => statement.includes("USING GIN (metadata)"))).toBe(true)
        expect(violations(sent)).toEqual([])
        // Expiry itself is CockroachDB's row-level TTL; its statements are checked as text.
        const ttl = [
          ...Cockroach.enableTtlStatements({ after: "30 days", cron: "@daily" }).expiry,
          ...Cockroach.disableTtlStatements()
        ]
        expect(violations(ttl)).toEqual([])
        expect(ttl[0]).toBe(
          `ALTER TABLE "public".checkpoint_threads SET (ttl_expiration_expression = 'last_activity + INTERVAL ''30 days''', ttl_job_cron = '@daily')`
        )
      })))

  it.live(
    "migrates safely when many processes start at once (a lock row, not an advisory lock)",
    () =>
      onTarget("migrate", (target) =>
        Effect.gen(function*() {
          const start = Effect.scoped(Layer.build(target.layer({ poolSize: 1 })))
          yield* Effect.all(Array.from({ length: 6 }, () => start), { concurrency: "unbounded" })
          const versions = yield* Effect.promise(() =>
            target.admin((client) => client.query<{ v: number }>("SELECT v FROM checkpoint_migrations ORDER BY v"))
          )
          expect(versions.rows.map((row) => Number(row.v))).toEqual([
            0,
            1,
            2,
            3,
            4,
            5,
            6,
            7,
            8,
            9,
            100,
            101,
            102,
            103,
            104,
            105
          ])
        })),
    60_000
  )

  it.live(
    "enables thread records once when many services ask at once, and only when asked",
    () =>
      onTarget("records", (target) =>
        Effect.gen(function*() {
          const versions = Effect.promise(() =>
            target.admin((client) => client.query<{ v: number }>("SELECT v FROM checkpoint_migrations ORDER BY v"))
          ).pipe(Effect.map((result) => result.rows.map((row) => Number(row.v))))
          const ask = Storage.use((s) => s.getThread("t")).pipe(Effect.provide(target.layer({ poolSize: 1 })))
          yield* Effect.scoped(Layer.build(target.layer({ poolSize: 1 })))
          expect(yield* versions).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 100, 101, 102, 103, 104, 105])
          const found = yield* Effect.all(Array.from({ length: 6 }, () => ask), { concurrency: "unbounded" })
          expect(found.every(Option.isNone)).toBe(true)
          expect(yield* versions).toEqual([
            0,
            1,
            2,
            3,
            4,
            5,
            6,
            7,
            8,
            9,
            100,
            101,
            102,
            103,
            104,
            105,
            1000,
            1001,
            1002
          ])
        })),
    60_000
  )

  it.live("layerConfig reads a cockroachdb:// DATABASE_URL", () =>
    withDatabase("crdb_config", (url) =>
      Effect.gen(function*() {
        const stored = yield* Storage.use((s) => s.put({ thread_id: "t" }, checkpoint(), metadata(), {})).pipe(
          Effect.provide(
            Cockroach.layerConfig({ ...Cockroach.defaultConfig, isolation: Config.succeed("read committed") }).pipe(
              Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ DATABASE_URL: cockroachUrl(url) })))
            )
          )
        )
        expect(stored.thread_id).toBe("t")
      })))

  it.live("runs SERIALIZABLE with no startup parameter: transactions begin so, the stand-in's statements too", () =>
    withDatabase("crdb_isolation", (url) =>
      Effect.gen(function*() {
        const isolation = (transaction: boolean) =>
          Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            const show = sql<{ transaction_isolation: string }>`SHOW transaction_isolation`
            const rows = yield* (transaction ? sql.withTransaction(show) : show)
            return rows[0]?.transaction_isolation
          })
        // On plain PostgreSQL, a transaction the pool opens is SERIALIZABLE; a single statement gets the server's default.
        const plain = yield* Effect.all([isolation(true), isolation(false)]).pipe(
          Effect.provide(Cockroach.layerSqlClient({ url: cockroachUrl(url) }))
        )
        expect(plain).toEqual(["serializable", "read committed"])
        // The stand-in's role makes every statement SERIALIZABLE, as CockroachDB does.
        const standIn = yield* Effect.all([isolation(true), isolation(false)]).pipe(
          Effect.provide(Cockroach.layerSqlClient({ url: cockroachSuite("isolation", () => url).url() }))
        )
        expect(standIn).toEqual(["serializable", "serializable"])
        // `read committed` begins transactions so.
        const committed = yield* isolation(true).pipe(
          Effect.provide(Cockroach.layerSqlClient({ url: cockroachUrl(url), isolation: "read committed" }))
        )
        expect(committed).toBe("read committed")
      })))

  it.live("fromConnString accepts cockroachdb:// URLs", () =>
    withDatabase("crdb_saver", (url) =>
      Effect.promise(async () => {
        const saver = await EffectCheckpointSaver.fromConnString(cockroachUrl(url))
        try {
          const config = await saver.put({ configurable: { thread_id: "t" } }, checkpoint({ a: 1 }), metadata(), {
            a: 1
          })
          expect((await saver.getTuple(config))?.checkpoint.channel_values).toEqual({ a: 1 })
        } finally {
          await saver.close()
        }
        expect(Cockroach.toWireUrl("cockroachdb://root@host:26257/db?sslmode=disable")).toBe(
          "postgres://root@host:26257/db?sslmode=disable"
        )
      })))
})

describe("thread expiry on the CockroachDB dialect", () => {
  it.live("deleting a thread's row (what the TTL job does) removes the whole thread and nothing else", () =>
    onTarget("cascade", (target) =>
      Effect.gen(function*() {
        yield* Effect.gen(function*() {
          const s = yield* Storage
          const write = (thread_id: string) =>
            Effect.gen(function*() {
              const root = yield* s.put({ thread_id }, checkpoint({ log: ["seed"] }), metadata(), { log: 1 })
              yield* s.putWrites(root, [["log", "w0"]], { task_id: "t0" })
              const child = yield* s.put(root, { ...checkpoint(), channel_versions: { log: 2 } }, metadata(), {
                log: 2
              })
              yield* s.putWrites(child, [["log", "w1"]], { task_id: "t1" })
              return child
            })
          yield* write("expired")
          const live = yield* write("live")
          const before = yield* s.getDeltaChannelHistory(live, ["log"])

          yield* Cockroach.enableThreadCascade({ schema: target.schema })
          yield* Cockroach.enableThreadCascade({ schema: target.schema }) // idempotent
          const activity = yield* Effect.promise(() =>
            target.admin((client) => client.query("SELECT thread_id FROM checkpoint_threads ORDER BY thread_id"))
          )
          expect(activity.rows.map((row) => row.thread_id)).toEqual(["expired", "live"])

          yield* Effect.promise(() =>
            target.admin((client) => client.query("DELETE FROM checkpoint_threads WHERE thread_id = 'expired'"))
          )
          const left = yield* Effect.promise(() =>
            target.admin((client) =>
              client.query(`
                SELECT (SELECT count(*) FROM checkpoints WHERE thread_id = 'expired')
                     + (SELECT count(*) FROM checkpoint_blobs WHERE thread_id = 'expired')
                     + (SELECT count(*) FROM checkpoint_writes WHERE thread_id = 'expired') AS n`)
            )
          )
          expect(Number(left.rows[0].n)).toBe(0)
          expect(Option.isNone(yield* s.getTuple({ thread_id: "expired" }))).toBe(true)
          // The live thread reads back exactly as before.
          expect(yield* s.getDeltaChannelHistory(live, ["log"])).toEqual(before)
          // Writing and deleting still work under the constraints.
          yield* write("new")
          yield* s.deleteThread("live")
          expect(Option.isNone(yield* s.getTuple({ thread_id: "live" }))).toBe(true)
          expect(Option.isSome(yield* s.getTuple({ thread_id: "new" }))).toBe(true)
        }).pipe(Effect.provide(withClient(target)))
      })))

  // CockroachDB's TTL job runs at most once a minute; PostgreSQL has no row-level TTL at all.
  it.live(
    "enableTtl: on CockroachDB an inactive thread expires whole; on PostgreSQL it fails, never pretends",
    () =>
      onTarget("ttl", (target) =>
        Effect.gen(function*() {
          const version = yield* Effect.promise(() => target.admin((client) => client.query("SELECT version() AS v")))
          const s = yield* Storage
          yield* s.put({ thread_id: "short-lived" }, checkpoint({ log: ["x"] }), metadata(), { log: 1 })
          const enabled = yield* Effect.exit(
            Cockroach.enableTtl({ after: "1 second", cron: "* * * * *", schema: target.schema })
          )
          if (!String(version.rows[0].v).includes("CockroachDB")) {
            expect(enabled._tag).toBe("Failure")
            expect(String(enabled)).toContain("ttl_expiration_expression")
            return
          }
          expect(enabled._tag).toBe("Success")
          const gone = yield* s.getTuple({ thread_id: "short-lived" }).pipe(
            Effect.flatMap((tuple) => Option.isNone(tuple) ? Effect.succeed(true) : Effect.fail("still there")),
            Effect.retry({ schedule: Schedule.spaced("5 seconds"), times: 60 })
          )
          expect(gone).toBe(true)
        }).pipe(Effect.provide(withClient(target)))),
    400_000
  )
})

/** The whole storage contract, in the CockroachDB dialect, SERIALIZABLE. */
storageScenarios(
  "cockroach dialect",
  Layer.unwrap(
    Effect.acquireRelease(
      Effect.promise(async () => {
        const database = await createDatabase("crdb_contract")
        return { database, target: cockroachSuite("storage", () => database.url) }
      }),
      ({ database, target }) => Effect.promise(() => target.drop().then(() => database.drop()))
    ).pipe(Effect.map(({ target }) => target.layer({ poolSize: 4 })))
  )
)
