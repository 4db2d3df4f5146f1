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
 * Pieces by thread and key, each thread's apart: a read of one thread is
 * answered only with pieces that thread wrote or read, never with another
 * thread's, even should two threads store different bytes under one key (a
 * forged row, or a collision of the 128-bit hash). Callers keep only pieces
 * whose key they computed from the bytes, or whose seal opened (see
 * `Sharing.keepRead`), so an entry is never stale.
 *
 * @since 0.1.0
 */
const none: ReadonlyMap<string, Uint8Array> = new Map()

export const makePieceCache = (budget = CACHED_PIECE_BYTES) => {
  // Map order is recency: a thread added to moves to the end; the first thread's first pieces leave first.
  const threads = new Map<string, Map<string, Uint8Array>>()
  let cachedBytes = 0
  let latest: string | undefined
  const evict = () => {
    for (const [thread_id, pieces] of threads) {
      for (const [key, bytes] of pieces) {
        if (cachedBytes <= budget) return
        pieces.delete(key)
        cachedBytes -= bytes.byteLength
      }
      threads.delete(thread_id)
      if (latest === thread_id) latest = undefined
    }
  }
  return {
    /** A thread's pieces, to look many up (empty when it has none): read it, never change it. */
    of: (thread_id: string): ReadonlyMap<string, Uint8Array> => threads.get(thread_id) ?? none,
    /** Keeps a thread's piece (a key already kept keeps its bytes), evicting the oldest over the budget. */
    add: (thread_id: string, key: string, bytes: Uint8Array): void => {
      let pieces = threads.get(thread_id)
      if (pieces?.has(key) === true) return
      if (pieces === undefined) pieces = new Map()
      if (latest !== thread_id) {
        threads.delete(thread_id)
        threads.set(thread_id, pieces)
        latest = thread_id
      }
      pieces.set(key, bytes)
      cachedBytes += bytes.byteLength
      if (cachedBytes > budget) evict()
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
