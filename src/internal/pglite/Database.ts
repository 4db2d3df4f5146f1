/**
 * A PGlite database opened for the storage: in memory, from a snapshot, or
 * in a data directory this process then owns (`Owner`, serving snapshots
 * meanwhile, `Serving`), of this release's PostgreSQL major only; the
 * `SqlClient` over it, whose one connection speaks the wire protocol to
 * PGlite directly; and the storage layer on it. The package's entry
 * (`pglite.ts`) declares them; this module alone loads `@electric-sql/pglite`.
 *
 * @since 0.4.0
 */
import { PgClient } from "@effect/sql-pg"
import { PGlite } from "@electric-sql/pglite"
import { Effect, Layer, type Scope } from "effect"
import type { SqlClient } from "effect/sql"
import { access, mkdir, readFile } from "node:fs/promises"
import { join, resolve } from "node:path"
import { Duplex } from "node:stream"
import { type DatabaseLocked, IncompatibleDirectory, InvalidConfig, StorageFailure } from "../../CheckpointError.ts"
import type { CheckpointStorage, FormatError } from "../../CheckpointStorage.ts"
import type { PgliteOptions, PgliteSession } from "../../SqlOptions.ts"
import * as Settings from "../Settings.ts"
import * as LatestTuples from "../sql/decorators/LatestTuples.ts"
import * as SqlStorage from "../sql/SqlStorage.ts"
import * as Owner from "./Owner.ts"
import * as Serving from "./Serving.ts"

/**
 * A duplex stream that is PGlite's end of a connection: what the client
 * writes (whole protocol messages) is executed in order, and PGlite's
 * replies are read back.
 */
const connect = (pglite: PgliteSession): Duplex => {
  let previous: Promise<void> = Promise.resolve()
  const duplex: Duplex = new Duplex({
    read() {},
    write(chunk: Uint8Array, _encoding, callback) {
      const message = new Uint8Array(chunk)
      previous = previous.then(() =>
        pglite.runExclusive(() =>
          pglite.execProtocolRawStream(message, { onRawData: (data) => void duplex.push(Buffer.from(data)) })
        )
      )
      previous.then(() => callback(), (error: Error) => callback(error))
    },
    final(callback) {
      duplex.push(null)
      callback()
    }
  })
  return duplex
}

const connectFailure = (cause: unknown) =>
  cause instanceof StorageFailure ? cause : new StorageFailure({ operation: "connect", retryable: false, cause })

/**
 * A read-only open never creates a database: `dataDir` must hold one
 * already (PostgreSQL writes `PG_VERSION` first into a data directory).
 * Not a storage failure: the configuration names no database.
 */
const existing = (dataDir: string) =>
  Effect.tryPromise({
    try: () => access(join(dataDir, "PG_VERSION")),
    catch: () =>
      new InvalidConfig({
        operation: "connect",
        detail: `there is no database at ${resolve(dataDir)} (a read-only open never creates one)`
      })
  })

/**
 * The PostgreSQL major of the PGlite this release runs: what it writes to a
 * data directory's `PG_VERSION`, and the only one it opens.
 *
 * @since 0.4.0
 */
export const POSTGRES_MAJOR = "19"

/**
 * `IncompatibleDirectory` when `dataDir` holds a database of another
 * PostgreSQL major (PGlite would answer only "failed to initialize").
 */
const sameMajor = (dataDir: string) =>
  Effect.flatMap(
    Effect.promise(() => readFile(join(dataDir, "PG_VERSION"), "utf8").then((text) => text.trim(), () => undefined)),
    (found) =>
      found === undefined || found === POSTGRES_MAJOR
        ? Effect.void
        : Effect.fail(new IncompatibleDirectory({ directory: resolve(dataDir), found, supported: POSTGRES_MAJOR }))
  )

/** A PGlite database, closed with the scope; `readOnly`: its session refuses every write. */
const create = (
  from: string | { readonly loadDataDir: Blob } | undefined,
  readOnly: boolean,
  sharedBuffers: string | undefined
) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const options = {
          ...(typeof from === "object" ? from : from === undefined ? {} : { dataDir: from }),
          ...(sharedBuffers === undefined
            ? {}
            : { startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${sharedBuffers}`] })
        }
        const pglite = await PGlite.create(options)
        // PGlite is one session: this makes it refuse every write.
        if (readOnly) await pglite.exec("SET default_transaction_read_only = on")
        return pglite
      },
      catch: connectFailure
    }),
    (pglite) => Effect.promise(() => pglite.close())
  )

/**
 * The database in `dataDir`, owned by this process while the scope lasts:
 * ownership comes first, so a second opener never touches the files. The
 * owner serves snapshots of it meanwhile.
 */
const openDirectory = (dataDir: string, readOnly: boolean, sharedBuffers: string | undefined) =>
  Effect.gen(function*() {
    // PGlite would create the directory, but the lock lives in it and comes first.
    yield* readOnly
      ? existing(dataDir)
      : Effect.tryPromise({
        try: () => mkdir(resolve(dataDir), { recursive: true, mode: 0o700 }),
        catch: connectFailure
      })
    const owner = yield* Owner.acquire(dataDir)
    yield* sameMajor(owner.directory)
    const pglite = yield* create(owner.directory, readOnly, sharedBuffers)
    owner.serve(Serving.serve(owner, pglite))
    // Stop serving before the database closes.
    yield* Effect.addFinalizer(() => Effect.sync(() => owner.serve(undefined)))
    return pglite
  })

const open = (
  options: Pick<PgliteOptions, "dataDir" | "snapshot" | "sharedBuffers">,
  readOnly: boolean
): Effect.Effect<PgliteSession, StorageFailure | InvalidConfig | DatabaseLocked | IncompatibleDirectory, Scope.Scope> =>
  options.snapshot !== undefined
    ? create(
      { loadDataDir: new Blob([options.snapshot.data as Uint8Array<ArrayBuffer>]) },
      readOnly,
      options.sharedBuffers
    )
    : options.dataDir !== undefined
    ? openDirectory(options.dataDir, readOnly, options.sharedBuffers)
    : create(undefined, readOnly, options.sharedBuffers)

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
export const layerSqlClient = (
  options: Pick<PgliteOptions, "dataDir" | "snapshot" | "pglite" | "readOnly" | "sharedBuffers"> = {}
): Layer.Layer<SqlClient.SqlClient, StorageFailure | InvalidConfig | DatabaseLocked | IncompatibleDirectory> =>
  PgClient.layerFrom(
    (options.pglite === undefined ? open(options, options.readOnly === true) : Effect.succeed(options.pglite))
      .pipe(
        Effect.flatMap((pglite) =>
          PgClient.makeClient({
            stream: () => connect(pglite),
            username: "postgres",
            database: "postgres",
            applicationName: "langgraph-checkpoint-effect",
            maxMessageSize: 1024 * 1024 * 1024
          }).pipe(Effect.mapError(connectFailure))
        )
      )
  )

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
export const layer = (
  options: PgliteOptions = {}
): Layer.Layer<
  CheckpointStorage,
  StorageFailure | FormatError | InvalidConfig | DatabaseLocked | IncompatibleDirectory
> =>
  Layer.unwrap(Effect.map(Settings.check("connect", options), (valid) =>
    // One session, in this process: one batch at a time, the others gathering behind it, as large
    // as they come (there is no server to keep busy meanwhile, only statements to save).
    SqlStorage.layer({ groupCommit: { concurrency: 1, maxBatch: 256 }, ...valid, dialect: "pglite" }).pipe(
      Layer.provide(layerSqlClient(valid)),
      // A database the layer opened has no other writer: latest reads may be answered from what it wrote.
      // An instance the caller gives may have (unless the caller provides `SoleWriter` itself).
      valid.pglite === undefined ? Layer.provide(Layer.succeed(LatestTuples.SoleWriter, true)) : (layer) => layer
    )))
