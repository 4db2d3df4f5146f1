/**
 * Group commit on PostgreSQL and PGlite: concurrent calls share statements,
 * and each still succeeds or fails on its own.
 */
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { uuid6 } from "@langchain/langgraph-checkpoint"
import { Effect, Fiber, Layer, Metric, Option, Redacted, Stream, Tracer } from "effect"
import { SqlClient } from "effect/sql"
import { makeCountingSocket } from "../../harness/countingSocket.ts"
import { admin, createDatabase, withDatabase } from "../../harness/databases.ts"
import { CheckpointStorage, Metrics } from "../../src/index.ts"
import * as Pglite from "../../src/pglite.ts"
import * as Postgres from "../../src/postgres.ts"
import { lostConnectionRetries } from "../scenarios/conflicts.ts"
import { drivers } from "../support/drivers.ts"
import { checkpoint, metadata } from "../support/fixtures.ts"

const { CheckpointStorage: Storage } = CheckpointStorage

const THREADS = 32

/** A thread's checkpoint at `step`: its one channel at version `step + 1`. */
const stepOf = (step: number) => ({
  ...checkpoint({ note: `step ${step}` }, uuid6(step)),
  channel_versions: { note: step + 1 }
})

/** Spans the storage opens, with their attributes. */
const recording = () => {
  const spans: Array<{ name: string; attributes: Map<string, unknown> }> = []
  const tracer = Tracer.make({
    span: (options) => {
      const span = new Tracer.NativeSpan(options)
      const attributes = new Map<string, unknown>()
      const attribute = span.attribute.bind(span)
      span.attribute = (key, value) => {
        attributes.set(key, value)
        attribute(key, value)
      }
      spans.push({ name: options.name, attributes })
      return span
    }
  })
  return { spans, tracer }
}

const batchCount = Metric.value(Metrics.batchSizes).pipe(Effect.map((state) => state.count))

/** The scenarios every SQL storage passes with group commit. */
const scenarios = (name: string, layer: () => Layer.Layer<CheckpointStorage.CheckpointStorage, unknown>) =>
  describe(`group commit on ${name}`, () => {
    it.live("puts of many threads sent at once ride together; each span says the batch size", () =>
      Effect.gen(function*() {
        const { spans, tracer } = recording()
        const storage = yield* Storage
        const batchesBefore = yield* batchCount
        yield* Effect.forEach(
          Array.from({ length: THREADS }, (_, i) => `many-${i}`),
          (thread_id) => storage.put({ thread_id }, stepOf(0), metadata(), { note: 1 }),
          { concurrency: "unbounded" }
        ).pipe(Effect.withTracer(tracer))
        const sizes = spans.filter((span) => span.name === "CheckpointStorage.put").map((span) =>
          Number(span.attributes.get("checkpoint.batch_size"))
        )
        expect(sizes).toHaveLength(THREADS)
        expect(Math.max(...sizes)).toBeGreaterThan(1)
        // Fewer batches than calls.
        expect((yield* batchCount) - batchesBefore).toBeLessThan(THREADS)
        for (let i = 0; i < THREADS; i++) {
          const read = yield* storage.getTuple({ thread_id: `many-${i}` })
          expect(Option.getOrThrow(read).checkpoint.channel_values).toEqual({ note: "step 0" })
        }
      }).pipe(Effect.provide(layer())))

    it.live("a put whose parent was deleted fails alone; the rest of its batch commits", () =>
      Effect.gen(function*() {
        const storage = yield* Storage
        const gone = yield* storage.put({ thread_id: "gone" }, stepOf(0), metadata(), { note: 1 })
        yield* storage.deleteThread("gone")
        const results = yield* Effect.forEach(
          ["gone", ...Array.from({ length: THREADS - 1 }, (_, i) => `kept-${i}`)],
          (thread_id) =>
            storage.put(
              thread_id === "gone" ? gone : { thread_id },
              stepOf(1),
              metadata(),
              { note: 2 }
            ).pipe(Effect.result),
          { concurrency: "unbounded" }
        )
        expect(results[0]).toMatchObject({ _tag: "Failure", failure: { _tag: "CheckpointNotFound" } })
        expect(results.slice(1).every((result) => result._tag === "Success")).toBe(true)
        expect(Option.isNone(yield* storage.getTuple({ thread_id: "gone" }))).toBe(true)
        for (let i = 0; i < THREADS - 1; i++) {
          expect(Option.isSome(yield* storage.getTuple({ thread_id: `kept-${i}` }))).toBe(true)
        }
      }).pipe(Effect.provide(layer())))

    it.live("a thread's puts sent at once keep their order: each one's parent is the one before", () =>
      Effect.gen(function*() {
        const storage = yield* Storage
        const steps = [0, 1, 2, 3].map(stepOf)
        const threads = Array.from({ length: 8 }, (_, i) => `ordered-${i}`)
        // Every thread's chain of puts, and writes on its last checkpoint, all at once.
        yield* Effect.all(
          threads.flatMap((thread_id) => [
            ...steps.map((step, i) =>
              storage.put(
                { thread_id, checkpoint_ns: "", ...(i > 0 ? { checkpoint_id: steps[i - 1]!.id } : {}) },
                step,
                metadata({ step: i }),
                { note: i + 1 }
              )
            ),
            storage.putWrites({ thread_id, checkpoint_ns: "", checkpoint_id: steps[3]!.id }, [["note", "pending"]], {
              task_id: "t"
            })
          ]),
          { concurrency: "unbounded" }
        )
        for (const thread_id of threads) {
          const latest = Option.getOrThrow(yield* storage.getTuple({ thread_id }))
          expect(latest.checkpoint.id).toBe(steps[3]!.id)
          expect(latest.parentConfig?.configurable?.checkpoint_id).toBe(steps[2]!.id)
          expect(latest.checkpoint.channel_values).toEqual({ note: "step 3" })
          expect(latest.pendingWrites).toEqual([["t", "note", "pending"]])
          const chain = yield* storage.list({ thread_id }).pipe(Stream.runCollect)
          expect(chain.map((tuple) => tuple.checkpoint.id)).toEqual(steps.map((step) => step.id).reverse())
        }
      }).pipe(Effect.provide(layer())))
  })

scenarios("PGlite", () => Pglite.layer())

describe("group commit on the CockroachDB dialect", () => {
  const { cockroach } = drivers("group_crdb")
  scenarios("cockroach dialect", () => cockroach.layer())
})

describe("group commit on PostgreSQL", () => {
  scenarios("PostgreSQL", () =>
    Layer.unwrap(
      Effect.acquireRelease(
        Effect.promise(() => createDatabase("group")),
        (database) => Effect.promise(() => database.drop())
      ).pipe(Effect.map((database) => Postgres.layer({ url: database.url, poolSize: 4 })))
    ))

  it.live("32 threads writing at once: several calls per round trip", () =>
    withDatabase("group_wire", (url) =>
      Effect.gen(function*() {
        const socket = makeCountingSocket(url)
        const client = PgClient.layerFrom(
          PgClient.makeClient({ url: Redacted.make(url), stream: socket.open })
        )
        yield* Effect.gen(function*() {
          const storage = yield* Storage
          const refs = yield* Effect.forEach(
            Array.from({ length: THREADS }, (_, i) => `wire-${i}`),
            (thread_id) => storage.put({ thread_id }, stepOf(0), metadata(), { note: 1 }),
            { concurrency: "unbounded" }
          )
          const before = socket.roundTrips()
          // A super-step on every thread at once: writes, then the next checkpoint.
          yield* Effect.forEach(refs, (ref) =>
            storage.putWrites(ref, [["note", "w"]], { task_id: "task" }).pipe(
              Effect.andThen(storage.put(ref, stepOf(1), metadata({ step: 1 }), { note: 2 }))
            ), { concurrency: "unbounded" })
          const trips = socket.roundTrips() - before
          // 64 calls; alone, each would be one round trip.
          expect(trips).toBeLessThanOrEqual(16)
          for (const ref of refs) {
            const read = Option.getOrThrow(yield* storage.getTuple({ thread_id: ref.thread_id }))
            expect(read.checkpoint.channel_values).toEqual({ note: "step 1" })
          }
        }).pipe(Effect.provide(Postgres.layerClient().pipe(Layer.provide(client))))
      })))

  it.live("a put whose shared list's base is gone is laid out again alone; the rest of its batch extends theirs", () =>
    withDatabase("group_base", (url) =>
      Effect.gen(function*() {
        const { spans, tracer } = recording()
        const storage = yield* Storage
        const line = (n: number) => `line ${n} of a list long enough that each element is a piece of its own`
        const threads = Array.from({ length: THREADS }, (_, i) => `based-${i}`)
        const listAt = (step: number, id: string) => ({
          ...checkpoint({ lines: Array.from({ length: step + 4 }, (_, n) => line(n)) }, id),
          channel_versions: { lines: step + 1 }
        })
        const refs = yield* Effect.forEach(
          threads,
          (thread_id) => storage.put({ thread_id }, listAt(0, uuid6(0)), metadata(), { lines: 1 }),
          { concurrency: "unbounded" }
        )
        // Another process removed the blob the first thread's next list would extend.
        yield* Effect.promise(() =>
          admin(
            (client) => client.query("DELETE FROM checkpoint_blobs WHERE thread_id = 'based-0' AND channel = 'lines'"),
            url
          )
        )
        yield* Effect.forEach(
          refs,
          (ref) => storage.put(ref, listAt(1, uuid6(1)), metadata({ step: 1 }), { lines: 2 }),
          { concurrency: "unbounded" }
        ).pipe(Effect.withTracer(tracer))
        for (const thread_id of threads) {
          const read = Option.getOrThrow(yield* storage.getTuple({ thread_id }))
          expect(read.checkpoint.channel_values).toEqual({ lines: Array.from({ length: 5 }, (_, n) => line(n)) })
        }
        // Only the first thread's list was written whole (no base); the others extend their first list.
        const bases = yield* Effect.promise(() =>
          admin((client) =>
            client.query<{ thread_id: string; base: string | null }>(
              "SELECT thread_id, base FROM checkpoint_blobs WHERE channel = 'lines' AND version = '2' ORDER BY thread_id"
            ), url)
        )
        expect(bases.rows.filter((row) => row.base === null || row.base === "").map((row) => row.thread_id))
          .toEqual(["based-0"])
        expect(bases.rows).toHaveLength(THREADS)
        const sizes = spans.filter((span) => span.name === "CheckpointStorage.put").map((span) =>
          Number(span.attributes.get("checkpoint.batch_size"))
        )
        expect(Math.max(...sizes)).toBeGreaterThan(1)
      }).pipe(Effect.provide(Postgres.layer({ url, poolSize: 4 })))))

  it.live("an injected serialization failure on a batch: every call retried, each stored once", () =>
    withDatabase("group_retry", (url) =>
      Effect.gen(function*() {
        yield* Effect.gen(function*() {
          const storage = yield* Storage
          yield* storage.put({ thread_id: "warm" }, stepOf(0), metadata(), { note: 1 })
          yield* Effect.promise(() =>
            admin((client) =>
              client.query(`
                CREATE SEQUENCE injected;
                CREATE FUNCTION inject() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                  IF nextval('injected') <= 2 THEN RAISE EXCEPTION 'injected' USING ERRCODE = '40001'; END IF;
                  RETURN NULL;
                END $$;
                CREATE TRIGGER inject AFTER INSERT ON checkpoints FOR EACH STATEMENT EXECUTE FUNCTION inject();`), url)
          )
          yield* Effect.forEach(
            Array.from({ length: THREADS }, (_, i) => `retried-${i}`),
            (thread_id) => storage.put({ thread_id }, stepOf(0), metadata(), { note: 1 }),
            { concurrency: "unbounded" }
          )
          const counts = yield* Effect.promise(() =>
            admin((client) =>
              client.query<{ n: string; threads: string }>(
                "SELECT count(*) AS n, count(DISTINCT thread_id) AS threads FROM checkpoints WHERE thread_id LIKE 'retried-%'"
              ), url)
          )
          expect(counts.rows[0]).toEqual({ n: String(THREADS), threads: String(THREADS) })
          const injected = yield* Effect.promise(() =>
            admin((client) => client.query<{ n: string }>("SELECT last_value AS n FROM injected"), url)
          )
          expect(Number(injected.rows[0]!.n)).toBeGreaterThan(2)
        }).pipe(Effect.provide(Postgres.layer({ url, poolSize: 4 })))
      })))

  it.live(
    "a serialization failure on 10% of rows: a failing batch is split, and no call fails, is lost or stored twice",
    () =>
      withDatabase("group_isolated", (url) =>
        Effect.gen(function*() {
          const steps = 10
          yield* Effect.gen(function*() {
            const storage = yield* Storage
            yield* storage.put({ thread_id: "warm" }, stepOf(0), metadata(), { note: 1 })
            yield* Effect.promise(() =>
              admin(
                (client) =>
                  client.query(`
                  CREATE SEQUENCE injected;
                  CREATE FUNCTION inject() RETURNS trigger LANGUAGE plpgsql AS $$
                  BEGIN
                    IF random() < 0.1 THEN
                      PERFORM nextval('injected');
                      RAISE EXCEPTION 'injected' USING ERRCODE = '40001';
                    END IF;
                    RETURN NULL;
                  END $$;
                  CREATE TRIGGER inject AFTER INSERT ON checkpoints FOR EACH ROW EXECUTE FUNCTION inject();
                  CREATE TRIGGER inject AFTER INSERT ON checkpoint_blobs FOR EACH ROW EXECUTE FUNCTION inject();
                  CREATE TRIGGER inject AFTER INSERT ON checkpoint_writes FOR EACH ROW EXECUTE FUNCTION inject();`),
                url
              )
            )
            const batchesBefore = yield* batchCount
            const outcomes = yield* Effect.forEach(
              Array.from({ length: THREADS }, (_, i) => `isolated-${i}`),
              (thread_id) =>
                Effect.gen(function*() {
                  let ref = yield* storage.put({ thread_id }, stepOf(0), metadata(), { note: 1 })
                  for (let step = 1; step <= steps; step++) {
                    yield* storage.putWrites(ref, [["note", `w${step}`]], { task_id: `task-${step}` })
                    ref = yield* storage.put(ref, stepOf(step), metadata({ step }), { note: step + 1 })
                  }
                }).pipe(Effect.result),
              { concurrency: "unbounded" }
            )
            expect(outcomes.filter((outcome) => outcome._tag === "Failure")).toEqual([])
            const counts = yield* Effect.promise(() =>
              admin((client) =>
                client.query<{ checkpoints: string; distinct_checkpoints: string; writes: string; injected: string }>(`
                  SELECT (SELECT count(*) FROM checkpoints WHERE thread_id LIKE 'isolated-%') AS checkpoints,
                    (SELECT count(DISTINCT (thread_id, checkpoint_id)) FROM checkpoints
                      WHERE thread_id LIKE 'isolated-%') AS distinct_checkpoints,
                    (SELECT count(*) FROM checkpoint_writes WHERE thread_id LIKE 'isolated-%') AS writes,
                    (SELECT last_value FROM injected) AS injected`), url)
            )
            const total = String(THREADS * (steps + 1))
            expect(counts.rows[0]).toMatchObject({
              checkpoints: total,
              distinct_checkpoints: total,
              writes: String(THREADS * steps)
            })
            // Failures were injected, into batches (of more than one call) too.
            expect(Number(counts.rows[0]!.injected)).toBeGreaterThan(20)
            expect((yield* batchCount) - batchesBefore).toBeLessThan(2 * THREADS * steps)
            for (let i = 0; i < THREADS; i++) {
              const read = Option.getOrThrow(yield* storage.getTuple({ thread_id: `isolated-${i}` }))
              expect(read.checkpoint.channel_values).toEqual({ note: `step ${steps}` })
              expect(read.pendingWrites).toEqual([])
            }
          }).pipe(Effect.provide(Postgres.layer({ url, poolSize: 4 })))
        })),
    120_000
  )

  it.live(
    "32 writers while connections are killed: nothing lost, nothing twice",
    () =>
      withDatabase("group_kill", (url) =>
        Effect.gen(function*() {
          const steps = 20
          const retried = lostConnectionRetries(["put", "putWrites"])
          const before = yield* retried
          yield* Effect.gen(function*() {
            const storage = yield* Storage
            const writers = Effect.forEach(
              Array.from({ length: THREADS }, (_, i) => `killed-${i}`),
              (thread_id) =>
                Effect.gen(function*() {
                  let ref = yield* storage.put({ thread_id }, stepOf(0), metadata(), { note: 1 })
                  for (let step = 1; step <= steps; step++) {
                    yield* storage.putWrites(ref, [["note", `w${step}`]], { task_id: `task-${step}` })
                    ref = yield* storage.put(ref, stepOf(step), metadata({ step }), { note: step + 1 })
                  }
                }),
              { concurrency: "unbounded", discard: true }
            ).pipe(Effect.forkChild)
            const running = yield* writers
            for (let round = 0; round < 8; round++) {
              yield* Effect.sleep("15 millis")
              yield* Effect.promise(() =>
                admin((client) =>
                  client.query(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'group-killed'"
                  ), url)
              )
            }
            yield* Fiber.join(running)
            const counts = yield* Effect.promise(() =>
              admin((client) =>
                client.query<{ checkpoints: string; writes: string }>(`
                SELECT (SELECT count(*) FROM checkpoints WHERE thread_id LIKE 'killed-%') AS checkpoints,
                  (SELECT count(*) FROM checkpoint_writes WHERE thread_id LIKE 'killed-%') AS writes`), url)
            )
            expect(counts.rows[0]).toEqual({
              checkpoints: String(THREADS * (steps + 1)),
              writes: String(THREADS * steps)
            })
            for (let i = 0; i < THREADS; i++) {
              const read = Option.getOrThrow(yield* storage.getTuple({ thread_id: `killed-${i}` }))
              expect(read.checkpoint.channel_values).toEqual({ note: `step ${steps}` })
            }
          }).pipe(Effect.provide(Postgres.layer({ url, poolSize: 4, applicationName: "group-killed" })))
          // Batches did meet dead connections, and were run again.
          expect((yield* retried) - before).toBeGreaterThan(0)
        })),
    60_000
  )

  it.live("inside the caller's transaction, calls are not batched with others", () =>
    withDatabase("group_tx", (url) =>
      Effect.gen(function*() {
        const client = PgClient.layer({ url: Redacted.make(url), maxConnections: 4 })
        yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const storage = yield* Storage
          const inside = sql.withTransaction(
            storage.put({ thread_id: "in-tx" }, stepOf(0), metadata(), { note: 1 }).pipe(
              Effect.andThen(Effect.sleep("50 millis")),
              Effect.andThen(Effect.fail("rolled back" as const))
            )
          )
          const outside = Effect.forEach(
            Array.from({ length: 8 }, (_, i) => `out-${i}`),
            (thread_id) => storage.put({ thread_id }, stepOf(0), metadata(), { note: 1 }),
            { concurrency: "unbounded" }
          )
          const [rolledBack] = yield* Effect.all([Effect.flip(inside), outside], { concurrency: "unbounded" })
          expect(rolledBack).toBe("rolled back")
          expect(Option.isNone(yield* storage.getTuple({ thread_id: "in-tx" }))).toBe(true)
          for (let i = 0; i < 8; i++) {
            expect(Option.isSome(yield* storage.getTuple({ thread_id: `out-${i}` }))).toBe(true)
          }
        }).pipe(Effect.provide(Layer.provideMerge(Postgres.layerClient(), client)))
      })))
})
