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
import type { Layer } from "effect"
import type { IncompatibleSchema, StorageFailure } from "./CheckpointError.ts"
import type { CheckpointStorage } from "./CheckpointStorage.ts"
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

/**
 * @since 0.1.0
 */
export type PostgresOptions = Pool.PoolOptions

/**
 * The storage with a pool of its own, closed when the layer is released.
 *
 * @since 0.1.0
 */
export const layer = (options: PostgresOptions): Layer.Layer<CheckpointStorage, StorageFailure | IncompatibleSchema> =>
  Pool.layer(options, "postgres")

/**
 * The storage configured from the environment: `DATABASE_URL`, and
 * optionally `CHECKPOINT_SCHEMA` and `CHECKPOINT_POOL_SIZE`.
 *
 * @since 0.1.0
 */
export const layerConfig = (
  options: Omit<PostgresOptions, "url"> = {}
): Layer.Layer<CheckpointStorage, StorageFailure | IncompatibleSchema> => Pool.layerConfig(options, "postgres")
