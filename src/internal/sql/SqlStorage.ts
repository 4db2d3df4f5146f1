/**
 * `CheckpointStorage` over any `SqlClient` speaking the PostgreSQL dialect:
 * the layers every SQL backend (PostgreSQL, PGlite, CockroachDB) builds on.
 *
 * @since 0.1.0
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { type IncompatibleSchema, type InvalidConfig, StorageFailure } from "../../CheckpointError.ts"
import { type CheckpointStorage, type FormatError, layerDriver } from "../../CheckpointStorage.ts"
import * as FormatLevel from "../../FormatLevel.ts"
import * as Retry from "../../Retry.ts"
import type { SqlStorageOptions } from "../../SqlOptions.ts"
import type { StorageDriver } from "../../StorageDriver.ts"
import * as Settings from "../Settings.ts"
import * as LatestTuples from "./LatestTuples.ts"
import * as Layout from "./Layout.ts"
import * as Migrations from "./Migrations.ts"
import * as Retrying from "./Retrying.ts"
import * as SqlDriver from "./SqlDriver.ts"
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
  layerDriver(driverOver((valid) => Layout.resolve(valid), options))

/**
 * The storage over tables whose layout the caller already resolved
 * (`Layout.resolve`), for a caller that needs them itself too (the command
 * line's inspector): nothing is migrated or checked here.
 *
 * @since 0.1.0
 */
export const layerTables = (
  tables: Tables.Tables,
  options: Omit<SqlStorageOptions, "schema" | "migrate"> = {}
): Layer.Layer<CheckpointStorage, StorageFailure | FormatError | InvalidConfig, SqlClient.SqlClient> =>
  layerDriver(driverOver(() => Effect.succeed(tables), options))

/** The driver over the tables `resolve` gives, once the options are checked. */
const driverOver = <E, R>(
  resolve: (options: SqlStorageOptions) => Effect.Effect<Tables.Tables, E, R>,
  options: SqlStorageOptions
) =>
  Effect.flatMap(Settings.check("layer", options), (valid) =>
    withPolicy(
      resolve(valid).pipe(
        Effect.tap(() => Retrying.registerRetries),
        Effect.flatMap((tables) =>
          Effect.gen(function*() {
            const made = yield* SqlDriver.make(tables, valid)
            const driver = (yield* LatestTuples.SoleWriter) ? yield* LatestTuples.over(made) : made
            if (valid.readOnly !== true) return driver
            const sql = yield* SqlClient.SqlClient
            return refusingWrites(
              driver,
              Effect.provideService(Migrations.threadRecordsEnabled(tables), SqlClient.SqlClient, sql)
            )
          })
        )
      ),
      valid
    ))

/**
 * The driver with every write refused before it reaches a connection: the
 * application's own client may accept writes, and LangGraph's tables, read
 * through derived relations, could not take them anyway.
 */
const refusingWrites = (
  driver: StorageDriver,
  threadRecords: Effect.Effect<boolean, StorageFailure>
): StorageDriver => {
  const refuse = (operation: string) =>
    Effect.fail(
      new StorageFailure({ operation, retryable: false, cause: "the storage was opened read-only (readOnly: true)" })
    )
  return {
    ...driver,
    put: () => refuse("put"),
    putWrites: () => refuse("putWrites"),
    deleteThread: () => refuse("deleteThread"),
    remove: () => refuse("remove"),
    setParents: () => refuse("setParents"),
    writeThread: () => refuse("writeThread"),
    raiseFormat: () => refuse("raiseFormat"),
    setThreadRecord: () => refuse("setThread"),
    createThreadRecord: () => refuse("createThread"),
    // Records a writer enabled read as they are; enabling them is a write.
    enableThreadRecords: Effect.flatMap(
      threadRecords,
      (enabled) => enabled ? Effect.void : refuse("enableThreadRecords")
    ),
    // Every caller of `exclusive` writes, and it starts by locking the thread's row with a write.
    exclusive: () => refuse("exclusive")
  }
}

/** The effect under the options' retry policy, if they name one. */
const withPolicy = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  options: Pick<SqlStorageOptions, "retry" | "retryWindow">
) => {
  const policy = Retry.policyOf(options)
  return policy === undefined ? effect : Effect.provideService(effect, Retry.RetryPolicy, policy)
}
