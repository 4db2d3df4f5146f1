/**
 * What a storage service remembers between calls, bounded two ways: by the
 * bytes its entries retain (each entry says its size, counting the copies it
 * owns, never a buffer it merely points into), and by time, so that
 * what the process remembers follows the threads it works on now, not every
 * thread it ever touched. An entry not used for `idleMs` goes; over the
 * budget, the least recently used goes first. Forgetting is always safe: a
 * read then fetches what it would have named (one that named it meanwhile
 * fails as `NotHeld`, and is read again naming nothing), a put lays its
 * list out against what it reads back.
 *
 * Pure bookkeeping over one `Map` whose order is recency: a use moves an
 * entry to the end, so the idle and the oldest are at the front and each
 * eviction looks at no more entries than it removes.
 *
 * Every memory that grows with the workload (pieces, lists, walks' seeds,
 * thread keys, sealed pieces) is one of these, so {@link forgetAll} empties
 * them all at once. What is kept in a `WeakMap` instead is keyed by objects
 * its caller holds, and goes with them.
 *
 * @since 0.1.0
 */

/**
 * How long what a process remembers of a thread or namespace (its lists, its
 * pieces, its walks' seeds) is kept unused: a graph's run touches its thread
 * at every step; a conversation that pauses longer is read whole again on
 * its next turn, as a new process would.
 *
 * @since 0.1.0
 */
export const IDLE_MS = 60_000

/** Counts {@link forgetAll}s: a memory that saw fewer forgets what it holds before its next use. */
let forgets = 0

/**
 * Empties every memory of this process at once, as if each had evicted
 * everything: for tests, to forget between the steps of a read what it
 * named as held.
 *
 * @since 0.1.0
 */
export const forgetAll = (): void => {
  forgets++
}

/**
 * A bounded memory of values by key.
 *
 * @since 0.1.0
 */
export interface Bounded<K, V> {
  /** The value, as a use: it becomes the most recent. */
  readonly get: (key: K) => V | undefined
  /** The value, leaving its recency alone. */
  readonly peek: (key: K) => V | undefined
  /** Keeps `value` as `size` bytes (replacing the key's), then evicts what is idle or over the budget. */
  readonly set: (key: K, value: V, size: number) => void
  /** Says the entry's size changed (it grew in place), as a use. */
  readonly resize: (key: K, size: number) => void
  /** The keys, the least recently used first. */
  readonly keys: () => IterableIterator<K>
  /** The bytes the entries retain, as they said. */
  readonly bytes: () => number
}

/**
 * @since 0.1.0
 */
export interface Options {
  /** Bytes the entries may retain together. */
  readonly budget: number
  /** How many entries may be kept (default: as many as the budget allows). */
  readonly most?: number | undefined
  /** How long an entry is kept unused (default: as long as the budget allows). */
  readonly idleMs?: number | undefined
  /** The clock (default `Date.now`). */
  readonly now?: (() => number) | undefined
}

interface Entry<V> {
  value: V
  size: number
  used: number
}

/**
 * A bounded memory (see {@link Bounded}).
 *
 * @since 0.1.0
 */
export const make = <K, V>(
  { budget, idleMs = Infinity, most = Infinity, now = Date.now }: Options
): Bounded<K, V> => {
  const entries = new Map<K, Entry<V>>()
  let bytes = 0
  let forgotten = forgets
  /** The entries, emptied first when {@link forgetAll} ran since their last use. */
  const current = () => {
    if (forgotten !== forgets) {
      forgotten = forgets
      entries.clear()
      bytes = 0
    }
    return entries
  }
  /** Moves an entry to the end, stamped now. */
  const touch = (key: K, entry: Entry<V>, at: number) => {
    entry.used = at
    entries.delete(key)
    entries.set(key, entry)
  }
  const evict = (at: number) => {
    for (const [key, entry] of entries) {
      if (bytes <= budget && entries.size <= most && at - entry.used < idleMs) return
      entries.delete(key)
      bytes -= entry.size
    }
  }
  return {
    get: (key) => {
      const entry = current().get(key)
      if (entry === undefined) return undefined
      const at = now()
      if (at - entry.used >= idleMs) {
        evict(at)
        return entries.has(key) ? entry.value : undefined
      }
      touch(key, entry, at)
      return entry.value
    },
    peek: (key) => current().get(key)?.value,
    set: (key, value, size) => {
      const at = now()
      const previous = current().get(key)
      if (previous !== undefined) bytes -= previous.size
      entries.delete(key)
      entries.set(key, { value, size, used: at })
      bytes += size
      evict(at)
    },
    resize: (key, size) => {
      const entry = current().get(key)
      if (entry === undefined) return
      bytes += size - entry.size
      entry.size = size
      const at = now()
      touch(key, entry, at)
      evict(at)
    },
    keys: () => current().keys(),
    bytes: () => {
      current()
      return bytes
    }
  }
}
