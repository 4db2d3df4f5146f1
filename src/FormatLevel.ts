/**
 * The storage format levels, and the level of the store a storage service
 * has open. {@link LEVELS} is every level and what each adds (the one table
 * the level steps of the migrations, the fixtures and the readers follow;
 * {@link levelOf} an encoding's level, {@link encodingsOf} a thread's);
 * a process reads and writes up to {@link Supported}; a service holds its
 * store's level ({@link FormatLevel}): what it may write (the store's
 * level), what it reads, and whether it may go on at all. Read when the
 * service is built and again while it runs (every {@link Refresh}), so a
 * process starts writing a level's encodings once the store is raised to
 * it, and one that does not support the new level stops with
 * {@link FormatError} instead of misreading what others then write.
 *
 * @since 0.1.0
 */
import { Context, Duration, Effect } from "effect"
import { IncompatibleFormat, type IncompatibleSchema, InvalidConfig } from "./CheckpointError.ts"
import {
  COMPRESSED,
  COMPRESSED_PIECE,
  DERIVED,
  FRAMED,
  HEADER_WITHOUT_ID,
  isCompressed,
  isDerived,
  RECORD,
  SEALED_SUFFIX,
  SHARED,
  withoutId
} from "./internal/StorageFormat.ts"
import type { FormatStatus, ThreadRows } from "./StorageDriver.ts"

/**
 * A storage format level: what a database may hold, and so what every
 * process on it must read. Each level adds encodings to the one below; a
 * process writes only the encodings of the database's level and below, so a
 * release that reads that level keeps reading everything, through a rolling
 * deploy and a rollback, until the level is raised (`upgradeFormat`).
 *
 * @since 0.1.0
 */
export interface Level {
  readonly level: number
  /** The stored types (and frames) it adds. */
  readonly encodings: ReadonlyArray<string>
  /** The release of this library that reads and writes it first. */
  readonly since: string
  /** What it adds, in words. */
  readonly adds: string
}

/**
 * Every level, oldest first. Level 1 is every database written before
 * levels were recorded: the serializer's own types (LangGraph's encoding),
 * shared lists, and sealed rows (version 1 frames; sealed metadata under
 * `$sealed`). Level 2 adds framed lists. A new encoding gets a new level, a
 * fixture under `test/fixtures/formats/`, and a level step of the
 * migrations that raises a database to it (tested:
 * `test/unit/formatLevels.test.ts`).
 *
 * @since 0.1.0
 */
export const LEVELS: ReadonlyArray<Level> = [
  {
    level: 1,
    encodings: ["json", "bytes", SHARED, "sealed frame 1"],
    since: "0.1.0",
    adds: "the serializer's values, shared lists and sealed rows"
  },
  { level: 2, encodings: [FRAMED], since: "0.2.0", adds: "framed lists" },
  {
    level: 3,
    encodings: [DERIVED, HEADER_WITHOUT_ID],
    since: "0.3.0",
    adds: "derived pieces, headers without their id"
  },
  {
    level: 4,
    encodings: [RECORD, COMPRESSED, COMPRESSED_PIECE],
    since: "0.4.0",
    adds: "record lists, compressed values and pieces"
  }
]

/**
 * The newest level this release knows.
 *
 * @since 0.1.0
 */
export const NEWEST_LEVEL: number = LEVELS.at(-1)!.level

/** What a stored type of this library's own (not a serializer's) looks like: `shared-…` or `…/<n>`. */
const OWN_TYPE = /^shared-|\/\d+$/

const levels = new Map<string, number | undefined>()

/**
 * The level a stored type (sealed or not) belongs to; `undefined` for a type
 * that looks like one of this library's (`shared-…`, `…/<n>`) but that this
 * release does not know, written by a newer one. Any other type is a
 * serializer's (LangGraph's `json` and `bytes`, or a custom `serde`'s): level 1.
 *
 * @since 0.1.0
 */
export const levelOf = (type: string): number | undefined => {
  // Asked for every value read: the answers of the few types a store holds are kept.
  if (levels.has(type)) return levels.get(type)
  const base = type.endsWith(SEALED_SUFFIX) ? type.slice(0, -SEALED_SUFFIX.length) : type
  const found = LEVELS.find((level) => level.encodings.includes(base))
  const level = found !== undefined ? found.level : OWN_TYPE.test(base) ? undefined : 1
  if (levels.size < 256) levels.set(type, level)
  return level
}

/**
 * The encodings a thread's rows are written in: their stored types, and
 * `DERIVED`, `COMPRESSED_PIECE` and `HEADER_WITHOUT_ID` (see `StorageFormat`)
 * where they hold those. {@link levelOf} of each says which level a store must
 * be at to take the rows.
 *
 * @since 0.3.0
 */
export const encodingsOf = (rows: ThreadRows): ReadonlySet<string> => {
  const found = new Set<string>()
  for (const { type } of rows.blobs) found.add(type)
  for (const { type } of rows.writes) found.add(type)
  if (rows.pieces.some((piece) => isDerived(piece.bytes))) found.add(DERIVED)
  if (rows.pieces.some((piece) => isCompressed(piece.bytes))) found.add(COMPRESSED_PIECE)
  if (rows.checkpoints.some((row) => withoutId(row.checkpoint))) found.add(HEADER_WITHOUT_ID)
  return found
}

/**
 * The highest storage format level this process reads and writes (default:
 * the newest this release knows). Pin it one level down to behave as the
 * previous release does, e.g. while such a release still runs beside this
 * one (`formatLevel` on the saver and the layers).
 *
 * @since 0.1.0
 */
export const Supported = Context.Reference<number>("langgraph-checkpoint-effect/FormatLevel/Supported", {
  defaultValue: () => NEWEST_LEVEL
})

/**
 * {@link Supported}, checked: a level this release knows.
 *
 * @since 0.1.0
 */
export const supported: Effect.Effect<number, InvalidConfig> = Effect.gen(function*() {
  const level = yield* Supported
  if (Number.isInteger(level) && level >= 1 && level <= NEWEST_LEVEL) return level
  return yield* new InvalidConfig({
    operation: "open",
    detail: `formatLevel: expected a storage format level from 1 to ${NEWEST_LEVEL}, got ${String(level)}`
  })
})

/**
 * How often a running storage service reads its store's format level again
 * (default a minute).
 *
 * @since 0.1.0
 */
export const Refresh = Context.Reference<Duration.Duration>("langgraph-checkpoint-effect/FormatLevel/Refresh", {
  defaultValue: () => Duration.minutes(1)
})

/**
 * A store this process must not go on with: raised to a storage format
 * level it does not read, or migrated by a newer release (see Upgrading in
 * the README). Every operation of a storage service may fail with it.
 *
 * @since 0.1.0
 */
export type FormatError = IncompatibleFormat | IncompatibleSchema

/**
 * A store at a level above what this process supports.
 *
 * @since 0.1.0
 */
export const tooNew = (operation: string, status: FormatStatus, supported: number): IncompatibleFormat =>
  new IncompatibleFormat({ operation, level: status.level, supported, release: status.raised?.release })

/**
 * The format level of one storage service's store.
 *
 * @since 0.1.0
 */
export interface FormatLevel {
  /** The highest level this process reads (see {@link Supported}). */
  readonly supported: number
  /** The store's level as last read: what this process writes. */
  readonly level: () => number
  /** Fails once the store is found at a level, or with a schema, this process does not support. */
  readonly usable: Effect.Effect<void, FormatError>
  /** Takes a status read from the store; one above `supported` makes the service unusable. */
  readonly update: (status: FormatStatus) => void
  /** Makes the service unusable (a newer schema found while it runs). */
  readonly stop: (error: FormatError) => void
}

/**
 * The format level of a store found at `status`, for a process supporting
 * up to `supported`.
 *
 * @since 0.1.0
 */
export const make = (status: FormatStatus, supported: number): FormatLevel => {
  let level = Math.min(status.level, supported)
  let stopped: Effect.Effect<never, FormatError> | undefined
  const stop = (error: FormatError) => {
    stopped ??= Effect.fail(error)
  }
  const update = (found: FormatStatus) => {
    if (found.level > supported) stop(tooNew("refresh format level", found, supported))
    else level = Math.max(level, found.level)
  }
  update(status)
  return {
    supported,
    level: () => level,
    usable: Effect.suspend(() => stopped ?? Effect.void),
    update,
    stop
  }
}
