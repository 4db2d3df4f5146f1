/**
 * Retries against a real PostgreSQL server: injected failures, real
 * serialization conflicts under SERIALIZABLE, connections killed mid-run,
 * and statements inside a caller's transaction.
 */
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { uuid6 } from "@langchain/langgraph-checkpoint"
import { Clock, Effect, Fiber, Layer, Option, Redacted, Schedule, Stream, Tracer } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { TestClock } from "effect/testing"
import { admin, serializableByDefault, withDatabase } from "../../harness/databases.ts"
import { CheckpointStorage, EffectCheckpointSaver, Retry } from "../../src/index.ts"
import * as Postgres from "../../src/postgres.ts"
import { conflictingWriters, lostConnectionRetries, retryCount } from "../scenarios/conflicts.ts"
import { checkpoint, metadata } from "../support/fixtures.ts"

const { CheckpointStorage: Storage } = CheckpointStorage

const sql = (url: string, text: string) => Effect.promise(() => admin((client) => client.query(text), url))

/**
 * A trigger on `table` that fails the first `times` statements with `code`:
 * the sequence counts attempts even when they roll back.
 */
const inject = (url: string, table: string, times: number, code: string, message = "injected failure") =>
  sql(
    url,
    `
    CREATE SEQUENCE IF NOT EXISTS injected_attempts;
    ALTER SEQUENCE injected_attempts RESTART;
    CREATE OR REPLACE FUNCTION inject_failure() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF nextval('injected_attempts') <= ${times} THEN
        RAISE EXCEPTION '${message.replaceAll("'", "''")}' USING ERRCODE = '${code}';
      END IF;
      RETURN NEW;
    END $$;
    DROP TRIGGER IF EXISTS inject_failure ON ${table};
    CREATE TRIGGER inject_failure BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION inject_failure();`
  )

const attemptsMade = (url: string) =>
  Effect.promise(() =>
    admin((client) => client.query<{ n: string }>("SELECT last_value AS n FROM injected_attempts"), url)
  ).pipe(Effect.map((result) => Number(result.rows[0]!.n)))

describe("retry", () => {
  it.live("succeeds after k injected serialization failures, counting each retry", () =>
    withDatabase("retry_k", (url) =>
      Effect.gen(function*() {
        yield* Effect.scoped(Layer.build(Postgres.layer({ url })))
        yield* inject(url, "checkpoints", 3, "40001")
        const before = yield* retryCount("put", "40001")
        const events: Array<{ readonly span: string; readonly name: string; readonly attributes: unknown }> = []
        const recording = Tracer.make({
          span(options) {
            const span = Tracer.nativeTracer.span(options)
            const event = span.event.bind(span)
            span.event = (name, startTime, attributes) => {
              events.push({ span: options.name, name, attributes })
              event(name, startTime, attributes)
            }
            return span
          }
        })
        const stored = yield* Storage.use((s) => s.put({ thread_id: "t" }, checkpoint(), metadata(), {})).pipe(
          Effect.provide(Postgres.layer({ url })),
          Effect.withTracer(recording)
        )
        expect(stored.thread_id).toBe("t")
        expect(yield* attemptsMade(url)).toBe(4)
        expect((yield* retryCount("put", "40001")) - before).toBe(3)
        expect(events.filter((event) => event.name === "checkpoint.retry")).toEqual([1, 2, 3].map((attempt) => ({
          span: "CheckpointStorage.put",
          name: "checkpoint.retry",
          attributes: { operation: "put", attempt, sqlstate: "40001" }
        })))
      })))

  it.live(
    "ends in a typed error stating the attempts and the last SQLSTATE when retries run out",
    () =>
      withDatabase("retry_exhausted", (url) =>
        Effect.gen(function*() {
          yield* Effect.scoped(Layer.build(Postgres.layer({ url })))
          yield* inject(url, "checkpoints", 1000, "40001")
          const error = yield* Effect.flip(
            Storage.use((s) => s.put({ thread_id: "t" }, checkpoint(), metadata(), {})).pipe(
              Effect.provide(Postgres.layer({ url, retry: Schedule.recurs(4) }))
            )
          )
          expect(error._tag).toBe("StorageFailure")
          expect(error).toMatchObject({ attempts: 5, sqlState: "40001", retryable: true })
          expect(error.message).toMatch(/^put: storage failed after 5 attempts \(SQLSTATE 40001\)/)
          expect(yield* attemptsMade(url)).toBe(5)

          // A retry window bounds the attempts by time.
          yield* sql(url, "ALTER SEQUENCE injected_attempts RESTART")
          const started = Date.now()
          const bounded = yield* Effect.flip(
            Storage.use((s) => s.put({ thread_id: "t" }, checkpoint(), metadata(), {})).pipe(
              Effect.provide(Postgres.layer({ url, retryWindow: "2 seconds" }))
            )
          )
          expect(bounded._tag === "StorageFailure" && bounded.attempts).toBeGreaterThan(5)
          expect(bounded._tag === "StorageFailure" && bounded.attempts).toBeLessThanOrEqual(12)
          expect(Date.now() - started).toBeGreaterThan(1_800)
          expect(Date.now() - started).toBeLessThan(4_500)
        })),
    30_000
  )

  it.live("a saver's own policy applies to its operations", () =>
    withDatabase("retry_saver", (url) =>
      Effect.gen(function*() {
        yield* Effect.scoped(Layer.build(Postgres.layer({ url })))
        yield* inject(url, "checkpoints", 1, "40001")
        const saver = EffectCheckpointSaver.fromLayer(Postgres.layer({ url }), { retry: Schedule.recurs(0) })
        const error = yield* Effect.promise(() =>
          saver.put({ configurable: { thread_id: "t" } }, checkpoint(), metadata(), {}).then(
            () => undefined,
            (e: unknown) => e
          )
        )
        yield* Effect.promise(() => saver.close())
        expect(error).toMatchObject({ _tag: "StorageFailure", attempts: 1, sqlState: "40001", retryable: true })
      })))

  it.live("fromConnString takes a retry window and the pool's settings", () =>
    withDatabase("retry_conn_string", (url) =>
      Effect.gen(function*() {
        yield* Effect.scoped(Layer.build(Postgres.layer({ url })))
        yield* inject(url, "checkpoints", 1000, "40001")
        const saver = yield* Effect.promise(() =>
          EffectCheckpointSaver.fromConnString(url, { retryWindow: "600 millis", connection: { poolSize: 1 } })
        )
        const started = Date.now()
        const error = yield* Effect.promise(() =>
          saver.put({ configurable: { thread_id: "t" } }, checkpoint(), metadata(), {}).then(
            () => undefined,
            (e: unknown) => e
          )
        )
        const elapsed = Date.now() - started
        const open = yield* Effect.promise(() =>
          admin(
            (client) =>
              client.query(
                "SELECT 1 FROM pg_stat_activity WHERE application_name = 'langgraph-checkpoint-effect' AND datname = current_database() AND pid <> pg_backend_pid()"
              ),
            url
          )
        )
        yield* Effect.promise(() => saver.close())
        expect(error).toMatchObject({ _tag: "StorageFailure", sqlState: "40001", retryable: true })
        expect(elapsed).toBeGreaterThan(500)
        expect(elapsed).toBeLessThan(3_000)
        expect(open.rowCount).toBe(1)
      })))

  it.live("never retries what cannot succeed: a unique violation, an undefined table", () =>
    withDatabase("retry_never", (url) =>
      Effect.gen(function*() {
        yield* Effect.scoped(Layer.build(Postgres.layer({ url })))
        for (const code of ["23505", "42P01"]) {
          yield* inject(url, "checkpoint_writes", 1000, code)
          const error = yield* Effect.flip(
            Effect.gen(function*() {
              const s = yield* Storage
              const ref = yield* s.put({ thread_id: `t-${code}` }, checkpoint(), metadata(), {})
              yield* s.putWrites(ref, [["a", 1]], { task_id: "task" })
            }).pipe(Effect.provide(Postgres.layer({ url })))
          )
          expect(error).toMatchObject({ _tag: "StorageFailure", attempts: 1, sqlState: code, retryable: false })
          expect(yield* attemptsMade(url)).toBe(1)
        }
      })))

  it.live("inside the caller's transaction: joins it, fails at once, and the caller's retry restarts it", () =>
    withDatabase("retry_tx", (url) =>
      Effect.gen(function*() {
        yield* Effect.scoped(Layer.build(Postgres.layer({ url })))
        const app = PgClient.layer({ url: Redacted.make(url) })
        yield* Effect.gen(function*() {
          const client = yield* SqlClient.SqlClient
          const s = yield* Storage
          yield* client.unsafe("CREATE TABLE audit (note text)")

          // Our failure is raised at once, inside a savepoint: the caller's transaction goes on and commits.
          yield* inject(url, "checkpoints", 1, "40001")
          const outcome = yield* client.withTransaction(Effect.gen(function*() {
            const error = yield* Effect.flip(s.put({ thread_id: "joined" }, checkpoint(), metadata(), {}))
            yield* client.unsafe("INSERT INTO audit VALUES ('caller kept going')")
            return error
          }))
          expect(outcome).toMatchObject({ _tag: "StorageFailure", attempts: 1, sqlState: "40001" })
          expect(yield* attemptsMade(url)).toBe(1)
          expect(Option.isNone(yield* s.getTuple({ thread_id: "joined" }))).toBe(true)
          expect(yield* client.unsafe("SELECT note FROM audit")).toEqual([{ note: "caller kept going" }])

          // The caller retries its whole transaction; the second attempt commits our write with its own.
          yield* inject(url, "checkpoints", 1, "40001")
          yield* client.withTransaction(Effect.gen(function*() {
            yield* client.unsafe("INSERT INTO audit VALUES ('retried')")
            yield* s.put({ thread_id: "retried" }, checkpoint(), metadata(), {})
          })).pipe(Effect.retry({ times: 2 }))
          expect(yield* attemptsMade(url)).toBe(2)
          expect(Option.isSome(yield* s.getTuple({ thread_id: "retried" }))).toBe(true)
          expect(yield* client.unsafe("SELECT note FROM audit ORDER BY note")).toEqual([
            { note: "caller kept going" },
            { note: "retried" }
          ])
        }).pipe(Effect.provide(Postgres.layerClient().pipe(Layer.provideMerge(app))))
      })))
})

/** The backends of the pool named `application`. */
const backendsOf = (url: string, application: string) =>
  Effect.promise(() =>
    admin(
      (client) =>
        client.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = $1", [application]),
      url
    )
  ).pipe(Effect.map((result) => new Set(result.rows.map((row) => row.pid))))

describe("what the server says, and what is done about it", () => {
  it.effect("the default policy keeps trying for its 10-second window, never more than a second apart", () =>
    Effect.gen(function*() {
      const lost = new SqlError.SqlError({
        reason: new SqlError.ConnectionError({
          cause: new Error("socket hang up"),
          message: "lost",
          operation: "query"
        })
      })
      const times: Array<number> = []
      const run = yield* Clock.currentTimeMillis.pipe(
        Effect.flatMap((now) => Effect.sync(() => times.push(now))),
        Effect.andThen(Effect.fail(lost)),
        Effect.retry(Retry.defaultPolicy),
        Effect.flip,
        Effect.forkChild
      )
      yield* TestClock.adjust("1 minute")
      yield* Fiber.join(run)
      const elapsed = times.at(-1)! - times[0]!
      const gaps = times.slice(1).map((time, i) => time - times[i]!)
      expect(elapsed).toBeGreaterThanOrEqual(10_000)
      expect(elapsed).toBeLessThan(11_500)
      expect(Math.max(...gaps)).toBeLessThanOrEqual(1_200)
      expect(times.length).toBeGreaterThan(12)
    }))

  it.live(
    "a read-only endpoint (25006): the pool's connections are dropped and the write runs again on new ones",
    () =>
      withDatabase("retry_readonly", (url) =>
        Effect.gen(function*() {
          const application = "read-only-then-writable"
          yield* Effect.gen(function*() {
            const s = yield* Storage
            yield* s.put({ thread_id: "warm" }, checkpoint(), metadata(), {})
            const before = yield* backendsOf(url, application)
            expect(before.size).toBeGreaterThan(0)
            const counted = yield* retryCount("put", "25006")
            yield* inject(url, "checkpoints", 2, "25006", "cannot execute INSERT in a read-only transaction")
            const stored = yield* s.put({ thread_id: "t" }, checkpoint(), metadata(), {})
            expect(stored.thread_id).toBe("t")
            expect(yield* attemptsMade(url)).toBe(3)
            expect((yield* retryCount("put", "25006")) - counted).toBe(2)
            // None of the connections that met the read-only endpoint is left.
            const after = yield* backendsOf(url, application)
            expect([...before].filter((pid) => after.has(pid))).toEqual([])
          }).pipe(Effect.provide(Postgres.layer({ url, poolSize: 2, applicationName: application })))

          // When the window runs out, the error says the endpoint is read-only.
          yield* inject(url, "checkpoints", 1000, "25006", "cannot execute INSERT in a read-only transaction")
          const error = yield* Effect.flip(
            Storage.use((s) => s.put({ thread_id: "u" }, checkpoint(), metadata(), {})).pipe(
              Effect.provide(Postgres.layer({ url, retryWindow: "500 millis" }))
            )
          )
          expect(error).toMatchObject({ _tag: "StorageFailure", sqlState: "25006", retryable: true })
          expect(error.message).toContain("the database endpoint is read-only")
          expect(error.message).toContain("retryWindow")
        })),
    30_000
  )

  it.live("a protocol violation (08P01) fails at once, a lost prepared statement says prepare=false; a pooler's lost server connection (08P01) is run again", () =>
    withDatabase("retry_08p01", (url) =>
      Effect.gen(function*() {
        yield* Effect.scoped(Layer.build(Postgres.layer({ url })))
        yield* inject(
          url,
          "checkpoints",
          1000,
          "08P01",
          "bind message supplies 1 parameters, but prepared statement requires 2"
        )
        const error = yield* Effect.flip(
          Storage.use((s) => s.put({ thread_id: "t" }, checkpoint(), metadata(), {})).pipe(
            Effect.provide(Postgres.layer({ url }))
          )
        )
        expect(error).toMatchObject({ _tag: "StorageFailure", attempts: 1, sqlState: "08P01", retryable: false })
        expect(error.message).toContain("prepare=false")
        expect(yield* attemptsMade(url)).toBe(1)

        // PgBouncer reports a server connection that died under it with the same code: a lost connection.
        for (const said of ["server conn crashed?", "server connection closed", "invalid server parameter"]) {
          yield* inject(url, "checkpoints", 2, "08P01", said)
          yield* Storage.use((s) => s.put({ thread_id: "t" }, checkpoint(), metadata(), {})).pipe(
            Effect.provide(Postgres.layer({ url }))
          )
          expect(yield* attemptsMade(url), said).toBe(3)
        }
        // Another 08P01 says nothing of prepared statements.
        yield* inject(url, "checkpoints", 1000, "08P01", "invalid message format")
        const other = yield* Effect.flip(
          Storage.use((s) => s.put({ thread_id: "t" }, checkpoint(), metadata(), {})).pipe(
            Effect.provide(Postgres.layer({ url }))
          )
        )
        expect(other).toMatchObject({ _tag: "StorageFailure", attempts: 1, sqlState: "08P01", retryable: false })
        expect(other.message).toContain("rejected the protocol")
        expect(other.message).not.toContain("prepare=false")
      })))

  it.live("statementTimeout cancels a statement on the server and fails without retrying", () =>
    withDatabase("retry_timeout", (url) =>
      Effect.gen(function*() {
        yield* Effect.scoped(Layer.build(Postgres.layer({ url })))
        yield* sql(
          url,
          `CREATE OR REPLACE FUNCTION slow_insert() RETURNS trigger LANGUAGE plpgsql AS $$
           BEGIN PERFORM pg_sleep(5); RETURN NEW; END $$;
           CREATE TRIGGER slow_insert BEFORE INSERT ON checkpoints FOR EACH ROW EXECUTE FUNCTION slow_insert();`
        )
        yield* Effect.gen(function*() {
          const s = yield* Storage
          const started = Date.now()
          const error = yield* Effect.flip(s.put({ thread_id: "t" }, checkpoint(), metadata(), {}))
          expect(Date.now() - started).toBeLessThan(2_500)
          expect(error).toMatchObject({ _tag: "StorageFailure", attempts: 1, retryable: false })
          expect(error.message).toContain("statement timed out after 300ms (statementTimeout)")
          // The server stopped running it: the pool's connections are idle, or gone.
          const running = yield* Effect.promise(() =>
            admin(
              (client) =>
                client.query("SELECT 1 FROM pg_stat_activity WHERE application_name = 'bounded' AND state <> 'idle'"),
              url
            )
          )
          expect(running.rowCount).toBe(0)
        }).pipe(Effect.provide(Postgres.layer({ url, statementTimeout: "300 millis", applicationName: "bounded" })))
      })))
})

describe("real conflicts and lost connections", () => {
  it.live(
    "SERIALIZABLE writers on the same threads conflict for real, and every operation commits",
    () =>
      withDatabase(
        "serializable",
        (url) =>
          // Single statements run at the server's default isolation (poolers refuse it as a startup
          // parameter): the database's own default makes them SERIALIZABLE.
          Effect.promise(() => serializableByDefault(url)).pipe(
            Effect.andThen(conflictingWriters(Postgres.layer({ url, poolSize: 8, isolation: "serializable" })))
          )
      ),
    60_000
  )

  it.live(
    "connections terminated mid-run are replaced and the run completes",
    () =>
      withDatabase("terminate", (url) =>
        Effect.gen(function*() {
          const total = 150
          const retried = lostConnectionRetries(["put"])
          const before = yield* retried
          yield* Effect.gen(function*() {
            const s = yield* Storage
            const run = yield* Effect.forEach(
              Array.from({ length: total }, (_, i) => i),
              (i) => s.put({ thread_id: `t-${i % 10}` }, checkpoint({}, uuid6(i)), metadata(), {}),
              { concurrency: 4 }
            ).pipe(Effect.forkChild)
            for (let round = 0; round < 5; round++) {
              yield* Effect.sleep("15 millis")
              yield* sql(
                url,
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'terminated-mid-run'"
              )
            }
            yield* Fiber.join(run)
            const stored = yield* Stream.runCount(s.list({}))
            expect(stored).toBe(total)
          }).pipe(Effect.provide(Postgres.layer({ url, poolSize: 4, applicationName: "terminated-mid-run" })))
          // Statements did meet dead connections, and were run again.
          expect((yield* retried) - before).toBeGreaterThan(0)
        })),
    60_000
  )
})
