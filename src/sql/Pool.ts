/**
 * A connection pool of its own for the storage, from a URL or host options:
 * what the PostgreSQL and CockroachDB layers share.
 *
 * @since 0.1.0
 */
import { PgClient } from "@effect/sql-pg"
import { Config, Effect, Layer, Redacted, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import type { ConnectionOptions } from "node:tls"
import { formatIssue, type IncompatibleSchema, InvalidConfig, StorageFailure } from "../CheckpointError.ts"
import type { CheckpointStorage } from "../CheckpointStorage.ts"
import type { Dialect } from "./Dialect.ts"
import * as SqlStorage from "./SqlStorage.ts"
import * as Tls from "./Tls.ts"

/**
 * @since 0.1.0
 */
export interface PoolOptions extends Omit<SqlStorage.SqlStorageOptions, "dialect"> {
  /** A `postgres://` URL. Explicit fields below win over its parts. */
  readonly url?: string | Redacted.Redacted | undefined
  readonly host?: string | undefined
  readonly port?: number | undefined
  readonly database?: string | undefined
  readonly username?: string | undefined
  readonly password?: string | Redacted.Redacted | undefined
  /** The most connections the pool opens (default 10). */
  readonly poolSize?: number | undefined
  /**
   * Use named prepared statements (default `true`). Turn off behind poolers
   * that do not keep them between transactions (PgBouncer in transaction mode).
   */
  readonly prepare?: boolean | undefined
  /** Reported to the server as `application_name`. */
  readonly applicationName?: string | undefined
  /**
   * The largest message the client accepts from the server, in bytes
   * (default 1 GiB, PostgreSQL's own limit for one value). A checkpoint and
   * its channel values come back as one row.
   */
  readonly maxMessageSize?: number | undefined
  /**
   * The isolation level of every transaction on the pool's connections
   * (default: the server's). Serialization failures this may cause are retried.
   */
  readonly isolation?: "serializable" | "repeatable read" | "read committed" | undefined
  /**
   * TLS for the connections: `true`, or TLS options (a `ca`, a client `cert`
   * and `key`, …). Without it, the URL's `sslmode`, `sslrootcert`,
   * `sslcert` and `sslkey` decide (see `Tls`).
   */
  readonly ssl?: boolean | Tls.TlsOptions | undefined
}

const redacted = (value: string | Redacted.Redacted | undefined) =>
  value === undefined || Redacted.isRedacted(value) ? value : Redacted.make(value)

/** The pool configuration of the options. */
const poolConfig = (options: PoolOptions, ssl: boolean | Tls.TlsOptions | undefined): PgClient.PgPoolConfig => ({
  url: redacted(options.url),
  // Node reads these fields as they are (a Uint8Array is as good as a Buffer).
  ...(ssl === undefined ? {} : { ssl: ssl as boolean | ConnectionOptions }),
  host: options.host,
  port: options.port,
  database: options.database,
  username: options.username,
  password: redacted(options.password),
  maxConnections: options.poolSize ?? 10,
  prepare: options.prepare ?? true,
  applicationName: options.applicationName ?? "langgraph-checkpoint-effect",
  maxMessageSize: options.maxMessageSize ?? 1024 * 1024 * 1024,
  startupParameters: {
    ...(options.isolation === undefined ? {} : { default_transaction_isolation: options.isolation }),
    // The server refuses every write on the pool's connections (see `SqlStorageOptions.readOnly`).
    ...(options.readOnly === true ? { default_transaction_read_only: "on" } : {})
  }
})

/** @since 0.1.0 */
export const connectFailure = (cause: unknown) => new StorageFailure({ operation: "connect", retryable: true, cause })

/**
 * The storage over a pool of its own, closed when the layer is released.
 * (CockroachDB speaks the PostgreSQL wire protocol.)
 *
 * @since 0.1.0
 */
export const layer = (
  options: PoolOptions,
  dialect: Dialect
): Layer.Layer<CheckpointStorage, StorageFailure | IncompatibleSchema | InvalidConfig> =>
  SqlStorage.layer({ ...options, dialect }).pipe(Layer.provide(client(options)))

/**
 * The pool alone, as the application's `SqlClient`, with the same URL
 * handling (TLS parameters, pool size, isolation, `readOnly` sessions): for
 * deploy steps such as `migrate` and `enableTtl`.
 *
 * @since 0.1.0
 */
export const client = (
  options: PoolOptions
): Layer.Layer<SqlClient.SqlClient, StorageFailure | InvalidConfig> =>
  PgClient.layerFrom(
    (options.ssl !== undefined || options.url === undefined ? Effect.succeed(options.ssl) : Tls.fromUrl(options.url))
      .pipe(Effect.flatMap((ssl) => PgClient.make(poolConfig(options, ssl)).pipe(Effect.mapError(connectFailure))))
  )

/**
 * Where `layerConfig` reads its settings unless told otherwise:
 * `DATABASE_URL`, and optionally `CHECKPOINT_SCHEMA` and
 * `CHECKPOINT_POOL_SIZE`. Spread it and replace a field to rename one
 * variable, e.g. `{ ...defaultConfig, url: Config.Redacted("PG_URL") }`.
 *
 * @since 0.1.0
 */
export const defaultConfig = {
  url: Config.Redacted("DATABASE_URL"),
  schema: Config.String("CHECKPOINT_SCHEMA").pipe(Config.withDefault(undefined)),
  poolSize: Config.Int("CHECKPOINT_POOL_SIZE").pipe(Config.withDefault(undefined))
} satisfies Config.Wrap<PoolOptions>

/**
 * The storage configured by `Config` (as `PgClient.layerConfig` is): a
 * setting that is missing or malformed is an `InvalidConfig` naming it.
 *
 * @since 0.1.0
 */
export const layerConfig = <Options extends PoolOptions>(
  config: Config.Wrap<Options>,
  make: (options: Options) => Layer.Layer<CheckpointStorage, StorageFailure | IncompatibleSchema | InvalidConfig>
): Layer.Layer<CheckpointStorage, StorageFailure | IncompatibleSchema | InvalidConfig> =>
  Layer.unwrap(
    Config.unwrap(config).pipe(
      Effect.mapError((error) =>
        new InvalidConfig({
          operation: "layerConfig",
          detail: Schema.isSchemaError(error.cause) ? formatIssue(error.cause.issue) : error.message
        })
      ),
      Effect.map(make)
    )
  )
