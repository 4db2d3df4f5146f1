/**
 * A snapshot of a PGlite directory another process holds: what the
 * inspector reads instead of the live files.
 *
 * The owner takes it under PGlite's own lock, between two statements: no
 * query runs, and the files are what a crash at that instant would leave,
 * which PostgreSQL opens consistently (committed work in, the rest rolled
 * back), as PGlite's `dumpDataDir` does. It writes them as one tar (what
 * PGlite's `loadDataDir` reads) to a file of the directory that the reader
 * reads, then opens in memory: the live files are never opened twice.
 *
 * Only the owner's own process answers (the socket is its), only a process
 * of the same user can ask (the socket and the file are 0600), one snapshot
 * is taken at a time, and neither side handles more bytes than the reader
 * asked for.
 *
 * @since 0.1.0
 */
import { Effect, Option, Schema } from "effect"
import { closeSync, lstatSync, openSync, readdirSync, readSync, writeFileSync } from "node:fs"
import { readFile, realpath, stat, unlink } from "node:fs/promises"
import { join } from "node:path"
import { InvalidConfig, StorageFailure } from "../CheckpointError.ts"
import * as Settings from "../Settings.ts"
import * as Owner from "./Owner.ts"
import * as Protocol from "./Protocol.ts"
import * as Tar from "./Tar.ts"

/**
 * What a snapshot is labelled with wherever it is shown: whose copy of what,
 * and when.
 *
 * @since 0.1.0
 */
export interface Label {
  /** The directory's real path. */
  readonly directory: string
  /** The process that holds it, and took the snapshot. */
  readonly pid: number
  readonly takenAt: Date
}

/**
 * A consistent copy of a held directory's database.
 *
 * @since 0.1.0
 */
export interface Snapshot extends Label {
  /** The data directory as a tar archive (what `PGlite.create({ loadDataDir })` reads). */
  readonly data: Uint8Array
}

/**
 * What a snapshot takes at most unless told otherwise: 512 MiB.
 *
 * @since 0.1.0
 */
export const DEFAULT_MAX_BYTES = 512 * 1024 * 1024

/** What an owner writes at most, whatever it is asked. */
const CEILING = 2 * 1024 * 1024 * 1024

/** How long a reader waits on the owner (which may be in a long transaction). */
const TIMEOUT = 60_000

/**
 * What the database session must offer: PGlite's lock.
 *
 * @since 0.1.0
 */
export interface Session {
  readonly runExclusive: <T>(fn: () => Promise<T>) => Promise<T>
}

const failure = (detail: string) => new StorageFailure({ operation: "snapshot", retryable: false, cause: detail })

interface Found {
  readonly path: string
  readonly mode: number
  readonly mtime: number
  readonly size: number
  readonly directory: boolean
}

/**
 * The directory's directories and regular files, relative, parents first;
 * not the owners' files. Synchronous: it runs while the database waits.
 */
const walk = (root: string, relative = "", found: Array<Found> = []): Array<Found> => {
  const entries = readdirSync(join(root, relative), { withFileTypes: true })
  for (const entry of entries.sort((a, b) => a.name < b.name ? -1 : 1)) {
    if (relative === "" && Owner.isOwnName(entry.name)) continue
    if (!entry.isFile() && !entry.isDirectory()) continue
    const path = relative === "" ? entry.name : `${relative}/${entry.name}`
    const stats = lstatSync(join(root, path))
    const directory = entry.isDirectory()
    found.push({ path, mode: stats.mode, mtime: Math.floor(stats.mtimeMs / 1000), size: stats.size, directory })
    if (directory) walk(root, path, found)
  }
  return found
}

/** Reads the file at `path` into `target`, which it must fill exactly (the database is not writing meanwhile). */
const readInto = (path: string) => (target: Uint8Array) => {
  const fd = openSync(path, "r")
  try {
    let filled = 0
    while (filled < target.length) {
      const read = readSync(fd, target, filled, target.length - filled, filled)
      if (read === 0) throw new Error(`${path} became shorter while it was read`)
      filled += read
    }
  } finally {
    closeSync(fd)
  }
}

/** The archive of `directory`, taken while `session` runs nothing; `number`: its size, more than `maxBytes`. */
const take = (directory: string, session: Session, maxBytes: number) =>
  Effect.tryPromise({
    try: () =>
      session.runExclusive(async () => {
        const takenAt = new Date()
        const files = walk(directory)
        const size = Tar.sizeOf(files.map((file) => file.directory ? 0 : file.size))
        if (size > maxBytes) return size
        const entries = files.map(({ directory: isDirectory, mode, mtime, path, size }): Tar.Entry =>
          isDirectory ? { path, mode, mtime } : { path, mode, mtime, size, read: readInto(join(directory, path)) }
        )
        return { data: Tar.archive(entries), takenAt }
      }),
    catch: (cause) => new StorageFailure({ operation: "snapshot", retryable: false, cause })
  })

/** Removes a file that may be gone already. */
const remove = (path: string) => Effect.promise(() => unlink(path).catch(() => undefined))

/**
 * What `owner` serves: snapshots of `session`'s database, one at a time,
 * each in the owner's snapshot file until the reader hangs up.
 *
 * @since 0.1.0
 */
export const serve = (owner: Owner.Owner, session: Session): Owner.Serve => {
  let busy = false
  const refuse = (error: string): Protocol.Response => ({ header: { pid: process.pid, error } })
  const done = Effect.sync(() => void (busy = false))
  return (request) => {
    if (busy) return Effect.succeed(refuse("another snapshot is being taken: try again"))
    busy = true
    const maxBytes = Math.min(request.maxBytes, CEILING)
    return take(owner.directory, session, maxBytes).pipe(
      Effect.flatMap((taken) => {
        if (typeof taken === "number") return Effect.succeed(refuse(`it takes ${taken} bytes, more than ${maxBytes}`))
        const file = join(owner.directory, owner.snapshotFile)
        return Effect.try({
          try: (): Protocol.Response => {
            // A new file, only this user's: never one that is there already (nor what a link there points to).
            writeFileSync(file, taken.data, { mode: 0o600, flag: "wx" })
            return {
              header: {
                pid: process.pid,
                takenAt: taken.takenAt.toISOString(),
                file: owner.snapshotFile,
                bytes: taken.data.length
              },
              hungUp: remove(file).pipe(Effect.andThen(done))
            }
          },
          catch: (cause) => new StorageFailure({ operation: "snapshot", retryable: false, cause })
        }).pipe(Effect.tapError(() => remove(file)))
      }),
      Effect.catch((error) => Effect.succeed(refuse(error.message))),
      Effect.tap((response) => response.hungUp === undefined ? done : Effect.void)
    )
  }
}

const decodeReply = Schema.decodeUnknownOption(Protocol.Snapshot)

/** The snapshot the owner at `name` wrote, read before hanging up. */
const fromOwner = (place: Protocol.Place, name: string, maxBytes: number) =>
  Effect.gen(function*() {
    const { directory } = place
    const reply = yield* Protocol.ask(place.address(name), `snapshot ${maxBytes}`, TIMEOUT)
    if (reply._tag === "Refused" || reply._tag === "Absent" || reply._tag === "Gone") return undefined
    const pid = Owner.pidOf(name)
    if (reply._tag === "Silent") {
      return yield* failure(`process ${pid} holds ${directory} but sent no snapshot within ${TIMEOUT / 1000} s`)
    }
    const header = Option.getOrUndefined(decodeReply(reply.header))
    if (header === undefined) return yield* failure(`process ${pid} holds ${directory} and answered nonsense`)
    if ("error" in header) {
      return yield* failure(`process ${header.pid}, which holds ${directory}, took no snapshot: ${header.error}`)
    }
    if (!Owner.isSnapshotName(header.file)) return yield* failure(`process ${pid} named no snapshot file`)
    const path = join(directory, header.file)
    const data = yield* Effect.tryPromise({
      try: async () => {
        const { size } = await stat(path)
        if (size !== header.bytes || size > maxBytes) throw new Error(`${path} holds ${size} bytes`)
        return readFile(path)
      },
      catch: (cause) => new StorageFailure({ operation: "snapshot", retryable: false, cause })
    })
    return { directory, pid: header.pid, takenAt: new Date(header.takenAt), data }
  }).pipe(Effect.scoped)

/**
 * A snapshot of the database in `dataDir`, from the process that holds it
 * (see `DatabaseLocked`): at most `maxBytes` (default 512 MiB; an integer
 * of 1 or more, or it is an `InvalidConfig`).
 *
 * @since 0.1.0
 */
export const fetch = (
  dataDir: string,
  options: { readonly maxBytes?: number | undefined } = {}
): Effect.Effect<Snapshot, StorageFailure | InvalidConfig> =>
  Effect.gen(function*() {
    const valid = yield* Settings.check("snapshot", options)
    const maxBytes = Math.min(valid.maxBytes ?? DEFAULT_MAX_BYTES, CEILING)
    const directory = yield* Effect.tryPromise({
      try: () => realpath(dataDir),
      catch: () => new InvalidConfig({ operation: "snapshot", detail: `there is no directory ${dataDir}` })
    })
    const place = yield* Protocol.place(directory)
    const names = place.exclusive ? [""] : Owner.ownerNames(yield* place.names)
    for (const name of names) {
      const snapshot = yield* fromOwner(place, name, maxBytes)
      if (snapshot !== undefined) return snapshot
    }
    return yield* failure(`no process holds ${directory}: open it instead`)
  }).pipe(Effect.scoped)
