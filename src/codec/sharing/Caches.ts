/**
 * What a storage service's sharing keeps in memory between steps: the
 * pieces it wrote or read (what a read need not fetch again), and the list
 * each channel last stored or read (what its next step extends). Both are
 * bounded, oldest first out.
 *
 * @since 0.1.0
 */
import { packHashes } from "../StorageFormat.ts"
import type { List } from "./Layout.ts"

/** Lists remembered per process, for the next step of their channel. */
const REMEMBERED_LISTS = 1000
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

const listKey = (location: Location, channel: string) =>
  JSON.stringify([location.thread_id, location.checkpoint_ns, channel])

/**
 * The list each channel last stored or read, by thread, namespace and
 * channel; the most recently remembered kept.
 *
 * @since 0.1.0
 */
export const makeListMemory = (size = REMEMBERED_LISTS) => {
  const lists = new Map<string, List>()
  return {
    get: (location: Location, channel: string): List | undefined => lists.get(listKey(location, channel)),
    set: (location: Location, channel: string, list: List): void => {
      const key = listKey(location, channel)
      lists.delete(key)
      lists.set(key, list)
      if (lists.size > size) lists.delete(lists.keys().next().value!)
    },
    /** The hashes (back to back) of the entries of a namespace's remembered lists that `has` holds. */
    known: (location: Location, has: (key: string) => boolean): Uint8Array => {
      const prefix = JSON.stringify([location.thread_id, location.checkpoint_ns]).slice(0, -1) + ","
      const known: Array<string> = []
      for (const [key, list] of lists) {
        if (key.startsWith(prefix)) { for (const entry of list.keys) if (has(entry)) known.push(entry) }
      }
      return packHashes(known)
    }
  }
}
