/**
 * What a storage service's sharing keeps in memory between steps: the
 * pieces it wrote or read (what a read need not fetch again), and the list
 * each channel last stored or read (what its next step extends). Both are
 * bounded, oldest first out.
 *
 * @since 0.1.0
 */
import { namespaceKey, packHashes } from "../StorageFormat.ts"
import type { List } from "./Layout.ts"

/** Namespaces whose lists are remembered per process, for the next step of their channels. */
const REMEMBERED_NAMESPACES = 1000
/** The bytes of pieces kept in memory. */
const CACHED_PIECE_BYTES = 64 * 1024 * 1024

/**
 * Where a namespace's channel is: what a remembered list is keyed by.
 *
 * @since 0.1.0
 */
export interface Location {
  readonly thread_id: string
  readonly checkpoint_ns: string
}

/**
 * Pieces by key. A key is its bytes' hash (plain or keyed), so an entry is
 * never stale; callers keep pieces read only when their bytes match their
 * hash or their seal, so a damaged row of one thread never feeds another.
 *
 * @since 0.1.0
 */
export const makePieceCache = (budget = CACHED_PIECE_BYTES) => {
  const cache = new Map<string, Uint8Array>()
  let cachedBytes = 0
  return {
    get: (key: string): Uint8Array | undefined => cache.get(key),
    has: (key: string): boolean => cache.has(key),
    /** Keeps a piece (a key already kept keeps its bytes), evicting the oldest over the budget. */
    add: (key: string, bytes: Uint8Array): void => {
      if (cache.has(key)) return
      cache.set(key, bytes)
      cachedBytes += bytes.byteLength
      for (const [oldest, evicted] of cache) {
        if (cachedBytes <= budget) break
        cache.delete(oldest)
        cachedBytes -= evicted.byteLength
      }
    }
  }
}

/**
 * The list each channel last stored or read, by thread, namespace and
 * channel; those of the most recently used namespaces kept. A namespace's
 * lists are found together: a read names their pieces without looking at
 * any other namespace's.
 *
 * @since 0.1.0
 */
export const makeListMemory = (size = REMEMBERED_NAMESPACES) => {
  // Map order is recency: a namespace written to moves to the end, the first leaves first.
  const namespaces = new Map<string, Map<string, List>>()
  return {
    get: (location: Location, channel: string): List | undefined =>
      namespaces.get(namespaceKey(location))?.get(channel),
    set: (location: Location, channel: string, list: List): void => {
      const key = namespaceKey(location)
      const lists = namespaces.get(key) ?? new Map<string, List>()
      namespaces.delete(key)
      namespaces.set(key, lists.set(channel, list))
      if (namespaces.size > size) namespaces.delete(namespaces.keys().next().value!)
    },
    /** The hashes (back to back) of the entries of a namespace's remembered lists that `has` holds. */
    known: (location: Location, has: (key: string) => boolean): Uint8Array => {
      const known: Array<string> = []
      for (const list of namespaces.get(namespaceKey(location))?.values() ?? []) {
        for (const entry of list.keys) if (has(entry)) known.push(entry)
      }
      return packHashes(known)
    }
  }
}
