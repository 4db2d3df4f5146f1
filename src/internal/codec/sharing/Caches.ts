/**
 * What a storage service's sharing keeps in memory between steps: the
 * pieces it wrote or read (what a read need not fetch again), and the list
 * each channel last stored or read (what its next step extends). Both are
 * bounded by what they retain and by time (see `Bounded`).
 *
 * @since 0.1.0
 */
import type { ThreadNamespace } from "../../../Checkpoint.ts"
import { namespaceKey, owned, packHashes } from "../../StorageFormat.ts"
import * as Bounded from "../Bounded.ts"
import type { List } from "./Layout.ts"

/** The bytes of pieces kept in memory. */
const CACHED_PIECE_BYTES = 64 * 1024 * 1024
/** The bytes of the lists kept in memory (their keys, as strings), of every namespace. */
const REMEMBERED_LIST_BYTES = 32 * 1024 * 1024

/** What a list retains: its object, and each key's string and slot. */
const listBytes = (list: List) => 96 + 48 * list.keys.length

/**
 * How a memory is bounded (tests make them small, and their clock their own).
 *
 * @since 0.1.0
 */
export type Limits = Partial<Bounded.Options>

const none: ReadonlyMap<string, Uint8Array> = new Map()

/**
 * Pieces by thread and key, each thread's apart: a read of one thread is
 * answered only with pieces that thread wrote or read, never with another
 * thread's, even should two threads store different bytes under one key (a
 * forged row, or a collision of the 128-bit hash). Callers keep only pieces
 * whose key they computed from the bytes, or whose seal opened (see
 * `Sharing.keepRead`), so an entry is never stale. Bounded by the bytes
 * kept, each piece counted as the copy it is kept as (never the buffer it
 * arrived in), and by time: a thread unused for `Bounded.IDLE_MS` goes whole.
 *
 * @since 0.1.0
 */
export const makePieceCache = (limits: Limits = {}) => {
  const threads = Bounded.make<
    string,
    { readonly pieces: Map<string, Uint8Array>; readonly derived: Map<string, string>; bytes: number }
  >({
    budget: CACHED_PIECE_BYTES,
    idleMs: Bounded.IDLE_MS,
    ...limits
  })
  /** A thread's entry, made when missing; a change to it is then `resize`d. */
  const entry = (thread_id: string) => {
    const found = threads.peek(thread_id)
    if (found !== undefined) return found
    const made = { pieces: new Map<string, Uint8Array>(), derived: new Map<string, string>(), bytes: 0 }
    threads.set(thread_id, made, 0)
    return made
  }
  return {
    /** A thread's pieces, to look many up (empty when it has none), as a use: read it, never change it. */
    of: (thread_id: string): ReadonlyMap<string, Uint8Array> => threads.get(thread_id)?.pieces ?? none,
    /** Keeps a thread's piece (a key already kept keeps its bytes). */
    add: (thread_id: string, key: string, bytes: Uint8Array): void => {
      if (threads.peek(thread_id)?.pieces.has(key) === true) return
      const found = entry(thread_id)
      // Counted as what it retains: its own copy, never the buffer it arrived in.
      const kept = owned(bytes)
      found.pieces.set(key, kept)
      found.bytes += kept.byteLength
      threads.resize(thread_id, found.bytes)
    },
    /**
     * The key of a derived piece of the thread holding the text of hash
     * `text` (kept with `derive`); `undefined` when none is known.
     */
    derivedOf: (thread_id: string, text: string): string | undefined => threads.peek(thread_id)?.derived.get(text),
    /** Keeps that the thread's derived piece `key` (kept with `add`) holds the text of hash `text`. */
    derive: (thread_id: string, text: string, key: string): void => {
      const found = entry(thread_id)
      if (found.derived.has(text)) return
      found.derived.set(text, key)
      found.bytes += DERIVATION_BYTES
      threads.resize(thread_id, found.bytes)
    },
    /** The bytes kept. */
    bytes: threads.bytes
  }
}

/** What one derivation of {@link makePieceCache} retains: two keys' strings and a slot. */
const DERIVATION_BYTES = 112

/**
 * The list each channel last stored or read, by thread, namespace and
 * channel, bounded by the bytes of their keys and by time (`Bounded.IDLE_MS`). A
 * namespace's lists are found together: a read names their pieces without
 * looking at any other namespace's.
 *
 * @since 0.1.0
 */
export const makeListMemory = (limits: Limits = {}) => {
  const namespaces = Bounded.make<string, Map<string, List>>({
    budget: REMEMBERED_LIST_BYTES,
    idleMs: Bounded.IDLE_MS,
    ...limits
  })
  const sizeOf = (lists: ReadonlyMap<string, List>) => {
    let size = 0
    for (const list of lists.values()) size += listBytes(list)
    return size
  }
  return {
    get: (location: ThreadNamespace, channel: string): List | undefined =>
      namespaces.get(namespaceKey(location))?.get(channel),
    set: (location: ThreadNamespace, channel: string, list: List): void => {
      const key = namespaceKey(location)
      const lists = namespaces.peek(key) ?? new Map<string, List>()
      lists.set(channel, list)
      namespaces.set(key, lists, sizeOf(lists))
    },
    /** The hashes (back to back) of the entries of a namespace's remembered lists that `has` holds. */
    known: (location: ThreadNamespace, has: (key: string) => boolean): Uint8Array => {
      const known: Array<string> = []
      for (const list of namespaces.get(namespaceKey(location))?.values() ?? []) {
        for (const entry of list.keys) if (has(entry)) known.push(entry)
      }
      return packHashes(known)
    },
    /** The bytes the lists' keys retain, as estimated. */
    bytes: namespaces.bytes
  }
}
