/**
 * Whether a connection pooler stands between this process and the server,
 * found by asking once, when a pool starts.
 *
 * PostgreSQL (and CockroachDB) report the session's process id in the
 * startup handshake, and `pg_backend_pid()` returns the same number. A pooler
 * answers the handshake itself, with a key of its own for cancel requests,
 * and hands each transaction to whichever server connection is free — so
 * the two numbers differ. Behind a pooler in transaction mode, a statement
 * prepared under a name on one server connection is unknown on the next:
 * `@effect/sql-pg` prepares it again when a lone statement meets that, but
 * inside a transaction the error aborts the transaction (measured with
 * PgBouncer 1.18: transactions fail with "prepared statement … does not
 * exist", then "current transaction is aborted"). So named prepared
 * statements are used only when no pooler answered.
 *
 * @since 0.1.0
 */
import { PgConnection } from "@effect/sql-pg"
import { Effect } from "effect"
import type { SqlError } from "effect/sql"
import * as Retry from "../../../Retry.ts"

/**
 * Connects once with `config` and tells whether a pooler answered. A
 * server that cannot say (no `pg_backend_pid()`) counts as pooled: unnamed
 * statements work everywhere. Failing to connect is the connection's error.
 *
 * @since 0.1.0
 */
export const detect = (config: PgConnection.Config): Effect.Effect<boolean, SqlError.SqlError> =>
  Effect.scoped(
    PgConnection.make({ ...config, prepare: false }).pipe(
      Effect.flatMap((connection) =>
        connection.query("SELECT pg_backend_pid() AS pid", [], false).pipe(
          Effect.map((result) => Number(result.rows[0]?.["pid"]) !== connection.processId),
          Effect.catchIf((error) => Retry.classify(error) === "fatal", () => Effect.succeed(true))
        )
      )
    )
  )

/**
 * The `prepare` parameter of a connection URL (`prepare=false` turns named
 * prepared statements off, `prepare=true` on, whatever `detect` finds), or
 * `undefined` when absent; any other value is a message saying so.
 *
 * @since 0.1.0
 */
export const preparedFromUrl = (url: string | undefined): boolean | undefined | string => {
  if (url === undefined || !URL.canParse(url)) return undefined
  const value = new URL(url).searchParams.get("prepare")
  if (value === null) return undefined
  if (/^(true|on|1)$/i.test(value)) return true
  if (/^(false|off|0)$/i.test(value)) return false
  return `prepare=${value} in the URL: expected true or false`
}
