/**
 * The in-memory driver: the reference semantics every SQL driver is tested
 * against, as a service whose state tests can look at. The state is one
 * `Map` from thread id to that thread's rows (see `MemoryState`), and one of
 * crons; reads, writes, records and crons live in `internal/memory/`. Each operation runs synchronously inside one
 * `Effect.sync`, so it is atomic with respect to concurrent fibers and callers.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Semaphore } from "effect"
import { NEWEST_LEVEL } from "./FormatLevel.ts"
import { crons } from "./internal/memory/Crons.ts"
import { reads } from "./internal/memory/Reads.ts"
import { records } from "./internal/memory/Records.ts"
import type { Threads } from "./internal/memory/ThreadState.ts"
import { writes } from "./internal/memory/Writes.ts"
import type { ThreadState } from "./MemoryState.ts"
import type { StorageDriver } from "./StorageDriver.ts"

export type { NamespaceState, ThreadRecordState, ThreadState } from "./MemoryState.ts"

/** Set while a fiber runs `exclusive`: the writes it makes do not wait for themselves. */
const Held = Context.Reference<boolean>("langgraph-checkpoint-effect/memory/Held", { defaultValue: () => false })

/**
 * An in-memory driver with its state in view.
 *
 * **When to use**
 *
 * In tests that check what a driver stored (or removed), beside what the
 * service reads back: `threads` is the state itself.
 *
 * **Gotchas**
 *
 * `threads` is live and read-only: look, never change it (the maps are the
 * driver's own, typed `ReadonlyMap` so the compiler says so).
 *
 * @since 0.1.0
 */
export class MemoryDriver extends Context.Service<MemoryDriver, {
  /** Every thread's rows, by thread id, as the driver holds them now. */
  readonly threads: ReadonlyMap<string, ThreadState>
  /** The driver over that state. */
  readonly driver: StorageDriver
}>()("langgraph-checkpoint-effect/memory/MemoryDriver") {
  /**
   * A fresh, empty driver for each build of the layer.
   *
   * @since 0.1.0
   */
  static readonly layer: Layer.Layer<MemoryDriver> = Layer.sync(this, () => makeInspectable())
}

/**
 * Builds a fresh, empty in-memory driver, with its state in view.
 *
 * @since 0.1.0
 */
export const makeInspectable = (options: MakeOptions = {}): MemoryDriver["Service"] => {
  const threads: Threads = new Map()
  let level = options.formatLevel ?? NEWEST_LEVEL
  // Writers wait while an `exclusive` runs (one at a time, whatever the thread: memory is fast).
  const lock = Semaphore.makeUnsafe(1)
  const writing = <A>(change: () => A) =>
    Effect.flatMap(Held, (held) => held ? Effect.sync(change) : lock.withPermits(1)(Effect.sync(change)))
  const written = writes(threads, writing)
  const cronRecords = crons(threads, writing)
  const driver: StorageDriver = {
    ...reads(threads),
    ...written,
    ...records(threads, writing),
    ...cronRecords.operations,
    deleteThread: (thread_id) => Effect.andThen(written.deleteThread(thread_id), cronRecords.forget(thread_id)),
    formatStatus: Effect.sync(() => ({ level })),
    raiseFormat: (to) =>
      Effect.sync(() => {
        level = Math.max(level, to)
        return { level }
      }),
    // Each operation is atomic on its own; writers also wait for `exclusive`,
    // so what a thread-wide operation reads stays true until it writes.
    exclusive: (_thread_id, effect) =>
      Effect.flatMap(
        Held,
        (held) => held ? effect : lock.withPermits(1)(Effect.provideService(effect, Held, true))
      )
  }
  return { threads, driver }
}

/**
 * @since 0.1.0
 */
export interface MakeOptions {
  /** The store's storage format level (default the newest): a store as a release that writes up to it made it. */
  readonly formatLevel?: number | undefined
}

/**
 * Builds a fresh, empty in-memory driver.
 *
 * @since 0.1.0
 */
export const make = (options: MakeOptions = {}): StorageDriver => makeInspectable(options).driver
