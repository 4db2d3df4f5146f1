/**
 * What this process's delta-history walks read, per namespace, for the next
 * walk to leave out. A DeltaChannel's history walks back to the same
 * snapshot turn after turn, over nearly the same writes: the seed is a whole
 * list of messages, the largest row the walk reads, and the writes' pieces
 * are most of the rest. The next walk names the seeds it holds (by digest)
 * and the pieces the last one read (by hash), and the driver leaves their
 * bytes out (see `StorageDriver.ancestors`); the pieces come from `Sharing`'s
 * cache, where the read keeps them.
 *
 * Seeds are held by content (the digest the database computes of the stored
 * bytes, sealed or not), never by version alone: a thread deleted and written
 * again may store other bytes under the same version. A seed or a piece
 * that left memory between a walk and its decoding fails that decoding; the
 * caller runs the walk again naming none.
 *
 * @since 0.1.0
 */
import type { BlobRow, KnownToWalk } from "../StorageDriver.ts"
import { namespaceKey, packHashes } from "./StorageFormat.ts"

/** A namespace: where a seed was read. */
interface Place {
  readonly thread_id: string
  readonly checkpoint_ns: string
}

/**
 * @since 0.1.0
 */
export interface Walks {
  /** What the next walk of a namespace may leave out: the digests of the seeds held, the hashes of pieces last read. */
  readonly known: (place: Place) => Known
  /**
   * A blob read by a walk, whole: its bytes from memory when the driver left
   * them out (`undefined` when they are no longer held), else as read, kept.
   */
  readonly fill: (place: Place, blob: BlobRow) => BlobRow | undefined
  /** Records the pieces (by key) a walk of a namespace read: the next one need not fetch them. */
  readonly walked: (place: Place, pieces: ReadonlySet<string>) => void
}

/**
 * What a walk may leave out: seeds by digest, pieces by hash (back to back).
 *
 * @since 0.1.0
 */
export type Known = KnownToWalk

/**
 * Nothing known: what a walk run again names.
 *
 * @since 0.1.0
 */
export const nothing: Known = { blobs: [], pieces: new Uint8Array() }

/** Namespaces whose last walk's pieces are remembered (their keys only: the bytes are `Sharing`'s). */
const REMEMBERED_WALKS = 1000

/** Most seeds a namespace names: one per delta channel, and a few left from its earlier snapshots. */
const PER_NAMESPACE = 8

/** Below this, a blob costs less to send than to name. */
const WORTH_KEEPING = 1024

/**
 * Seeds held up to `budget` bytes in all, the least recently used leaving
 * first; the piece keys of the last walk of up to 1,000 namespaces.
 *
 * @since 0.1.0
 */
export const make = (budget = 32 * 1024 * 1024): Walks => {
  const walks = new Map<string, Uint8Array>()
  // Map order is recency: a seed used is moved to the end, the first leaves first.
  const held = new Map<string, { readonly namespace: string; readonly digest: string; readonly bytes: Uint8Array }>()
  const byNamespace = new Map<string, Array<string>>()
  let size = 0

  const keyOf = (namespace: string, digest: string) => `${namespace}\u0000${digest}`

  const drop = (key: string) => {
    const entry = held.get(key)
    if (entry === undefined) return
    held.delete(key)
    size -= entry.bytes.byteLength
    const digests = byNamespace.get(entry.namespace)?.filter((digest) => digest !== entry.digest) ?? []
    if (digests.length === 0) byNamespace.delete(entry.namespace)
    else byNamespace.set(entry.namespace, digests)
  }

  const keep = (namespace: string, digest: string, bytes: Uint8Array) => {
    if (bytes.byteLength < WORTH_KEEPING || bytes.byteLength > budget) return
    const key = keyOf(namespace, digest)
    drop(key)
    held.set(key, { namespace, digest, bytes })
    size += bytes.byteLength
    const digests = [digest, ...(byNamespace.get(namespace) ?? [])]
    byNamespace.set(namespace, digests)
    for (const old of digests.slice(PER_NAMESPACE)) drop(keyOf(namespace, old))
    for (const oldest of held.keys()) {
      if (size <= budget) break
      drop(oldest)
    }
  }

  return {
    known: (place) => {
      const namespace = namespaceKey(place)
      return { blobs: byNamespace.get(namespace) ?? [], pieces: walks.get(namespace) ?? nothing.pieces }
    },
    walked: (place, pieces) => {
      const namespace = namespaceKey(place)
      walks.delete(namespace)
      if (pieces.size === 0) return
      walks.set(namespace, packHashes([...pieces]))
      for (const oldest of walks.keys()) {
        if (walks.size <= REMEMBERED_WALKS) break
        walks.delete(oldest)
      }
    },
    fill: (place, blob) => {
      if (blob.digest === undefined) return blob
      const namespace = namespaceKey(place)
      if (blob.bytes !== undefined) {
        keep(namespace, blob.digest, blob.bytes)
        return blob
      }
      const key = keyOf(namespace, blob.digest)
      const entry = held.get(key)
      if (entry === undefined) return undefined
      held.delete(key)
      held.set(key, entry)
      return { ...blob, bytes: entry.bytes }
    }
  }
}
