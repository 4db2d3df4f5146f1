/**
 * What only the PostgreSQL driver has: migrations, adoption of a database the
 * official saver wrote, one round trip per operation, pool layers, and data
 * that no longer decodes.
 */
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { AIMessage, HumanMessage } from "@langchain/core/messages"
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph"
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres"
import { Config, ConfigProvider, type Duration, Effect, Layer, Option, Redacted, Stream } from "effect"
import { SqlClient } from "effect/sql"
import { Pool } from "pg"
import { makeCountingSocket } from "../../harness/countingSocket.ts"
import { admin, withDatabase } from "../../harness/databases.ts"
import { CheckpointStorage, EffectCheckpointSaver } from "../../src/index.ts"
import * as Postgres from "../../src/postgres.ts"
import { checkpoint, metadata } from "../support/fixtures.ts"

const { CheckpointStorage: Storage } = CheckpointStorage
const redacted = (url: string) => Redacted.make(url)

const migrationVersions = (url: string) =>
  Effect.promise(() =>
    admin((client) => client.query<{ v: number }>("SELECT v FROM checkpoint_migrations ORDER BY v"), url)
  ).pipe(Effect.map((result) => result.rows.map((row) => row.v)))

describe("migrations", () => {
  it.live(
    "many processes starting at once on an empty database all succeed, each step applied once",
    () =>
      withDatabase("migrate", (url) =>
        Effect.gen(function*() {
          const start = Effect.scoped(Layer.build(Postgres.layer({ url, poolSize: 1 })))
          yield* Effect.all(Array.from({ length: 8 }, () => start), { concurrency: "unbounded" })
          expect(yield* migrationVersions(url)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 100, 101, 102, 103, 104, 105])
          // Also when they must create the schema first.
          const inSchema = Effect.scoped(Layer.build(Postgres.layer({ url, poolSize: 1, schema: "created together" })))
          yield* Effect.all(Array.from({ length: 8 }, () => inSchema), { concurrency: "unbounded" })
        })),
    60_000
  )

  it.live("a schema newer than the library fails fast, naming both versions", () =>
    withDatabase("newer", (url) =>
      Effect.gen(function*() {
        yield* Effect.scoped(Layer.build(Postgres.layer({ url })))
        yield* Effect.promise(() =>
          admin((client) => client.query("INSERT INTO checkpoint_migrations VALUES (42)"), url)
        )
        const error = yield* Effect.flip(Effect.scoped(Layer.build(Postgres.layer({ url }))))
        expect(error._tag).toBe("IncompatibleSchema")
        expect(error.message).toContain("migration 42, newer than this library knows (up to 9)")
        yield* Effect.promise(() =>
          admin((client) =>
            client.query(
              "DELETE FROM checkpoint_migrations WHERE v = 42; INSERT INTO checkpoint_migrations VALUES (142)"
            ), url)
        )
        const ours = yield* Effect.flip(Effect.scoped(Layer.build(Postgres.layer({ url, migrate: false }))))
        expect(ours.message).toContain("migration 142, newer than this library knows (up to 105)")
        // A step a newer release marks as one older releases may ignore (1000 and up) is not newer.
        yield* Effect.promise(() =>
          admin((client) =>
            client.query(
              "DELETE FROM checkpoint_migrations WHERE v = 142; INSERT INTO checkpoint_migrations VALUES (1042)"
            ), url)
        )
        yield* Effect.scoped(Layer.build(Postgres.layer({ url })))
        yield* Effect.scoped(Layer.build(Postgres.layer({ url, migrate: false })))
      })))

  it.live("a migrations table that drops what is inserted fails the opening, typed, instead of looping", () =>
    withDatabase("dropping", (url) =>
      Effect.gen(function*() {
        yield* Effect.scoped(Layer.build(Postgres.layer({ url })))
        yield* Effect.promise(() =>
          admin((client) =>
            client.query(
              "DELETE FROM checkpoint_migrations WHERE v = 102; " +
                "CREATE RULE drop_steps AS ON INSERT TO checkpoint_migrations DO INSTEAD NOTHING"
            ), url)
        )
        const error = yield* Effect.flip(Effect.scoped(Layer.build(Postgres.layer({ url })))).pipe(
          Effect.timeout("20 seconds")
        )
        expect(error._tag).toBe("StorageFailure")
        expect(error.message).toContain("step 102 ran but")
      })))

  it.live("a process open when a newer release's migration lands reports IncompatibleSchema, not damage", () =>
    withDatabase("landed", (url) =>
      Effect.promise(async () => {
        const saver = await EffectCheckpointSaver.fromConnString(url)
        try {
          const config = { configurable: { thread_id: "t", checkpoint_ns: "" } }
          const stored = await saver.put(config, checkpoint(), metadata(), {})
          await saver.putWrites(stored, [["a", 1]], "task")
          // A newer release renames a column this one writes, and records its step.
          await admin((client) =>
            client.query(
              "ALTER TABLE checkpoint_writes RENAME COLUMN task_path TO path; INSERT INTO checkpoint_migrations VALUES (500)"
            ), url)
          // The next statement that fails on it says why: the schema, before any refresh.
          const failed = await saver.putWrites(stored, [["a", 2]], "task 2").then(() => undefined, (error) => error)
          expect(failed).toMatchObject({ _tag: "IncompatibleSchema", found: 500 })
          expect(String(failed)).toContain("migration 500, newer than this library knows")
          // And the process stops there: every operation says so.
          const read = await saver.getTuple(config).then(() => undefined, (error) => error)
          expect(read).toMatchObject({ _tag: "IncompatibleSchema", found: 500 })
        } finally {
          await saver.close()
        }
      })))

  it.live("migrate: false only verifies; migrations can run as their own step", () =>
    withDatabase("deploy", (url) =>
      Effect.gen(function*() {
        const storage = Postgres.layer({ url, migrate: false })
        const error = yield* Effect.flip(Effect.scoped(Layer.build(storage)))
        expect(error.message).toContain("has no checkpoint tables")
        const deploy = Postgres.layerMigrations().pipe(Layer.provide(PgClient.layer({ url: redacted(url) })))
        yield* Effect.scoped(Layer.build(deploy))
        yield* Effect.scoped(Layer.build(storage))
      })))

  it.live("tables can live in a schema of their own", () =>
    withDatabase("schema", (url) =>
      Effect.gen(function*() {
        const storage = Postgres.layer({ url, schema: "agent state" })
        const stored = yield* Storage.use((s) => s.put({ thread_id: "t" }, checkpoint({ a: 1 }), metadata(), { a: 1 }))
          .pipe(
            Effect.provide(storage)
          )
        expect(stored.thread_id).toBe("t")
        const count = yield* Effect.promise(() =>
          admin((client) => client.query(`SELECT count(*)::int AS n FROM "agent state".checkpoints`), url)
        )
        expect(count.rows[0].n).toBe(1)
      })))
})

describe("adopting a database written by @langchain/langgraph-checkpoint-postgres", () => {
  it.live(
    "reads its threads back exactly, and continues them",
    () =>
      withDatabase("adopt", (url) =>
        Effect.gen(function*() {
          const graph = new StateGraph(MessagesAnnotation)
            .addNode("model", (state) => ({ messages: [new AIMessage(`reply ${state.messages.length}`)] }))
            .addEdge(START, "model")
            .addEdge("model", END)
          const config = { configurable: { thread_id: "adopted" } }

          const pool = new Pool({ connectionString: url })
          // Dropping the database ends its connections; that is expected here.
          pool.on("error", () => undefined)
          const official = new PostgresSaver(pool)
          yield* Effect.promise(async () => {
            await official.setup()
            const app = graph.compile({ checkpointer: official })
            await app.invoke({ messages: [new HumanMessage("one")] }, config)
            await app.invoke({ messages: [new HumanMessage("two")] }, config)
          })
          const theirs = yield* Effect.promise(async () => {
            const tuples = []
            for await (const tuple of official.list(config)) tuples.push(tuple)
            return tuples
          })
          expect(yield* migrationVersions(url)).toEqual([0, 1, 2, 3, 4])

          const ours = yield* Effect.promise(() => EffectCheckpointSaver.fromConnString(url))
          expect(yield* migrationVersions(url)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 100, 101, 102])
          const read = yield* Effect.promise(async () => {
            const tuples = []
            for await (const tuple of ours.list(config)) tuples.push(tuple)
            return tuples
          })
          expect(read.map((t) => t.checkpoint)).toEqual(theirs.map((t) => t.checkpoint))
          expect(read.map((t) => t.metadata)).toEqual(theirs.map((t) => t.metadata))
          expect(read.map((t) => t.parentConfig)).toEqual(theirs.map((t) => t.parentConfig))

          const continued = yield* Effect.promise(() =>
            graph.compile({ checkpointer: ours }).invoke({ messages: [new HumanMessage("three")] }, config)
          )
          expect(continued.messages.map((m) => String(m.content))).toEqual([
            "one",
            "reply 1",
            "two",
            "reply 3",
            "three",
            "reply 5"
          ])
          yield* Effect.promise(() => Promise.all([ours.close(), official.end()]))
        })),
    60_000
  )
})

describe("one round trip per operation", () => {
  it.live("put, putWrites, getTuple, list, getDeltaChannelHistory and deleteThread", () =>
    withDatabase("roundtrips", (url) =>
      Effect.gen(function*() {
        const socket = makeCountingSocket(url)
        const client = PgClient.layerFrom(PgClient.makeClient({ url: redacted(url), stream: socket.open }))
        const storage = Postgres.layerClient().pipe(Layer.provide(client))
        const measure = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
          Effect.gen(function*() {
            yield* effect // the first run prepares the statement
            const before = socket.roundTrips()
            yield* effect
            return socket.roundTrips() - before
          })
        yield* Effect.gen(function*() {
          const s = yield* Storage
          let ref = yield* s.put({ thread_id: "t" }, checkpoint({ a: 1, b: [1, 2], c: "x" }), metadata(), {
            a: 1,
            b: 1,
            c: 1
          })
          for (let step = 0; step < 30; step++) {
            const cp = { ...checkpoint({ a: step }), channel_versions: { a: step + 2, b: 1, c: 1 } }
            ref = yield* s.put(ref, cp, metadata(), { a: step + 2 })
            yield* s.putWrites(ref, [["a", step], ["b", [step]]], { task_id: `task-${step}`, task_path: "~0" })
          }
          const trips = {
            put: yield* measure(s.put(ref, checkpoint({ x: 1, y: 2, z: 3 }), metadata(), { x: 1, y: 1, z: 1 })),
            putWrites: yield* measure(s.putWrites(ref, [["a", 1], ["b", 2], ["c", 3]], { task_id: "w" })),
            getTuple: yield* measure(s.getTuple({ thread_id: "t" })),
            getTupleById: yield* measure(s.getTuple(ref)),
            list10: yield* measure(Stream.runDrain(s.list({ thread_id: "t", limit: 10 }))),
            listAll: yield* measure(Stream.runDrain(s.list({ thread_id: "t" }))),
            deltaHistory: yield* measure(s.getDeltaChannelHistory(ref, ["a", "b"])),
            deleteThread: yield* measure(s.deleteThread("t"))
          }
          expect(trips).toEqual({
            put: 1,
            putWrites: 1,
            getTuple: 1,
            getTupleById: 1,
            list10: 1,
            listAll: 1,
            deltaHistory: 1,
            // BEGIN, the thread's lock, the delete, COMMIT: no put can be between its checks and its commit.
            deleteThread: 4
          })
        }).pipe(Effect.provide(storage))
      })))
})

describe("a thread's last activity", () => {
  it.live(
    "moves on at most once a second: puts within a second leave its row as it was",
    () =>
      withDatabase("activity", (url) =>
        Effect.gen(function*() {
          const row = Effect.promise(() =>
            admin(
              (client) =>
                client.query<{ version: string; at: Date }>(
                  "SELECT xmin::text AS version, last_activity AS at FROM checkpoint_threads WHERE thread_id = 't'"
                ),
              url
            )
          ).pipe(Effect.map((result) => result.rows[0]!))
          yield* Effect.gen(function*() {
            const s = yield* Storage
            let ref = yield* s.put({ thread_id: "t" }, checkpoint({ a: 0 }), metadata(), { a: 1 })
            const first = yield* row
            for (let step = 1; step <= 5; step++) {
              ref = yield* s.put(ref, { ...checkpoint({ a: step }), channel_versions: { a: step + 1 } }, metadata(), {
                a: step + 1
              })
            }
            const soon = yield* row
            yield* Effect.sleep("1100 millis")
            yield* s.put(ref, { ...checkpoint({ a: 9 }), channel_versions: { a: 9 } }, metadata(), { a: 9 })
            const later = yield* row
            expect(soon).toEqual(first)
            expect(later.version).not.toBe(first.version)
            expect(later.at.getTime() - first.at.getTime()).toBeGreaterThanOrEqual(1000)
          }).pipe(Effect.provide(Postgres.layer({ url })))
        })),
    30_000
  )
})

describe("layers", () => {
  it.live("layerClient shares the application's pool; layer closes its own pool with its scope", () =>
    withDatabase("pools", (url) =>
      Effect.gen(function*() {
        const connections = Effect.promise(() =>
          admin((client) =>
            client.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'pool-test'"
            )
          )
        ).pipe(Effect.map((result) => result.rows[0]!.n))

        yield* Effect.scoped(Effect.gen(function*() {
          const context = yield* Layer.build(Postgres.layer({ url, poolSize: 3, applicationName: "pool-test" }))
          yield* Effect.all(
            Array.from({ length: 6 }, (_, i) => Storage.use((st) => st.getTuple({ thread_id: `t${i}` }))),
            { concurrency: "unbounded" }
          ).pipe(Effect.provide(context))
          expect(yield* connections).toBeGreaterThan(0)
        }))
        expect(yield* connections).toBe(0)

        // The application's client: our storage runs inside its transaction.
        const app = PgClient.layer({ url: redacted(url), applicationName: "pool-test" })
        yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const s = yield* Storage
          yield* sql.withTransaction(
            s.put({ thread_id: "rolled-back" }, checkpoint(), metadata(), {}).pipe(
              Effect.andThen(Effect.fail("abort" as const))
            )
          ).pipe(Effect.ignore)
          expect(Option.isNone(yield* s.getTuple({ thread_id: "rolled-back" }))).toBe(true)
        }).pipe(Effect.provide(Postgres.layerClient().pipe(Layer.provideMerge(app))))
      })))

  it.live("layerConfig reads DATABASE_URL", () =>
    withDatabase("config", (url) =>
      Effect.gen(function*() {
        const stored = yield* Storage.use((s) => s.put({ thread_id: "t" }, checkpoint(), metadata(), {})).pipe(
          Effect.provide(
            Postgres.layerConfig().pipe(
              Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ DATABASE_URL: url })))
            )
          )
        )
        expect(stored.thread_id).toBe("t")
      })))

  it.live("layerConfig takes its settings as Config: the application names the variables", () =>
    withDatabase("config_names", (url) =>
      Effect.gen(function*() {
        const settings = ConfigProvider.layer(
          ConfigProvider.fromUnknown({ CHECKPOINTS_URL: url, CHECKPOINTS_SCHEMA: "own" })
        )
        const custom = Postgres.layerConfig({
          url: Config.Redacted("CHECKPOINTS_URL"),
          schema: Config.String("CHECKPOINTS_SCHEMA"),
          poolSize: Config.succeed(2)
        })
        yield* Storage.use((s) => s.put({ thread_id: "t" }, checkpoint(), metadata(), {})).pipe(
          Effect.provide(custom.pipe(Layer.provide(settings)))
        )
        const tables = yield* Effect.promise(() =>
          admin((client) => client.query("SELECT 1 FROM own.checkpoints WHERE thread_id = 't'"), url)
        )
        expect(tables.rowCount).toBe(1)

        // The default names are not read when the application chose others.
        const missing = yield* Effect.flip(
          Effect.scoped(Layer.build(Postgres.layerConfig().pipe(Layer.provide(settings))))
        )
        expect(missing._tag).toBe("InvalidConfig")
        expect(missing.message).toContain("DATABASE_URL")
      })))

  it.live("a server that cannot be reached is a StorageFailure, once the retry window is over", () =>
    Effect.gen(function*() {
      const started = Date.now()
      const error = yield* Effect.flip(
        Effect.scoped(
          Layer.build(Postgres.layer({ url: "postgres://nobody@127.0.0.1:1/none", retryWindow: "300 millis" }))
        )
      )
      expect(error._tag).toBe("StorageFailure")
      expect(Date.now() - started).toBeLessThan(3_000)
    }))
})

describe("bad configuration, refused when the layer is built (issue 36)", () => {
  const tableCount = (url: string) =>
    Effect.promise(() =>
      admin((client) => client.query("SELECT 1 FROM pg_tables WHERE tablename LIKE 'checkpoint%'"), url)
    ).pipe(Effect.map((result) => result.rowCount))

  it.live("layerClient and migrate over an application's pool: an InvalidConfig, and no statement sent", () =>
    withDatabase("bad_options", (url) =>
      Effect.gen(function*() {
        const client = Postgres.layerSqlClient({ url })
        for (
          const [option, value] of [["statementTimeout", 0], ["retryWindow", Infinity], ["pageSize", Number.NaN], [
            "groupCommit",
            { concurrency: Number.NaN }
          ]] as const
        ) {
          const error = yield* Effect.flip(
            Effect.scoped(Layer.build(Postgres.layerClient({ [option]: value }).pipe(Layer.provide(client))))
          )
          expect(error._tag).toBe("InvalidConfig")
          expect(error.message).toContain(`["${option}"]`)
        }
        const migrated = yield* Effect.flip(
          Postgres.migrate({ retryWindow: "5 parsecs" as Duration.Input }).pipe(Effect.provide(client))
        )
        expect(migrated._tag).toBe("InvalidConfig")
        expect(migrated.message).toContain(`got "5 parsecs" at ["retryWindow"]`)
        expect(yield* tableCount(url)).toBe(0)
      })))

  it.live("the accepted edges work: windows of 0 (no retry, no group-commit wait), durations in every form", () =>
    withDatabase("edge_options", (url) =>
      Effect.gen(function*() {
        const layer = Postgres.layer({
          url,
          retryWindow: 0,
          groupCommit: { window: 0, concurrency: 1, maxBatch: 1 },
          statementTimeout: { seconds: 30 },
          idleTimeout: [60, 0],
          connectionTTL: "1 hour",
          pageSize: 1
        })
        yield* Effect.gen(function*() {
          const s = yield* Storage
          let ref = yield* s.put({ thread_id: "edges" }, checkpoint({ a: 1 }), metadata(), { a: 1 })
          ref = yield* s.put(ref, checkpoint({ a: 2 }), metadata(), { a: 2 })
          // A page of one: both checkpoints still come back.
          expect(Array.from(yield* Stream.runCollect(s.list({ thread_id: "edges" })))).toHaveLength(2)
        }).pipe(Effect.provide(layer))
      })))

  it.live("fromConnString: a bad connection setting rejects before a connection is opened", () =>
    withDatabase("bad_saver", (url) =>
      Effect.gen(function*() {
        for (const connection of [{ statementTimeout: Number.NaN }, { poolSize: 0 }, { idleTimeout: "ten seconds" }]) {
          const error = yield* Effect.promise(() =>
            EffectCheckpointSaver.fromConnString(url, { connection: connection as Postgres.PostgresOptions }).then(
              () => undefined,
              (e: unknown) => e
            )
          )
          expect(error).toMatchObject({ _tag: "InvalidConfig", operation: "connect" })
        }
        expect(yield* tableCount(url)).toBe(0)
      })))
})

describe("connection hygiene", () => {
  /** The connections open now from the pool named `application`. */
  const connections = (application: string) =>
    Effect.promise(() =>
      admin((client) =>
        client.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = $1", [application])
      )
    ).pipe(Effect.map((result) => result.rows.map((row) => row.pid)))

  const busy = Effect.all(
    Array.from(
      { length: 6 },
      (_, i) => Storage.use((s) => s.put({ thread_id: `busy-${i}` }, checkpoint(), metadata(), {}))
    ),
    { concurrency: "unbounded" }
  )

  it.live("idleTimeout closes connections left unused; the next call opens new ones", () =>
    withDatabase("idle_timeout", (url) =>
      Effect.gen(function*() {
        yield* Effect.gen(function*() {
          yield* busy
          expect((yield* connections("idle-timeout")).length).toBeGreaterThan(0)
          yield* Effect.sleep("1500 millis")
          expect(yield* connections("idle-timeout")).toEqual([])
          yield* busy
        }).pipe(
          Effect.provide(
            Postgres.layer({ url, poolSize: 3, idleTimeout: "300 millis", applicationName: "idle-timeout" })
          )
        )
      })))

  it.live("connectionTTL replaces a connection once it is that old, however busy", () =>
    withDatabase("connection_ttl", (url) =>
      Effect.gen(function*() {
        yield* Effect.gen(function*() {
          yield* busy
          const first = yield* connections("connection-ttl")
          yield* Effect.sleep("700 millis")
          yield* busy
          const later = yield* connections("connection-ttl")
          expect(later.length).toBe(1)
          expect(first).not.toContain(later[0])
        }).pipe(
          Effect.provide(
            Postgres.layer({ url, poolSize: 1, connectionTTL: "500 millis", applicationName: "connection-ttl" })
          )
        )
      })))

  it.live("the serverless preset holds one connection, whatever the concurrency", () =>
    withDatabase("serverless", (url) =>
      Effect.gen(function*() {
        yield* Effect.gen(function*() {
          yield* busy
          expect((yield* connections("serverless")).length).toBe(1)
        }).pipe(Effect.provide(Postgres.layer({ url, ...Postgres.serverless, applicationName: "serverless" })))
      })))

  it.live("layerConfig reads the pool's durations; a malformed one is an InvalidConfig naming it", () =>
    withDatabase("config_durations", (url) =>
      Effect.gen(function*() {
        const configured = (settings: Record<string, string>) =>
          Postgres.layerConfig({ ...Postgres.defaultConfig, applicationName: Config.succeed("configured") }).pipe(
            Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ DATABASE_URL: url, ...settings })))
          )
        yield* Effect.gen(function*() {
          yield* busy
          yield* Effect.sleep("1500 millis")
          expect(yield* connections("configured")).toEqual([])
        }).pipe(
          Effect.provide(configured({ CHECKPOINT_IDLE_TIMEOUT: "300 millis", CHECKPOINT_RETRY_WINDOW: "2 seconds" }))
        )
        const malformed = yield* Effect.flip(
          Effect.scoped(Layer.build(configured({ CHECKPOINT_IDLE_TIMEOUT: "soon" })))
        )
        expect(malformed._tag).toBe("InvalidConfig")
        expect(malformed.message).toContain("CHECKPOINT_IDLE_TIMEOUT")
      })))
})

describe("stored data that no longer decodes", () => {
  it.live("is a CorruptedCheckpoint naming the thread and checkpoint", () =>
    withDatabase("corrupt", (url) =>
      Effect.gen(function*() {
        const storage = Postgres.layer({ url })
        yield* Effect.gen(function*() {
          const s = yield* Storage
          const ref = yield* s.put({ thread_id: "broken" }, checkpoint({ a: { deep: 1 } }), metadata(), { a: 1 })
          yield* Effect.promise(() =>
            admin((client) => client.query("UPDATE checkpoint_blobs SET blob = '\\x7b6e6f74'::bytea"), url)
          )
          const error = yield* Effect.flip(s.getTuple({ thread_id: "broken" }))
          expect(error._tag).toBe("CorruptedCheckpoint")
          expect(error.message).toContain(`checkpoint ${ref.checkpoint_id} of thread "broken"`)
          expect(error.message).toContain(`channel "a"`)

          yield* Effect.promise(() =>
            admin((client) => client.query(`UPDATE checkpoints SET checkpoint = '{"v": "four"}'`), url)
          )
          const header = yield* Effect.flip(s.getTuple(ref))
          expect(header._tag).toBe("CorruptedCheckpoint")
          expect(header.message).toContain(ref.checkpoint_id)

          // A header moved from another checkpoint (or its id edited): the row's, not the header's, is at fault.
          const moved = yield* s.put({ thread_id: "moved" }, checkpoint({}), metadata(), {})
          const other = yield* s.put(
            { thread_id: "moved", checkpoint_id: moved.checkpoint_id },
            checkpoint({}),
            metadata(),
            {}
          )
          yield* Effect.promise(() =>
            admin((client) =>
              client.query(
                `UPDATE checkpoints SET checkpoint = jsonb_set(checkpoint, '{id}', to_jsonb($1::text)) WHERE checkpoint_id = $2`,
                [other.checkpoint_id, moved.checkpoint_id]
              ), url)
          )
          const renamed = yield* Effect.flip(s.getTuple(moved))
          expect(renamed._tag).toBe("CorruptedCheckpoint")
          expect(renamed.message).toContain(`its header is that of checkpoint "${other.checkpoint_id}"`)
          expect(Option.isSome(yield* s.getTuple(other))).toBe(true)
        }).pipe(Effect.provide(storage))
      })))
})
