/**
 * A connection pool of its own for the storage, from a URL or host options:
 * what the PostgreSQL and CockroachDB layers share (the storage over it is
 * `SqlStorage.layerPool`).
 *
 * It sends nothing a connection pooler in transaction mode refuses
 * (PgBouncer, Supavisor, Neon's, RDS Proxy): no startup parameter but the
 * user, database, application name and client encoding; isolation and read-only mode are set
 * where each transaction begins (`Transactions`); named prepared statements
 * only when no pooler answers (`Pooler`). It owns its sockets (`Sockets`), so
 * that a read-only answer can drop them all (`RetryLoop.Reconnect`).
 *
 * @since 0.1.0
 */
import { PgClient } from "@effect/sql-pg"
import { Config, Context, Effect, Layer, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { SqlClient, SqlError } from "effect/sql"
import type { ConnectionOptions } from "node:tls"
import { InvalidConfig, StorageFailure } from "../../../CheckpointError.ts"
import * as Retry from "../../../Retry.ts"
import type { ConnectionSettings, PoolOptions, TlsOptions } from "../../../SqlOptions.ts"
import * as Settings from "../../Settings.ts"
import * as RetryLoop from "../RetryLoop.ts"
import * as Pooler from "./Pooler.ts"
import * as Sockets from "./Sockets.ts"
import * as Tls from "./Tls.ts"
import * as Transactions from "./Transactions.ts"

/**
 * Settings for processes that live for a request or a few (serverless
 * functions, edge workers, scale-to-zero containers): one connection,
 * closed after 5 idle seconds, so a frozen or finished instance holds no
 * connection and its next invocation opens a fresh one. Spread it into the
 * options: `Postgres.layer({ url, ...Postgres.serverless })`, or
 * `fromConnString(url, { connection: serverless })`. Pair it with the
 * provider's pooled endpoint (Supabase's transaction pooler, Neon's
 * `-pooler` host, RDS Proxy).
 *
 * @since 0.1.0
 */
export const serverless = {
  poolSize: 1,
  idleTimeout: "5 seconds"
} as const satisfies ConnectionSettings

const redacted = (value: string | Redacted.Redacted | undefined) =>
  value === undefined || Redacted.isRedacted(value) ? value : Redacted.make(value)

const plain = (value: string | Redacted.Redacted | undefined) =>
  value === undefined || typeof value === "string" ? value : Redacted.value(value)

/** The pool configuration of the options: no startup parameters (see the module's description). */
const poolConfig = (
  options: PoolOptions,
  ssl: boolean | TlsOptions | undefined,
  sockets: Sockets.Sockets
): PgClient.PgPoolConfig => ({
  url: redacted(options.url),
  // Node reads these fields as they are (a Uint8Array is as good as a Buffer).
  ...(ssl === undefined ? {} : { ssl: ssl as boolean | ConnectionOptions }),
  host: options.host,
  port: options.port,
  database: options.database,
  username: options.username,
  password: redacted(options.password),
  stream: sockets.open,
  maxConnections: options.poolSize ?? 10,
  idleTimeout: options.idleTimeout,
  connectionTTL: options.connectionTTL,
  applicationName: options.applicationName ?? "langgraph-checkpoint-effect",
  maxMessageSize: options.maxMessageSize ?? 1024 * 1024 * 1024
})

/** @since 0.1.0 */
export const connectFailure = (cause: unknown) => new StorageFailure({ operation: "connect", retryable: true, cause })

/** A database that could not be reached or logged in to, named (its password masked) with why. */
const named = (failure: StorageFailure, where: string): StorageFailure => {
  const hint = SqlError.isSqlError(failure.cause) ? Retry.cannotOpen(where, failure.cause) : undefined
  return hint === undefined ? failure : new StorageFailure({
    operation: failure.operation,
    retryable: failure.retryable,
    cause: failure.cause,
    ...(failure.attempts === undefined ? {} : { attempts: failure.attempts }),
    ...(failure.sqlState === undefined ? {} : { sqlState: failure.sqlState }),
    hint
  })
}

/** A connection the server or a pooler refused for its settings: an `InvalidConfig` naming what to change. */
const refused = (failure: StorageFailure): StorageFailure | InvalidConfig => {
  const cause = failure.cause
  if (!SqlError.isSqlError(cause) || Retry.classify(cause) !== "rejected") return failure
  const parameter = Retry.refusedStartupParameter(cause)
  return new InvalidConfig({
    operation: "connect",
    detail: parameter === undefined
      ? failure.message
      : `${RetryLoop.startupParameterHint(parameter)} (${failure.message})`
  })
}

/**
 * The pool alone, as the application's `SqlClient`, with the same URL
 * handling (TLS parameters, pool size, isolation, `readOnly` transactions,
 * prepared statements only without a pooler): for deploy steps such as
 * `migrate` and `enableTtl`.
 *
 * @since 0.1.0
 */
export const client = (
  given: PoolOptions
): Layer.Layer<SqlClient.SqlClient, StorageFailure | InvalidConfig> =>
  Layer.effectContext(Effect.gen(function*() {
    const options = yield* Settings.check("connect", given)
    const url = plain(options.url)
    const ssl = options.ssl !== undefined || url === undefined ? options.ssl : yield* Tls.fromUrl(url)
    const prepareInUrl = Pooler.preparedFromUrl(url)
    if (typeof prepareInUrl === "string") {
      return yield* new InvalidConfig({ operation: "connect", detail: prepareInUrl })
    }
    const sockets = Sockets.make(Sockets.endpoint(url, options.host, options.port))
    const config = poolConfig(options, ssl, sockets)
    const policy = Retry.policyOf(options) ?? (yield* Retry.RetryPolicy)
    const pooled = yield* Pooler.detect(config).pipe(
      RetryLoop.retrying("connect", policy),
      Effect.mapError((failure) => refused(named(failure, url ?? `${options.host}:${options.port}`)))
    )
    const pg = yield* PgClient.make({ ...config, prepare: options.prepare ?? prepareInUrl ?? !pooled }).pipe(
      Effect.mapError(connectFailure)
    )
    const begin = Transactions.beginStatement({ isolation: options.isolation, readOnly: options.readOnly })
    const sql = begin === undefined ? pg : Transactions.beginningWith(pg, begin)
    return Context.make(PgClient.PgClient, sql).pipe(
      Context.add(SqlClient.SqlClient, sql),
      Context.add(RetryLoop.Reconnect, sockets.closeAll)
    )
  })).pipe(Layer.provide(Reactivity.layer))

const optional = <A>(config: Config.Config<A>) => config.pipe(Config.withDefault(undefined))

/**
 * Where `layerConfig` reads its settings unless told otherwise:
 * `DATABASE_URL`, and optionally `CHECKPOINT_SCHEMA`,
 * `CHECKPOINT_POOL_SIZE`, `CHECKPOINT_IDLE_TIMEOUT`,
 * `CHECKPOINT_CONNECTION_TTL`, `CHECKPOINT_STATEMENT_TIMEOUT` and
 * `CHECKPOINT_RETRY_WINDOW` (finite durations such as `"30 seconds"`,
 * more than 0; a retry window of `"0 seconds"` turns retries off; a pool
 * size of 1 or more). Spread it
 * and replace a field to rename one variable, e.g.
 * `{ ...defaultConfig, url: Config.Redacted("PG_URL") }`.
 *
 * @since 0.1.0
 */
export const defaultConfig = {
  url: Config.Redacted("DATABASE_URL"),
  schema: optional(Config.String("CHECKPOINT_SCHEMA")),
  poolSize: optional(Config.schema(Settings.Count, "CHECKPOINT_POOL_SIZE")),
  idleTimeout: optional(Config.schema(Settings.DurationString("positive"), "CHECKPOINT_IDLE_TIMEOUT")),
  connectionTTL: optional(Config.schema(Settings.DurationString("positive"), "CHECKPOINT_CONNECTION_TTL")),
  statementTimeout: optional(Config.schema(Settings.DurationString("positive"), "CHECKPOINT_STATEMENT_TIMEOUT")),
  retryWindow: optional(
    Config.schema(Settings.DurationString("zero", Settings.MAX_RETRY_WINDOW), "CHECKPOINT_RETRY_WINDOW")
  )
} satisfies Config.Wrap<PoolOptions>
