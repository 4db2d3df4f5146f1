/**
 * Versioned, idempotent migrations of the LangGraph PostgreSQL tables.
 *
 * The versions are those of LangGraph's own PostgreSQL savers (recorded in
 * `checkpoint_migrations`), so a database those savers created is adopted in
 * place: the JavaScript saver stops at 4, the Python saver at 9, and only the
 * missing steps run. Every step is written to be harmless when repeated.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { IncompatibleSchema } from "../CheckpointError.ts"
import * as Retry from "../Retry.ts"
import { type Dialect, migrationLock } from "./Dialect.ts"
import type { Tables } from "./Tables.ts"

const steps = (t: Tables): ReadonlyArray<string> => [
  `CREATE TABLE IF NOT EXISTS ${t.migrations} (v INTEGER PRIMARY KEY)`,
  `CREATE TABLE IF NOT EXISTS ${t.checkpoints} (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    type TEXT,
    checkpoint JSONB NOT NULL,
    metadata JSONB NOT NULL DEFAULT '{}',
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
  )`,
  `CREATE TABLE IF NOT EXISTS ${t.blobs} (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    channel TEXT NOT NULL,
    version TEXT NOT NULL,
    type TEXT NOT NULL,
    blob BYTEA,
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
  )`,
  `CREATE TABLE IF NOT EXISTS ${t.writes} (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    channel TEXT NOT NULL,
    type TEXT,
    blob BYTEA NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
  )`,
  `ALTER TABLE ${t.blobs} ALTER COLUMN blob DROP NOT NULL`,
  // 5: a step LangGraph later emptied.
  `SELECT 1`,
  // 6-8: LangGraph's Python saver adds an index on thread_id to each table.
  // Every primary key already starts with thread_id, so they only slow writes.
  `SELECT 1`,
  `SELECT 1`,
  `SELECT 1`,
  `ALTER TABLE ${t.writes} ADD COLUMN IF NOT EXISTS task_path TEXT NOT NULL DEFAULT ''`
]

/**
 * The migration version this library brings a database to.
 *
 * @since 0.1.0
 */
export const latest = 9

/** The highest applied version, or -1 when the table does not exist. */
const currentVersion = (t: Tables) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [table] = yield* sql.unsafe<{ readonly present: number | bigint }>(
      `SELECT count(*) AS present FROM information_schema.tables
       WHERE table_schema = $1 AND table_name = 'checkpoint_migrations'`,
      [t.schemaName]
    )
    if (table === undefined || Number(table.present) === 0) return -1
    const [row] = yield* sql.unsafe<{ readonly v: number | null }>(`SELECT max(v) AS v FROM ${t.migrations}`)
    return row?.v ?? -1
  })

const ensureSupported = (found: number) =>
  found > latest ? Effect.fail(new IncompatibleSchema({ found, supported: latest })) : Effect.void

/**
 * Brings the database to {@link latest}, one step per transaction, applying
 * only the missing steps. Safe when many processes start at once: each
 * transaction first takes the dialect's migration lock, then re-reads the
 * version, so a step is applied once whoever applies it. A step that fails
 * with a retryable error is retried as a whole. Fails with
 * `IncompatibleSchema` when the database is newer than this library.
 *
 * @since 0.1.0
 */
export const run = (tables: Tables, dialect: Dialect = "postgres") =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const policy = yield* Retry.RetryPolicy
    const lock = migrationLock(dialect, tables)
    const all = steps(tables)
    const retried = Retry.retrying("migrate", policy)
    yield* retried(sql.unsafe(`CREATE SCHEMA IF NOT EXISTS ${tables.schema}`))
    for (const statement of lock.setup) yield* retried(sql.unsafe(statement))
    /** Applies the next missing step; false once there is none. */
    const step = sql.withTransaction(Effect.gen(function*() {
      yield* sql.unsafe(lock.acquire)
      const found = yield* currentVersion(tables)
      if (found > latest) return { found }
      if (found === latest) return { done: true }
      const version = found + 1
      yield* sql.unsafe(all[version]!)
      yield* sql.unsafe(`INSERT INTO ${tables.migrations} (v) VALUES (${version}) ON CONFLICT (v) DO NOTHING`)
      return { done: false }
    }))
    for (;;) {
      const result = yield* retried(step)
      if ("found" in result) return yield* ensureSupported(result.found)
      if (result.done) return
    }
  }).pipe(Effect.withSpan("CheckpointStorage.migrate"))

/**
 * Checks, without changing anything, that the database is at {@link latest}.
 *
 * @since 0.1.0
 */
export const verify = (tables: Tables) =>
  currentVersion(tables).pipe(
    Effect.mapError((cause) => Retry.failure("verify schema", cause)),
    Effect.flatMap((found) =>
      found === latest ? Effect.void : Effect.fail(new IncompatibleSchema({ found, supported: latest }))
    )
  )
