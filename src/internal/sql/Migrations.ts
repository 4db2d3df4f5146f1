/**
 * Versioned, idempotent migrations of the LangGraph PostgreSQL tables.
 *
 * The versions are those of LangGraph's own PostgreSQL savers (recorded in
 * `checkpoint_migrations`), so a database those savers created is adopted in
 * place: the JavaScript saver stops at 4, the Python saver at 9, and only the
 * missing steps run, then this library's own (from 100). Every step is
 * written to be harmless when repeated.
 *
 * One table, {@link STEPS}, holds every step as a record (its version, its
 * kind, a level step's storage format level, its statements); which steps
 * run when (kinds), the level applied steps give a database
 * ({@link raisedLevel}) and the version this release brings one to
 * ({@link latest}) derive from it.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { IncompatibleSchema, StorageFailure } from "../../CheckpointError.ts"
import { NEWEST_LEVEL } from "../../FormatLevel.ts"
import * as Retry from "../../Retry.ts"
import type { Dialect } from "../../SqlOptions.ts"
import type { FormatStatus } from "../../StorageDriver.ts"
import { VERSION } from "../Version.ts"
import { migrationLock } from "./Dialect.ts"
import * as RetryLoop from "./RetryLoop.ts"
import type { Tables } from "./Tables.ts"

/**
 * What a step is, which says when it runs:
 * - `langgraph`: one of LangGraph's own (0–9, kept equivalent, so its
 *   databases are adopted in place); always run.
 * - `own`: one of this library's (from 100, so a later LangGraph step can
 *   never be mistaken for one of ours); always run.
 * - `index`: one that only adds an index. Everything works without it, only
 *   slower, so a database a previous version migrated stays current enough
 *   to read (read-only opens apply nothing) until the next migration adds it.
 * - `level`: one that raises the storage format level (see
 *   `FormatLevel.LEVELS`) to its `level`. Run on a new database, and on an
 *   existing one only when it is raised ({@link raise}), never by itself: a
 *   release older than the level would then find a step it does not know
 *   and refuse the database, in the middle of a rolling deploy.
 * - `feature`: one of a feature a store takes only when asked (see
 *   {@link enableThreadRecords}), never by itself, from `COMPATIBLE_FROM`
 *   on: every release since that convention was known ignores it, but an
 *   older one (0.1.0) would refuse the database, so a feature is turned on
 *   once no process of such a release is left.
 *
 * Other steps never depend on level and feature steps, and a database
 * without them is current.
 */
export type Kind = "langgraph" | "own" | "index" | "level" | "feature"

/**
 * A step: its version (recorded in `checkpoint_migrations` once it ran),
 * its kind, and the statements it runs over the tables. Stored formats are
 * forever: a released step's version and statements never change.
 *
 * @since 0.4.0
 */
export interface Step {
  readonly version: number
  readonly kind: Kind
  /** A level step's storage format level: the one it raises a database to. */
  readonly level?: number
  readonly statements: (t: Tables) => ReadonlyArray<string>
}

/**
 * Every step, in the order they run, from which everything this module
 * knows of versions derives.
 *
 * @since 0.4.0
 */
export const STEPS: ReadonlyArray<Step> = [
  {
    version: 0,
    kind: "langgraph",
    statements: (t) => [`CREATE TABLE IF NOT EXISTS ${t.migrations} (v INTEGER PRIMARY KEY)`]
  },
  {
    version: 1,
    kind: "langgraph",
    statements: (t) => [`CREATE TABLE IF NOT EXISTS ${t.checkpoints} (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    type TEXT,
    checkpoint JSONB NOT NULL,
    metadata JSONB NOT NULL DEFAULT '{}',
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
  )`]
  },
  {
    version: 2,
    kind: "langgraph",
    statements: (t) => [`CREATE TABLE IF NOT EXISTS ${t.blobs} (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    channel TEXT NOT NULL,
    version TEXT NOT NULL,
    type TEXT NOT NULL,
    blob BYTEA,
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
  )`]
  },
  {
    version: 3,
    kind: "langgraph",
    statements: (t) => [`CREATE TABLE IF NOT EXISTS ${t.writes} (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    channel TEXT NOT NULL,
    type TEXT,
    blob BYTEA NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
  )`]
  },
  { version: 4, kind: "langgraph", statements: (t) => [`ALTER TABLE ${t.blobs} ALTER COLUMN blob DROP NOT NULL`] },
  // 5: a step LangGraph later emptied.
  { version: 5, kind: "langgraph", statements: () => [] },
  // 6-8: LangGraph's Python saver adds an index on thread_id to each table.
  // Every primary key already starts with thread_id, so they would only slow writes.
  { version: 6, kind: "langgraph", statements: () => [] },
  { version: 7, kind: "langgraph", statements: () => [] },
  { version: 8, kind: "langgraph", statements: () => [] },
  {
    version: 9,
    kind: "langgraph",
    statements: (t) => [`ALTER TABLE ${t.writes} ADD COLUMN IF NOT EXISTS task_path TEXT NOT NULL DEFAULT ''`]
  },
  // Each thread's last activity, touched by every put: what thread-level
  // expiry (CockroachDB TTL) and retention work from.
  {
    version: 100,
    kind: "own",
    statements: (t) => [
      `CREATE TABLE IF NOT EXISTS ${t.threads} (
      thread_id TEXT PRIMARY KEY,
      last_activity TIMESTAMPTZ NOT NULL DEFAULT now()
    )`,
      `INSERT INTO ${t.threads} (thread_id) SELECT DISTINCT thread_id FROM ${t.checkpoints}
     ON CONFLICT (thread_id) DO NOTHING`
    ]
  },
  // Structural sharing (see `Sharing`): pieces stored once per thread, and
  // the base a shared list extends.
  {
    version: 101,
    kind: "own",
    statements: (t) => [
      `CREATE TABLE IF NOT EXISTS ${t.pieces} (
      thread_id TEXT NOT NULL,
      hash BYTEA NOT NULL,
      blob BYTEA NOT NULL,
      PRIMARY KEY (thread_id, hash)
    )`,
      `ALTER TABLE ${t.blobs} ADD COLUMN IF NOT EXISTS base TEXT`,
      `ALTER TABLE ${t.blobs} ADD COLUMN IF NOT EXISTS keep INTEGER`
    ]
  },
  // Threads by last activity, newest first: the inspector's pages (keyset on
  // activity and id) and retention's scan read it instead of sorting the table.
  {
    version: 102,
    kind: "index",
    statements: (t) => [
      `CREATE INDEX IF NOT EXISTS checkpoint_threads_activity ON ${t.threads} (last_activity DESC, thread_id DESC)`
    ]
  },
  // Storage format level 2 (framed lists), and the table recording each
  // level a database was raised to: a level step (see `Kind`).
  {
    version: 103,
    kind: "level",
    level: 2,
    statements: (t) => [
      `CREATE TABLE IF NOT EXISTS ${t.format} (
      level INTEGER PRIMARY KEY,
      release TEXT NOT NULL,
      raised_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`,
      raisedTo(t, 2)
    ]
  },
  // Storage format level 3: derived pieces (StorageFormat.DERIVED). Nothing
  // in the schema changes; a level step all the same (see `Kind`).
  { version: 104, kind: "level", level: 3, statements: (t) => [raisedTo(t, 3)] },
  // Storage format level 4: compressed values and pieces (StorageFormat.COMPRESSED). As 104.
  { version: 105, kind: "level", level: 4, statements: (t) => [raisedTo(t, 4)] },
  // Thread records (LangGraph's thread API): each thread's metadata and
  // creation time, its last activity standing for `updated_at`. A feature
  // step (see `Kind`), from `COMPATIBLE_FROM` on: a release that
  // knows that convention ignores it, but 0.1.0 does not, so it runs only
  // when asked for (`enableThreadRecords`). Defaults, no UPDATE: rows that
  // are there read as records with no metadata, created when the step ran
  // (so until its next put, such a thread's updated_at is before it).
  {
    version: 1000,
    kind: "feature",
    statements: (t) => [
      `ALTER TABLE ${t.threads} ADD COLUMN IF NOT EXISTS metadata JSONB NOT NULL DEFAULT '{}'`,
      `ALTER TABLE ${t.threads} ADD COLUMN IF NOT EXISTS created_at TIMESTAMPTZ NOT NULL DEFAULT now()`,
      `CREATE INDEX IF NOT EXISTS checkpoint_threads_metadata ON ${t.threads} USING GIN (metadata)`,
      `CREATE INDEX IF NOT EXISTS checkpoint_threads_created ON ${t.threads} (created_at DESC, thread_id DESC)`
    ]
  },
  // Thread runs (see `ThreadRuns`): each thread's status and values as
  // LangGraph's thread API shows them, its writer epoch (the newest claim:
  // a put of an older claim is refused), and its runs' records, which go
  // with the thread's row whatever deletes it. A feature step taken with
  // thread records.
  {
    version: 1001,
    kind: "feature",
    statements: (t) => [
      `ALTER TABLE ${t.threads} ADD COLUMN IF NOT EXISTS status TEXT NOT NULL DEFAULT 'idle'`,
      `ALTER TABLE ${t.threads} ADD COLUMN IF NOT EXISTS state_values JSONB`,
      `ALTER TABLE ${t.threads} ADD COLUMN IF NOT EXISTS writer_epoch BIGINT NOT NULL DEFAULT 0`,
      `CREATE TABLE IF NOT EXISTS ${t.runs} (
      thread_id TEXT NOT NULL REFERENCES ${t.threads} (thread_id) ON DELETE CASCADE,
      run_id TEXT NOT NULL,
      assistant_id TEXT NOT NULL,
      status TEXT NOT NULL,
      metadata JSONB NOT NULL DEFAULT '{}',
      multitask_strategy TEXT NOT NULL,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      PRIMARY KEY (thread_id, run_id)
    )`,
      `CREATE INDEX IF NOT EXISTS checkpoint_runs_created ON ${t.runs} (thread_id, created_at DESC, run_id DESC)`
    ]
  },
  // Crons (see `ThreadCrons`): each one's schedule, the run it starts and
  // its next tick; a thread's go with its row. A feature step taken with
  // thread records.
  {
    version: 1002,
    kind: "feature",
    statements: (t) => [
      `CREATE TABLE IF NOT EXISTS ${t.crons} (
      cron_id TEXT PRIMARY KEY,
      thread_id TEXT REFERENCES ${t.threads} (thread_id) ON DELETE CASCADE,
      assistant_id TEXT NOT NULL,
      schedule TEXT NOT NULL,
      timezone TEXT,
      end_time TIMESTAMPTZ,
      enabled BOOLEAN NOT NULL,
      on_run_completed TEXT NOT NULL,
      payload JSONB NOT NULL,
      metadata JSONB NOT NULL DEFAULT '{}',
      next_run_date TIMESTAMPTZ,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`,
      `CREATE INDEX IF NOT EXISTS checkpoint_crons_thread ON ${t.crons} (thread_id)`
    ]
  }
]

/** Records that the database was raised to `level`, by this release. */
const raisedTo = (t: Tables, level: number) =>
  `INSERT INTO ${t.format} (level, release) VALUES (${level}, '${VERSION}') ON CONFLICT (level) DO NOTHING`

/** The version of every step this release knows. */
const known: ReadonlySet<number> = new Set(STEPS.map((step) => step.version))

/** The versions of the steps of a kind. */
const versionsOf = (kind: Kind): ReadonlySet<number> =>
  new Set(STEPS.filter((step) => step.kind === kind).map((step) => step.version))

/** The level steps, by version: the storage format level each raises a database to. */
const levelSteps: ReadonlyMap<number, number> = new Map(
  STEPS.flatMap((step) => step.kind === "level" && step.level !== undefined ? [[step.version, step.level]] : [])
)

/**
 * The feature steps. Thread records (and their runs and crons, see
 * {@link enableThreadRecords}) are the one feature so far: a second would
 * name its feature in its steps.
 */
const featureSteps = versionsOf("feature")

/** The index steps. */
const indexSteps = versionsOf("index")

/**
 * Steps from this version on are ones a release that does not know them can
 * ignore (an index, a table or a column with a default it never reads): such
 * a release works on with the database. Below it, a step this release does
 * not know makes the database newer than it (`IncompatibleSchema`). A
 * convention older releases hold, not derived: feature steps are numbered
 * from it, every other step below it.
 */
const COMPATIBLE_FROM = 1000

/** unique_violation, duplicate_schema, duplicate_table, duplicate_object */
const duplicate = new Set(["23505", "42P06", "42P07", "42710"])

/** The last of LangGraph's versions this library knows. */
const langGraphLatest = Math.max(...versionsOf("langgraph"))

/**
 * The migration version this library brings a database to: that of its
 * last step but feature steps (which run only when asked).
 *
 * @since 0.1.0
 */
export const latest: number = Math.max(...STEPS.filter((step) => step.kind !== "feature").map((step) => step.version))

/**
 * The storage format level applied steps give a database: that of the
 * newest level step applied, else 1 (every database written before levels).
 *
 * @since 0.1.0
 */
export const raisedLevel = (applied: ReadonlySet<number>): number =>
  Math.max(1, ...[...levelSteps].filter(([version]) => applied.has(version)).map(([, level]) => level))

/** Whether the migrations table exists: a database without it is new. */
const hasMigrationsTable = (t: Tables) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [table] = yield* sql.unsafe<{ readonly present: number | bigint }>(
      `SELECT count(*) AS present FROM information_schema.tables
       WHERE table_schema = $1 AND table_name = 'checkpoint_migrations'`,
      [t.schemaName]
    )
    return table !== undefined && Number(table.present) > 0
  })

/** The versions applied so far (none when the table does not exist). */
const appliedVersions = (t: Tables) =>
  Effect.gen(function*() {
    if (!(yield* hasMigrationsTable(t))) return new Set<number>()
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe<{ readonly v: number }>(`SELECT v FROM ${t.migrations}`)
    return new Set(rows.map((row) => Number(row.v)))
  })

/** A version this library does not know (and cannot ignore) means the database is newer than it. */
const unknownVersion = (applied: ReadonlySet<number>) => {
  const unknown = Math.max(...[...applied].filter((version) => !known.has(version) && version < COMPATIBLE_FROM))
  return Number.isFinite(unknown)
    ? new IncompatibleSchema({ found: unknown, supported: unknown < 100 ? langGraphLatest : latest })
    : undefined
}

/**
 * Brings the database's schema up to date, one step per transaction,
 * applying only the missing steps. Level steps (see `Kind`) run only
 * on a new database (one without the migrations table), up to `level`
 * (default the newest): an existing database keeps its storage format level
 * until it is raised. Feature steps never run here (see
 * {@link enableThreadRecords}). Safe when many processes start at once: each
 * transaction first takes the dialect's migration lock, then re-reads what
 * is applied, so a step runs once whoever runs it. A step that fails with a
 * retryable error is retried as a whole. Fails with `IncompatibleSchema`
 * when the database has a version this library does not know.
 *
 * @since 0.1.0
 */
export const run = Effect.fn("CheckpointStorage.migrate")(function*(
  tables: Tables,
  dialect: Dialect = "postgres",
  level: number = NEWEST_LEVEL
) {
  const fresh = !(yield* hasMigrationsTable(tables).pipe(Effect.mapError((cause) =>
    RetryLoop.failure("migrate", cause)
  )))
  yield* apply(tables, dialect, (version) => {
    const raises = levelSteps.get(version)
    return raises === undefined ? !featureSteps.has(version) : fresh && raises <= level
  })
})

/**
 * Raises the database's storage format level to `level` (default the
 * newest this release knows), bringing its schema up to date first: the
 * level steps up to it run, once each. Safe to repeat; a database already
 * at `level` or above is left as it is. Every process on the database must
 * run a release that reads `level` first: an older one then refuses the
 * database (`IncompatibleSchema`, `IncompatibleFormat`), and a rollback to it
 * is no longer possible. Answers the database's level afterwards.
 *
 * @since 0.1.0
 */
export const raise = Effect.fn("CheckpointStorage.raiseFormat")(function*(
  tables: Tables,
  dialect: Dialect = "postgres",
  level: number = NEWEST_LEVEL
) {
  yield* apply(tables, dialect, (version) => !featureSteps.has(version) && (levelSteps.get(version) ?? 0) <= level)
  const applied = yield* appliedVersions(tables).pipe(Effect.mapError((cause) => RetryLoop.failure("raise", cause)))
  return raisedLevel(applied)
})

/**
 * Makes the database hold thread records (migration 1000: each thread's
 * metadata and creation time, and their indexes; 1001: its status, values,
 * writer epoch and runs; 1002: crons), bringing its schema up to date first, as
 * {@link run} does, but for level steps. Safe to repeat, and
 * when many processes run it at once (the migrations' lock).
 *
 * **Gotchas**
 *
 * Only once no process on the database runs 0.1.0: that release does not
 * know steps it may ignore, and refuses a database with one
 * (`IncompatibleSchema`). Later releases work on with it. Adding the
 * indexes holds the threads table's writers (every put) while they are built.
 *
 * @since 0.2.0
 */
export const enableThreadRecords = Effect.fn("CheckpointStorage.enableThreadRecords")(function*(
  tables: Tables,
  dialect: Dialect = "postgres"
) {
  yield* apply(
    tables,
    dialect,
    (version) => !levelSteps.has(version)
  )
})

/**
 * Whether thread records are enabled (migration 1000 applied), read without
 * changing anything.
 *
 * @since 0.2.0
 */
export const threadRecordsEnabled = (tables: Tables): Effect.Effect<boolean, StorageFailure, SqlClient.SqlClient> =>
  appliedVersions(tables).pipe(
    Effect.map((applied) => [...featureSteps].every((step) => applied.has(step))),
    Effect.mapError((cause) => RetryLoop.failure("enableThreadRecords", cause))
  )

/**
 * Applies exactly the steps `versions` names, those of them this release
 * knows, in order: another database's schema and storage format level,
 * for a copy of its rows (level and feature steps included).
 *
 * @since 0.4.0
 */
export const replicate = Effect.fn("CheckpointStorage.replicate")(function*(
  tables: Tables,
  dialect: Dialect,
  versions: ReadonlySet<number>
) {
  yield* apply(tables, dialect, (version) => versions.has(version))
})

/** Applies the missing steps that `wanted` selects, in order (see {@link run}). */
const apply = Effect.fnUntraced(function*(tables: Tables, dialect: Dialect, wanted: (version: number) => boolean) {
  const sql = yield* SqlClient.SqlClient
  const policy = yield* Retry.RetryPolicy
  const lock = migrationLock(dialect, tables)
  const retried = RetryLoop.retrying("migrate", policy, yield* RetryLoop.Reconnect)
  // Run before the lock exists, so processes starting together race here:
  // PostgreSQL reports a lost `IF NOT EXISTS` race as a duplicate, and
  // running the statement again then finds the object there.
  const create = (statement: string) =>
    retried(
      sql.unsafe(statement).pipe(
        Effect.retry({ times: 3, while: (error) => duplicate.has(Retry.sqlState(error) ?? "") })
      )
    )
  yield* create(`CREATE SCHEMA IF NOT EXISTS ${tables.schema}`)
  for (const statement of lock.setup) yield* create(statement)
  /** Applies the next missing step: "done" once there is none. */
  const step = sql.withTransaction(Effect.gen(function*() {
    yield* sql.unsafe(lock.acquire)
    const applied = yield* appliedVersions(tables)
    const unknown = unknownVersion(applied)
    if (unknown !== undefined) return unknown
    const next = STEPS.find((step) => !applied.has(step.version) && wanted(step.version))
    if (next === undefined) return "done" as const
    const { version } = next
    for (const statement of next.statements(tables)) yield* sql.unsafe(statement)
    yield* sql.unsafe(`INSERT INTO ${tables.migrations} (v) VALUES (${version}) ON CONFLICT (v) DO NOTHING`)
    return version
  }))
  // A step applied twice did not record itself: running on would apply it forever.
  const done = new Set<number>()
  for (;;) {
    const outcome = yield* retried(step)
    if (outcome === "done") return
    if (typeof outcome !== "number") return yield* outcome
    if (done.has(outcome)) {
      return yield* new StorageFailure({
        operation: "migrate",
        retryable: false,
        cause: `step ${outcome} ran but ${tables.migrations} does not hold it: something on the database ` +
          "(a rule, a trigger, a policy) drops what is inserted there"
      })
    }
    done.add(outcome)
  }
})

/**
 * Reads a database's storage format level (see {@link FormatStatus}).
 * Fails with `IncompatibleSchema` when the database has a step this release
 * does not know: a newer release migrated (or raised) it.
 *
 * @since 0.1.0
 */
export const status = (
  tables: Tables
): Effect.Effect<FormatStatus, IncompatibleSchema | StorageFailure, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const applied = yield* appliedVersions(tables)
    const unknown = unknownVersion(applied)
    if (unknown !== undefined) return yield* unknown
    const level = raisedLevel(applied)
    if (level === 1) return { level }
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql.unsafe<{ readonly release: string; readonly raised_at: Date | string }>(
      `SELECT release, raised_at FROM ${tables.format} WHERE level = $1`,
      [level]
    )
    return { level, raised: row === undefined ? undefined : { release: row.release, at: new Date(row.raised_at) } }
  }).pipe(Effect.catchIf(
    (error): error is Exclude<typeof error, IncompatibleSchema> => !(error instanceof IncompatibleSchema),
    (cause) => Effect.fail(RetryLoop.failure("format status", cause))
  ))

/**
 * What the applied steps say of a database: all of them (`current`), or
 * only LangGraph's own (`langgraph`, with the last of them, -1 for none:
 * what LangGraph's savers leave, or an empty database).
 *
 * @since 0.1.0
 */
export type Applied =
  | { readonly layout: "current" }
  | { readonly layout: "langgraph"; readonly version: number }

/**
 * Reads, without changing anything, which steps are applied (see
 * {@link Applied}). Fails with `IncompatibleSchema` when a version is one
 * this library does not know, or when only some of its own are applied.
 *
 * @since 0.1.0
 */
export const check = (
  tables: Tables
): Effect.Effect<Applied, IncompatibleSchema | StorageFailure, SqlClient.SqlClient> =>
  appliedVersions(tables).pipe(
    Effect.mapError((cause) => RetryLoop.failure("verify schema", cause)),
    Effect.flatMap((applied): Effect.Effect<Applied, IncompatibleSchema> => {
      const unknown = unknownVersion(applied)
      if (unknown !== undefined) return Effect.fail(unknown)
      // Steps one may ignore say nothing of how far the database got.
      const last = Math.max(-1, ...[...applied].filter((version) => version < COMPATIBLE_FROM))
      if (
        [...known].every((version) =>
          applied.has(version) || indexSteps.has(version) || levelSteps.has(version) || featureSteps.has(version)
        )
      ) {
        return Effect.succeed({ layout: "current" })
      }
      return last <= langGraphLatest
        ? Effect.succeed({ layout: "langgraph", version: last })
        : Effect.fail(new IncompatibleSchema({ found: last, supported: latest }))
    })
  )

/**
 * Checks, without changing anything, that every step is applied and none is unknown.
 *
 * @since 0.1.0
 */
export const verify = (tables: Tables): Effect.Effect<void, IncompatibleSchema | StorageFailure, SqlClient.SqlClient> =>
  Effect.flatMap(check(tables), (applied) =>
    applied.layout === "current"
      ? Effect.void
      : Effect.fail(new IncompatibleSchema({ found: applied.version, supported: latest })))
