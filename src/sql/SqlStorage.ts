/**
 * `CheckpointStorage` over any `SqlClient` speaking the PostgreSQL dialect:
 * the layers every SQL backend (PostgreSQL, PGlite, CockroachDB) builds on.
 *
 * @since 0.1.0
 */
import { Effect, Layer } from "effect"
import type { SqlClient } from "effect/sql"
import type { IncompatibleSchema, StorageFailure } from "../CheckpointError.ts"
import { type CheckpointStorage, layerDriver } from "../CheckpointStorage.ts"
import * as Retry from "../Retry.ts"
import type { Dialect } from "./Dialect.ts"
import * as Migrations from "./Migrations.ts"
import * as SqlDriver from "./SqlDriver.ts"
import * as Tables from "./Tables.ts"

/**
 * @since 0.1.0
 */
export interface SqlStorageOptions extends SqlDriver.SqlDriverOptions {
  /** The database schema that holds the tables (default `public`). */
  readonly schema?: string | undefined
  /** The database behind the client (default `postgres`; PGlite is `postgres`). */
  readonly dialect?: Dialect | undefined
  /** How retryable failures are retried (default `Retry.defaultPolicy`). */
  readonly retry?: Retry.Policy | undefined
  /**
   * Run the migrations when the layer starts (default `true`). With `false`
   * the layer only checks that the schema is current, e.g. when migrations
   * run as a separate deploy step with a schema-owner role.
   */
  readonly migrate?: boolean | undefined
}

/**
 * Runs the migrations on the client in context.
 *
 * @since 0.1.0
 */
export const migrate = (options: Pick<SqlStorageOptions, "schema" | "dialect" | "retry"> = {}) =>
  withPolicy(Migrations.run(Tables.make(options.schema), options.dialect), options.retry)

/**
 * Runs the migrations when built, and provides nothing: a deploy step.
 *
 * @since 0.1.0
 */
export const layerMigrations = (
  options: Pick<SqlStorageOptions, "schema" | "dialect" | "retry"> = {}
): Layer.Layer<never, StorageFailure | IncompatibleSchema, SqlClient.SqlClient> => Layer.effectDiscard(migrate(options))

/**
 * The storage over the `SqlClient` the application provides (so it shares
 * the application's pool and transactions).
 *
 * @since 0.1.0
 */
export const layer = (
  options: SqlStorageOptions = {}
): Layer.Layer<CheckpointStorage, StorageFailure | IncompatibleSchema, SqlClient.SqlClient> => {
  const tables = Tables.make(options.schema)
  return layerDriver(withPolicy(
    (options.migrate === false ? Migrations.verify(tables) : Migrations.run(tables, options.dialect)).pipe(
      Effect.andThen(Retry.registerRetries),
      Effect.andThen(SqlDriver.make(tables, options))
    ),
    options.retry
  ))
}

const withPolicy = <A, E, R>(effect: Effect.Effect<A, E, R>, policy: Retry.Policy | undefined) =>
  policy === undefined ? effect : Effect.provideService(effect, Retry.RetryPolicy, policy)
