/**
 * Sealing and opening rows, one kind at a time: values (channel blobs and
 * pending writes, a shared list keeping its hashes readable) and pieces.
 * Opening answers a string saying what is wrong instead of the plaintext;
 * rows without a seal are read only with `allowPlaintext`, and counted in
 * the read's `Tally`.
 *
 * @since 0.1.0
 */
import type { ThreadNamespace } from "../../../Checkpoint.ts"
import type { BlobRow, Piece, SharedBase, WriteRow } from "../../../StorageDriver.ts"
import { isList, owned, pieceKey, SEALED_SUFFIX } from "../../StorageFormat.ts"
import * as Bounded from "../Bounded.ts"
import { isSealed, type Keyring, laterFrame, open, openList, seal, type Sealer, sealList, VERSION } from "./Frames.ts"
import type { ThreadKey } from "./Keys.ts"
import { blobPlace, type CheckpointPlace, piecePlace, writePlace } from "./Places.ts"

/** The bytes of pieces sealed lately, kept to be sent again without sealing them again. */
const KEPT_SEALED_PIECE_BYTES = 4 * 1024 * 1024

/**
 * What reads found unsealed (and were allowed to use).
 *
 * @since 0.1.0
 */
export interface Tally {
  plaintext: number
}

/**
 * What opening needs: the keyring, and whether unsealed rows may be read.
 *
 * @since 0.1.0
 */
export interface Opener {
  readonly keyring: Keyring
  readonly allowPlaintext: boolean
}

/**
 * The pieces read with some rows, opened: those that open (`sealed`), those
 * stored unsealed when allowed (`plain`), and why the others cannot be used.
 *
 * @since 0.1.0
 */
export interface OpenedPieces {
  readonly sealed: ReadonlyMap<string, Uint8Array>
  readonly plain: ReadonlyMap<string, Uint8Array>
  readonly unreadable: ReadonlyMap<string, string>
}

type Value = { readonly type: string; readonly bytes: Uint8Array | undefined }

/** A value's stored form: `type+sealed`, a list keeping its hashes readable. */
const sealValue = (sealer: Sealer, type: string, bytes: Uint8Array, at: Uint8Array) => ({
  type: type + SEALED_SUFFIX,
  bytes: isList(type) ? sealList(sealer, bytes, at) : seal(sealer, bytes, at)
})

/**
 * A stored value opened: its type and bytes, or a string saying what is
 * wrong. Unsealed values pass under `allowPlaintext`, counted.
 *
 * @since 0.1.0
 */
export const openValue = (
  opener: Opener,
  stored: Value,
  at: (type: string) => Uint8Array,
  tally: Tally
): Value | string => {
  // LangGraph's own savers mark a channel without a value with an `empty` row: nothing to seal.
  if (stored.type === "empty") return stored
  if (!isSealed(stored.type)) {
    if (!opener.allowPlaintext) return "is not encrypted (allowPlaintext is off)"
    tally.plaintext++
    return stored
  }
  if (stored.bytes === undefined) return "has lost its ciphertext"
  const type = stored.type.slice(0, -SEALED_SUFFIX.length)
  const opened = isList(type)
    ? openList(opener.keyring, stored.bytes, at(type))
    : open(opener.keyring, stored.bytes, at(type))
  return typeof opened === "string" ? opened : { type, bytes: opened }
}

/**
 * A channel's value sealed for its place (`empty` rows and rows without
 * bytes stay as they are).
 *
 * @since 0.1.0
 */
export const sealBlob = (key: ThreadKey, thread_id: string, checkpoint_ns: string, blob: BlobRow): BlobRow =>
  blob.bytes === undefined || blob.type === "empty" ? blob : {
    ...blob,
    ...sealValue(key, blob.type, blob.bytes, blobPlace(thread_id, checkpoint_ns, blob, blob.type))
  }

/** A sealed list's bases, opened (a sealed list only ever extends sealed ones of its own `type`). */
const openBase = (
  keyring: Keyring,
  location: ThreadNamespace,
  channel: string,
  type: string,
  base: SharedBase | undefined
): SharedBase | string | undefined => {
  if (base?.list === undefined) return base
  const list = openList(
    keyring,
    base.list,
    blobPlace(location.thread_id, location.checkpoint_ns, { channel, ...base, base: base.base }, type)
  )
  if (typeof list === "string") return `its base (version ${base.version}) ${list}`
  const deeper = openBase(keyring, location, channel, type, base.base)
  return typeof deeper === "string" ? deeper : { ...base, list, base: deeper }
}

/**
 * A channel's value opened, with the bases a read brought; a string saying
 * what is wrong.
 *
 * @since 0.1.0
 */
export const openBlob = (opener: Opener, location: ThreadNamespace, blob: BlobRow, tally: Tally): BlobRow | string => {
  const opened = openValue(
    opener,
    blob,
    (type) => blobPlace(location.thread_id, location.checkpoint_ns, blob, type),
    tally
  )
  if (typeof opened === "string") return opened
  if (!isSealed(blob.type)) return blob
  const base = openBase(opener.keyring, location, blob.channel, opened.type, blob.base)
  return typeof base === "string" ? base : { ...blob, ...opened, base }
}

/**
 * A pending write sealed for its place.
 *
 * @since 0.1.0
 */
export const sealWrite = (key: ThreadKey, at: CheckpointPlace, write: WriteRow): WriteRow => ({
  ...write,
  ...sealValue(key, write.type, write.bytes, writePlace(at, write, write.type))
})

/**
 * A pending write opened; a string saying what is wrong.
 *
 * @since 0.1.0
 */
export const openWrite = (opener: Opener, at: CheckpointPlace, write: WriteRow, tally: Tally): WriteRow | string => {
  const opened = openValue(opener, write, (type) => writePlace(at, write, type), tally)
  return typeof opened === "string" ? opened : { ...write, type: opened.type, bytes: opened.bytes! }
}

/**
 * A sealer of pieces. A new message's piece goes out twice (with its
 * pending write, then with the checkpoint): sealed once. Any sealing of a
 * piece opens the same.
 *
 * @since 0.1.0
 */
export const makePieceSealer = () => {
  const sealedPieces = Bounded.make<string, Uint8Array>({ budget: KEPT_SEALED_PIECE_BYTES, idleMs: Bounded.IDLE_MS })
  return (key: ThreadKey, piece: Piece): Piece => {
    const address = pieceKey(piece.hash)
    const known = `${key.id} ${address}`
    let bytes = sealedPieces.get(known)
    if (bytes === undefined) {
      bytes = owned(seal(key, piece.bytes, piecePlace(address)))
      sealedPieces.set(known, bytes, bytes.byteLength + known.length)
    }
    return { hash: piece.hash, bytes }
  }
}

/**
 * The pieces read with some rows (by `pieceKey`), opened. An unsealed piece
 * is JSON text, which never starts with the frame's version byte.
 *
 * @since 0.1.0
 */
export const openPieces = (
  opener: Opener,
  pieces: ReadonlyMap<string, Uint8Array>,
  tally: Tally
): OpenedPieces => {
  const sealed = new Map<string, Uint8Array>()
  const plain = new Map<string, Uint8Array>()
  const unreadable = new Map<string, string>()
  for (const [key, bytes] of pieces) {
    const later = laterFrame(bytes)
    if (later !== undefined) {
      unreadable.set(key, later)
      continue
    }
    if (bytes[0] !== VERSION) {
      if (opener.allowPlaintext) {
        tally.plaintext++
        plain.set(key, bytes)
      } else unreadable.set(key, "is not encrypted (allowPlaintext is off)")
      continue
    }
    const opened = open(opener.keyring, bytes, piecePlace(key))
    if (typeof opened === "string") unreadable.set(key, opened)
    else sealed.set(key, opened)
  }
  return { sealed, plain, unreadable }
}
