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
 * asked for. This module is what a snapshot is and the reader's side; the
 * owner's side, taking and serving them, is `Serving.ts`.
 *
 * A directory no process holds is copied by the reader itself, owning it
 * only while it copies: a reader that stays (the web inspector) then never
 * keeps an application from opening the directory.
 *
 * @since 0.1.0
 */
import { Effect, Option, Schema } from "effect"
import { readFile, realpath, stat } from "node:fs/promises"
import { join } from "node:path"
import { InvalidConfig, StorageFailure } from "../../CheckpointError.ts"
import type { Snapshot } from "../../Snapshot.ts"
import * as Settings from "../Settings.ts"
import * as Owner from "./Owner.ts"
import * as Protocol from "./Protocol.ts"
import * as Serving from "./Serving.ts"

/**
 * What a snapshot takes at most unless told otherwise: 512 MiB.
 *
 * @since 0.1.0
 */
export const DEFAULT_MAX_BYTES = 512 * 1024 * 1024

/** How long a reader waits on the owner (which may be in a long transaction). */
const TIMEOUT = 60_000

const failure = (detail: string) => new StorageFailure({ operation: "snapshot", retryable: false, cause: detail })

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
 * (see `DatabaseLocked`), or, if none does, copied by this one: at most
 * `maxBytes` (default 512 MiB; an integer of 1 or more, or it is an
 * `InvalidConfig`).
 *
 * @since 0.1.0
 */
export const fetch = (
  dataDir: string,
  options: { readonly maxBytes?: number | undefined } = {}
): Effect.Effect<Snapshot, StorageFailure | InvalidConfig> =>
  Effect.gen(function*() {
    const valid = yield* Settings.check("snapshot", options)
    const maxBytes = Math.min(valid.maxBytes ?? DEFAULT_MAX_BYTES, Serving.CEILING)
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
    return yield* copy(directory, maxBytes).pipe(
      // An application opened it meanwhile: it is the one to ask.
      Effect.catchTag("DatabaseLocked", () => fetch(dataDir, options))
    )
  }).pipe(Effect.scoped)

/** The snapshot of a directory no process holds, taken while this one holds it (no database runs). */
const copy = (directory: string, maxBytes: number) =>
  Effect.gen(function*() {
    yield* Owner.acquire(directory)
    yield* Effect.tryPromise({
      try: () => stat(join(directory, "PG_VERSION")),
      catch: () => new InvalidConfig({ operation: "snapshot", detail: `there is no database at ${directory}` })
    })
    const taken = yield* Serving.take(directory, { runExclusive: (f) => f() }, maxBytes)
    if (typeof taken === "number") return yield* failure(`it takes ${taken} bytes, more than ${maxBytes}`)
    return { directory, pid: undefined, takenAt: taken.takenAt, data: taken.data }
  }).pipe(Effect.scoped)
