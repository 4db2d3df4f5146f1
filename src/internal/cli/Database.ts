/**
 * The database a command names, opened for what the command does.
 *
 * Reading commands open it read-only: nothing is created or migrated (the
 * session itself refuses writes), and a database LangGraph's own savers
 * wrote is read as it is. Writing commands open it as the library does —
 * except that a database LangGraph's savers wrote is migrated only when the
 * user says `--migrate`. Encryption keys come from the environment as the
 * library reads them (`CHECKPOINT_ENCRYPTION_KEYS`, `LANGGRAPH_AES_KEY`).
 *
 * A PGlite directory another process holds (an application running on it)
 * is never opened a second time: writing commands fail with
 * `DatabaseLocked`; reading ones read a snapshot the holder takes, and say
 * so on stderr (a read answers as of one moment anyway; this one is the
 * snapshot's, and the line gives it).
 *
 * @since 0.1.0
 */
import { Cause, Config, Context, Effect, Layer, Result } from "effect"
import type { SqlClient } from "effect/sql"
import v8 from "node:v8"
import { InvalidConfig, StorageFailure } from "../../CheckpointError.ts"
import type { CheckpointStorage } from "../../CheckpointStorage.ts"
import * as Encryption from "../../Encryption.ts"
import type * as PgliteModule from "../../pglite.ts"
import * as Serializer from "../../Serializer.ts"
import type { Label } from "../../Snapshot.ts"
import type { Dialect } from "../../SqlOptions.ts"
import * as ConnectionString from "../ConnectionString.ts"
import * as Inspector from "../inspector/Inspector.ts"
import * as Values from "../inspector/Values.ts"
import * as SqlStorage from "../sql/SqlStorage.ts"
import * as TableOwner from "../sql/TableOwner.ts"
import * as Tables from "../sql/Tables.ts"
import * as Visible from "../Visible.ts"
import * as Unreachable from "./Unreachable.ts"

/**
 * What a command does to the database.
 *
 * @since 0.1.0
 */
export type Access =
  /** Reads, once. */
  | "read"
  /** Reads for as long as the command runs (the web inspector): a PGlite directory from a snapshot. */
  | "browse"
  | "write"
  | "migrate"

/** Whether a command of `access` only reads. */
const readsOnly = (access: Access) => access === "read" || access === "browse"

/**
 * Where what a command reads comes from: the database itself, or (a PGlite
 * directory another process holds) a snapshot of it.
 *
 * @since 0.1.0
 */
export class Source extends Context.Service<Source, {
  readonly snapshot?: Label | undefined
}>()("langgraph-checkpoint-effect/cli/Database/Source") {}

const live = Layer.succeed(Source, {})

/** The line a command prints on stderr when it reads a snapshot another process took. */
const snapshotNote = (snapshot: Label & { readonly pid: number }) =>
  `note: the PGlite database at ${Visible.escape(snapshot.directory)} is in use by process ${snapshot.pid}: ` +
  `reading a snapshot it took at ${snapshot.takenAt.toISOString()} (later changes are not in it)\n`

/**
 * PGlite's WebAssembly kept on V8's baseline compiler in this process.
 * Otherwise V8 recompiles PGlite's hot functions with its optimizing
 * compiler in the background, and a process cannot exit before that work
 * ends: a command that had its answer in 1.2 s exited after 3.2 s
 * (bench/results/STARTUP.md). A command runs a few queries; the baseline code
 * serves them. Set before PGlite compiles its module; only the CLI does it,
 * never the library.
 */
const baselineWasm = () => v8.setFlagsFromString("--no-wasm-tier-up --no-wasm-dynamic-tiering")

/**
 * PGlite's buffers for a command: zeroed at every open, PGlite's 128MB took
 * most of a second of each command; one command needs far fewer.
 */
const sharedBuffers = "16MB"

/**
 * A PGlite directory: opened itself, unless another process holds it or the
 * reader stays (`browse`, the web inspector): then a snapshot in memory,
 * which the holder takes (or this process, holding the directory only
 * while it copies it), so that a reader never keeps an application from
 * opening the directory. A command that reads once opens it for its second.
 */
const pgliteClient = (Pglite: typeof PgliteModule, dataDir: string, access: Access) => {
  const readOnly = readsOnly(access)
  const own = Layer.merge(Pglite.layerSqlClient({ dataDir, readOnly, sharedBuffers }), live)
  if (!readOnly) return own
  const snapshot = Layer.unwrap(
    Pglite.snapshot(dataDir).pipe(
      Effect.tap(({ pid, ...label }) =>
        pid === undefined ? Effect.void : Effect.sync(() => process.stderr.write(snapshotNote({ ...label, pid })))
      ),
      Effect.map((snapshot) =>
        Layer.merge(
          Pglite.layerSqlClient({ snapshot, readOnly, sharedBuffers }),
          Layer.succeed(Source, {
            snapshot: { directory: snapshot.directory, pid: snapshot.pid, takenAt: snapshot.takenAt }
          })
        )
      )
    )
  )
  return access === "browse" ? snapshot : own.pipe(Layer.catchTag("DatabaseLocked", () => snapshot))
}

/** The connection strings a command opens. */
const expected = `"pglite:<directory>", "postgres://…" or "cockroachdb://…"`

/** The connection a URL names, as a client layer and its dialect. */
const clientOf = (url: string, access: Access): Effect.Effect<
  { readonly client: Layer.Layer<SqlClient.SqlClient | Source, unknown>; readonly dialect: Dialect },
  InvalidConfig
> => {
  const parsed = ConnectionString.parse(url)
  if (Result.isFailure(parsed)) return Effect.fail(ConnectionString.unsupported("connect", parsed.failure, expected))
  const target = parsed.success
  const readOnly = readsOnly(access)
  switch (target._tag) {
    case "Postgres":
      return Effect.promise(() => import("../../postgres.ts")).pipe(
        Effect.map((Postgres) => ({
          client: Layer.merge(Postgres.layerSqlClient({ url: target.url, readOnly, poolSize: 4 }), live),
          dialect: "postgres"
        }))
      )
    case "Cockroach":
      return Effect.promise(() => import("../../cockroach.ts")).pipe(
        Effect.map((Cockroach) => ({
          client: Layer.merge(Cockroach.layerSqlClient({ url: target.url, readOnly, poolSize: 4 }), live),
          dialect: "cockroach"
        }))
      )
    case "Pglite": {
      const dataDir = target.dataDir
      if (dataDir === undefined) {
        return Effect.fail(
          new InvalidConfig({ operation: "connect", detail: `"pglite:" needs a directory: pglite:<directory>` })
        )
      }
      return Effect.sync(baselineWasm).pipe(
        Effect.andThen(Effect.promise(() => import("../../pglite.ts"))),
        Effect.map((Pglite) => ({ client: pgliteClient(Pglite, dataDir, access), dialect: "pglite" }))
      )
    }
    case "Memory":
      // Nothing to inspect in another process's memory.
      return Effect.fail(
        ConnectionString.unsupported(
          "connect",
          new ConnectionString.UnsupportedScheme({ redacted: ConnectionString.redact(url) }),
          expected
        )
      )
  }
}

/** The encryption keys the environment holds, if any. */
const encryption = Layer.unwrap(Effect.gen(function*() {
  const keys = yield* Config.option(Encryption.defaultConfig)
  return keys._tag === "Some" ? Encryption.layer(keys.value) : Layer.empty
}))

/** The serializer, lenient: a value it cannot read is shown as such, not an error. */
const lenient = Layer.effect(
  Serializer.Serializer,
  Effect.gen(function*() {
    return Values.lenient(yield* Serializer.Serializer)
  })
)

/**
 * The tables a command works on, resolved once for the storage and the
 * inspector: read as they are (none at all: read as empty), migrated
 * (`migrate`), or, for `write`, migrated unless LangGraph's own savers
 * wrote them.
 */
const tablesFor = (dialect: Dialect, access: Access) =>
  readsOnly(access)
    ? TableOwner.resolve({ dialect, readOnly: true }).pipe(
      // A database with no checkpoint tables holds no checkpoints: read as empty, not as "needs migration".
      Effect.catchTag("IncompatibleSchema", (error) =>
        error.found < 0 ? Effect.succeed(Tables.empty()) : Effect.fail(error))
    )
    : access === "migrate"
    ? TableOwner.resolve({ dialect })
    : Effect.andThen(unmigrated(dialect), TableOwner.resolve({ dialect }))

/**
 * The storage and the inspector over the database `url` names, and where
 * what they read comes from.
 *
 * @since 0.1.0
 */
export const layer = (
  url: string,
  access: Access
): Layer.Layer<CheckpointStorage | Inspector.Inspector | Source, unknown> =>
  Layer.unwrap(
    clientOf(url, access).pipe(Effect.map(({ client, dialect }) => {
      const readOnly = readsOnly(access)
      const services = Layer.unwrap(
        tablesFor(dialect, access).pipe(Effect.map((tables) =>
          Inspector.layer(tables, dialect).pipe(
            Layer.provideMerge(SqlStorage.layerTables(tables, { dialect, readOnly }))
          )
        ))
      )
      return services.pipe(
        Layer.provide(Layer.mergeAll(encryption, readOnly ? lenient : Layer.empty)),
        Layer.provideMerge(client)
      )
    }))
  ).pipe(
    // A server that cannot be reached or refuses the login is said in words, not as a storage failure.
    Layer.catchCause((cause) =>
      Layer.unwrap<CheckpointStorage | Inspector.Inspector | Source, never, never, unknown, never>(
        Effect.failCause(
          Cause.map(cause, (error) => error instanceof StorageFailure ? Unreachable.word(url, error) : error)
        )
      )
    )
  )

/**
 * Refuses to write to a database LangGraph's own savers wrote: writing
 * would migrate it, which the user must ask for.
 */
const unmigrated = (dialect: Dialect) =>
  TableOwner.resolve({ dialect, readOnly: true }).pipe(
    Effect.catchTag(
      "IncompatibleSchema",
      (error) => error.found < 0 ? Effect.succeed(undefined) : Effect.fail(error)
    ),
    Effect.flatMap((tables) =>
      tables?.layout === "langgraph"
        ? Effect.fail(
          new InvalidConfig({
            operation: "connect",
            detail: "this database was written by LangGraph's own saver: writing to it migrates it to this " +
              "library's schema (new tables and columns). LangGraph's savers still read every thread this " +
              "library has not written, but not a thread this library's saver then writes with structural " +
              "sharing (on by default) or encryption; with sharing off (sharing: false) they keep reading it. " +
              "Pass --migrate to do that"
          })
        )
        : Effect.void
    )
  )
