/**
 * The isolation level and access mode of a pool's transactions, set where
 * each transaction begins (`BEGIN ISOLATION LEVEL …, READ ONLY`), never as
 * a session default sent when connecting: connection poolers in transaction
 * mode (PgBouncer, Supavisor, Neon's and RDS Proxy) refuse startup
 * parameters such as `default_transaction_isolation`, and a `SET` would
 * outlive the transaction on a server connection that another client gets
 * next.
 *
 * A statement run outside a transaction is its own implicit transaction at
 * the server's default isolation: read committed on PostgreSQL,
 * serializable on CockroachDB. Every statement of the SQL driver is correct
 * at either (each is atomic and locks the thread rows it changes); where
 * single statements must run at another level, set the role's or the
 * database's default (`ALTER ROLE … SET default_transaction_isolation`),
 * which the server applies at connect, behind any pooler.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * @since 0.1.0
 */
export interface TransactionMode {
  readonly isolation?: "serializable" | "repeatable read" | "read committed" | undefined
  readonly readOnly?: boolean | undefined
}

/**
 * The statement that begins a transaction in `mode`, or `undefined` for a
 * plain `BEGIN` (the server's defaults).
 *
 * @since 0.1.0
 */
export const beginStatement = (mode: TransactionMode): string | undefined => {
  const modes = [
    ...(mode.isolation === undefined ? [] : [`ISOLATION LEVEL ${mode.isolation.toUpperCase()}`]),
    ...(mode.readOnly === true ? ["READ ONLY"] : [])
  ]
  return modes.length === 0 ? undefined : `BEGIN ${modes.join(", ")}`
}

/**
 * The client, whose top-level transactions begin with `begin` unless the
 * caller provides `SqlClient.BeginTransaction` itself. Inside the
 * transaction the caller's own choice is restored, so a transaction of
 * another client started there is not affected.
 *
 * @since 0.1.0
 */
export const beginningWith = <Client extends SqlClient.SqlClient>(client: Client, begin: string): Client => {
  const withTransaction: SqlClient.SqlClient["withTransaction"] = (effect) =>
    SqlClient.BeginTransaction.use(
      (chosen) =>
        chosen !== undefined
          ? client.withTransaction(effect)
          : client.withTransaction(Effect.provideService(effect, SqlClient.BeginTransaction, undefined)).pipe(
            Effect.provideService(SqlClient.BeginTransaction, begin)
          )
    )
  // The client is a function (the `sql` template tag) carrying its methods:
  // a copy must be one as well.
  const tag = function(this: unknown, ...args: Array<unknown>): unknown {
    return Reflect.apply(client, this, args)
  }
  const wrapped = Object.assign(tag, client, { withTransaction }) as unknown as Client
  return Object.assign(wrapped, { safe: wrapped })
}
