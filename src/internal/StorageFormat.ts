/**
 * The storage format of stored rows, and nothing else: the stored types
 * (shared, framed and record lists, compressed values, derived and
 * compressed pieces, headers without their id), the hash of a piece and its
 * key, how a list's hashes are packed, which pieces a row refers to, and how
 * deep bases go. The level each encoding belongs to is `FormatLevel`'s
 * (`LEVELS`). Drivers and the inspector read stored rows through this module
 * alone, so they never load the codec (LangChain's message classes, the
 * serializer); it is pure and has no state. It lives beside
 * `StorageDriver.ts`, beneath the codec and the drivers alike, so that no
 * driver imports anything from `codec/`.
 *
 * @since 0.1.0
 */
import { hash } from "node:crypto"
import { constants, zstdCompressSync, zstdDecompressSync } from "node:zlib"
import type { Piece, SharedBase } from "../StorageDriver.ts"

/**
 * The storage `type` of a shared list (format 1). Its bytes are the
 * 16-byte hashes of its own entries; it reads back as a `json` value.
 *
 * @since 0.1.0
 */
export const SHARED = "shared-json/1"

/**
 * The storage `type` of a framed list (format 1): a value written as one
 * array inside some JSON text, a `DeltaSnapshot` or an object whose last
 * property is the array (a graph's input, `{ messages: [...] }`). Its bytes
 * are hashes as a shared list's, and its first entry is the *frame*: a piece
 * holding the JSON array `[before, after]` of the texts around the array,
 * stored once per thread like any piece. It reads back as the `json` value
 * `before` + the array + `after`.
 *
 * @since 0.1.0
 */
export const FRAMED = "shared-json-framed/1"

/**
 * The storage `type` of a record list (format 4): a plain object whose
 * values are objects or long strings (a `files` map a node returns whole
 * each turn, a dict of tool results), stored as a list of its entries. Each
 * entry is a piece holding the text of one property as the object's text
 * holds it, `"key":value`; the list's bytes are hashes as a shared list's,
 * and it may extend a base likewise, so a record that gains or changes one
 * property stores that property. It reads back as the `json` value `{` +
 * the entries joined by `,` + `}` (see {@link record}).
 *
 * @since 0.4.0
 */
export const RECORD = "shared-json-record/1"

/**
 * A derived piece (format 3): a piece stored as another piece of its thread
 * (its *base*, a plain piece) with one span replaced, for an element that
 * differs from an element already stored by a few bytes: a message LangGraph
 * gave an id in place after its task wrote it, above all. Its bytes are
 * {@link DERIVED_MARK}, the base's 16-byte hash, then (LEB128 varints) the
 * offset of the span in the base and its length, then the bytes that
 * replace it; its hash is that of these bytes, as any piece's. It reads
 * back as the base's text with the span replaced (see {@link derived},
 * {@link compose}). Never sealed (an encrypted thread stores every piece
 * whole), never a base itself.
 *
 * @since 0.3.0
 */
export const DERIVED = "derived piece"

/**
 * A checkpoint row's header without its `id` (format 3): the row's
 * `checkpoint_id` is that id, said once. Written with structural sharing
 * only (a store written without it is LangGraph's own savers' to read, whose
 * header has its id); read back with the row's id put in (see {@link header}).
 *
 * @since 0.3.0
 */
export const HEADER_WITHOUT_ID = "header without its id"

/**
 * A checkpoint row's header as read: its id the row's where it leaves it
 * out (see {@link HEADER_WITHOUT_ID}); as stored otherwise.
 *
 * @since 0.3.0
 */
export const header = (row: { readonly checkpoint_id: string; readonly checkpoint: unknown }): unknown =>
  withoutId(row.checkpoint) ? { ...row.checkpoint, id: row.checkpoint_id } : row.checkpoint

/**
 * Whether a stored header leaves its id out (see {@link HEADER_WITHOUT_ID}).
 *
 * @since 0.3.0
 */
export const withoutId = (stored: unknown): stored is object =>
  typeof stored === "object" && stored !== null && !Object.hasOwn(stored, "id")

/**
 * The first byte of a derived piece: no JSON text starts with it (nor a
 * sealed frame, whose first byte is its format, 1 to 8).
 *
 * @since 0.3.0
 */
export const DERIVED_MARK = 0x10

/**
 * Whether a piece is a derived one (see {@link DERIVED}).
 *
 * @since 0.3.0
 */
export const isDerived = (piece: Uint8Array): boolean => piece[0] === DERIVED_MARK

/**
 * The storage `type` of a compressed value (format 4): a `json` value whose
 * bytes are {@link compressed} text. It reads back as that `json` value.
 *
 * @since 0.4.0
 */
export const COMPRESSED = "zstd-json/1"

/**
 * A compressed piece (format 4): a piece whose bytes are {@link compressed}
 * text; its hash is that of the text, as a plain piece's. Never sealed (a
 * sealed thread's pieces stay whole, so a release that reads its level
 * finds no compressed text inside a seal), never derived, never a derived
 * piece's base's stand-in: a derived piece's base is read back as text.
 *
 * @since 0.4.0
 */
export const COMPRESSED_PIECE = "compressed piece"

/**
 * The first byte of compressed text: no JSON text starts with it, nor a
 * sealed frame (1 to 8), nor a derived piece (0x10).
 *
 * @since 0.4.0
 */
export const COMPRESSED_MARK = 0x11

/**
 * The most text compressed bytes may stand for (256 MiB, the most an
 * export line holds), and how many times their own size at most (1,024):
 * text read back is untrusted, and compressed text larger than that (a
 * "bomb") is damage, never memory spent. {@link compress} keeps within both.
 *
 * @since 0.4.0
 */
export const COMPRESSED_LIMITS = { bytes: 256 * 1024 * 1024, ratio: 1024 } as const

/** Text shorter than this is stored as it is: compressing it saves less than a row's bytes. */
const COMPRESS_FROM = 128

/**
 * Whether bytes (a piece, a value's) are compressed text.
 *
 * @since 0.4.0
 */
export const isCompressed = (bytes: Uint8Array): boolean => bytes[0] === COMPRESSED_MARK

/**
 * `text` compressed: {@link COMPRESSED_MARK}, the text's length (a LEB128
 * varint), then a zstd frame of it (zstd's level 1: as small as its level 3
 * on messages and base64, in half the time). `undefined` where that does
 * not save an eighth of the text, or would break {@link COMPRESSED_LIMITS}:
 * then the text is stored as it is.
 *
 * @since 0.4.0
 */
export const compress = (text: Uint8Array): Uint8Array | undefined => {
  if (text.byteLength < COMPRESS_FROM || text.byteLength > COMPRESSED_LIMITS.bytes) return undefined
  const frame = zstdCompressSync(text, { params: { [constants.ZSTD_c_compressionLevel]: 1 } })
  const head = [COMPRESSED_MARK, ...varint(text.byteLength)]
  const length = head.length + frame.byteLength
  // The bounds a reader checks, on the same lengths (see `decompress`).
  if (8 * length > 7 * text.byteLength || length * COMPRESSED_LIMITS.ratio < text.byteLength) return undefined
  const out = new Uint8Array(length)
  out.set(head)
  out.set(frame, head.length)
  return out
}

/**
 * The length of the text bytes stand for: compressed text's as it says
 * (without decompressing it), any other's own.
 *
 * @since 0.4.0
 */
export const textLength = (bytes: Uint8Array): number =>
  isCompressed(bytes) ? readVarint(bytes, 1)?.n ?? bytes.byteLength : bytes.byteLength

/**
 * Compressed text read back (see {@link compress}): the text, or a string
 * saying what is wrong with it.
 *
 * @since 0.4.0
 */
export const decompress = (bytes: Uint8Array): Uint8Array | string => {
  const read = readVarint(bytes, 1)
  if (!isCompressed(bytes) || read === undefined) return "its compressed text is cut short"
  const { at, n: length } = read
  if (length > COMPRESSED_LIMITS.bytes || length > bytes.byteLength * COMPRESSED_LIMITS.ratio) {
    return `its compressed text claims ${length} bytes, more than it may stand for`
  }
  let text: Buffer
  try {
    text = zstdDecompressSync(bytes.subarray(at), { maxOutputLength: Math.max(1, length) })
  } catch {
    return "its compressed text does not decompress"
  }
  return text.byteLength === length ? owned(text) : "its compressed text is not as long as it says"
}

/**
 * A stored piece's text: a compressed one's decompressed (or what is wrong
 * with it), any other's its bytes.
 *
 * @since 0.4.0
 */
export const textOf = (piece: Uint8Array): Uint8Array | string => isCompressed(piece) ? decompress(piece) : piece

/**
 * What a sealed row's stored `type` ends with (see `Sealing`).
 *
 * @since 0.1.0
 */
export const SEALED_SUFFIX = "+sealed"

/** The unsealed stored types of lists. */
const LISTS: ReadonlyArray<string> = [SHARED, FRAMED, RECORD]

/**
 * Whether an unsealed stored `type` is a list's (shared, framed or a record's).
 *
 * @since 0.1.0
 */
export const isList = (type: string): boolean => LISTS.includes(type)

/**
 * The stored types of lists: plain, and sealed (whose bytes are the hashes
 * followed by a trailer of whole hash-sized units, see `Sealing`).
 *
 * @since 0.1.0
 */
export const LIST_TYPES: ReadonlyArray<string> = LISTS.flatMap((type) => [type, type + SEALED_SUFFIX])

/**
 * The bytes of a piece's hash: a list's bytes are its entries' hashes, back to back.
 *
 * @since 0.1.0
 */
export const HASH_BYTES = 16

/**
 * The pieces without repeats (an element may occur in several places).
 *
 * @since 0.1.0
 */
export const distinct = (pieces: ReadonlyArray<Piece>): Array<Piece> => {
  const seen = new Set<string>()
  return pieces.filter((piece) => {
    const key = pieceKey(piece.hash)
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

/**
 * How many bases deep a list may be: a list may extend a base, which may
 * extend one more. Readers follow this many (the SQL driver's projection,
 * the decoder, what `remove` keeps), so a deeper chain reads as damaged.
 *
 * @since 0.1.0
 */
export const BASE_DEPTH = 2

const utf8 = new TextEncoder()
const utf8Decoder = new TextDecoder()
const [OPEN, COMMA, CLOSE, OPEN_RECORD, CLOSE_RECORD] = utf8.encode("[,]{}") as unknown as Array<number>

/**
 * A piece's plain address: the first 16 bytes of its SHA-256, as a latin1
 * string (with encryption on, pieces are addressed by a keyed hash instead,
 * see `Sealing`).
 *
 * @since 0.1.0
 */
export const hashOf = (bytes: Uint8Array): string => hash("sha256", bytes, "buffer").toString("latin1", 0, HASH_BYTES)

/**
 * `bytes` as bytes that own their memory: a view into a larger buffer (a
 * value decoded from a socket's read, or a small Buffer from Node's shared
 * pool) is copied, so that whoever keeps it keeps only its own bytes.
 * Caches keep what they are given for long: a 400-byte piece read from the
 * database is a view into the 32 KiB the read arrived in.
 *
 * @since 0.1.0
 */
export const owned = (bytes: Uint8Array): Uint8Array =>
  bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes)

/** A list's hashes as stored. */
export const packHashes = (keys: ReadonlyArray<string>): Uint8Array => Buffer.from(keys.join(""), "latin1")

/** The hashes of a stored list; undefined when its length is not a whole number of hashes. */
export const unpackHashes = (bytes: Uint8Array): Array<string> | undefined => {
  if (bytes.byteLength % HASH_BYTES !== 0) return undefined
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1")
  return Array.from({ length: text.length / HASH_BYTES }, (_, i) => text.slice(i * HASH_BYTES, (i + 1) * HASH_BYTES))
}

/**
 * The pieces (by {@link pieceKey}) a stored blob or write refers to itself
 * (its base's, if any, are the base's own).
 *
 * @since 0.1.0
 */
export const references = (row: { readonly type: string; readonly bytes: Uint8Array | undefined }): Array<string> =>
  LIST_TYPES.includes(row.type) && row.bytes !== undefined ? unpackHashes(listHashes(row.type, row.bytes)) ?? [] : []

/**
 * The pieces stored rows refer to: what their lists name (and the lists
 * of the bases they carry, as reads return them), and the pieces derived
 * ones among those (found with `pieceOf`) are written against. Keys of
 * pieces `pieceOf` does not find are in it too.
 *
 * @since 0.4.0
 */
export const referencedPieces = (
  rows: Iterable<
    { readonly type: string; readonly bytes: Uint8Array | undefined; readonly base?: SharedBase | undefined }
  >,
  pieceOf: (key: string) => Uint8Array | undefined
): Set<string> => {
  const keys = new Set<string>()
  const add = (key: string) => {
    if (keys.has(key)) return
    keys.add(key)
    const piece = pieceOf(key)
    const base = piece === undefined ? undefined : derivedFrom(piece)
    if (base !== undefined) add(base)
  }
  for (const row of rows) {
    for (const key of references(row)) add(key)
    for (let base = row.base; base !== undefined; base = base.base) {
      for (const key of references({ type: row.type, bytes: base.list })) add(key)
    }
  }
  return keys
}

/**
 * The length of a sealed list's trailer, whole units of a hash's size (its
 * frame, zeros, and the frame's length as the last byte: see
 * `sealing/Frames`), from the frame's length.
 *
 * @since 0.4.0
 */
export const listTrailerLength = (frameLength: number): number => Math.ceil((frameLength + 1) / HASH_BYTES) * HASH_BYTES

/** A stored list's hashes: a sealed one's before its trailer (none when it is too short to hold one). */
const listHashes = (type: string, bytes: Uint8Array): Uint8Array => {
  if (!type.endsWith(SEALED_SUFFIX)) return bytes
  const trailer = listTrailerLength(bytes.at(-1) ?? 0)
  return trailer > bytes.byteLength ? new Uint8Array() : bytes.subarray(0, bytes.byteLength - trailer)
}

/**
 * A piece's hash as a map key.
 *
 * @since 0.1.0
 */
export const pieceKey = (hash: Uint8Array): string =>
  Buffer.from(hash.buffer, hash.byteOffset, hash.byteLength).toString("latin1")

/**
 * A thread's namespace as a map key: keys hold no NUL (see `Checkpoint.ts`),
 * so the NUL between its parts keeps any two namespaces apart.
 *
 * @since 0.1.0
 */
export const namespaceKey = (place: { readonly thread_id: string; readonly checkpoint_ns: string }): string =>
  `${place.thread_id}\u0000${place.checkpoint_ns}`

/** A LEB128 varint of `n` (a non-negative integer). */
const varint = (n: number): Array<number> => {
  const bytes: Array<number> = []
  do {
    bytes.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0))
    n >>>= 7
  } while (n > 0)
  return bytes
}

/** The LEB128 varint at `at` in `bytes`, and where what follows it starts; `undefined` when cut short. */
const readVarint = (bytes: Uint8Array, at: number): { readonly n: number; readonly at: number } | undefined => {
  let n = 0
  for (let shift = 0; shift < 35; shift += 7) {
    const byte = bytes[at++]
    if (byte === undefined) return undefined
    n += (byte & 0x7f) * 2 ** shift
    if (byte < 0x80) return { n, at }
  }
  return undefined
}

/**
 * `text` as a derived piece of `base` (a plain piece's key and text): the
 * longest common start and end kept, the span between replaced. `undefined`
 * when that is not less than half of `text`: then a piece of its own is
 * smaller, give or take its row.
 *
 * @since 0.3.0
 */
export const derive = (
  base: { readonly key: string; readonly bytes: Uint8Array },
  text: Uint8Array
): Uint8Array | undefined => {
  const from = base.bytes
  const most = Math.min(from.byteLength, text.byteLength)
  let start = 0
  while (start < most && from[start] === text[start]) start++
  let end = 0
  while (end < most - start && from[from.byteLength - 1 - end] === text[text.byteLength - 1 - end]) end++
  const replacement = text.subarray(start, text.byteLength - end)
  const head = [
    DERIVED_MARK,
    ...Buffer.from(base.key, "latin1"),
    ...varint(start),
    ...varint(from.byteLength - start - end)
  ]
  if (2 * (head.length + replacement.byteLength) > text.byteLength) return undefined
  const piece = new Uint8Array(head.length + replacement.byteLength)
  piece.set(head)
  piece.set(replacement, head.length)
  return piece
}

/**
 * What a derived piece says: its base's key, the span it replaces
 * (`offset`, `length`), and the bytes replacing it; `undefined` for a piece
 * that is not derived; a string saying what is wrong with one that is.
 *
 * @since 0.3.0
 */
export const derived = (
  piece: Uint8Array
):
  | { readonly base: string; readonly offset: number; readonly length: number; readonly bytes: Uint8Array }
  | string
  | undefined =>
{
  if (!isDerived(piece)) return undefined
  if (piece.byteLength < 1 + HASH_BYTES) return "its derived piece is cut short"
  const base = Buffer.from(piece.buffer, piece.byteOffset + 1, HASH_BYTES).toString("latin1")
  const offset = readVarint(piece, 1 + HASH_BYTES)
  const length = offset === undefined ? undefined : readVarint(piece, offset.at)
  if (offset === undefined || length === undefined) return "its derived piece is cut short"
  return { base, offset: offset.n, length: length.n, bytes: piece.subarray(length.at) }
}

/**
 * The key (see {@link pieceKey}) of the piece a piece is derived from;
 * `undefined` for one that is not derived (or is damaged: its read says so).
 *
 * @since 0.3.0
 */
export const derivedFrom = (piece: Uint8Array): string | undefined => {
  const found = derived(piece)
  return typeof found === "object" ? found.base : undefined
}

/**
 * A derived piece's text, from its base's: a string saying what is wrong
 * when the base is itself derived or shorter than the span it replaces.
 *
 * @since 0.3.0
 */
export const compose = (
  piece: { readonly offset: number; readonly length: number; readonly bytes: Uint8Array },
  base: Uint8Array
): Uint8Array | string => {
  if (isDerived(base)) return "its derived piece extends a derived piece"
  if (piece.offset + piece.length > base.byteLength) return "its derived piece replaces more than its base holds"
  const text = new Uint8Array(base.byteLength - piece.length + piece.bytes.byteLength)
  text.set(base.subarray(0, piece.offset))
  text.set(piece.bytes, piece.offset)
  text.set(base.subarray(piece.offset + piece.length), piece.offset + piece.bytes.byteLength)
  return text
}

/** A piece from its key and bytes. */
export const pieceOf = (key: string, bytes: Uint8Array): Piece => ({ hash: Buffer.from(key, "latin1"), bytes })

/** `[` + the texts joined by `,` + `]`: the array's text (with `{` and `}`: a record's, see {@link record}). */
export const join = (texts: ReadonlyArray<Uint8Array>, open = OPEN!, close = CLOSE!): Uint8Array => {
  let length = 2 + Math.max(0, texts.length - 1)
  for (const text of texts) length += text.byteLength
  const out = new Uint8Array(length)
  out[0] = open
  let at = 1
  texts.forEach((text, i) => {
    if (i > 0) out[at++] = COMMA!
    out.set(text, at)
    at += text.byteLength
  })
  out[at] = close
  return out
}

/**
 * `{` + the entries' texts joined by `,` + `}`: a record list's text (see
 * {@link RECORD}).
 *
 * @since 0.4.0
 */
export const record = (entries: ReadonlyArray<Uint8Array>): Uint8Array => join(entries, OPEN_RECORD, CLOSE_RECORD)

/**
 * A framed list's frame: the piece holding the texts written before and
 * after its array.
 *
 * @since 0.1.0
 */
export const frameOf = (before: string, after: string): Uint8Array => utf8.encode(JSON.stringify([before, after]))

/** `before` + an array's text + `after`: a framed value's text. */
export const framed = (before: string, array: Uint8Array, after: string): Uint8Array =>
  Buffer.concat([utf8.encode(before), array, utf8.encode(after)])

/**
 * A framed list's text from its entries' texts (the frame first); a string
 * saying what is wrong.
 *
 * @since 0.1.0
 */
export const unframe = (texts: ReadonlyArray<Uint8Array>): Uint8Array | string => {
  const [frame, ...items] = texts
  if (frame === undefined) return "its frame is missing"
  let parts: unknown
  try {
    parts = JSON.parse(utf8Decoder.decode(frame))
  } catch {
    parts = undefined
  }
  if (!Array.isArray(parts) || parts.length !== 2 || typeof parts[0] !== "string" || typeof parts[1] !== "string") {
    return "its frame is not two texts"
  }
  return framed(parts[0], join(items), parts[1])
}
