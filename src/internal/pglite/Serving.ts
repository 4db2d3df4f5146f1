/**
 * The owner's side of snapshots (see `Snapshot`): the directory copied as
 * one tar under PGlite's own lock, between two statements, into a file of
 * the directory only this user can read, which is removed once the reader
 * hangs up. One snapshot at a time, never more bytes than the reader asked
 * for nor than {@link CEILING}.
 *
 * @since 0.2.0
 */
import { Effect } from "effect"
import { closeSync, lstatSync, openSync, readdirSync, readSync, writeFileSync } from "node:fs"
import { unlink } from "node:fs/promises"
import { join } from "node:path"
import { StorageFailure } from "../../CheckpointError.ts"
import * as Owner from "./Owner.ts"
import type * as Protocol from "./Protocol.ts"
import * as Tar from "./Tar.ts"

/**
 * What the database session must offer: PGlite's lock.
 *
 * @since 0.1.0
 */
export interface Session {
  readonly runExclusive: <T>(fn: () => Promise<T>) => Promise<T>
}

/**
 * What an owner writes at most, whatever it is asked: a reader asks for no
 * more.
 *
 * @since 0.2.0
 */
export const CEILING = 2 * 1024 * 1024 * 1024

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

/**
 * The archive of `directory`, taken while `session` runs nothing; `number`:
 * its size, more than `maxBytes`.
 *
 * @since 0.4.0
 */
export const take = (directory: string, session: Session, maxBytes: number) =>
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
