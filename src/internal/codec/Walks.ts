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
 * that left memory between a walk and its decoding fails that decoding as
 * `NotHeld` (see `Parts`); the caller runs the walk again naming none.
 *
 * @since 0.1.0
 */
import type { BlobRow, KnownToWalk } from "../../StorageDriver.ts"
import { namespaceKey, owned, packHashes } from "../StorageFormat.ts"
import * as Bounded from "./Bounded.ts"

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

/** Most seeds a namespace names: one per delta channel, and a few left from its earlier snapshots. */
const PER_NAMESPACE = 8

/** Below this, a blob costs less to send than to name. */
const WORTH_KEEPING = 1024

/** What is held of one namespace: its seeds by digest, the keys of its last walk's pieces. */
interface Held {
  readonly seeds: Bounded.Bounded<string, Uint8Array>
  pieces: Uint8Array
}

const sizeOf = (held: Held) => held.pieces.byteLength + held.seeds.bytes()

/**
 * What walks of up to `budget` bytes in all hold (seeds and piece keys),
 * by namespace, the least recently used leaving first, and a namespace
 * unused for `Bounded.IDLE_MS` leaving whole (see `Bounded`).
 *
 * @since 0.1.0
 */
export const make = (limits: Partial<Bounded.Options> = {}): Walks => {
  const namespaces = Bounded.make<string, Held>({ budget: 32 * 1024 * 1024, idleMs: Bounded.IDLE_MS, ...limits })
  const heldAt = (namespace: string) => {
    let held = namespaces.peek(namespace)
    if (held === undefined) {
      // Its seeds bounded by number (each one a name the walk sends), their bytes by the namespaces' budget.
      const seeds = Bounded.make<string, Uint8Array>({ budget: Infinity, most: PER_NAMESPACE })
      namespaces.set(namespace, held = { seeds, pieces: nothing.pieces }, 0)
    }
    return held
  }

  return {
    known: (place) => {
      const held = namespaces.get(namespaceKey(place))
      return held === undefined ? nothing : { blobs: [...held.seeds.keys()], pieces: held.pieces }
    },
    walked: (place, pieces) => {
      const namespace = namespaceKey(place)
      const held = heldAt(namespace)
      held.pieces = pieces.size === 0 ? nothing.pieces : owned(packHashes([...pieces]))
      namespaces.resize(namespace, sizeOf(held))
    },
    fill: (place, blob) => {
      if (blob.digest === undefined) return blob
      const namespace = namespaceKey(place)
      if (blob.bytes !== undefined) {
        if (blob.bytes.byteLength >= WORTH_KEEPING) {
          const held = heldAt(namespace)
          const bytes = owned(blob.bytes)
          held.seeds.set(blob.digest, bytes, bytes.byteLength)
          namespaces.resize(namespace, sizeOf(held))
        }
        return blob
      }
      const bytes = namespaces.get(namespace)?.seeds.get(blob.digest)
      return bytes === undefined ? undefined : { ...blob, bytes }
    }
  }
}
