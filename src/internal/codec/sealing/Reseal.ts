/**
 * Resealing a thread: its rows opened and sealed again for another place
 * (a copy's thread) or under the thread's current key (a key rotation), and
 * the check that a thread needs none.
 *
 * @since 0.1.0
 */
import { SEALED_METADATA } from "../../../Encryption.ts"
import type { CheckpointRow, Piece, ThreadRows } from "../../../StorageDriver.ts"
import { compose, derived, hashOf, isList, pieceKey, references, SEALED_SUFFIX, textOf } from "../../StorageFormat.ts"
import { isSealed, isUnder, listTrailer } from "./Frames.ts"
import type { ThreadKey } from "./Keys.ts"
import { openSecret, sealMetadata, sealSecret } from "./Metadata.ts"
import { blobPlace } from "./Places.ts"
import { type Opener, openPieces, openValue, openWrite, sealBlob, sealWrite, type Tally } from "./Rows.ts"

/**
 * What resealing needs beside opening: the thread keys, the piece sealer
 * and the metadata keys kept plaintext.
 *
 * @since 0.1.0
 */
export interface Resealer extends Opener {
  readonly threadKey: (thread_id: string) => ThreadKey | string
  readonly sealPiece: (key: ThreadKey, piece: Piece) => Piece
  readonly plaintextMetadata: ReadonlySet<string>
}

type Value = { readonly type: string; readonly bytes: Uint8Array | undefined }

/**
 * A thread's pieces sealed for `target`, with each old address's new one.
 * Pieces keep their address when they stay in their sealed thread, so lists
 * written concurrently under the old addresses still find them; others get
 * the target's. A derived piece (never sealed) is sealed as the text it
 * reads back as, a piece like any other.
 */
const resealPieces = (resealer: Resealer, key: ThreadKey, rows: ThreadRows, target: string, tally: Tally) => {
  const opened = new Map<string, { readonly bytes: Uint8Array; readonly sealed: boolean }>()
  for (const piece of rows.pieces) {
    const from = pieceKey(piece.hash)
    const found = openPieces(resealer, new Map([[from, piece.bytes]]), tally)
    const stored = found.sealed.get(from) ?? found.plain.get(from)
    if (stored === undefined) return `a piece ${found.unreadable.get(from)}`
    // Sealed, a piece is whole (see `StorageFormat.COMPRESSED_PIECE`).
    const bytes = textOf(stored)
    if (typeof bytes === "string") return `a piece: ${bytes}`
    opened.set(from, { bytes, sealed: found.sealed.has(from) })
  }
  const moved = new Map<string, string>()
  const emitted = new Set<string>()
  const pieces: Array<Piece> = []
  for (const [from, { bytes, sealed }] of opened) {
    const derivation = derived(bytes)
    if (typeof derivation === "string") return `a piece: ${derivation}`
    const base = derivation === undefined ? undefined : opened.get(derivation.base)
    if (derivation !== undefined && base === undefined) return "a derived piece extends a piece that is missing"
    const text = derivation === undefined || base === undefined ? bytes : compose(derivation, base.bytes)
    if (typeof text === "string") return `a piece: ${text}`
    const to = sealed && target === rows.thread_id ? from : key.address({ key: hashOf(text), bytes: text })
    // A derived piece and a plain one may read back as the same text: one sealed piece holds it.
    if (!emitted.has(to)) pieces.push(resealer.sealPiece(key, { hash: Buffer.from(to, "latin1"), bytes: text }))
    emitted.add(to)
    moved.set(from, to)
  }
  return { moved, pieces }
}

/** An opened value for its new place: a list's hashes become its pieces' new addresses. */
const move = <A extends Value>(moved: ReadonlyMap<string, string>, opened: A | string): A | string => {
  if (typeof opened === "string" || !isList(opened.type) || opened.bytes === undefined) return opened
  const keys: Array<string> = []
  for (const from of references(opened)) {
    const to = moved.get(from)
    if (to === undefined) return "refers to a piece that is missing"
    keys.push(to)
  }
  return { ...opened, bytes: Buffer.from(keys.join(""), "latin1") }
}

/**
 * A thread's rows, sealed for `target` (a copy's thread, or the same thread
 * under its current key); a string saying what is wrong.
 *
 * @since 0.1.0
 */
export const reseal = (resealer: Resealer, rows: ThreadRows, target: string): ThreadRows | string => {
  const key = resealer.threadKey(target)
  if (typeof key === "string") return key
  const tally: Tally = { plaintext: 0 }
  const resealed = resealPieces(resealer, key, rows, target, tally)
  if (typeof resealed === "string") return resealed
  const { moved, pieces } = resealed
  const blobs: Array<ThreadRows["blobs"][number]> = []
  for (const blob of rows.blobs) {
    const opened = move(
      moved,
      openValue(resealer, blob, (type) => blobPlace(rows.thread_id, blob.checkpoint_ns, blob, type), tally)
    )
    if (typeof opened === "string") {
      return `the value of channel "${blob.channel}" at version ${blob.version} ${opened}`
    }
    blobs.push({
      ...sealBlob(key, target, blob.checkpoint_ns, { ...blob, ...opened }),
      checkpoint_ns: blob.checkpoint_ns
    })
  }
  const writes: Array<ThreadRows["writes"][number]> = []
  for (const write of rows.writes) {
    const opened = move(moved, openWrite(resealer, { ...write, thread_id: rows.thread_id }, write, tally))
    if (typeof opened === "string") {
      return `write ${write.idx} of task ${write.task_id} on checkpoint ${write.checkpoint_id} ${opened}`
    }
    const at = { ...write, thread_id: target }
    writes.push({
      ...sealWrite(key, at, opened),
      checkpoint_ns: write.checkpoint_ns,
      checkpoint_id: write.checkpoint_id
    })
  }
  const checkpoints: Array<CheckpointRow> = []
  for (const row of rows.checkpoints) {
    const opened = openSecret(resealer, row, tally)
    if (typeof opened === "string") return `checkpoint ${row.checkpoint_id}: ${opened}`
    const copy = { ...row, thread_id: target }
    checkpoints.push({
      ...copy,
      metadata: opened.secret === undefined
        ? sealMetadata(key, resealer.plaintextMetadata, copy, row.metadata)
        : sealSecret(key, copy, opened.plain, opened.secret)
    })
  }
  return { ...rows, thread_id: target, checkpoints, blobs, writes, pieces }
}

/**
 * Whether every row of a thread is sealed under `key`.
 *
 * @since 0.1.0
 */
export const allUnder = (key: ThreadKey, rows: ThreadRows): boolean => {
  const under = (frame: Uint8Array) => isUnder(frame, key.head)
  const valueUnder = (row: Value) =>
    row.bytes === undefined ||
    (isSealed(row.type) && under(isList(row.type.slice(0, -SEALED_SUFFIX.length)) ? listTrailer(row.bytes) : row.bytes))
  return rows.pieces.every((piece) => under(piece.bytes)) &&
    rows.blobs.every(valueUnder) &&
    rows.writes.every(valueUnder) &&
    rows.checkpoints.every((row) => {
      const sealed = (JSON.parse(row.metadata) as Record<string, unknown>)[SEALED_METADATA]
      return typeof sealed === "string" && under(Buffer.from(sealed, "base64"))
    })
}
