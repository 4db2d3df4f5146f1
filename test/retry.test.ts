/**
 * Retries against a real PostgreSQL server: injected failures, real
 * serialization conflicts under SERIALIZABLE, connections killed mid-run,
 * and statements inside a caller's transaction.
 */
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { uuid6 } from "@langchain/langgraph-checkpoint"
import { Effect, Fiber, Layer, Option, Redacted, Schedule, Stream, Tracer } from "effect"
import { SqlClient } from "effect/sql"
import { CheckpointStorage, EffectCheckpointSaver } from "../src/index.ts"
import * as Postgres from "../src/postgres.ts"
import { conflictingWriters, lostConnectionRetries, retryCount } from "./scenarios/conflicts.ts"
import { admin, withDatabase } from "./support/databases.ts"
import { checkpoint, metadata } from "./support/fixtures.ts"

const { CheckpointStorage: Storage } = CheckpointStorage

const sql = (url: string, text: string) => Effect.promise(() => admin((client) => client.query(text), url))

/**
 * A trigger on `table` that fails the first `times` statements with `code`:
 * the sequence counts attempts even when they roll back.
 */
const inject = (url: string, table: string, times: number, code: string) =>
  sql(
    url,
    `
    CREATE SEQUENCE IF NOT EXISTS injected_attempts;
    ALTER SEQUENCE injected_attempts RESTART;
    CREATE OR REPLACE FUNCTION inject_failure() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF nextval('injected_attempts') <= ${times} THEN
        RAISE EXCEPTION 'injected failure' USING ERRCODE = '${code}';
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

          // The default policy is bounded too.
          yield* sql(url, "ALTER SEQUENCE injected_attempts RESTART")
          const started = Date.now()
          const bounded = yield* Effect.flip(
            Storage.use((s) => s.put({ thread_id: "t" }, checkpoint(), metadata(), {})).pipe(
              Effect.provide(Postgres.layer({ url }))
            )
          )
          expect(bounded._tag === "StorageFailure" && bounded.attempts).toBeGreaterThan(4)
          expect(bounded._tag === "StorageFailure" && bounded.attempts).toBeLessThanOrEqual(10)
          expect(Date.now() - started).toBeLessThan(8_000)
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

describe("real conflicts and lost connections", () => {
  it.live(
    "SERIALIZABLE writers on the same threads conflict for real, and every operation commits",
    () =>
      withDatabase(
        "serializable",
        (url) => conflictingWriters(Postgres.layer({ url, poolSize: 8, isolation: "serializable" }))
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
