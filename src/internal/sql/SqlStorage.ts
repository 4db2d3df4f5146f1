/**
 * `CheckpointStorage` over any `SqlClient` speaking the PostgreSQL dialect:
 * the layers every SQL backend (PostgreSQL, PGlite, CockroachDB) builds on,
 * over the application's client or a pool of its own (`connection/Pool`).
 * The driver is `SqlDriver`, decorated where the storage asks for it (see
 * `decorators/`: a sole writer's latest reads, a read-only open's refused
 * writes).
 *
 * @since 0.1.0
 */
import { Config, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { formatIssue, type IncompatibleSchema, InvalidConfig, type StorageFailure } from "../../CheckpointError.ts"
import { type CheckpointStorage, type FormatError, layerDriver } from "../../CheckpointStorage.ts"
import * as FormatLevel from "../../FormatLevel.ts"
import * as Retry from "../../Retry.ts"
import type { Dialect, PoolOptions, SqlStorageOptions } from "../../SqlOptions.ts"
import * as Settings from "../Settings.ts"
import * as Pool from "./connection/Pool.ts"
import * as LatestTuples from "./decorators/LatestTuples.ts"
import * as ReadOnly from "./decorators/ReadOnly.ts"
import * as Migrations from "./Migrations.ts"
import * as RetryLoop from "./RetryLoop.ts"
import * as SqlDriver from "./SqlDriver.ts"
import * as TableOwner from "./TableOwner.ts"
import * as Tables from "./Tables.ts"

/**
 * Runs the migrations on the client in context.
 *
 * @since 0.1.0
 */
export const migrate = (
  options: Pick<SqlStorageOptions, "schema" | "dialect" | "retry" | "retryWindow"> = {}
): Effect.Effect<void, StorageFailure | IncompatibleSchema | InvalidConfig, SqlClient.SqlClient> =>
  Effect.flatMap(
    Settings.check("migrate", options),
    (valid) =>
      withPolicy(
        Effect.gen(function*() {
          yield* Migrations.run(Tables.make(valid.schema), valid.dialect, yield* FormatLevel.supported)
        }),
        valid
      )
  )

/**
 * Runs the migrations when built, and provides nothing: a deploy step.
 *
 * @since 0.1.0
 */
export const layerMigrations = (
  options: Pick<SqlStorageOptions, "schema" | "dialect" | "retry" | "retryWindow"> = {}
): Layer.Layer<never, StorageFailure | IncompatibleSchema | InvalidConfig, SqlClient.SqlClient> =>
  Layer.effectDiscard(migrate(options))

/**
 * The storage over the `SqlClient` the application provides (so it shares
 * the application's pool and transactions). A malformed number or duration
 * among `options` is an `InvalidConfig` naming it (see `Settings`), before
 * a statement is sent.
 *
 * @since 0.1.0
 */
export const layer = (
  options: SqlStorageOptions = {}
): Layer.Layer<CheckpointStorage, StorageFailure | FormatError | InvalidConfig, SqlClient.SqlClient> =>
  layerDriver(driverOver((valid) => TableOwner.resolve(valid), options))

/**
 * The storage over tables whose layout the caller already resolved
 * (`TableOwner.resolve`), for a caller that needs them itself too (the command
 * line's inspector): nothing is migrated or checked here.
 *
 * @since 0.1.0
 */
export const layerTables = (
  tables: Tables.Tables,
  options: Omit<SqlStorageOptions, "schema" | "migrate"> = {}
): Layer.Layer<CheckpointStorage, StorageFailure | FormatError | InvalidConfig, SqlClient.SqlClient> =>
  layerDriver(driverOver(() => Effect.succeed(tables), options))

/**
 * The storage over a pool of its own, closed when the layer is released.
 * (CockroachDB speaks the PostgreSQL wire protocol.) Every number and
 * duration of `options` is checked before the pool connects (see `Settings`).
 *
 * @since 0.1.0
 */
export const layerPool = (
  options: PoolOptions,
  dialect: Dialect
): Layer.Layer<CheckpointStorage, StorageFailure | FormatError | InvalidConfig> =>
  Layer.unwrap(Effect.map(
    Settings.check("connect", options),
    (valid) => layer({ ...valid, dialect }).pipe(Layer.provide(Pool.client(valid)))
  ))

/**
 * The storage configured by `Config` (as `PgClient.layerConfig` is): a
 * setting that is missing or malformed is an `InvalidConfig` naming it.
 *
 * @since 0.1.0
 */
export const layerConfig = <Options extends PoolOptions>(
  config: Config.Wrap<Options>,
  make: (options: Options) => Layer.Layer<CheckpointStorage, StorageFailure | FormatError | InvalidConfig>
): Layer.Layer<CheckpointStorage, StorageFailure | FormatError | InvalidConfig> =>
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

/** The driver over the tables `resolve` gives, once the options are checked. */
const driverOver = <E, R>(
  resolve: (options: SqlStorageOptions) => Effect.Effect<Tables.Tables, E, R>,
  options: SqlStorageOptions
) =>
  Effect.flatMap(Settings.check("layer", options), (valid) =>
    withPolicy(
      resolve(valid).pipe(
        Effect.tap(() => RetryLoop.registerRetries),
        Effect.flatMap((tables) =>
          Effect.gen(function*() {
            const made = yield* SqlDriver.make(tables, valid)
            const driver = (yield* LatestTuples.SoleWriter) ? yield* LatestTuples.over(made) : made
            if (valid.readOnly !== true) return driver
            const sql = yield* SqlClient.SqlClient
            return ReadOnly.refusingWrites(
              driver,
              Effect.provideService(Migrations.threadRecordsEnabled(tables), SqlClient.SqlClient, sql)
            )
          })
        )
      ),
      valid
    ))

/** The effect under the options' retry policy, if they name one. */
const withPolicy = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  options: Pick<SqlStorageOptions, "retry" | "retryWindow">
) => {
  const policy = Retry.policyOf(options)
  return policy === undefined ? effect : Effect.provideService(effect, Retry.RetryPolicy, policy)
}
