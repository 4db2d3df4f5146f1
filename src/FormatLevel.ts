/**
 * The storage format level of the store a storage service has open, as this
 * process knows it (see `StorageFormat.LEVELS`): what it may write (the
 * store's level), what it reads (up to `Supported`), and whether it may go
 * on at all. Read when the service is built; read again while it runs
 * (every `Refresh`), so a process starts writing a level's encodings once the
 * store is raised to it, and one that does not support the new level stops
 * with `IncompatibleFormat` instead of misreading what others then write.
 *
 * @since 0.1.0
 */
import { Context, Duration, Effect } from "effect"
import { IncompatibleFormat, type IncompatibleSchema, InvalidConfig } from "./CheckpointError.ts"
import { NEWEST_LEVEL } from "./internal/StorageFormat.ts"
import type { FormatStatus } from "./StorageDriver.ts"

/** The levels and what each adds, as the storage format defines them. */
export { LEVELS, NEWEST_LEVEL } from "./internal/StorageFormat.ts"

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
  readonly usable: Effect.Effect<void, IncompatibleFormat | IncompatibleSchema>
  /** Takes a status read from the store; one above `supported` makes the service unusable. */
  readonly update: (status: FormatStatus) => void
  /** Makes the service unusable (a newer schema found while it runs). */
  readonly stop: (error: IncompatibleFormat | IncompatibleSchema) => void
}

/**
 * The format level of a store found at `status`, for a process supporting
 * up to `supported`.
 *
 * @since 0.1.0
 */
export const make = (status: FormatStatus, supported: number): FormatLevel => {
  let level = Math.min(status.level, supported)
  let stopped: Effect.Effect<never, IncompatibleFormat | IncompatibleSchema> | undefined
  const stop = (error: IncompatibleFormat | IncompatibleSchema) => {
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
