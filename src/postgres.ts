/**
 * PostgreSQL: `langgraph-checkpoint-effect/postgres`.
 *
 * `layer` owns a connection pool that lives and dies with the layer;
 * `layerConfig` reads `DATABASE_URL`; `layerClient` uses a `SqlClient` the
 * application already has. Migrations run when the layer starts unless
 * `migrate: false`, and can run on their own with `migrate` / `layerMigrations`.
 *
 * @since 0.1.0
 */
import { PgClient } from "@effect/sql-pg"
import { Config, Effect, Layer, Redacted } from "effect"
import { StorageFailure } from "./CheckpointError.ts"
import type { IncompatibleSchema } from "./CheckpointError.ts"
import type { CheckpointStorage } from "./CheckpointStorage.ts"
import * as SqlStorage from "./sql/SqlStorage.ts"

export {
  /**
   * The storage over an application's own `SqlClient` (e.g. from
   * `PgClient.layer`), sharing its pool.
   *
   * @since 0.1.0
   */
  layer as layerClient,
  layerMigrations,
  migrate,
  type SqlStorageOptions
} from "./sql/SqlStorage.ts"

/**
 * @since 0.1.0
 */
export interface PostgresOptions extends SqlStorage.SqlStorageOptions {
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
}

const redacted = (value: string | Redacted.Redacted | undefined) =>
  value === undefined || Redacted.isRedacted(value) ? value : Redacted.make(value)

/** The pool configuration of the options. */
const poolConfig = (options: PostgresOptions): PgClient.PgPoolConfig => ({
  url: redacted(options.url),
  host: options.host,
  port: options.port,
  database: options.database,
  username: options.username,
  password: redacted(options.password),
  maxConnections: options.poolSize ?? 10,
  prepare: options.prepare ?? true,
  applicationName: options.applicationName ?? "langgraph-checkpoint-effect",
  maxMessageSize: options.maxMessageSize ?? 1024 * 1024 * 1024
})

const connectFailure = (cause: unknown) => new StorageFailure({ operation: "connect", retryable: true, cause })

/**
 * The storage with a pool of its own, closed when the layer is released.
 *
 * @since 0.1.0
 */
export const layer = (
  options: PostgresOptions
): Layer.Layer<CheckpointStorage, StorageFailure | IncompatibleSchema> =>
  SqlStorage.layer(options).pipe(
    Layer.provide(PgClient.layerFrom(PgClient.make(poolConfig(options)).pipe(Effect.mapError(connectFailure))))
  )

/**
 * The storage configured from the environment: `DATABASE_URL`, and
 * optionally `CHECKPOINT_SCHEMA` and `CHECKPOINT_POOL_SIZE`.
 *
 * @since 0.1.0
 */
export const layerConfig = (
  options: Omit<PostgresOptions, "url"> = {}
): Layer.Layer<CheckpointStorage, StorageFailure | IncompatibleSchema> =>
  Layer.unwrap(
    Effect.gen(function*() {
      const url = yield* Config.Redacted("DATABASE_URL")
      const schema = yield* Config.String("CHECKPOINT_SCHEMA").pipe(Config.withDefault(options.schema))
      const poolSize = yield* Config.Int("CHECKPOINT_POOL_SIZE").pipe(Config.withDefault(options.poolSize))
      return layer({ ...options, url, schema, poolSize })
    }).pipe(Effect.mapError(connectFailure))
  )
