/**
 * Sealing: the codec's encryption stage, between the serializer's bytes and
 * the rows (on when the `Encryption` service is provided). This module is
 * its face, a short `make` over its rooms: frames (`sealing/Frames.ts`, the
 * byte layout, pure), places (`sealing/Places.ts`, what each row is bound
 * to, pure), thread keys and addresses (`sealing/Keys.ts`), rows
 * (`sealing/Rows.ts`), metadata (`sealing/Metadata.ts`) and resealing a
 * whole thread (`sealing/Reseal.ts`).
 *
 * Every ciphertext is a frame: a version byte, the key id (length, then
 * UTF-8), then the cipher's output. Its additional authenticated data is the
 * frame's header and the row's *place*, so a row moved to another thread,
 * namespace, checkpoint, channel, version, task or piece fails to open:
 *
 * - a value (blob or pending write): type `<type>+sealed`, its bytes a frame
 *   bound to (thread, namespace, channel, version, type, base, keep) or
 *   (thread, namespace, checkpoint, task, path, index, channel, type);
 * - a shared list: its hashes stay readable (the database finds pieces by
 *   them), followed by a trailer of whole 16-byte units holding a frame that
 *   seals nothing and authenticates the hashes with the place;
 * - a piece: a frame bound to its address, which is a keyed hash
 *   (HMAC-SHA-256 under a key derived from the thread's key and id) of the
 *   element's plain hash, so addresses reveal nothing checkable about
 *   content and differ between threads;
 * - metadata: the keys declared plaintext stay JSON (filterable); the others
 *   are sealed under `$sealed`, bound to the checkpoint, the plaintext keys
 *   and the checkpoint's header (its channel versions).
 *
 * Opening answers a string saying what is wrong instead of the plaintext;
 * rows without a seal are read only with `allowPlaintext`, and counted.
 *
 * @since 0.1.0
 */
import type { ThreadNamespace } from "../../Checkpoint.ts"
import type { Encryption } from "../../Encryption.ts"
import type { BlobRow, CheckpointRow, Piece, ThreadRows, WriteRow } from "../../StorageDriver.ts"
import { makeThreadKeys, type ThreadKey } from "./sealing/Keys.ts"
import * as Metadata from "./sealing/Metadata.ts"
import type { CheckpointPlace } from "./sealing/Places.ts"
import * as Reseal from "./sealing/Reseal.ts"
import * as Rows from "./sealing/Rows.ts"

/** Rooms' names, as they were exported here before they had rooms of their own. */
export { isSealed } from "./sealing/Frames.ts"
export type { ThreadKey } from "./sealing/Keys.ts"
export type { CheckpointPlace } from "./sealing/Places.ts"
export type { OpenedPieces, Tally } from "./sealing/Rows.ts"

/**
 * The sealing of one storage service: rows sealed for their place on the
 * way in, opened (or said to be wrong) on the way out.
 *
 * @since 0.1.0
 */
export interface Sealing {
  /** The key `thread_id`'s new rows are sealed under; a string when the keyring does not hold it. */
  readonly threadKey: (thread_id: string) => ThreadKey | string
  /** A channel's value sealed for its place. */
  readonly sealBlob: (key: ThreadKey, thread_id: string, checkpoint_ns: string, blob: BlobRow) => BlobRow
  /** A channel's value opened, with the bases read with it; a string saying what is wrong. */
  readonly openBlob: (location: ThreadNamespace, blob: BlobRow, tally: Rows.Tally) => BlobRow | string
  /** A pending write sealed for its checkpoint. */
  readonly sealWrite: (key: ThreadKey, at: CheckpointPlace, write: WriteRow) => WriteRow
  /** A pending write opened; a string saying what is wrong. */
  readonly openWrite: (at: CheckpointPlace, write: WriteRow, tally: Rows.Tally) => WriteRow | string
  /** A piece sealed for its address (a piece sealed lately is not sealed again). */
  readonly sealPiece: (key: ThreadKey, piece: Piece) => Piece
  /** The pieces read with some rows, opened: sealed, stored plain (when allowed), and why others cannot be used. */
  readonly openPieces: (pieces: ReadonlyMap<string, Uint8Array>, tally: Rows.Tally) => Rows.OpenedPieces
  /** Metadata as stored from the serializer's JSON text: plaintext keys as JSON, the rest sealed. */
  readonly sealMetadata: (key: ThreadKey, row: CheckpointRow, json: string) => string
  /** Metadata's whole JSON text, opened; a string saying what is wrong. */
  readonly openMetadata: (row: CheckpointRow, tally: Rows.Tally) => { readonly json: string } | string
  /** A thread's rows sealed for `target` (a copy, or the same thread under its current key); or what is wrong. */
  readonly reseal: (rows: ThreadRows, target: string) => ThreadRows | string
  /** Whether every row of a thread is sealed under the thread's current key. */
  readonly isCurrent: (rows: ThreadRows) => boolean
  /** Metadata keys `list` can filter on. */
  readonly plaintextMetadata: ReadonlySet<string>
}

/**
 * The sealing of one storage service over the `Encryption` service.
 *
 * @since 0.1.0
 */
export const make = (encryption: Encryption["Service"]): Sealing => {
  const { allowPlaintext, cipher, plaintextMetadata } = encryption
  const threadKey = makeThreadKeys(cipher)
  const sealPiece = Rows.makePieceSealer()
  const opener: Reseal.Resealer = {
    keyring: (keyId) => cipher.key(keyId),
    allowPlaintext,
    threadKey,
    sealPiece,
    plaintextMetadata
  }
  return {
    threadKey,
    sealBlob: Rows.sealBlob,
    openBlob: (location, blob, tally) => Rows.openBlob(opener, location, blob, tally),
    sealWrite: Rows.sealWrite,
    openWrite: (at, write, tally) => Rows.openWrite(opener, at, write, tally),
    sealPiece,
    openPieces: (pieces, tally) => Rows.openPieces(opener, pieces, tally),
    sealMetadata: (key, row, json) => Metadata.sealMetadata(key, plaintextMetadata, row, json),
    openMetadata: (row, tally) => Metadata.openMetadata(opener, row, tally),
    reseal: (rows, target) => Reseal.reseal(opener, rows, target),
    isCurrent: (rows) => {
      const key = threadKey(rows.thread_id)
      return typeof key !== "string" && Reseal.allUnder(key, rows)
    },
    plaintextMetadata
  }
}
