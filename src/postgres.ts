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
import type { Config, Layer } from "effect"
import type { InvalidConfig, StorageFailure } from "./CheckpointError.ts"
import type { CheckpointStorage, FormatError } from "./CheckpointStorage.ts"
import * as Pool from "./sql/Pool.ts"

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

export {
  /**
   * Settings for short-lived processes (serverless functions, edge workers):
   * one connection, closed after 5 idle seconds. Spread it into the options:
   * `Postgres.layer({ url, ...Postgres.serverless })`.
   *
   * @since 0.1.0
   */
  serverless
} from "./sql/Pool.ts"

/**
 * @since 0.1.0
 */
export type PostgresOptions = Pool.PoolOptions

/**
 * The storage with a pool of its own, closed when the layer is released.
 *
 * @since 0.1.0
 */
export const layer = (
  options: PostgresOptions
): Layer.Layer<CheckpointStorage, StorageFailure | FormatError | InvalidConfig> => Pool.layer(options, "postgres")

/**
 * The pool alone, as a `SqlClient` (e.g. for `migrate` in a deploy step),
 * with the same URL handling as {@link layer}.
 *
 * @since 0.1.0
 */
export const layerSqlClient = (options: PostgresOptions) => Pool.client(options)

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
): Layer.Layer<CheckpointStorage, StorageFailure | FormatError | InvalidConfig> => Pool.layerConfig(config, layer)
