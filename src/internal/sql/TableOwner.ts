/**
 * Which tables a database holds, decided in one place: this library's
 * (migrated on start unless told not to), or — read-only — those
 * LangGraph's own PostgreSQL savers wrote, read as they are.
 *
 * A read-only open changes nothing: it reads `checkpoint_migrations` and
 * `information_schema`, and from them picks the `Tables` every statement is
 * built over. LangGraph's tables lack what this library added (blob bases,
 * pieces, the threads table, and `task_path` in the JavaScript saver's
 * writes), so `Tables.langGraph` presents them with those as empty.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { IncompatibleSchema, type InvalidConfig, type StorageFailure } from "../../CheckpointError.ts"
import * as FormatLevel from "../../FormatLevel.ts"
import type { Dialect } from "../../SqlOptions.ts"
import * as Migrations from "./Migrations.ts"
import * as RetryLoop from "./RetryLoop.ts"
import * as Tables from "./Tables.ts"

/**
 * @since 0.1.0
 */
export interface ResolveOptions {
  /** The database schema that holds the tables (default `public`). */
  readonly schema?: string | undefined
  /** The database behind the client (default `postgres`). */
  readonly dialect?: Dialect | undefined
  /** Change nothing; accept LangGraph's own tables too (see `SqlStorageOptions.readOnly`). */
  readonly readOnly?: boolean | undefined
  /** Without `readOnly`: run the migrations (default `true`), or only check that they ran. */
  readonly migrate?: boolean | undefined
}

/** The tables LangGraph's savers create that reads need. */
const required = ["checkpoints", "checkpoint_blobs", "checkpoint_writes"] as const

/** The columns of the checkpoint tables in `schema`, by table (a table that does not exist has none). */
const columnsIn = (schema: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe<{ readonly table_name: string; readonly column_name: string }>(
      `SELECT table_name, column_name FROM information_schema.columns
       WHERE table_schema = $1 AND table_name IN (${required.map((table) => `'${table}'`).join(", ")})`,
      [schema]
    )
    const columns = new Map<string, Set<string>>()
    for (const row of rows) columns.set(row.table_name, (columns.get(row.table_name) ?? new Set()).add(row.column_name))
    return columns
  }).pipe(Effect.mapError((cause) => RetryLoop.failure("verify schema", cause)))

/**
 * The tables of the database the `SqlClient` in context reaches.
 *
 * Without `readOnly`, this library's tables: migrated first (or, with
 * `migrate: false`, checked to be current). With `readOnly`, nothing is
 * sent but reads: this library's current tables (`layout: "current"`), or
 * a database only LangGraph's own savers wrote (`layout: "langgraph"`:
 * every applied migration one of LangGraph's 0–9, and its checkpoints,
 * blobs and writes tables there).
 *
 * Fails with `IncompatibleSchema` when the schema is newer than this
 * library, when it has no checkpoint tables (`found: -1`), or, read-only,
 * when it is part-way through this library's migrations.
 *
 * @since 0.1.0
 */
export const resolve: (
  options?: ResolveOptions
) => Effect.Effect<Tables.Tables, IncompatibleSchema | InvalidConfig | StorageFailure, SqlClient.SqlClient> = Effect.fn(
  "CheckpointStorage.resolveLayout"
)(function*(options: ResolveOptions = {}) {
  const tables = Tables.make(options.schema)
  if (options.readOnly !== true) {
    yield* options.migrate === false
      ? Migrations.verify(tables)
      // A new database starts at the newest level this process writes.
      : Migrations.run(tables, options.dialect, yield* FormatLevel.supported)
    return tables
  }
  const applied = yield* Migrations.check(tables)
  if (applied.layout === "current") return tables
  const columns = yield* columnsIn(tables.schemaName)
  if (!required.every((table) => columns.has(table))) {
    return yield* new IncompatibleSchema({ found: applied.version, supported: Migrations.latest })
  }
  return Tables.langGraph({
    schema: options.schema,
    taskPath: columns.get("checkpoint_writes")!.has("task_path")
  })
})
