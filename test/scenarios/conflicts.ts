/**
 * Writers that conflict for real under SERIALIZABLE isolation: every one
 * re-puts the same checkpoints and writes to them at once, so the server
 * rejects some statements with SQLSTATE 40001, and they are retried. Nothing
 * may be lost or duplicated. Run on PostgreSQL in SERIALIZABLE mode and on
 * the CockroachDB dialect.
 */
import { uuid6 } from "@langchain/langgraph-checkpoint"
import { Effect, type Layer, Metric, Stream } from "effect"
import { expect } from "vitest"
import { CheckpointStorage, Metrics } from "../../src/index.ts"
import { checkpoint, metadata } from "../support/fixtures.ts"

/** Retries counted so far of an operation failing with a SQLSTATE. */
export const retryCount = (operation: string, sqlstate: string) =>
  Metric.value(Metric.withAttributes(Metrics.retries, { operation, sqlstate })).pipe(Effect.map((state) => state.count))

/** Retries counted so far of `operations` that met a lost connection (a terminated backend, a dead socket). */
export const lostConnectionRetries = (operations: ReadonlyArray<string>) =>
  Effect.forEach(
    operations.flatMap((operation) =>
      ["57P01", "08006", "08003", "08000", "ConnectionError"].map((state) => retryCount(operation, state))
    ),
    (count) => count
  ).pipe(Effect.map((counts) => counts.reduce((a, b) => a + b, 0)))

export const conflictingWriters = <E>(layer: Layer.Layer<CheckpointStorage.CheckpointStorage, E>) =>
  Effect.gen(function*() {
    const before = (yield* retryCount("put", "40001")) + (yield* retryCount("putWrites", "40001"))
    const shared = Array.from({ length: 4 }, () => uuid6(-1))
    const writers = 12
    const rounds = 15
    // Each writer has a storage of its own, as separate processes do: one
    // storage's group commit would order a thread's puts, and they would
    // never meet in the server.
    yield* Effect.forEach(
      Array.from({ length: writers }, (_, w) => w),
      (w) =>
        Effect.forEach(Array.from({ length: rounds }, (_, r) => r), (r) =>
          Effect.gen(function*() {
            const s = yield* CheckpointStorage.CheckpointStorage
            // Everyone re-puts the same checkpoints (an upsert of the same rows)...
            const id = shared[(w + r) % shared.length]!
            const ref = yield* s.put({ thread_id: "hot" }, checkpoint({ v: w }, id), metadata(), { v: `${w}.${r}` })
            // ...and writes to them: its own rows, and one special channel everyone replaces.
            yield* s.putWrites(ref, [["out", `${w}:${r}`], ["__error__", `w${w}`]], { task_id: `task-${w}-${r}` })
            yield* s.putWrites(ref, [["__error__", `w${w}`]], { task_id: "shared-task" })
          })).pipe(Effect.provide(layer)),
      { concurrency: "unbounded" }
    )
    yield* Effect.gen(function*() {
      const s = yield* CheckpointStorage.CheckpointStorage
      // Nothing lost, nothing duplicated.
      const tuples = Array.from(yield* Stream.runCollect(s.list({ thread_id: "hot" })))
      expect(tuples.map((t) => t.checkpoint.id).sort()).toEqual([...shared].sort())
      const ordinary = tuples.flatMap((t) => t.pendingWrites ?? []).filter(([, channel]) => channel === "out")
      expect(ordinary).toHaveLength(writers * rounds)
      expect(new Set(ordinary.map(([, , value]) => value)).size).toBe(writers * rounds)
      for (const tuple of tuples) {
        expect(tuple.pendingWrites?.filter(([task]) => task === "shared-task")).toHaveLength(1)
      }
    }).pipe(Effect.provide(layer))
    const after = (yield* retryCount("put", "40001")) + (yield* retryCount("putWrites", "40001"))
    // The conflicts were real: the server rejected some statements, and they were retried.
    expect(after - before).toBeGreaterThan(0)
  })
