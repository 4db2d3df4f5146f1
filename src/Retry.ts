/**
 * Which storage failures are worth running again, and how often.
 *
 * Every statement the SQL driver runs is idempotent (an upsert, an insert
 * that keeps existing rows, a read, a delete), so running one again after a
 * failure whose outcome is unknown cannot duplicate or lose anything. What is
 * retried: serialization failures (SQLSTATE 40001, which CockroachDB uses for
 * its restart-transaction errors), deadlocks (40P01), ambiguous results
 * (40003), lost connections (class 08) and server shutdowns (57P01–57P03).
 * Everything else fails at once.
 *
 * @since 0.1.0
 */
import { Clock, Context, Effect, Metric, Schedule } from "effect"
import type { SqlError } from "effect/sql"
import { StorageFailure } from "./CheckpointError.ts"

/**
 * The SQLSTATE the server reported, if the failure is a server error
 * response (a socket error's `code`, such as `ECONNRESET`, is not one).
 *
 * @since 0.1.0
 */
export const sqlState = (error: SqlError.SqlError): string | undefined => {
  const cause: unknown = error.reason.cause
  if (typeof cause !== "object" || cause === null || !("code" in cause) || !("severity" in cause)) return undefined
  return typeof cause.code === "string" ? cause.code : undefined
}

const retryableStates = new Set(["40001", "40P01", "40003", "57P01", "57P02", "57P03"])

/**
 * Whether the same idempotent statement may succeed when run again.
 *
 * @since 0.1.0
 */
export const isRetryable = (error: SqlError.SqlError): boolean => {
  const state = sqlState(error)
  if (state !== undefined) return retryableStates.has(state) || state.startsWith("08")
  // No SQLSTATE: the connection failed before or while talking to the server.
  return error.reason._tag === "ConnectionError"
}

/**
 * The schedule a retried operation follows: its input is the failure.
 *
 * @since 0.1.0
 */
export type Policy = Schedule.Schedule<unknown, SqlError.SqlError>

/**
 * Exponential backoff from 10 ms with jitter, at most 10 attempts and about
 * 5 seconds in all.
 *
 * @since 0.1.0
 */
export const defaultPolicy: Policy = Schedule.exponential("10 millis").pipe(
  Schedule.jittered,
  Schedule.upTo({ times: 9, duration: "5 seconds" })
)

/**
 * The retry policy of the storage operations. Override it for a layer (its
 * `retry` option) or a saver (`fromLayer(layer, { retry })`); `Schedule.recurs(0)`
 * turns retries off.
 *
 * @since 0.1.0
 */
export const RetryPolicy = Context.Reference<Policy>("langgraph-checkpoint-effect/RetryPolicy", {
  defaultValue: () => defaultPolicy
})

/**
 * Counts retried attempts, by operation and SQLSTATE.
 *
 * @since 0.1.0
 */
export const retries = Metric.counter("langgraph_checkpoint_retries", {
  description: "Storage operations run again after a retryable failure",
  incremental: true
})

/**
 * Registers the retry counter at zero. Effect registers a metric on its first
 * update, so without this, exporters would report no series at all until the
 * first retry; dashboards then show zero instead of "no data".
 *
 * @since 0.1.0
 */
export const registerRetries: Effect.Effect<void> = Metric.update(retries, 0)

/**
 * Runs `effect` under `policy`, retrying retryable failures. Each retry is a
 * span event and a metric increment; when retries run out, the
 * `StorageFailure` says how many attempts were made and the last SQLSTATE.
 *
 * @since 0.1.0
 */
export const retrying =
  (operation: string, policy: Policy) =>
  <A, R>(effect: Effect.Effect<A, SqlError.SqlError, R>): Effect.Effect<A, StorageFailure, R> =>
    Effect.suspend(() => {
      let attempts = 0
      const counted = Effect.suspend(() => {
        attempts++
        return effect
      })
      const observed = policy.pipe(Schedule.tap(({ attempt, input }) => {
        const state = sqlState(input) ?? input.reason._tag
        return Effect.all([Effect.currentSpan, Clock.currentTimeNanos]).pipe(
          Effect.tap(([span, now]) =>
            Effect.sync(() => span.event("checkpoint.retry", now, { operation, attempt, sqlstate: state }))
          ),
          Effect.ignore,
          Effect.andThen(Metric.update(Metric.withAttributes(retries, { operation, sqlstate: state }), 1))
        )
      }))
      return counted.pipe(
        Effect.retry({ schedule: observed, while: isRetryable }),
        Effect.mapError((cause) => failure(operation, cause, attempts))
      )
    })

/**
 * The failure of a statement that is not retried (inside a caller's
 * transaction, where the caller decides).
 *
 * @since 0.1.0
 */
export const failure = (operation: string, cause: SqlError.SqlError, attempts = 1): StorageFailure => {
  const state = sqlState(cause)
  return new StorageFailure({
    operation,
    retryable: isRetryable(cause),
    attempts,
    ...(state === undefined ? {} : { sqlState: state }),
    cause
  })
}
