/**
 * Sealing: the codec's encryption stage, between the serializer's bytes and
 * the rows (on when the `Encryption` service is provided).
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
import { Metric } from "effect"
import { createHmac } from "node:crypto"
import type { BlobRow, CheckpointRow, Piece, SharedBase, ThreadRows, WriteRow } from "../StorageDriver.ts"
import { type DataKey, type Encryption, isKeyId, SEALED_METADATA } from "./Encryption.ts"
import * as Sharing from "./Sharing.ts"

/**
 * Counts rows read without a seal under `allowPlaintext`.
 *
 * @since 0.1.0
 */
export const plaintextRows = Metric.counter("langgraph_checkpoint_plaintext_rows", {
  description: "Rows read without encryption while allowPlaintext is on",
  incremental: true
})

const VERSION = 1
const SUFFIX = Sharing.SEALED_SUFFIX
const UNIT = Sharing.HASH_BYTES
const utf8 = new TextEncoder()
const text = new TextDecoder()

/** Whether a stored `type` is a sealed one. */
export const isSealed = (type: string): boolean => type.endsWith(SUFFIX)

/**
 * The place a row is bound to, as additional data: a JSON array.
 */
const place = (...parts: ReadonlyArray<string | number>): Uint8Array => utf8.encode(JSON.stringify(parts))

const blobPlace = (
  thread_id: string,
  checkpoint_ns: string,
  blob: { readonly channel: string; readonly version: string; readonly base?: Omit<SharedBase, "list"> | undefined },
  type: string
) =>
  place(
    "blob",
    thread_id,
    checkpoint_ns,
    blob.channel,
    blob.version,
    type,
    blob.base?.version ?? "",
    blob.base?.keep ?? 0
  )

/**
 * A checkpoint's place: where its metadata and pending writes belong.
 *
 * @since 0.1.0
 */
export interface CheckpointPlace {
  readonly thread_id: string
  readonly checkpoint_ns: string
  readonly checkpoint_id: string
}

const writePlace = (at: CheckpointPlace, write: Omit<WriteRow, "bytes" | "type">, type: string) =>
  place(
    "write",
    at.thread_id,
    at.checkpoint_ns,
    at.checkpoint_id,
    write.task_id,
    write.task_path,
    write.idx,
    write.channel,
    type
  )

const piecePlace = (address: string) => place("piece", Buffer.from(address, "latin1").toString("hex"))

/** JSON text with every object's keys sorted: equal for equal JSON values, however stored. */
const canonical = (value: unknown): string => {
  if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? "null"
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  const record = value as Record<string, unknown>
  const keys = Object.keys(record).filter((key) => record[key] !== undefined).sort()
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(record[key])}`).join(",")}}`
}

const metadataPlace = (row: CheckpointRow, plain: Record<string, unknown>) =>
  place("metadata", row.thread_id, row.checkpoint_ns, row.checkpoint_id, canonical(plain), canonical(row.checkpoint))

const concat = (...parts: ReadonlyArray<Uint8Array>): Uint8Array => Buffer.concat(parts)

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** What reads found unsealed (and were allowed to use). */
export interface Tally {
  plaintext: number
}

/**
 * The key a thread's new rows are sealed under, with what makes its
 * addresses.
 *
 * @since 0.1.0
 */
export interface ThreadKey {
  readonly id: string
  readonly key: DataKey
  readonly head: Uint8Array
  readonly address: Sharing.Address
}

/** Thread keys kept per process (each costs a derivation). */
const KEPT_THREAD_KEYS = 1000
/** Pieces sealed lately, kept to be sent again without sealing them again. */
const KEPT_SEALED_PIECES = 256

/**
 * The sealing of one storage service over the `Encryption` service.
 *
 * @since 0.1.0
 */
export const make = (encryption: Encryption["Service"]) => {
  const { allowPlaintext, cipher, plaintextMetadata } = encryption
  const heads = new Map<string, Uint8Array>()
  const headOf = (keyId: string) => {
    let head = heads.get(keyId)
    if (head === undefined) {
      const id = utf8.encode(keyId)
      heads.set(keyId, head = concat(Uint8Array.of(VERSION, id.byteLength), id))
    }
    return head
  }

  const threadKeys = new Map<string, ThreadKey>()

  /** The key `thread_id`'s rows are sealed under; a string when the ring does not hold it. */
  const threadKey = (thread_id: string): ThreadKey | string => {
    const id = cipher.keyFor(thread_id)
    const cacheKey = JSON.stringify([id, thread_id])
    const known = threadKeys.get(cacheKey)
    if (known !== undefined) return known
    if (!isKeyId(id)) return `its key id ${JSON.stringify(id)} is not 1-64 letters, digits or ._:-`
    const key = cipher.key(id)
    if (key === undefined) return `its key "${id}" is not in the keyring`
    // Addresses are keyed per thread: equal elements of two threads get unrelated addresses.
    const addressKey = key.mac(utf8.encode(`thread ${thread_id}`))
    const addresses = new WeakMap<Sharing.Element, string>()
    const found: ThreadKey = {
      id,
      key,
      head: headOf(id),
      address: (element) => {
        let address = addresses.get(element)
        if (address === undefined) {
          address = createHmac("sha256", addressKey).update(element.key, "latin1").digest().toString(
            "latin1",
            0,
            Sharing.HASH_BYTES
          )
          addresses.set(element, address)
        }
        return address
      }
    }
    threadKeys.set(cacheKey, found)
    if (threadKeys.size > KEPT_THREAD_KEYS) threadKeys.delete(threadKeys.keys().next().value!)
    return found
  }

  const seal = (key: ThreadKey, plaintext: Uint8Array, at: Uint8Array): Uint8Array =>
    concat(key.head, key.key.seal(plaintext, concat(key.head, at)))

  /** The plaintext of a frame bound to `at`; a string saying why there is none. */
  const open = (frame: Uint8Array, at: Uint8Array): Uint8Array | string => {
    if (frame.byteLength < 2 || frame[0] !== VERSION) return "is not a ciphertext this library writes"
    const end = 2 + frame[1]!
    if (frame.byteLength < end) return "is truncated"
    const keyId = text.decode(frame.subarray(2, end))
    const key = cipher.key(keyId)
    if (key === undefined) return `is sealed under the key "${keyId}", which the keyring does not hold`
    return key.open(frame.subarray(end), concat(frame.subarray(0, end), at)) ??
      "does not decrypt (altered, truncated, or moved from another place)"
  }

  /** A list's hashes, then a trailer of whole units: the frame, zeros, and the frame's length. */
  const sealList = (key: ThreadKey, hashes: Uint8Array, at: Uint8Array): Uint8Array => {
    const frame = seal(key, new Uint8Array(), concat(at, hashes))
    const trailer = new Uint8Array(Math.ceil((frame.byteLength + 1) / UNIT) * UNIT)
    trailer.set(frame)
    trailer[trailer.byteLength - 1] = frame.byteLength
    return concat(hashes, trailer)
  }

  const openList = (bytes: Uint8Array, at: Uint8Array): Uint8Array | string => {
    const length = bytes.at(-1) ?? 0
    const trailer = Math.ceil((length + 1) / UNIT) * UNIT
    if (length === 0 || trailer > bytes.byteLength) return "is truncated"
    const hashes = bytes.subarray(0, bytes.byteLength - trailer)
    const opened = open(bytes.subarray(hashes.byteLength, hashes.byteLength + length), concat(at, hashes))
    return typeof opened === "string" ? opened : hashes
  }

  /** A value's stored form: `type+sealed`, a list keeping its hashes readable. */
  const sealValue = (key: ThreadKey, type: string, bytes: Uint8Array, at: Uint8Array) => ({
    type: type + SUFFIX,
    bytes: type === Sharing.SHARED ? sealList(key, bytes, at) : seal(key, bytes, at)
  })

  /**
   * A stored value opened: its type and bytes, or a string saying what is
   * wrong. Unsealed values pass under `allowPlaintext`, counted.
   */
  const openValue = (
    stored: { readonly type: string; readonly bytes: Uint8Array | undefined },
    at: (type: string) => Uint8Array,
    tally: Tally
  ): { readonly type: string; readonly bytes: Uint8Array | undefined } | string => {
    // LangGraph's own savers mark a channel without a value with an `empty` row: nothing to seal.
    if (stored.type === "empty") return stored
    if (!isSealed(stored.type)) {
      if (!allowPlaintext) return "is not encrypted (allowPlaintext is off)"
      tally.plaintext++
      return stored
    }
    if (stored.bytes === undefined) return "has lost its ciphertext"
    const type = stored.type.slice(0, -SUFFIX.length)
    const opened = type === Sharing.SHARED ? openList(stored.bytes, at(type)) : open(stored.bytes, at(type))
    return typeof opened === "string" ? opened : { type, bytes: opened }
  }

  const sealBlob = (key: ThreadKey, thread_id: string, checkpoint_ns: string, blob: BlobRow): BlobRow =>
    blob.bytes === undefined || blob.type === "empty" ? blob : {
      ...blob,
      ...sealValue(key, blob.type, blob.bytes, blobPlace(thread_id, checkpoint_ns, blob, blob.type))
    }

  /** A sealed list's bases, opened (a sealed list only ever extends sealed ones). */
  const openBase = (
    location: { readonly thread_id: string; readonly checkpoint_ns: string },
    channel: string,
    base: SharedBase | undefined
  ): SharedBase | string | undefined => {
    if (base?.list === undefined) return base
    const list = openList(
      base.list,
      blobPlace(location.thread_id, location.checkpoint_ns, { channel, ...base, base: base.base }, Sharing.SHARED)
    )
    if (typeof list === "string") return `its base (version ${base.version}) ${list}`
    const deeper = openBase(location, channel, base.base)
    return typeof deeper === "string" ? deeper : { ...base, list, base: deeper }
  }

  const openBlob = (
    location: { readonly thread_id: string; readonly checkpoint_ns: string },
    blob: BlobRow,
    tally: Tally
  ): BlobRow | string => {
    const opened = openValue(blob, (type) => blobPlace(location.thread_id, location.checkpoint_ns, blob, type), tally)
    if (typeof opened === "string") return opened
    if (!isSealed(blob.type)) return blob
    const base = openBase(location, blob.channel, blob.base)
    return typeof base === "string" ? base : { ...blob, ...opened, base }
  }

  const sealWrite = (key: ThreadKey, at: CheckpointPlace, write: WriteRow): WriteRow => ({
    ...write,
    ...sealValue(key, write.type, write.bytes, writePlace(at, write, write.type))
  })

  const openWrite = (at: CheckpointPlace, write: WriteRow, tally: Tally): WriteRow | string => {
    const opened = openValue(write, (type) => writePlace(at, write, type), tally)
    return typeof opened === "string" ? opened : { ...write, type: opened.type, bytes: opened.bytes! }
  }

  // A new message's piece goes out twice (with its pending write, then with
  // the checkpoint): sealed once. Any sealing of a piece opens the same.
  const sealedPieces = new Map<string, Uint8Array>()

  const sealPiece = (key: ThreadKey, piece: Piece): Piece => {
    const address = Sharing.pieceKey(piece.hash)
    const known = `${key.id} ${address}`
    let bytes = sealedPieces.get(known)
    if (bytes === undefined) {
      bytes = seal(key, piece.bytes, piecePlace(address))
      sealedPieces.set(known, bytes)
      if (sealedPieces.size > KEPT_SEALED_PIECES) sealedPieces.delete(sealedPieces.keys().next().value!)
    }
    return { hash: piece.hash, bytes }
  }

  /**
   * The pieces read with some rows, opened: those that open (`sealed`),
   * those stored unsealed when allowed (`plain`), and why the others cannot
   * be used. An unsealed piece is JSON text, which never starts with the
   * frame's version byte.
   */
  const openPieces = (pieces: ReadonlyMap<string, Uint8Array>, tally: Tally) => {
    const sealed = new Map<string, Uint8Array>()
    const plain = new Map<string, Uint8Array>()
    const unreadable = new Map<string, string>()
    for (const [key, bytes] of pieces) {
      if (bytes[0] !== VERSION) {
        if (allowPlaintext) {
          tally.plaintext++
          plain.set(key, bytes)
        } else unreadable.set(key, "is not encrypted (allowPlaintext is off)")
        continue
      }
      const opened = open(bytes, piecePlace(key))
      if (typeof opened === "string") unreadable.set(key, opened)
      else sealed.set(key, opened)
    }
    return { sealed, plain, unreadable }
  }

  /**
   * Metadata as stored: the plaintext keys as JSON, the rest sealed under
   * `$sealed`. Works on the JSON text the serializer wrote, so what reads
   * back is that very text's value.
   */
  const sealMetadata = (key: ThreadKey, row: CheckpointRow, json: string): string => {
    const all = JSON.parse(json) as Record<string, unknown>
    const plain: Record<string, unknown> = {}
    const secret: Record<string, unknown> = {}
    for (const name of Object.keys(all)) (plaintextMetadata.has(name) ? plain : secret)[name] = all[name]
    return sealSecret(key, row, plain, utf8.encode(JSON.stringify(secret)))
  }

  const sealSecret = (key: ThreadKey, row: CheckpointRow, plain: Record<string, unknown>, secret: Uint8Array) =>
    JSON.stringify({
      ...plain,
      [SEALED_METADATA]: Buffer.from(seal(key, secret, metadataPlace(row, plain))).toString("base64")
    })

  /** The plaintext keys and the sealed part's JSON bytes; a string saying what is wrong. */
  const openSecret = (row: CheckpointRow, tally: Tally) => {
    let stored: unknown
    try {
      stored = JSON.parse(row.metadata)
    } catch {
      return "metadata is not JSON"
    }
    if (!isRecord(stored) || typeof stored[SEALED_METADATA] !== "string") {
      if (!allowPlaintext) return "metadata is not encrypted (allowPlaintext is off)"
      tally.plaintext++
      return { plain: isRecord(stored) ? stored : {}, secret: undefined }
    }
    const { [SEALED_METADATA]: sealed, ...plain } = stored
    const secret = open(Buffer.from(sealed as string, "base64"), metadataPlace(row, plain))
    return typeof secret === "string" ? `metadata ${secret}` : { plain, secret }
  }

  /** Metadata's whole JSON text, opened; a string saying what is wrong. */
  const openMetadata = (row: CheckpointRow, tally: Tally): { readonly json: string } | string => {
    const opened = openSecret(row, tally)
    if (typeof opened === "string") return opened
    if (opened.secret === undefined) return { json: row.metadata }
    let secret: unknown
    try {
      secret = JSON.parse(text.decode(opened.secret))
    } catch {
      return "metadata's sealed part is not JSON"
    }
    return { json: JSON.stringify({ ...opened.plain, ...(isRecord(secret) ? secret : {}) }) }
  }

  /**
   * A thread's rows, sealed for `target` (a copy's thread, or the same
   * thread under its current key). Pieces keep their address when they stay
   * in their sealed thread, so lists written concurrently under the old
   * addresses still find them; others get the target's, and lists follow.
   */
  const reseal = (rows: ThreadRows, target: string): ThreadRows | string => {
    const key = threadKey(target)
    if (typeof key === "string") return key
    const tally: Tally = { plaintext: 0 }
    const moved = new Map<string, string>()
    const pieces: Array<Piece> = []
    for (const piece of rows.pieces) {
      const from = Sharing.pieceKey(piece.hash)
      const opened = openPieces(new Map([[from, piece.bytes]]), tally)
      const bytes = opened.sealed.get(from) ?? opened.plain.get(from)
      if (bytes === undefined) return `a piece ${opened.unreadable.get(from)}`
      const to = opened.sealed.has(from) && target === rows.thread_id
        ? from
        : key.address({ key: Sharing.hashOf(bytes), bytes })
      moved.set(from, to)
      pieces.push(sealPiece(key, { hash: Buffer.from(to, "latin1"), bytes }))
    }
    /** An opened value for its new place: a list's hashes become its pieces' new addresses. */
    const move = <A extends { readonly type: string; readonly bytes: Uint8Array | undefined }>(
      opened: A | string
    ): A | string => {
      if (typeof opened === "string" || opened.type !== Sharing.SHARED || opened.bytes === undefined) return opened
      const keys: Array<string> = []
      for (const from of Sharing.references(opened)) {
        const to = moved.get(from)
        if (to === undefined) return "refers to a piece that is missing"
        keys.push(to)
      }
      return { ...opened, bytes: Buffer.from(keys.join(""), "latin1") }
    }
    const blobs: Array<ThreadRows["blobs"][number]> = []
    for (const blob of rows.blobs) {
      const opened = move(
        openValue(blob, (type) => blobPlace(rows.thread_id, blob.checkpoint_ns, blob, type), tally)
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
      const opened = move(openWrite({ ...write, thread_id: rows.thread_id }, write, tally))
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
      const opened = openSecret(row, tally)
      if (typeof opened === "string") return `checkpoint ${row.checkpoint_id}: ${opened}`
      const copy = { ...row, thread_id: target }
      checkpoints.push({
        ...copy,
        metadata: opened.secret === undefined
          ? sealMetadata(key, copy, row.metadata)
          : sealSecret(key, copy, opened.plain, opened.secret)
      })
    }
    return { ...rows, thread_id: target, checkpoints, blobs, writes, pieces }
  }

  /** Whether every row of a thread is sealed under the thread's current key. */
  const isCurrent = (rows: ThreadRows): boolean => {
    const key = threadKey(rows.thread_id)
    if (typeof key === "string") return false
    const under = (frame: Uint8Array) => Buffer.from(frame.subarray(0, key.head.byteLength)).equals(key.head)
    const listFrame = (bytes: Uint8Array) => {
      const length = bytes.at(-1) ?? 0
      const start = bytes.byteLength - Math.ceil((length + 1) / UNIT) * UNIT
      return start < 0 ? new Uint8Array() : bytes.subarray(start)
    }
    const valueUnder = (row: { readonly type: string; readonly bytes: Uint8Array | undefined }) =>
      row.bytes === undefined ||
      (isSealed(row.type) && under(row.type === Sharing.SHARED + SUFFIX ? listFrame(row.bytes) : row.bytes))
    return rows.pieces.every((piece) => under(piece.bytes)) &&
      rows.blobs.every(valueUnder) &&
      rows.writes.every(valueUnder) &&
      rows.checkpoints.every((row) => {
        const sealed = (JSON.parse(row.metadata) as Record<string, unknown>)[SEALED_METADATA]
        return typeof sealed === "string" && under(Buffer.from(sealed, "base64"))
      })
  }

  return {
    threadKey,
    sealBlob,
    openBlob,
    sealWrite,
    openWrite,
    sealPiece,
    openPieces,
    sealMetadata,
    openMetadata,
    reseal,
    isCurrent,
    /** Metadata keys `list` can filter on. */
    plaintextMetadata
  }
}

/**
 * @since 0.1.0
 */
export type Sealing = ReturnType<typeof make>
