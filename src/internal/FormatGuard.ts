/**
 * The guard of a storage service's format level: the store's level read
 * when the service opens (a store above what this process supports is
 * `IncompatibleFormat`) and again every `FormatLevel.Refresh` while it
 * lives; every operation refused, with a {@link FormatError}, once the
 * store's level or schema has moved past this process; and the service's
 * own operations on the level (`formatLevel`, `upgradeFormat`).
 *
 * @since 0.1.0
 */
import { Effect, Stream } from "effect"
import { IncompatibleSchema, InvalidInput, StorageFailure } from "../CheckpointError.ts"
import * as FormatLevel from "../FormatLevel.ts"
import type { FormatError } from "../FormatLevel.ts"
import type { StorageDriver } from "../StorageDriver.ts"

/**
 * The store's format level, read now: a store above what this process
 * supports is `IncompatibleFormat`. Read again every `FormatLevel.Refresh`
 * while the scope lives (see `FormatLevel`).
 *
 * @since 0.1.0
 */
export const open = Effect.fnUntraced(function*(driver: StorageDriver) {
  const supported = yield* FormatLevel.supported
  const status = yield* driver.formatStatus
  if (status.level > supported) return yield* FormatLevel.tooNew("open", status, supported)
  const format = FormatLevel.make(status, supported)
  const refresh = driver.formatStatus.pipe(
    Effect.map(format.update),
    Effect.catchTag("IncompatibleSchema", (error) => Effect.sync(() => format.stop(error))),
    // A store that cannot be reached now is read again next time; the operations say why meanwhile.
    Effect.ignore
  )
  yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(yield* FormatLevel.Refresh), refresh)))
  return format
})

/**
 * A service's operations, each of which may also fail with a {@link FormatError}.
 *
 * @since 0.1.0
 */
export type Guarded<S> = {
  readonly [K in keyof S]: S[K] extends (...args: infer P) => Effect.Effect<infer A, infer E, infer R>
    ? (...args: P) => Effect.Effect<A, E | FormatError, R>
    : S[K] extends (...args: infer P) => Stream.Stream<infer A, infer E, infer R>
      ? (...args: P) => Stream.Stream<A, E | FormatError, R>
    : S[K]
}

/**
 * SQLSTATEs of a statement that names what the schema no longer has (a
 * table, a column, a function, a type): a newer release's migration landed
 * while this process ran.
 */
const SCHEMA_CHANGED: ReadonlySet<string> = new Set(["42P01", "42703", "42883", "42804"])

/**
 * A service's operations (each one an Effect or a Stream), each refused once
 * the store's format level (or schema) says this process must stop; a
 * statement that fails on a schema changed under it is `IncompatibleSchema`
 * when a newer release changed it.
 *
 * @since 0.1.0
 */
export const guarded = <S extends object>(
  driver: StorageDriver,
  format: FormatLevel.FormatLevel,
  service: S
): Guarded<S> => {
  const changed = (error: unknown): error is StorageFailure =>
    error instanceof StorageFailure && SCHEMA_CHANGED.has(error.sqlState ?? "")
  // The failure as it is, unless the schema is now one this release does not know.
  const explained = (failure: StorageFailure) =>
    Effect.andThen(
      driver.formatStatus.pipe(
        Effect.tapError((error) => Effect.sync(() => error instanceof IncompatibleSchema && format.stop(error)))
      ),
      Effect.fail(failure)
    )
  return Object.fromEntries(
    Object.entries(service).map(([name, operation]: [string, (...args: ReadonlyArray<unknown>) => unknown]) => [
      name,
      (...args: ReadonlyArray<unknown>) => {
        const result = operation(...args)
        return Stream.isStream(result)
          ? Stream.unwrap(
            Effect.as(
              format.usable,
              Stream.catchIf(result, changed, (failure) => Stream.fromEffect(explained(failure)))
            )
          )
          : format.usable.pipe(
            Effect.andThen(result as Effect.Effect<unknown, unknown, unknown>),
            Effect.catchIf(changed, explained)
          )
      }
    ])
  ) as Guarded<S>
}

/**
 * The service's view of the store's format level: read it, raise it.
 *
 * @since 0.1.0
 */
export const operations = (driver: StorageDriver, format: FormatLevel.FormatLevel) => ({
  formatLevel: Effect.fn("CheckpointStorage.formatLevel")(function*() {
    const status = yield* driver.formatStatus
    format.update(status)
    yield* format.usable
    return { ...status, supported: format.supported }
  }),
  upgradeFormat: Effect.fn("CheckpointStorage.upgradeFormat")(function*(level?: number) {
    const target = level ?? format.supported
    if (!Number.isInteger(target) || target < 1 || target > format.supported) {
      return yield* new InvalidInput({
        operation: "upgradeFormat",
        argument: "level",
        detail: `expected a storage format level from 1 to ${format.supported}, got ${String(level)}`
      })
    }
    const status = yield* driver.raiseFormat(target)
    format.update(status)
    return { ...status, supported: format.supported }
  })
})
