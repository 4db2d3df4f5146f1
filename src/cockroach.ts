/**
 * CockroachDB: `langgraph-checkpoint-effect/cockroach`.
 *
 * The same SQL driver as PostgreSQL (CockroachDB speaks its wire protocol),
 * in the subset CockroachDB accepts, with migrations serialized by a lock
 * row. Transactions are SERIALIZABLE unless `isolation: "read committed"`
 * (set where each begins, as poolers refuse it at connect; a single
 * statement runs at the cluster's default, SERIALIZABLE unless changed);
 * the serialization failures CockroachDB raises under contention (SQLSTATE
 * 40001) are retried by the `retry` policy.
 *
 * `enableTtl` lets CockroachDB's row-level TTL delete whole inactive threads,
 * so it can never remove a blob or write a surviving checkpoint still needs.
 *
 * @since 0.1.0
 */
import { type Config, Effect, type Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import type { InvalidConfig, StorageFailure } from "./CheckpointError.ts"
import type { CheckpointStorage, FormatError } from "./CheckpointStorage.ts"
import * as ConnectionString from "./internal/ConnectionString.ts"
import * as Pool from "./internal/sql/connection/Pool.ts"
import * as RetryLoop from "./internal/sql/RetryLoop.ts"
import * as SqlStorage from "./internal/sql/SqlStorage.ts"
import * as Tables from "./internal/sql/Tables.ts"
import * as Retry from "./Retry.ts"
import type { PoolOptions } from "./SqlOptions.ts"

/**
 * @since 0.1.0
 */
export interface CockroachOptions extends Omit<PoolOptions, "isolation"> {
  /**
   * The isolation of the transactions opened on the pool (default
   * `serializable`, CockroachDB's own default, which single statements get
   * from the cluster).
   */
  readonly isolation?: "serializable" | "read committed" | undefined
}

/**
 * A `cockroachdb://` URL in the `postgres://` form the wire client reads.
 *
 * @since 0.1.0
 */
export const toWireUrl: (url: string) => string = ConnectionString.toWireUrl

const wire = (url: CockroachOptions["url"]) =>
  url === undefined ? url : Redacted.isRedacted(url) ? Redacted.make(toWireUrl(Redacted.value(url))) : toWireUrl(url)

/**
 * Settings for short-lived processes: one connection, closed when idle
 * (see `Postgres.serverless`).
 *
 * @since 0.1.0
 */
export const serverless: { readonly poolSize: 1; readonly idleTimeout: "5 seconds" } = Pool.serverless

/**
 * The storage with a pool of its own, closed when the layer is released.
 *
 * @since 0.1.0
 */
export const layer = (
  options: CockroachOptions
): Layer.Layer<CheckpointStorage, StorageFailure | FormatError | InvalidConfig> =>
  SqlStorage.layerPool(poolOptions(options), "cockroach")

/**
 * The pool alone, as a `SqlClient` (e.g. for `enableTtl` or `migrate` in a
 * deploy step), with the same URL handling as {@link layer}.
 *
 * @since 0.1.0
 */
export const layerSqlClient = (
  options: CockroachOptions
): Layer.Layer<SqlClient.SqlClient, StorageFailure | InvalidConfig> => Pool.client(poolOptions(options))

const poolOptions = (options: CockroachOptions): PoolOptions => ({
  ...options,
  url: wire(options.url),
  isolation: options.isolation ?? "serializable"
})

/**
 * The settings `layerConfig` reads by default: `DATABASE_URL` (a
 * `cockroachdb://` or `postgres://` URL), and optionally the
 * `CHECKPOINT_…` settings of `Postgres.defaultConfig`.
 *
 * @since 0.1.0
 */
export const defaultConfig: Config.Wrap<CockroachOptions> = Pool.defaultConfig

/**
 * The storage configured by `Config`, like `PgClient.layerConfig` (see
 * `Postgres.layerConfig`; default {@link defaultConfig}). A missing or
 * malformed setting is an `InvalidConfig` naming it.
 *
 * @since 0.1.0
 */
export const layerConfig = (
  config: Config.Wrap<CockroachOptions> = defaultConfig
): Layer.Layer<CheckpointStorage, StorageFailure | FormatError | InvalidConfig> => SqlStorage.layerConfig(config, layer)

/**
 * @since 0.1.0
 */
export interface TtlOptions {
  /** How long a thread may be inactive before it expires, as a SQL interval (e.g. `"30 days"`). */
  readonly after: string
  /** When the TTL job runs, as a cron expression (default CockroachDB's, hourly). */
  readonly cron?: string | undefined
  /** The schema holding the tables (default `public`). */
  readonly schema?: string | undefined
}

const literal = (value: string) => `'${value.replaceAll("'", "''")}'`

const foreignKeys = (t: Tables.Tables) =>
  [
    [t.checkpoints, "checkpoints"],
    [t.blobs, "checkpoint_blobs"],
    [t.writes, "checkpoint_writes"],
    [t.pieces, "checkpoint_pieces"]
  ] as const

/**
 * The statements of `enableTtl`.
 *
 * Expiry is per thread, by its last activity (`checkpoint_threads`, touched
 * by every `put`): when CockroachDB's TTL job deletes a thread's row, foreign
 * keys with `ON DELETE CASCADE` delete the thread's checkpoints, blobs,
 * pieces and writes with it, in the same transaction. A row is never expired on its own
 * age, which would delete blobs that later checkpoints of a live thread still
 * reference.
 *
 * `cascade` works on PostgreSQL too (the tests run it there); `expiry` is
 * CockroachDB's row-level TTL.
 *
 * @since 0.1.0
 */
export const enableTtlStatements = (options: TtlOptions) => {
  const t = Tables.make(options.schema)
  const parameters = [
    `ttl_expiration_expression = ${literal(`last_activity + INTERVAL ${literal(options.after)}`)}`,
    ...(options.cron === undefined ? [] : [`ttl_job_cron = ${literal(options.cron)}`])
  ]
  return {
    cascade: [
      // Threads written before the threads table existed get a row, or their
      // rows would break the constraints.
      `INSERT INTO ${t.threads} (thread_id) SELECT DISTINCT thread_id FROM ${t.checkpoints}
       ON CONFLICT (thread_id) DO NOTHING`,
      ...foreignKeys(t).map(([table, name]) =>
        `ALTER TABLE ${table} ADD CONSTRAINT ${name}_thread_fk FOREIGN KEY (thread_id)
         REFERENCES ${t.threads} (thread_id) ON DELETE CASCADE`
      )
    ],
    expiry: [`ALTER TABLE ${t.threads} SET (${parameters.join(", ")})`]
  }
}

/**
 * The statements of `disableTtl`. The foreign keys stay: they only keep the
 * tables consistent.
 *
 * @since 0.1.0
 */
export const disableTtlStatements = (options: Pick<TtlOptions, "schema"> = {}): ReadonlyArray<string> => [
  `ALTER TABLE ${Tables.make(options.schema).threads} RESET (ttl)`
]

/** Runs statements in order, each retried; a constraint that already exists (42710) is fine. */
const runAll = (operation: string, statements: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const policy = yield* Retry.RetryPolicy
    const reconnect = yield* RetryLoop.Reconnect
    for (const statement of statements) {
      yield* sql.unsafe(statement).pipe(
        RetryLoop.retrying(operation, policy, reconnect),
        Effect.catchIf((failure) => failure.sqlState === "42710", () => Effect.void)
      )
    }
  })

/**
 * Makes deleting a thread's row delete the whole thread (see
 * {@link enableTtlStatements}). `enableTtl` runs it first.
 *
 * @since 0.1.0
 */
export const enableThreadCascade = (
  options: Pick<TtlOptions, "schema"> = {}
): Effect.Effect<void, StorageFailure, SqlClient.SqlClient> =>
  runAll("enableTtl", enableTtlStatements({ ...options, after: "0 days" }).cascade)

/**
 * Lets CockroachDB expire threads inactive for `after` (see
 * {@link enableTtlStatements}). Run it once, e.g. in a deploy step, on a
 * migrated database. Every writer must then be this library (the foreign
 * keys require each checkpoint's thread to be known).
 *
 * @since 0.1.0
 */
export const enableTtl = (options: TtlOptions): Effect.Effect<void, StorageFailure, SqlClient.SqlClient> => {
  const { cascade, expiry } = enableTtlStatements(options)
  return runAll("enableTtl", [...cascade, ...expiry]).pipe(Effect.withSpan("CheckpointStorage.enableTtl"))
}

/**
 * Stops expiring threads.
 *
 * @since 0.1.0
 */
export const disableTtl = (
  options: Pick<TtlOptions, "schema"> = {}
): Effect.Effect<void, StorageFailure, SqlClient.SqlClient> =>
  runAll("disableTtl", disableTtlStatements(options)).pipe(Effect.withSpan("CheckpointStorage.disableTtl"))
