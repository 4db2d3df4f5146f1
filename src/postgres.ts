/**
 * PostgreSQL: `langgraph-checkpoint-effect/postgres`.
 *
 * `layer` owns a connection pool that lives and dies with the layer;
 * `layerConfig` reads its options through `Config` (`DATABASE_URL` by default); `layerClient` uses a `SqlClient` the
 * application already has. Migrations run when the layer starts unless
 * `migrate: false`, and can run on their own with `migrate` / `layerMigrations`.
 *
 * @since 0.1.0
 */
import type { Config, Effect, Layer } from "effect"
import type { SqlClient } from "effect/sql"
import type { IncompatibleSchema, InvalidConfig, StorageFailure } from "./CheckpointError.ts"
import type { CheckpointStorage, FormatError } from "./CheckpointStorage.ts"
import * as Pool from "./internal/sql/connection/Pool.ts"
import * as SqlStorage from "./internal/sql/SqlStorage.ts"
import type { PoolOptions, SqlStorageOptions } from "./SqlOptions.ts"

export type { ConnectionSettings, SqlStorageOptions, TlsOptions } from "./SqlOptions.ts"

/**
 * The storage over an application's own `SqlClient` (e.g. from
 * `PgClient.layer`), sharing its pool and its transactions. A malformed
 * number or duration among `options` is an `InvalidConfig` naming it,
 * before a statement is sent.
 *
 * @since 0.1.0
 */
export const layerClient: (
  options?: SqlStorageOptions
) => Layer.Layer<CheckpointStorage, StorageFailure | FormatError | InvalidConfig, SqlClient.SqlClient> =
  SqlStorage.layer

/**
 * Runs the migrations on the client in context.
 *
 * @since 0.1.0
 */
export const migrate: (
  options?: Pick<SqlStorageOptions, "schema" | "dialect" | "retry" | "retryWindow">
) => Effect.Effect<void, StorageFailure | IncompatibleSchema | InvalidConfig, SqlClient.SqlClient> = SqlStorage.migrate

/**
 * Runs the migrations when built, and provides nothing: a deploy step.
 *
 * @since 0.1.0
 */
export const layerMigrations: (
  options?: Pick<SqlStorageOptions, "schema" | "dialect" | "retry" | "retryWindow">
) => Layer.Layer<never, StorageFailure | IncompatibleSchema | InvalidConfig, SqlClient.SqlClient> =
  SqlStorage.layerMigrations

/**
 * Settings for short-lived processes (serverless functions, edge workers):
 * one connection, closed after 5 idle seconds. Spread it into the options:
 * `Postgres.layer({ url, ...Postgres.serverless })`.
 *
 * @since 0.1.0
 */
export const serverless: { readonly poolSize: 1; readonly idleTimeout: "5 seconds" } = Pool.serverless

/**
 * @since 0.1.0
 */
export type PostgresOptions = PoolOptions

/**
 * The storage with a pool of its own, closed when the layer is released.
 *
 * @since 0.1.0
 */
export const layer = (
  options: PostgresOptions
): Layer.Layer<CheckpointStorage, StorageFailure | FormatError | InvalidConfig> =>
  SqlStorage.layerPool(options, "postgres")

/**
 * The pool alone, as a `SqlClient` (e.g. for `migrate` in a deploy step),
 * with the same URL handling as {@link layer}.
 *
 * @since 0.1.0
 */
export const layerSqlClient = (
  options: PostgresOptions
): Layer.Layer<SqlClient.SqlClient, StorageFailure | InvalidConfig> => Pool.client(options)

/**
 * The settings `layerConfig` reads by default: `DATABASE_URL`, and
 * optionally `CHECKPOINT_SCHEMA`, `CHECKPOINT_POOL_SIZE`,
 * `CHECKPOINT_IDLE_TIMEOUT`, `CHECKPOINT_CONNECTION_TTL`,
 * `CHECKPOINT_STATEMENT_TIMEOUT` and `CHECKPOINT_RETRY_WINDOW`.
 *
 * @since 0.1.0
 */
export const defaultConfig: Config.Wrap<PostgresOptions> = Pool.defaultConfig

/**
 * The storage configured by `Config`, like `PgClient.layerConfig`: each
 * option is a `Config`, so the application chooses where its settings come
 * from (default {@link defaultConfig}).
 *
 * ```ts
 * Postgres.layerConfig({
 *   ...Postgres.defaultConfig,
 *   url: Config.Redacted("CHECKPOINTS_URL"),
 *   poolSize: Config.succeed(20)
 * })
 * ```
 *
 * A missing or malformed setting is an `InvalidConfig` naming it.
 *
 * @since 0.1.0
 */
export const layerConfig = (
  config: Config.Wrap<PostgresOptions> = defaultConfig
): Layer.Layer<CheckpointStorage, StorageFailure | FormatError | InvalidConfig> => SqlStorage.layerConfig(config, layer)
