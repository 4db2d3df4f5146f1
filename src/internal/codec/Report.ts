/**
 * What a read leaves behind besides its answer: the tally of record-shaped
 * values it left inert and rows it read without a seal, reported on the
 * operation's span (`checkpoint.inert_records` events) and in the metrics.
 *
 * @since 0.1.0
 */
import { Clock, Effect, Metric } from "effect"
import { inertRecords, plaintextRows } from "../../Metrics.ts"
import type { CheckpointRow } from "../../StorageDriver.ts"
import type * as Sealing from "./Sealing.ts"

/**
 * What decoding one checkpoint left inert, and read without a seal: counted
 * as it goes, reported once at the end.
 *
 * @since 0.1.0
 */
export interface Tally extends Sealing.Tally {
  inert: number
}

/**
 * A fresh tally, for one checkpoint's decoding.
 *
 * @since 0.1.0
 */
export const newTally = (): Tally => ({ inert: 0, plaintext: 0 })

/**
 * Records what a read left inert (on the current span and the metric) and
 * read without a seal (the metric).
 *
 * @since 0.1.0
 */
export const report = (row: CheckpointRow, tally: Tally): Effect.Effect<void> =>
  Effect.andThen(
    tally.plaintext === 0 ? Effect.void : Metric.update(plaintextRows, tally.plaintext),
    reportInert(row, tally)
  )

const reportInert = (row: CheckpointRow, tally: Tally) =>
  tally.inert === 0 ? Effect.void : Effect.all([Effect.currentSpan, Clock.currentTimeNanos]).pipe(
    Effect.tap(([span, now]) =>
      Effect.sync(() =>
        span.event("checkpoint.inert_records", now, { checkpoint_id: row.checkpoint_id, count: tally.inert })
      )
    ),
    Effect.ignore,
    Effect.andThen(Metric.update(inertRecords, tally.inert))
  )
