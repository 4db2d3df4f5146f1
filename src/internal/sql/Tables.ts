/**
 * Where the tables live: the LangGraph PostgreSQL layout, optionally in a
 * schema of its own — or, read-only, LangGraph's own tables presented as
 * this library's (see `TableOwner`).
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export interface Tables {
  /**
   * `current`: this library's tables, every migration applied. `langgraph`:
   * a database only LangGraph's own savers wrote, read as it is — `blobs`,
   * `writes`, `pieces` and `threads` are then relations derived from its
   * tables that reads use as tables, and nothing can be written through them.
   */
  readonly layout: "current" | "langgraph"
  /** The schema's name, unquoted. */
  readonly schemaName: string
  /** The schema, quoted for SQL text. */
  readonly schema: string
  readonly checkpoints: string
  readonly blobs: string
  readonly writes: string
  /** Shared lists' pieces (see `Sharing`). */
  readonly pieces: string
  readonly migrations: string
  /** Each thread's last activity. */
  readonly threads: string
  /** Run records (see `ThreadRuns`). */
  readonly runs: string
  /** Cron records (see `ThreadCrons`). */
  readonly crons: string
  /** The storage format levels the database was raised to (see `Migrations.raise`). */
  readonly format: string
  /** CockroachDB only: the row migrations lock. */
  readonly migrationLock: string
}

const quote = (identifier: string) => `"${identifier.replaceAll("\"", "\"\"")}"`

/**
 * Qualified, quoted table names in `schema` (default `public`).
 *
 * @since 0.1.0
 */
export const make = (schema = "public"): Tables => ({
  layout: "current",
  schemaName: schema,
  schema: quote(schema),
  checkpoints: `${quote(schema)}.checkpoints`,
  blobs: `${quote(schema)}.checkpoint_blobs`,
  writes: `${quote(schema)}.checkpoint_writes`,
  pieces: `${quote(schema)}.checkpoint_pieces`,
  migrations: `${quote(schema)}.checkpoint_migrations`,
  threads: `${quote(schema)}.checkpoint_threads`,
  runs: `${quote(schema)}.checkpoint_runs`,
  crons: `${quote(schema)}.checkpoint_crons`,
  format: `${quote(schema)}.checkpoint_format`,
  migrationLock: `${quote(schema)}.checkpoint_migration_lock`
})

/**
 * A relation that stands where a table name does: after `FROM`, with an
 * alias (`FROM ${t.blobs} bl`) or without. A parenthesised join is one:
 * PostgreSQL before 16 rejects a subquery without an alias, and a subquery
 * already aliased takes no second one. Its columns are those of both sides;
 * the sides' aliases are unique, as a statement without an outer alias sees them.
 */
const joined = (left: string, right: string, on = "true") => `(${left} JOIN ${right} ON ${on})`

/**
 * LangGraph's tables in `schema` (default `public`), read as this
 * library's: blobs have no shared-list base (`base`, `keep` null), writes
 * without a `task_path` column (the JavaScript saver's) have `''`, there
 * are no pieces, and a thread's last activity is the latest `ts` of its
 * checkpoints (an ISO 8601 timestamp in both LangGraph savers).
 *
 * @since 0.1.0
 */
export const langGraph = (
  options: { readonly schema?: string | undefined; readonly taskPath: boolean }
): Tables => {
  const tables = make(options.schema)
  return {
    ...tables,
    layout: "langgraph",
    blobs: joined(tables.blobs, "(SELECT NULL::text AS base, NULL::int4 AS keep) AS lce_unshared"),
    writes: options.taskPath
      ? tables.writes
      : joined(tables.writes, "(SELECT ''::text AS task_path) AS lce_no_task_path"),
    pieces: joined(
      "(SELECT NULL::text AS thread_id, NULL::bytea AS hash) AS lce_no_piece",
      "(SELECT NULL::bytea AS blob) AS lce_no_piece_blob",
      "false"
    ),
    threads: joined(
      `(SELECT DISTINCT thread_id FROM ${tables.checkpoints}) AS lce_thread`,
      `LATERAL (
        SELECT max((lce_cp.checkpoint ->> 'ts')::timestamptz) AS last_activity FROM ${tables.checkpoints} lce_cp
        WHERE lce_cp.thread_id = lce_thread.thread_id
      ) AS lce_activity`
    )
  }
}

/** An empty relation with these columns (`name type`), standing where a table name does (see `joined`). */
const none = (alias: string, columns: ReadonlyArray<string>) => {
  const select = (part: ReadonlyArray<string>) =>
    `SELECT ${part.map((column) => `NULL::${column.split(" ")[1]} AS ${column.split(" ")[0]}`).join(", ")}`
  return joined(
    `(${select(columns.slice(0, 1))}) AS ${alias}`,
    `(${select(columns.slice(1))}) AS ${alias}_rest`,
    "false"
  )
}

/**
 * A database with no checkpoint tables at all, read as an empty one:
 * every table an empty relation with the columns reads use. Only for a
 * read-only open that must answer "nothing stored" (the inspector on an
 * empty database); nothing can be written through them.
 *
 * @since 0.1.0
 */
export const empty = (schema?: string | undefined): Tables => ({
  ...langGraph({ schema, taskPath: true }),
  checkpoints: none("lce_no_checkpoint", [
    "thread_id text",
    "checkpoint_ns text",
    "checkpoint_id text",
    "parent_checkpoint_id text",
    "type text",
    "checkpoint jsonb",
    "metadata jsonb"
  ]),
  blobs: none("lce_no_blob", [
    "thread_id text",
    "checkpoint_ns text",
    "channel text",
    "version text",
    "type text",
    "blob bytea",
    "base text",
    "keep int4"
  ]),
  writes: none("lce_no_write", [
    "thread_id text",
    "checkpoint_ns text",
    "checkpoint_id text",
    "task_id text",
    "idx int4",
    "channel text",
    "type text",
    "blob bytea",
    "task_path text"
  ]),
  threads: none("lce_no_thread", ["thread_id text", "last_activity timestamptz"])
})
