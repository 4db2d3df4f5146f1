/**
 * One owner per PGlite directory.
 *
 * PGlite takes no lock on its data directory: a second process opening it
 * runs a second Postgres over the same files, and whichever closes last
 * overwrites the other's work. So a layer first makes its process the
 * directory's owner, and a second opener (another process, or another layer
 * in this one) gets `DatabaseLocked` naming the holder's pid instead.
 *
 * Ownership is a Unix domain socket the owner listens on, in the directory
 * itself (`.pglite-owner.<pid>.<random>`, mode 0600). Listening ends with
 * the process, however it ends: after `kill -9` the socket refuses
 * connections and the next opener removes it. Whether a process with that
 * pid exists is never asked, so a reused pid (a restarted container) cannot
 * hold a directory. An opener:
 *
 * 1. listens on a name of its own (bound under another name, then renamed
 *    into place: a socket is never listed before it answers);
 * 2. lists the directory's owner sockets: one that refuses connections is
 *    dead for good (no name is used twice) and is removed; one that hangs
 *    up without answering is closing; one that answers (or keeps silent) is
 *    alive;
 * 3. owns the directory if none other is alive. One that says it owns it
 *    (or says nothing in time) is the holder: the opener withdraws and
 *    fails. Openers at the same moment may each see the other still
 *    deciding: each withdraws, waits a random while and tries again.
 *
 * Of two openers, whichever lists the directory second sees the socket the
 * first put there before listing, so two never both own it. On Windows the
 * socket is a named pipe derived from the directory's real path, which
 * Windows lets one process listen on at a time.
 *
 * The socket also answers what the owner serves: its pid, and a snapshot
 * (see `Snapshot`).
 *
 * @since 0.1.0
 */
import { Effect, Exit, Scope } from "effect"
import { randomBytes } from "node:crypto"
import { chmod, realpath, rename, unlink } from "node:fs/promises"
import { DatabaseLocked, StorageFailure } from "../../CheckpointError.ts"
import * as Protocol from "./Protocol.ts"

/**
 * The names of owners' sockets, of sockets bound but not yet in place, and
 * of the snapshot an owner is handing over; each followed by the owner's
 * id, `<pid>.<random>`.
 */
const OWNER = ".pglite-owner."
const BOUND = ".pglite-bound."
const SNAPSHOT = ".pglite-snapshot."

/** An owner's id, as its names end. */
const ID = /^[0-9]{1,10}\.[0-9a-f]{12}$/

/**
 * Whether a directory entry is one of an owner's sockets (placed or not).
 *
 * @since 0.1.0
 */
export const isSocketName = (name: string): boolean => name.startsWith(OWNER) || name.startsWith(BOUND)

/**
 * Whether a directory entry is an owner's snapshot file.
 *
 * @since 0.1.0
 */
export const isSnapshotName = (name: string): boolean =>
  name.startsWith(SNAPSHOT) && ID.test(name.slice(SNAPSHOT.length))

/**
 * Whether a directory entry is one of the owners' (not the database's): what
 * a copy of the directory leaves out.
 *
 * @since 0.1.0
 */
export const isOwnName = (name: string): boolean => isSocketName(name) || name.startsWith(SNAPSHOT)

/**
 * The live owners' socket names in a listing.
 *
 * @since 0.1.0
 */
export const ownerNames = (names: ReadonlyArray<string>): ReadonlyArray<string> =>
  names.filter((name) => name.startsWith(OWNER))

/**
 * The pid an owner's socket name carries.
 *
 * @since 0.1.0
 */
export const pidOf = (name: string): number => Number(name.split(".")[2])

/** A new owner id: this process's pid and 12 random hex digits. */
const newId = () => `${process.pid}.${randomBytes(6).toString("hex")}`

/** How long an opener waits for a live socket to say whether it owns the directory. */
const WHO_TIMEOUT = 2_000

/** How many times openers that met each other withdraw and try again. */
const ROUNDS = 20

/**
 * What the owner's socket serves once the database is open.
 *
 * @since 0.1.0
 */
export type Serve = (request: Protocol.Request & { readonly _tag: "snapshot" }) => Effect.Effect<Protocol.Response>

/**
 * This process's ownership of a directory, for the life of the scope.
 *
 * @since 0.1.0
 */
export interface Owner {
  /** The directory's real path. */
  readonly directory: string
  /** The name, in the directory, of the file this owner hands snapshots over in. */
  readonly snapshotFile: string
  /** Answers snapshot requests with `serve` (refused while `undefined`, as they are at first). */
  readonly serve: (serve: Serve | undefined) => void
}

const failure = (cause: unknown) => new StorageFailure({ operation: "connect", retryable: false, cause })

/** An exchange whose failure is a cause: the fs call that failed. */
const attempt = <A>(f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: failure })

/** A failure because the file is not there. */
const isMissing = (error: StorageFailure) => (error.cause as NodeJS.ErrnoException).code === "ENOENT"

/** Removes a file that may already be gone. */
const remove = (path: string) => attempt(() => unlink(path)).pipe(Effect.catchIf(isMissing, () => Effect.void))

interface State {
  owner: boolean
  serve: Serve | undefined
}

const handler = (state: State) => (request: Protocol.Request): Effect.Effect<Protocol.Response> => {
  if (request._tag === "who") return Effect.succeed({ header: { pid: process.pid, owner: state.owner } })
  return state.owner && state.serve !== undefined
    ? state.serve(request)
    : Effect.succeed({ header: { pid: process.pid, error: "the database is not open yet: try again" } })
}

/** What the other sockets of the directory say. */
interface Survey {
  /** A process that owns the directory (or may: it did not say). */
  readonly holder?: number | undefined
  /** A process deciding, as this one is. */
  readonly contender?: number | undefined
}

/** Asks every other socket of the directory who it is, removing the dead. */
const survey = (place: Protocol.Place, own: string): Effect.Effect<Survey, StorageFailure> =>
  Effect.gen(function*() {
    const names = (yield* place.names).filter((name) => isSocketName(name) && name !== own)
    let contender: number | undefined
    for (const name of names) {
      const reply = yield* Protocol.ask(place.address(name), "who", WHO_TIMEOUT).pipe(Effect.scoped)
      if (reply._tag === "Refused") {
        yield* remove(place.path(name))
        // A snapshot it was handing over when it died.
        if (name.startsWith(OWNER)) yield* remove(place.path(SNAPSHOT + name.slice(OWNER.length)))
        continue
      }
      if (reply._tag === "Absent" || reply._tag === "Gone") continue
      const who = reply._tag === "Answered" ? Protocol.decodeWho(reply.header) : undefined
      if (who !== undefined && !who.owner) contender = who.pid
      else return { holder: who?.pid ?? pidOf(name) }
    }
    return { contender }
  })

/**
 * Listens under a name of its own, in place. `undefined`: the bound socket
 * was taken for dead and removed before it was in place (someone asked it
 * between Node's bind and listen); try again.
 */
const enter = (place: Protocol.Place, state: State, id: string, scope: Scope.Scope) =>
  Effect.gen(function*() {
    const [bound, name] = [`${BOUND}${id}`, `${OWNER}${id}`]
    const server = yield* Protocol.listen(place.address(bound), handler(state)).pipe(Effect.mapError(failure))
    yield* Scope.addFinalizer(
      scope,
      remove(place.path(name)).pipe(Effect.ignore, Effect.andThen(server.close))
    )
    return yield* attempt(async () => {
      await chmod(place.path(bound), 0o600)
      await rename(place.path(bound), place.path(name))
      return name
    }).pipe(Effect.catchIf(isMissing, () => Effect.succeed(undefined)))
  })

/** Owns the directory with a name no other process can take (a Windows pipe). */
const acquireExclusive = (place: Protocol.Place, state: State) =>
  Effect.gen(function*() {
    const address = place.address("")
    const server = yield* Protocol.listen(address, handler(state)).pipe(
      Effect.catchIf((error) => error.code === "EADDRINUSE", () =>
        Protocol.ask(address, "who", WHO_TIMEOUT).pipe(
          Effect.scoped,
          Effect.flatMap((reply) => {
            const who = reply._tag === "Answered" ? Protocol.decodeWho(reply.header) : undefined
            return Effect.fail(new DatabaseLocked({ directory: place.directory, pid: who?.pid ?? -1 }))
          })
        )),
      Effect.mapError((error) => error instanceof DatabaseLocked ? error : failure(error))
    )
    yield* Effect.addFinalizer(() => server.close)
  })

/**
 * Makes this process the owner of `directory` (which must exist) for the
 * life of the scope, or fails with `DatabaseLocked` naming the holder.
 *
 * @since 0.1.0
 */
export const acquire = (directory: string): Effect.Effect<Owner, DatabaseLocked | StorageFailure, Scope.Scope> =>
  Effect.gen(function*() {
    const real = yield* attempt(() => realpath(directory))
    const place = yield* Protocol.place(real)
    const state: State = { owner: false, serve: undefined }
    yield* Effect.addFinalizer(() => Effect.sync(() => void (state.owner = false)))
    const own = (id: string) =>
      Effect.gen(function*() {
        state.owner = true
        const owner: Owner = {
          directory: real,
          snapshotFile: `${SNAPSHOT}${id}`,
          serve: (serve) => void (state.serve = serve)
        }
        yield* Effect.addFinalizer(() => remove(place.path(owner.snapshotFile)).pipe(Effect.ignore))
        return owner
      })
    if (place.exclusive) {
      yield* acquireExclusive(place, state)
      return yield* own(newId())
    }
    for (let round = 1;; round++) {
      // A new name each round: a name, once dead, is dead for every opener.
      const id = newId()
      const scope = yield* Scope.make()
      yield* Effect.addFinalizer((exit) => Scope.close(scope, exit))
      const name = yield* Effect.uninterruptible(enter(place, state, id, scope))
      const found: Survey = name === undefined ? { contender: process.pid } : yield* survey(place, name)
      if (found.holder === undefined && found.contender === undefined) return yield* own(id)
      yield* Scope.close(scope, Exit.void)
      const pid = found.holder ?? found.contender!
      if (found.holder !== undefined || round === ROUNDS) {
        return yield* new DatabaseLocked({ directory: real, pid })
      }
      yield* Effect.sleep(`${Math.round(Math.random() * 20 * round)} millis`)
    }
  })
