/**
 * Opening what a read brought, before anything else looks at it: with
 * `Encryption`, a checkpoint's sealed metadata, blobs, writes and the pieces
 * read with it (`Sealing`), a row that does not open failing the checkpoint
 * whole; without, a check that nothing read is sealed. Also keeps, for the
 * thread's next read, the pieces that opened.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type { CorruptedCheckpoint, IncompatibleFormat } from "../../CheckpointError.ts"
import type { BlobRow, StoredCheckpoint, WriteRow } from "../../StorageDriver.ts"
import { COMPRESSED, COMPRESSED_PIECE, decompress, isCompressed, textOf } from "../StorageFormat.ts"
import { corrupted, type Parts, unopened, unreadable } from "./Parts.ts"
import type { Tally } from "./Report.ts"
import * as Sealing from "./Sealing.ts"

/**
 * The pieces read with a checkpoint, by hash, opened; and why those that
 * could not be opened cannot be used.
 *
 * @since 0.1.0
 */
export interface Pieces {
  readonly readable: ReadonlyMap<string, Uint8Array>
  readonly unreadable: ReadonlyMap<string, string>
}

/**
 * No pieces: what writes read on their own are decoded with.
 *
 * @since 0.1.0
 */
export const noPieces: Pieces = { readable: new Map(), unreadable: new Map() }

/**
 * Opened pieces, and which were sealed (authenticated) or stored plain
 * (checked against their hash).
 *
 * @since 0.1.0
 */
export interface Opened extends Pieces {
  readonly sealed: ReadonlyMap<string, Uint8Array>
  readonly plain: ReadonlyMap<string, Uint8Array>
  /** Whether any was compressed (`StorageFormat.COMPRESSED_PIECE`): a process pinned below that level stops there. */
  readonly compressed: boolean
}

/**
 * A stored checkpoint with its rows opened.
 *
 * @since 0.1.0
 */
export interface OpenedCheckpoint extends Omit<StoredCheckpoint, "pieces"> {
  readonly pieces: Opened
}

/**
 * The read side's opening.
 *
 * @since 0.1.0
 */
export interface Open {
  /**
   * A stored checkpoint with its rows opened (a checkpoint that does not
   * open fails whole); `metadata: false` leaves its metadata as read, for a
   * delta-history walk, which reads none (the driver sends none).
   */
  readonly open: (
    stored: StoredCheckpoint,
    tally: Tally,
    options?: { readonly metadata: boolean }
  ) => Effect.Effect<OpenedCheckpoint, CorruptedCheckpoint | IncompatibleFormat>
  /** Writes read against the checkpoint at `place`, opened. */
  readonly openWrites: (
    place: Sealing.CheckpointPlace,
    writes: ReadonlyArray<WriteRow>,
    tally: Tally
  ) => Effect.Effect<Array<WriteRow>, CorruptedCheckpoint | IncompatibleFormat>
  /** Keeps what a read of `thread_id` brought for its next: pieces that opened, or that match their plain hash. */
  readonly keepRead: (thread_id: string, pieces: Opened) => void
}

/**
 * Pieces read, each compressed one decompressed when first asked for with
 * `get` (and kept), or moved to `unreadable` with what is wrong: a piece
 * this process holds already is taken from its memory, never from here, so
 * a read decompresses only what is new to it. Iterated, its values may
 * still be compressed: read them with `get`.
 */
class Texts extends Map<string, Uint8Array> {
  readonly #texts: Map<string, Uint8Array>
  readonly #unreadable: Map<string, string>
  /** `texts` and `unreadable` may be another's of the same read: what one decompressed, the other has. */
  constructor(
    stored: ReadonlyMap<string, Uint8Array>,
    texts: Map<string, Uint8Array>,
    unreadable: Map<string, string>
  ) {
    super(stored)
    this.#texts = texts
    this.#unreadable = unreadable
  }
  override get(key: string): Uint8Array | undefined {
    const bytes = super.get(key)
    if (bytes === undefined || !isCompressed(bytes)) return bytes
    const known = this.#texts.get(key)
    if (known !== undefined) return known
    const text = textOf(bytes)
    if (typeof text === "string") {
      this.#unreadable.set(key, `is damaged: ${text}`)
      return undefined
    }
    this.#texts.set(key, text)
    return text
  }
}

/** Opened pieces as their texts (see {@link Texts}); the same maps when none is compressed. */
const decompressed = (opened: Omit<Opened, "compressed">): Opened => {
  const some = (pieces: ReadonlyMap<string, Uint8Array>) => {
    for (const bytes of pieces.values()) if (isCompressed(bytes)) return true
    return false
  }
  // Sealed pieces are whole (see `StorageFormat.COMPRESSED_PIECE`).
  if (!some(opened.plain)) return { ...opened, compressed: false }
  const [texts, unreadable] = [new Map<string, Uint8Array>(), new Map(opened.unreadable)]
  const plain = new Texts(opened.plain, texts, unreadable)
  const readable = opened.sealed.size === 0
    ? plain
    : new Texts(new Map([...opened.sealed, ...opened.plain]), texts, unreadable)
  return { readable, unreadable, sealed: opened.sealed, plain, compressed: true }
}

/** What reading an encrypted checkpoint without encryption says. */
const NEEDS_KEYS = "it is encrypted: open the storage with encryption and the keys it was written with"

/**
 * The read side's opening, over the codec's parts.
 *
 * @since 0.1.0
 */
export const make = ({ format, sealing, sharing }: Parts): Open => {
  // Weak: keyed by a page's map of pieces, which goes with the page.
  const openedPieces = new WeakMap<ReadonlyMap<string, Uint8Array>, Opened>()

  /** The pieces read with a page (the same map for each of its checkpoints), opened once. */
  const openPieces = (pieces: ReadonlyMap<string, Uint8Array>, tally: Tally): Opened => {
    let found = openedPieces.get(pieces)
    if (found === undefined) {
      if (sealing === undefined) {
        found = decompressed({ ...noPieces, readable: pieces, sealed: noPieces.readable, plain: pieces })
      } else {
        const { plain, sealed, unreadable } = sealing.openPieces(pieces, tally)
        found = decompressed({
          readable: plain.size === 0 ? sealed : new Map([...sealed, ...plain]),
          unreadable,
          sealed,
          plain
        })
      }
      openedPieces.set(pieces, found)
    }
    return found
  }

  /**
   * A value as the decoder reads it: compressed text (`StorageFormat.COMPRESSED`)
   * as its `json`, what is wrong with it, or `IncompatibleFormat` for a
   * process pinned below its level; any other as it is.
   */
  const uncompressed = <A extends { readonly type: string; readonly bytes: Uint8Array | undefined }>(
    place: Sealing.CheckpointPlace,
    what: () => string,
    value: A
  ): Effect.Effect<A, CorruptedCheckpoint | IncompatibleFormat> => {
    if (value.type !== COMPRESSED) return Effect.succeed(value)
    const newer = unreadable(format, place, COMPRESSED)
    if (newer !== undefined) return Effect.fail(newer)
    const text = decompress(value.bytes ?? new Uint8Array())
    return typeof text === "string"
      ? Effect.fail(corrupted(place, `${what()} ${text}`))
      : Effect.succeed({ ...value, type: "json", bytes: text })
  }

  /** Keeps what a read of `thread_id` brought for its next: pieces that opened, or that match their plain hash. */
  const keepRead = (thread_id: string, pieces: Opened) => {
    sharing.keepRead(thread_id, pieces.sealed, true)
    sharing.keepRead(thread_id, pieces.plain)
  }

  /** Writes read against the checkpoint at `place`, opened. */
  const openWrites = (place: Sealing.CheckpointPlace, writes: ReadonlyArray<WriteRow>, tally: Tally) =>
    Effect.forEach(writes, (write) => {
      const what = () => `write ${write.idx} of task ${write.task_id}`
      const opened = sealing === undefined ? write : sealing.openWrite(place, write, tally)
      return typeof opened === "string"
        ? Effect.fail(unopened(format, place, `${what()} ${opened}`))
        : uncompressed(place, what, opened)
    })

  /**
   * A stored checkpoint with its rows opened: metadata, blobs, writes and the
   * pieces read with it (a checkpoint that does not open fails whole).
   */
  const open = Effect.fnUntraced(function*(
    stored: StoredCheckpoint,
    tally: Tally,
    options?: { readonly metadata: boolean }
  ) {
    const pieces = openPieces(stored.pieces, tally)
    const newer = pieces.compressed ? unreadable(format, stored.row, COMPRESSED_PIECE) : undefined
    if (newer !== undefined) return yield* Effect.fail(newer)
    if (sealing === undefined) {
      // Rows sealed by a storage with encryption on: say so, rather than that their type is unknown.
      // (Their types are the library's own; sealed metadata alone is not taken as a sign, its keys being
      // the caller's.)
      const sealed = (row: { readonly type: string }) => Sealing.isSealed(row.type)
      if (stored.blobs.some(sealed) || stored.writes.some(sealed)) {
        return yield* Effect.fail(corrupted(stored.row, NEEDS_KEYS))
      }
      return {
        ...stored,
        blobs: yield* Effect.forEach(
          stored.blobs,
          (blob) => uncompressed(stored.row, () => `channel "${blob.channel}"`, blob)
        ),
        writes: yield* openWrites(stored.row, stored.writes, tally),
        pieces
      } satisfies OpenedCheckpoint
    }
    const { row } = stored
    const metadata = options?.metadata === false ? { json: row.metadata } : sealing.openMetadata(row, tally)
    if (typeof metadata === "string") return yield* Effect.fail(unopened(format, row, metadata))
    const blobs: Array<BlobRow> = []
    for (const blob of stored.blobs) {
      const opened = sealing.openBlob(row, blob, tally)
      if (typeof opened === "string") {
        return yield* Effect.fail(unopened(format, row, `channel "${blob.channel}" ${opened}`))
      }
      blobs.push(yield* uncompressed(row, () => `channel "${blob.channel}"`, opened))
    }
    return {
      row: { ...row, metadata: metadata.json },
      blobs,
      writes: yield* openWrites(row, stored.writes, tally),
      pieces
    } satisfies OpenedCheckpoint
  })

  return { open, openWrites, keepRead }
}
