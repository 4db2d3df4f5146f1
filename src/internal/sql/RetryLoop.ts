/**
 * The retry loop: running a statement under a retry policy (the public
 * `Retry`, which says what is worth running again and for how long), each
 * retry a span event and a metric increment, the connections dropped first
 * after a read-only answer, and a failure that says what the last answer
 * meant.
 *
 * @since 0.2.0
 */
import { Clock, Context, Effect, Metric, Schedule } from "effect"
import type { SqlError } from "effect/sql"
import { StorageFailure } from "../../CheckpointError.ts"
import { retries } from "../../Metrics.ts"
import {
  classify,
  isRetryable,
  missingPreparedStatement,
  type Policy,
  refusedStartupParameter,
  sqlState,
  unreachable,
  type Verdict
} from "../../Retry.ts"

/**
 * What to do before running again a statement that met a read-only
 * endpoint: drop the connections that reach it. The pools this library
 * opens provide it; over an application's own client it does nothing (the
 * statement is only run again), and the application's pool decides.
 *
 * @since 0.1.0
 */
export const Reconnect = Context.Reference<Effect.Effect<void>>("langgraph-checkpoint-effect/Retry/Reconnect", {
  defaultValue: () => Effect.void
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
 * Runs `effect` under `policy`, retrying the failures `retryable` accepts
 * (by default every retryable one); before a retry after a read-only answer
 * it runs `reconnect`. Each retry is a span event and a metric increment;
 * when retries run out, the `StorageFailure` says how many attempts were
 * made, the last SQLSTATE, and what it means.
 *
 * @since 0.1.0
 */
export const retrying = (
  operation: string,
  policy: Policy,
  reconnect: Effect.Effect<void> = Effect.void,
  retryable: (error: SqlError.SqlError) => boolean = isRetryable
) =>
<A, R>(effect: Effect.Effect<A, SqlError.SqlError, R>): Effect.Effect<A, StorageFailure, R> =>
  // Nearly every statement succeeds at once: the schedule is only built once one has failed.
  Effect.catch(effect, (first) =>
    retryable(first)
      ? retryingAfter(first, effect, operation, policy.pipe(Schedule.tap(observe(operation, reconnect))), retryable)
      : Effect.fail(failure(operation, first)))

/** Runs `effect` again under `schedule` after its `first` failure, counting the attempts. */
const retryingAfter = <A, R>(
  first: SqlError.SqlError,
  effect: Effect.Effect<A, SqlError.SqlError, R>,
  operation: string,
  schedule: Policy,
  retryable: (error: SqlError.SqlError) => boolean
): Effect.Effect<A, StorageFailure, R> =>
  Effect.suspend(() => {
    let attempts = 0
    const counted = Effect.suspend(() => ++attempts === 1 ? Effect.fail(first) : effect)
    return counted.pipe(
      Effect.retry({ schedule, while: retryable }),
      Effect.mapError((cause) => failure(operation, cause, attempts))
    )
  })

/** Each retry: a span event, a metric increment, and the connections dropped after a read-only answer. */
const observe =
  (operation: string, reconnect: Effect.Effect<void>) =>
  ({ attempt, input }: { readonly attempt: number; readonly input: SqlError.SqlError }) => {
    const state = sqlState(input) ?? input.reason._tag
    return Effect.all([Effect.currentSpan, Clock.currentTimeNanos]).pipe(
      Effect.tap(([span, now]) =>
        Effect.sync(() => span.event("checkpoint.retry", now, { operation, attempt, sqlstate: state }))
      ),
      Effect.ignore,
      Effect.andThen(Metric.update(Metric.withAttributes(retries, { operation, sqlstate: state }), 1)),
      // Connecting is retried in silence for the whole window otherwise: say once that it is waiting, and why.
      Effect.andThen(
        operation === "connect" && attempt === 1
          ? Effect.logWarning(`cannot reach the database yet: ${unreachable(input) ?? input.message}; retrying`)
          : Effect.void
      ),
      Effect.andThen(classify(input) === "readOnly" ? reconnect : Effect.void)
    )
  }

/** What a failure means to the person reading it, for the verdicts that need saying. */
const hintFor = (cause: SqlError.SqlError, verdict: Verdict, attempts: number): string | undefined => {
  switch (verdict) {
    case "readOnly":
      return "the database endpoint is read-only (a standby, a read replica, or a database set read-only)" +
        (attempts > 1
          ? " for the whole retry window (set retryWindow or CHECKPOINT_RETRY_WINDOW to wait out a longer failover)"
          : "")
    case "rejected": {
      const parameter = refusedStartupParameter(cause)
      return parameter !== undefined
        ? startupParameterHint(parameter)
        : missingPreparedStatement(cause)
        ? "a named prepared statement is gone: with a transaction pooler such as PgBouncer they do not " +
          "survive, add prepare=false to the URL"
        : sqlState(cause) === "08P01"
        ? "the server, or a connection pooler in front of it, rejected the protocol"
        : undefined
    }
    default:
      return unreachable(cause)
  }
}

/**
 * The message for a startup parameter a pooler refused.
 *
 * @since 0.1.0
 */
export const startupParameterHint = (parameter: string): string =>
  `the server refused the startup parameter "${parameter}": a connection pooler (PgBouncer, Supavisor, ` +
  `Neon's or RDS Proxy) is likely in front of it and accepts none but a few; remove "${parameter}" from ` +
  `the connection URL or options (set it with ALTER ROLE … SET instead), or, with PgBouncer, list it in ` +
  `ignore_startup_parameters`

/**
 * The failure of a statement that is not retried (inside a caller's
 * transaction, where the caller decides), or whose retries ran out.
 *
 * @since 0.1.0
 */
export const failure = (operation: string, cause: SqlError.SqlError, attempts = 1): StorageFailure => {
  const state = sqlState(cause)
  const verdict = classify(cause)
  const hint = hintFor(cause, verdict, attempts)
  return new StorageFailure({
    operation,
    retryable: verdict === "conflict" || verdict === "reconnect" || verdict === "readOnly",
    attempts,
    ...(state === undefined ? {} : { sqlState: state }),
    ...(hint === undefined ? {} : { hint }),
    cause
  })
}
