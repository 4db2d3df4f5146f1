/**
 * What a storage service remembers between calls, bounded two ways: by the
 * bytes its entries retain (each entry says its size), and by time, so that
 * what the process remembers follows the threads it works on now, not every
 * thread it ever touched. An entry not used for `idleMs` goes; over the
 * budget, the least recently used goes first. Forgetting is always safe: a
 * read then fetches what it would have named, a put lays its list out
 * against what it reads back.
 *
 * Pure bookkeeping over one `Map` whose order is recency: a use moves an
 * entry to the end, so the idle and the oldest are at the front and each
 * eviction looks at no more entries than it removes.
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
  readonly delete: (key: K) => void
  /** The bytes the entries retain, as they said. */
  readonly bytes: () => number
  readonly size: () => number
}

/**
 * @since 0.1.0
 */
export interface Options {
  /** Bytes the entries may retain together. */
  readonly budget: number
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
export const make = <K, V>({ budget, idleMs = Infinity, now = Date.now }: Options): Bounded<K, V> => {
  const entries = new Map<K, Entry<V>>()
  let bytes = 0
  /** Moves an entry to the end, stamped now. */
  const touch = (key: K, entry: Entry<V>, at: number) => {
    entry.used = at
    entries.delete(key)
    entries.set(key, entry)
  }
  const evict = (at: number) => {
    for (const [key, entry] of entries) {
      if (bytes <= budget && at - entry.used < idleMs) return
      entries.delete(key)
      bytes -= entry.size
    }
  }
  return {
    get: (key) => {
      const entry = entries.get(key)
      if (entry === undefined) return undefined
      const at = now()
      if (at - entry.used >= idleMs) {
        evict(at)
        return entries.has(key) ? entry.value : undefined
      }
      touch(key, entry, at)
      return entry.value
    },
    peek: (key) => entries.get(key)?.value,
    set: (key, value, size) => {
      const at = now()
      const previous = entries.get(key)
      if (previous !== undefined) bytes -= previous.size
      entries.delete(key)
      entries.set(key, { value, size, used: at })
      bytes += size
      evict(at)
    },
    resize: (key, size) => {
      const entry = entries.get(key)
      if (entry === undefined) return
      bytes += size - entry.size
      entry.size = size
      const at = now()
      touch(key, entry, at)
      evict(at)
    },
    delete: (key) => {
      const entry = entries.get(key)
      if (entry === undefined) return
      entries.delete(key)
      bytes -= entry.size
    },
    bytes: () => bytes,
    size: () => entries.size
  }
}
