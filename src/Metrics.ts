/**
 * The library's metrics, in one place: what it counts and measures while it
 * runs, by name, for dashboards and alerts (as effect's `ClusterMetrics`).
 * This module only defines the metric handles; the codec and the SQL driver
 * update them. Read them with `Metric.value`, or export them with Effect's
 * own `effect/observability` (`npm run example:observability`).
 *
 * @since 0.2.0
 */
import { Metric } from "effect"

/**
 * Counts storage operations run again after a retryable failure.
 *
 * **When to use**
 *
 * To see a database failing over, a pooler dropping connections, or
 * serialization conflicts under contention: it rises during the gap and
 * stays flat once operations succeed again.
 *
 * **Details**
 *
 * Counter named `langgraph_checkpoint_retries`, by `operation` (`put`,
 * `getTuple`, …) and `sqlstate` (the server's SQLSTATE, or the kind of
 * failure when there is none, e.g. `ConnectionError`). The SQL layers
 * register it at zero when they start, so a dashboard shows zero instead of
 * no data before the first retry.
 *
 * **Gotchas**
 *
 * Counts retries, not failures: an operation that succeeds at its third
 * attempt counts two. A `StorageFailure` whose `attempts` is above one is an
 * operation whose retries ran out.
 *
 * @category metrics
 * @since 0.2.0
 */
export const retries = Metric.counter("langgraph_checkpoint_retries", {
  description: "Storage operations run again after a retryable failure",
  incremental: true
})

/**
 * Measures how many calls (`put` and `putWrites`) were sent together in one
 * statement (see `groupCommit` on the SQL layers).
 *
 * **Details**
 *
 * Histogram named `langgraph_checkpoint_batch_size`, with boundaries at
 * powers of two from 1 to 256. Calls that find a free slot go alone (size
 * 1); under load they gather behind the batches in flight.
 *
 * @category metrics
 * @since 0.2.0
 */
export const batchSizes = Metric.histogram("langgraph_checkpoint_batch_size", {
  description: "Calls (put and putWrites) sent together in one batch",
  boundaries: [1, 2, 4, 8, 16, 32, 64, 128, 256]
})

/**
 * Counts record-shaped values that reads left as inert data instead of
 * reviving them (a class not allowed, a malformed record, one nested too
 * deep).
 *
 * **Details**
 *
 * Counter named `langgraph_checkpoint_inert_records`. Each read that left
 * something inert also says so on its span, as a `checkpoint.inert_records`
 * event with the checkpoint and the count.
 *
 * @category metrics
 * @since 0.2.0
 */
export const inertRecords = Metric.counter("langgraph_checkpoint_inert_records", {
  description: "Record-shaped values read back as inert data instead of being revived",
  incremental: true
})

/**
 * Counts rows read without a seal while encryption's `allowPlaintext` is on.
 *
 * **When to use**
 *
 * While turning encryption on over existing threads: run `reencrypt` until
 * this stays flat, then turn `allowPlaintext` off.
 *
 * **Details**
 *
 * Counter named `langgraph_checkpoint_plaintext_rows`.
 *
 * @category metrics
 * @since 0.2.0
 */
export const plaintextRows = Metric.counter("langgraph_checkpoint_plaintext_rows", {
  description: "Rows read without encryption while allowPlaintext is on",
  incremental: true
})
