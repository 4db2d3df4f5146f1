/**
 * Which storage failures are worth running again, what to do first, and for
 * how long.
 *
 * Every statement the SQL driver runs is idempotent (an upsert, an insert
 * that keeps existing rows, a read, a delete), so running one again after a
 * failure whose outcome is unknown cannot duplicate or lose anything. A
 * failure is classified once ({@link classify}) from what the server, a
 * pooler in front of it, or the socket said:
 *
 * - `conflict`: serialization failures (SQLSTATE 40001, which CockroachDB
 *   uses for its restart-transaction errors), deadlocks (40P01), ambiguous
 *   results (40003): run again.
 * - `reconnect`: the session is gone or could not start — a lost socket,
 *   class 08, a server shutting down, crashed or starting (57P01–57P03), an
 *   idle-session or idle-in-transaction timeout (57P05, 25P03), too many
 *   clients (53300), and the transient messages of poolers (PgBouncer's
 *   `server conn crashed?`, `server connection closed`, `server login has
 *   been failing`, …, which it sends as 08P01): run again on a fresh
 *   connection (the pool replaces dead ones by itself).
 * - `readOnly`: the connection reaches a standby or a read-only endpoint
 *   (25006, `cannot execute … in a read-only transaction`): the pool drops
 *   its connections (`RetryLoop.Reconnect`) and the statement runs again on
 *   fresh ones, which reach the new primary once a failover is over.
 * - `rejected`: the server or a pooler refuses the protocol or the
 *   connection's settings (08P01, a startup parameter a pooler does not
 *   accept, a named prepared statement a transaction pooler lost, a
 *   malformed URL, a certificate that does not verify): fails at once,
 *   with what to change.
 * - `fatal`: everything else (a unique violation, an undefined table, a
 *   timeout the caller set) fails at once.
 *
 * How long to keep trying is the policy: by default a window of
 * {@link defaultWindow} ({@link windowed} builds one of any length, so a
 * deployment can ride out a longer managed failover). Running a statement
 * under a policy is the driver's (`RetryLoop`).
 *
 * @since 0.1.0
 */
import { Context, Duration, Effect, Schedule } from "effect"
import type { SqlError } from "effect/sql"
import * as ConnectionString from "./internal/ConnectionString.ts"

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

/** What the server or the socket said, beneath the client's generic message. */
const serverMessage = (error: SqlError.SqlError): string => {
  const cause: unknown = error.reason.cause
  return typeof cause === "object" && cause !== null && "message" in cause && typeof cause.message === "string"
    ? cause.message
    : ""
}

/** What a socket error code or a server's SQLSTATE means to someone connecting. */
const reachReasons: Record<string, string> = {
  ECONNREFUSED: "nothing accepts connections there (is the server running, on that port?)",
  ENOTFOUND: "no such host",
  EAI_AGAIN: "the host name could not be looked up (DNS did not answer)",
  ETIMEDOUT: "the connection timed out",
  EHOSTUNREACH: "the host cannot be reached from here",
  ENETUNREACH: "the network cannot be reached from here",
  ECONNRESET: "the server closed the connection",
  "28000": "the server refused the login",
  "28P01": "the server refused the password",
  "3D000": "the server has no such database"
}

/**
 * Why the database could not be reached or logged in to, in plain words
 * (refused, no such host, the password refused, no such database), if that
 * is what the failure is.
 *
 * @since 0.4.0
 */
export const unreachable = (error: SqlError.SqlError): string | undefined => {
  const cause: unknown = error.reason.cause
  const code = sqlState(error) ??
    (typeof cause === "object" && cause !== null && "code" in cause ? cause.code : undefined)
  return typeof code === "string" ? reachReasons[code] : undefined
}

/**
 * `cannot open the database <where, password masked>: <why>` when the
 * failure is one to reach or log in to the database `where` names.
 *
 * @since 0.4.0
 */
export const cannotOpen = (where: string, error: SqlError.SqlError): string | undefined => {
  const reason = unreachable(error)
  return reason === undefined ? undefined : `cannot open the database ${ConnectionString.redact(where)}: ${reason}`
}

/**
 * What a failure calls for (see the module's description).
 *
 * @since 0.1.0
 */
export type Verdict = "conflict" | "reconnect" | "readOnly" | "rejected" | "fatal"

const conflicts = new Set(["40001", "40P01", "40003"])
const lostSessions = new Set(["57P01", "57P02", "57P03", "57P05", "25P03", "53300"])

/**
 * What poolers say, as 08P01, when a server connection failed, died under
 * them or is not there yet: transient, unlike the protocol violations
 * PostgreSQL reports with the same code. (PgBouncer's texts, checked
 * against PgBouncer 1.18: a server backend terminated while a client's
 * statement ran reaches it as `server conn crashed?`, `server connection
 * closed` or, its startup cut short, `invalid server parameter`.)
 */
const transientPooler = new RegExp(
  [
    "server conn crashed",
    "server connection closed",
    "invalid server parameter",
    "server login has been failing",
    "server_login_retry",
    "client_login_timeout",
    "query_wait_timeout",
    "no more connections allowed",
    "cannot connect to server",
    "idle transaction timeout",
    "server shutting down"
  ].join("|"),
  "i"
)

/**
 * A named prepared statement the session does not have, has already, or
 * has for another statement (26000, 42P05, or 08P01 saying "prepared
 * statement"): what a transaction pooler does to them, handing a client's
 * statements to another server connection than the one that prepared them.
 *
 * @since 0.4.0
 */
export const missingPreparedStatement = (error: SqlError.SqlError): boolean => {
  const state = sqlState(error)
  return state === "26000" || state === "42P05" ||
    (state === "08P01" && /prepared statement/i.test(serverMessage(error)))
}

const readOnlyText =
  /cannot execute .+ in a read-only transaction|cannot set transaction read-write mode during recovery/i

/** The startup parameter a server or pooler refused, if that is what it said. */
export const refusedStartupParameter = (error: SqlError.SqlError): string | undefined =>
  /unsupported startup parameter:\s*([^\s=]+)/i.exec(serverMessage(error))?.[1]

/** What `@effect/sql-pg` says of settings it cannot use (before any byte is sent). */
const clientConfig =
  /^PgConnection: (No username|keepAlive|Reserved startup parameter|Startup parameter|Invalid (connection URL|percent-encoding|port|connect_timeout)|Unsupported connection URL|Unrecognized sslmode|Server refused TLS)/

/** A TLS certificate that does not verify: no retry changes that. */
const certificateRefused = (error: SqlError.SqlError): boolean => {
  const cause: unknown = error.reason.cause
  const code = typeof cause === "object" && cause !== null && "code" in cause ? cause.code : undefined
  return typeof code === "string" && /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ALTNAME/.test(code)
}

/**
 * Classifies a failure by what the server, a pooler or the socket said.
 *
 * @since 0.1.0
 */
export const classify = (error: SqlError.SqlError): Verdict => {
  const state = sqlState(error)
  const text = serverMessage(error)
  if (state === "25006" || readOnlyText.test(text)) return "readOnly"
  if (state === undefined) {
    if (error.reason._tag !== "ConnectionError") return "fatal"
    return clientConfig.test(error.reason.message) || certificateRefused(error) ? "rejected" : "reconnect"
  }
  if (conflicts.has(state)) return "conflict"
  if (lostSessions.has(state)) return "reconnect"
  if (missingPreparedStatement(error)) return "rejected"
  if (state === "08P01") return transientPooler.test(text) ? "reconnect" : "rejected"
  return state.startsWith("08") ? "reconnect" : "fatal"
}

/**
 * Whether the same idempotent statement may succeed when run again.
 *
 * @since 0.1.0
 */
export const isRetryable = (error: SqlError.SqlError): boolean => {
  const verdict = classify(error)
  return verdict === "conflict" || verdict === "reconnect" || verdict === "readOnly"
}

/**
 * Whether a failure concerns the endpoint rather than the statement (the
 * session is gone, or it reaches a read-only endpoint): a statement of many
 * calls is run again whole only for these (see `GroupCommit`), as its
 * members could not have caused them.
 *
 * @since 0.1.0
 */
export const isEndpointFailure = (error: SqlError.SqlError): boolean => {
  const verdict = classify(error)
  return verdict === "reconnect" || verdict === "readOnly"
}

/**
 * The schedule a retried operation follows: its input is the failure.
 *
 * @since 0.1.0
 */
export type Policy = Schedule.Schedule<unknown, SqlError.SqlError>

/** The longest wait between two attempts: once the endpoint is back, work resumes within it. */
const longestDelay = Duration.seconds(1)

/**
 * Exponential backoff from 10 ms with jitter, each wait at most a second,
 * for as long as `window` lasts since the first failure; a window of 0
 * retries nothing. The layers check their `retryWindow` first (finite, 0 or
 * more: see `Settings`); called directly, a malformed window throws.
 *
 * @since 0.1.0
 */
export const windowed = (window: Duration.Input): Policy =>
  Duration.isZero(Duration.fromInputUnsafe(window))
    ? Schedule.recurs(0)
    : Schedule.exponential("10 millis").pipe(
      Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, longestDelay))),
      Schedule.jittered,
      Schedule.upTo({ duration: window })
    )

/**
 * How long an operation keeps trying by default. The failover of a primary
 * to a synchronous standby behind a pooler (`test/e2e/topology.test.ts`) keeps
 * writes away for about 1–5 seconds: twice the longest of that, with room
 * for a pooler's own reconnect. Managed failovers can take 30 seconds or
 * more: set `retryWindow` (or `CHECKPOINT_RETRY_WINDOW`) for those.
 *
 * @since 0.1.0
 */
export const defaultWindow: Duration.Duration = Duration.seconds(10)

/**
 * The policy options name, if any: `retry`, else a window of `retryWindow`.
 *
 * @since 0.1.0
 */
export const policyOf = (options: {
  readonly retry?: Policy | undefined
  readonly retryWindow?: Duration.Input | undefined
}): Policy | undefined =>
  options.retry ?? (options.retryWindow === undefined ? undefined : windowed(options.retryWindow))

/**
 * {@link windowed} over {@link defaultWindow}.
 *
 * @since 0.1.0
 */
export const defaultPolicy: Policy = windowed(defaultWindow)

/**
 * The retry policy of the storage operations. Override it for a layer (its
 * `retry` or `retryWindow` option) or a saver (`fromLayer(layer, { retry })`);
 * `Schedule.recurs(0)` turns retries off.
 *
 * @since 0.1.0
 */
export const RetryPolicy = Context.Reference<Policy>("langgraph-checkpoint-effect/RetryPolicy", {
  defaultValue: () => defaultPolicy
})
