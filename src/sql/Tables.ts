/**
 * Where the tables live: the LangGraph PostgreSQL layout, optionally in a
 * schema of its own.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export interface Tables {
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
  schemaName: schema,
  schema: quote(schema),
  checkpoints: `${quote(schema)}.checkpoints`,
  blobs: `${quote(schema)}.checkpoint_blobs`,
  writes: `${quote(schema)}.checkpoint_writes`,
  pieces: `${quote(schema)}.checkpoint_pieces`,
  migrations: `${quote(schema)}.checkpoint_migrations`,
  threads: `${quote(schema)}.checkpoint_threads`,
  migrationLock: `${quote(schema)}.checkpoint_migration_lock`
})
