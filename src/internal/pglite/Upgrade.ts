/**
 * Carries a PGlite directory written by an older PostgreSQL major over to
 * the engine this release runs (`langgraph-checkpoints upgrade-pglite`).
 *
 * PostgreSQL opens only its own major's data directories, and PGlite has no
 * `pg_upgrade`: the old engine must read the old directory. It is an
 * optional dependency of the package under an alias of its own
 * (`pglite-0.5` is `@electric-sql/pglite@0.5.17`, PostgreSQL 18), loaded
 * only here: every other path runs the current engine alone.
 *
 * The copy is exact: a new directory gets the very migration steps the old
 * one has applied (so the same tables, columns and storage format level),
 * then every table's rows as they are (binary `COPY`: sealed rows stay
 * sealed, thread records and pending writes come along), and the row counts
 * are compared. Only then is the old directory renamed aside
 * (`<dir>.postgres-<major>`, kept until its owner removes it) and the new
 * one put in its place. The old directory is owned (see `Owner`) for the
 * whole copy and read in a read-only session: its rows do not change (the
 * engine still writes its own bookkeeping when it opens and closes), and
 * the engine that wrote it still opens it.
 *
 * @since 0.4.0
 */
import { PGlite } from "@electric-sql/pglite"
import { Effect, Layer } from "effect"
import { access, readFile, rename, rm } from "node:fs/promises"
import { join, resolve } from "node:path"
import { InvalidConfig, StorageFailure } from "../../CheckpointError.ts"
import * as Migrations from "../sql/Migrations.ts"
import * as Tables from "../sql/Tables.ts"
import { layerSqlClient, POSTGRES_MAJOR } from "./Database.ts"
import * as Owner from "./Owner.ts"

/**
 * The engines that read older directories, by the PostgreSQL major they
 * run: the module each is installed as, and how to install it.
 *
 * @since 0.4.0
 */
export const ENGINES: Readonly<Record<string, { readonly module: string; readonly install: string }>> = {
  "18": { module: "pglite-0.5", install: "npm install pglite-0.5@npm:@electric-sql/pglite@0.5.17" }
}

/**
 * What an upgrade did: nothing (`upgraded: false`, the directory is this
 * release's already), or the copy, with the rows of each table.
 *
 * @since 0.4.0
 */
export type UpgradeReport =
  | { readonly upgraded: false; readonly directory: string; readonly postgres: string }
  | {
    readonly upgraded: true
    readonly directory: string
    /** Where the old directory is kept. */
    readonly kept: string
    readonly from: string
    readonly to: string
    /** The rows copied, by table. */
    readonly rows: Readonly<Record<string, number>>
  }

/** What the upgrade needs of a PGlite instance, whichever release it is. */
interface Engine {
  readonly query: <T>(
    text: string,
    params?: Array<unknown>,
    options?: { readonly blob?: Blob }
  ) => Promise<{ readonly rows: Array<T>; readonly blob?: Blob | undefined }>
  readonly exec: (text: string) => Promise<unknown>
  readonly close: () => Promise<void>
}

const failed = (operation: string) => (cause: unknown) => new StorageFailure({ operation, retryable: false, cause })

const attempt = <A>(operation: string, f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: failed(operation) })

/** The PostgreSQL major that wrote `directory` (its `PG_VERSION`); `InvalidConfig` when it holds no database. */
const majorOf = (directory: string) =>
  Effect.tryPromise({
    try: () => readFile(join(directory, "PG_VERSION"), "utf8").then((text) => text.trim()),
    catch: () =>
      new InvalidConfig({
        operation: "upgrade-pglite",
        detail: `there is no PGlite database at ${directory} (no PG_VERSION in it)`
      })
  })

/** The old engine's PGlite, loaded now (`InvalidConfig` naming its install command when it is missing). */
const loadEngine = (major: string) => {
  const engine = ENGINES[major]
  if (engine === undefined) {
    return Effect.fail(
      new InvalidConfig({
        operation: "upgrade-pglite",
        detail: `the directory was written by PostgreSQL ${major}, which no PGlite this release knows reads ` +
          `(it reads ${[...Object.keys(ENGINES), POSTGRES_MAJOR].join(", ")})`
      })
    )
  }
  return Effect.tryPromise({
    try: () => import(engine.module) as Promise<{ readonly PGlite: { create: (options: object) => Promise<Engine> } }>,
    catch: () =>
      new InvalidConfig({
        operation: "upgrade-pglite",
        detail: `reading a PostgreSQL ${major} directory needs the PGlite that wrote it: ${engine.install}`
      })
  })
}

/** A PGlite, closed with the scope. */
const opened = (operation: string, open: () => Promise<Engine>) =>
  Effect.acquireRelease(attempt(operation, open), (pglite) => Effect.promise(() => pglite.close()))

/** A name beside `directory` that nothing holds yet. */
const freeName = (base: string) =>
  Effect.promise(async () => {
    for (let n = 0;; n++) {
      const name = n === 0 ? base : `${base}-${n}`
      if (await access(name).then(() => false, () => true)) return name
    }
  })

/** The tables of a database: this library's (and LangGraph's), the migrations' own aside. */
const dataTables = (pglite: Engine) =>
  attempt(
    "read tables",
    () =>
      pglite.query<{ readonly name: string; readonly columns: string }>(
        `SELECT table_name AS name, string_agg(quote_ident(column_name), ', ' ORDER BY ordinal_position) AS columns
       FROM information_schema.columns
       WHERE table_schema = 'public' AND table_name LIKE 'checkpoint%'
         AND table_name NOT IN ('checkpoint_migrations', 'checkpoint_migration_lock')
       GROUP BY table_name ORDER BY table_name`
      )
  ).pipe(Effect.map((result) => result.rows))

/** The migration steps a database has applied. */
const appliedSteps = (pglite: Engine) =>
  attempt("read migrations", () => pglite.query<{ readonly v: number }>("SELECT v FROM checkpoint_migrations"))
    .pipe(Effect.map((result) => new Set(result.rows.map((row) => Number(row.v)))))

/** Gives `fresh` the steps `old` applied, then `old`'s rows, table by table; the rows copied. */
const copy = Effect.fnUntraced(function*(old: Engine, fresh: Engine) {
  const applied = yield* appliedSteps(old)
  yield* Migrations.replicate(Tables.make(), "pglite", applied).pipe(
    Effect.provide(Layer.orDie(layerSqlClient({ pglite: fresh as never }))),
    Effect.catchTag(
      "IncompatibleSchema",
      (error) => Effect.fail(new InvalidConfig({ operation: "upgrade-pglite", detail: error.message }))
    )
  )
  const copied = yield* appliedSteps(fresh)
  if (copied.size !== applied.size || [...applied].some((step) => !copied.has(step))) {
    return yield* new InvalidConfig({
      operation: "upgrade-pglite",
      detail: `the directory holds migration steps this release does not know (${
        [...applied].filter((step) => !copied.has(step)).join(", ")
      }): upgrade it with the release that wrote it`
    })
  }
  const rows: Record<string, number> = {}
  for (const { columns, name } of yield* dataTables(old)) {
    const table = `public.${name}`
    // Level steps record themselves in the format table: the old rows say when the level was raised.
    yield* attempt("copy", () => fresh.exec(`DELETE FROM ${table}`))
    const out = yield* attempt(
      "copy",
      () => old.query(`COPY ${table} (${columns}) TO '/dev/blob' WITH (FORMAT binary)`)
    )
    yield* attempt(
      "copy",
      () => fresh.query(`COPY ${table} (${columns}) FROM '/dev/blob' WITH (FORMAT binary)`, [], { blob: out.blob! })
    )
    const count = (engine: Engine) =>
      attempt("count", () => engine.query<{ readonly n: number }>(`SELECT count(*)::int AS n FROM ${table}`))
        .pipe(Effect.map((result) => Number(result.rows[0]?.n ?? 0)))
    const [before, after] = [yield* count(old), yield* count(fresh)]
    if (before !== after) {
      return yield* new StorageFailure({
        operation: "upgrade-pglite",
        retryable: false,
        cause: `${name}: ${before} rows read, ${after} written`
      })
    }
    rows[name] = after
  }
  return rows
})

/**
 * Upgrades the PGlite directory `dataDir` to this release's engine (see the
 * module's description). Safe to repeat: a directory already on it is left
 * as it is. `DatabaseLocked` while another process holds it.
 *
 * @since 0.4.0
 */
export const upgrade = (dataDir: string) =>
  Effect.scoped(Effect.gen(function*() {
    const directory = resolve(dataDir)
    const from = yield* majorOf(directory)
    if (from === POSTGRES_MAJOR) return { upgraded: false, directory, postgres: from } satisfies UpgradeReport
    const engine = yield* loadEngine(from)
    yield* Owner.acquire(directory)
    const target = `${directory}.upgrading`
    // What a run that stopped half-way left: started again.
    yield* attempt("upgrade-pglite", () => rm(target, { recursive: true, force: true }))
    const rows = yield* Effect.scoped(Effect.gen(function*() {
      const old = yield* opened("open the old directory", () => engine.PGlite.create({ dataDir: directory }))
      yield* attempt("open the old directory", () => old.exec("SET default_transaction_read_only = on"))
      const fresh = yield* opened("create the new directory", () => PGlite.create({ dataDir: target }))
      return yield* copy(old, fresh)
    }))
    const kept = yield* freeName(`${directory}.postgres-${from}`)
    yield* attempt("upgrade-pglite", () => rename(directory, kept))
    yield* attempt("upgrade-pglite", () => rename(target, directory))
    return { upgraded: true, directory, kept, from, to: POSTGRES_MAJOR, rows } satisfies UpgradeReport
  }))
