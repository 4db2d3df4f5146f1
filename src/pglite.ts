/**
 * PGlite, the embedded default: `langgraph-checkpoint-effect/pglite`.
 *
 * PostgreSQL compiled to WebAssembly, running in this process: durable
 * checkpoints with no server, no Docker and no keys. The same SQL driver runs
 * on it through `@effect/sql-pg`, whose connection speaks the wire protocol
 * to PGlite directly instead of over a socket.
 *
 * PGlite is one session, so the client has exactly one connection, and each
 * exchange runs under PGlite's own lock. And it is one process's database:
 * a directory is opened by one owner at a time (see `pglite/Owner.ts`); a
 * second opener gets `DatabaseLocked`, and can read a `snapshot` the owner
 * takes instead. A directory another PostgreSQL major wrote (an older
 * PGlite's) is `IncompatibleDirectory`, never opened. `@electric-sql/pglite` is a dependency that only this
 * module loads.
 *
 * @since 0.1.0
 */
import type { Effect, Layer } from "effect"
import type { SqlClient } from "effect/sql"
import type { DatabaseLocked, IncompatibleDirectory, InvalidConfig, StorageFailure } from "./CheckpointError.ts"
import type { CheckpointStorage, FormatError } from "./CheckpointStorage.ts"
import * as Database from "./internal/pglite/Database.ts"
import * as Snapshots from "./internal/pglite/Snapshot.ts"
import type { Snapshot } from "./Snapshot.ts"
import type { PgliteOptions } from "./SqlOptions.ts"

export type { Label, Snapshot } from "./Snapshot.ts"
export type { PgliteOptions, PgliteSession } from "./SqlOptions.ts"

/**
 * The PostgreSQL major of the PGlite this release runs: what it writes to a
 * data directory's `PG_VERSION`, and the only one it opens.
 *
 * @since 0.4.0
 */
export const POSTGRES_MAJOR: "19" = Database.POSTGRES_MAJOR

/**
 * A consistent copy of the database in `dataDir`, taken by the process that
 * holds it (the one a `DatabaseLocked` names) under PGlite's own lock, to
 * open in memory with `layer({ snapshot })` while that process runs: the
 * live files are never opened twice. At most `maxBytes` (default 512 MiB);
 * the holder's queries wait while it copies the files. A directory no
 * process holds is copied by this one, which holds it only meanwhile: a
 * reader that stays on the copy keeps no application from opening it.
 *
 * @since 0.1.0
 */
export const snapshot: (
  dataDir: string,
  options?: { readonly maxBytes?: number | undefined }
) => Effect.Effect<Snapshot, StorageFailure | InvalidConfig> = Snapshots.fetch

/**
 * The client alone: one connection to the PGlite database `options` names
 * (opened with the layer and closed with it, unless `options.pglite` is
 * given), as a `SqlClient`. With `readOnly`, a database the layer opens
 * refuses writes and a `dataDir` holding none is an `InvalidConfig`. A
 * `dataDir` another opener holds is `DatabaseLocked`, read-only or not (a
 * reader over live files is what loses the owner's work); an instance given
 * as `options.pglite` is the caller's to share, and takes no lock.
 *
 * @since 0.1.0
 */
export const layerSqlClient: (
  options?: Pick<PgliteOptions, "dataDir" | "snapshot" | "pglite" | "readOnly" | "sharedBuffers">
) => Layer.Layer<SqlClient.SqlClient, StorageFailure | InvalidConfig | DatabaseLocked | IncompatibleDirectory> =
  Database.layerSqlClient

/**
 * The storage on an embedded PGlite database, opened with the layer and
 * closed (and flushed to `dataDir`) when the layer is released. While it
 * lasts, this process owns `dataDir`: any other opener gets
 * `DatabaseLocked`, and can read a `snapshot` this process serves. A
 * malformed number or duration among `options` is an `InvalidConfig`
 * before anything is opened (see `Settings`).
 *
 * @since 0.1.0
 */
export const layer: (
  options?: PgliteOptions
) => Layer.Layer<
  CheckpointStorage,
  StorageFailure | FormatError | InvalidConfig | DatabaseLocked | IncompatibleDirectory
> = Database.layer
