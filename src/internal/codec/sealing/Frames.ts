/**
 * Sealing's frames, pure: the byte layout of every ciphertext this library
 * writes. A frame is a version byte, the key id (length, then UTF-8), then
 * the cipher's output; its additional authenticated data is the frame's
 * header (its *head*) and the row's place. A shared list keeps its hashes
 * readable and ends with a trailer of whole 16-byte units holding a frame
 * that seals nothing and authenticates the hashes with the place.
 *
 * @since 0.1.0
 */
import type { DataKey } from "../../../Encryption.ts"
import { listTrailerLength, SEALED_SUFFIX } from "../../StorageFormat.ts"

/**
 * The frame format's version, its first byte. An unsealed piece is JSON
 * text, which never starts with it.
 *
 * @since 0.1.0
 */
export const VERSION = 1

/**
 * First bytes a frame of a later format may start with: control bytes no
 * JSON text starts with (tab, line feed and carriage return excepted).
 */
const LATER_VERSIONS: ReadonlySet<number> = new Set([2, 3, 4, 5, 6, 7, 8])

/** What opening a frame of a later format says (see {@link isLaterFrame}). */
const LATER = "is sealed in frame format"

/**
 * Whether what opening said is that the frame is of a later format, which
 * a newer release writes: not damage.
 *
 * @since 0.1.0
 */
export const isLaterFrame = (detail: string): boolean => detail.includes(LATER)

/**
 * What opening bytes of a later frame format says; `undefined` for others.
 *
 * @since 0.1.0
 */
export const laterFrame = (bytes: Uint8Array): string | undefined =>
  LATER_VERSIONS.has(bytes[0] ?? 0) ? `${LATER} ${bytes[0]}, which a newer release writes` : undefined
const utf8 = new TextEncoder()
const text = new TextDecoder()

/**
 * Whether a stored `type` is a sealed one.
 *
 * @since 0.1.0
 */
export const isSealed = (type: string): boolean => type.endsWith(SEALED_SUFFIX)

/**
 * The data keys by id, as the keyring holds them.
 *
 * @since 0.1.0
 */
export type Keyring = (keyId: string) => DataKey | undefined

/**
 * A data key with its frame head: what seals a frame.
 *
 * @since 0.1.0
 */
export interface Sealer {
  readonly key: DataKey
  readonly head: Uint8Array
}

/**
 * The head of frames sealed under `keyId`: the version byte, the id's
 * length, the id.
 *
 * @since 0.1.0
 */
export const headOf = (keyId: string): Uint8Array => {
  const id = utf8.encode(keyId)
  return concat(Uint8Array.of(VERSION, id.byteLength), id)
}

/**
 * Bytes back to back.
 *
 * @since 0.1.0
 */
export const concat = (...parts: ReadonlyArray<Uint8Array>): Uint8Array => Buffer.concat(parts)

/**
 * `plaintext` sealed in a frame bound to `at`.
 *
 * @since 0.1.0
 */
export const seal = (sealer: Sealer, plaintext: Uint8Array, at: Uint8Array): Uint8Array =>
  concat(sealer.head, sealer.key.seal(plaintext, concat(sealer.head, at)))

/**
 * The plaintext of a frame bound to `at`; a string saying why there is none.
 *
 * @since 0.1.0
 */
export const open = (keyring: Keyring, frame: Uint8Array, at: Uint8Array): Uint8Array | string => {
  if (frame.byteLength < 2 || frame[0] !== VERSION) {
    return laterFrame(frame) ?? "is not a ciphertext this library writes"
  }
  const end = 2 + frame[1]!
  if (frame.byteLength < end) return "is truncated"
  const keyId = text.decode(frame.subarray(2, end))
  const key = keyring(keyId)
  if (key === undefined) return `is sealed under the key "${keyId}", which the keyring does not hold`
  return key.open(frame.subarray(end), concat(frame.subarray(0, end), at)) ??
    "does not decrypt (altered, truncated, or moved from another place)"
}

/**
 * A list's hashes, then a trailer of whole units: the frame, zeros, and the
 * frame's length.
 *
 * @since 0.1.0
 */
export const sealList = (sealer: Sealer, hashes: Uint8Array, at: Uint8Array): Uint8Array => {
  const frame = seal(sealer, new Uint8Array(), concat(at, hashes))
  const trailer = new Uint8Array(listTrailerLength(frame.byteLength))
  trailer.set(frame)
  trailer[trailer.byteLength - 1] = frame.byteLength
  return concat(hashes, trailer)
}

/**
 * A sealed list's hashes, once its trailer authenticates them at `at`; a
 * string saying what is wrong.
 *
 * @since 0.1.0
 */
export const openList = (keyring: Keyring, bytes: Uint8Array, at: Uint8Array): Uint8Array | string => {
  const length = bytes.at(-1) ?? 0
  const trailer = listTrailerLength(length)
  if (length === 0 || trailer > bytes.byteLength) return "is truncated"
  const hashes = bytes.subarray(0, bytes.byteLength - trailer)
  const opened = open(keyring, bytes.subarray(hashes.byteLength, hashes.byteLength + length), concat(at, hashes))
  return typeof opened === "string" ? opened : hashes
}

/**
 * A sealed list's trailer, which starts with its frame (empty when the
 * bytes are too short to hold one).
 *
 * @since 0.1.0
 */
export const listTrailer = (bytes: Uint8Array): Uint8Array => {
  const start = bytes.byteLength - listTrailerLength(bytes.at(-1) ?? 0)
  return start < 0 ? new Uint8Array() : bytes.subarray(start)
}

/**
 * Whether a frame starts with `head`, that is was sealed under its key.
 *
 * @since 0.1.0
 */
export const isUnder = (frame: Uint8Array, head: Uint8Array): boolean =>
  Buffer.from(frame.subarray(0, head.byteLength)).equals(head)
