/**
 * Sealing and opening a checkpoint's metadata: the keys declared plaintext
 * stay JSON (so `list` can filter on them); the others are sealed under
 * `$sealed`, bound to the checkpoint, the plaintext keys and the
 * checkpoint's header. Works on the JSON text the serializer wrote, so what
 * reads back is that very text's value.
 *
 * @since 0.1.0
 */
import { SEALED_METADATA } from "../../../Encryption.ts"
import type { CheckpointRow } from "../../../StorageDriver.ts"
import { open, seal, type Sealer } from "./Frames.ts"
import { metadataPlace } from "./Places.ts"
import type { Opener, Tally } from "./Rows.ts"

const utf8 = new TextEncoder()
const text = new TextDecoder()

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Stored metadata whose sealed part is opened: the plaintext keys, and the
 * sealed part's JSON bytes (`undefined`: stored unsealed).
 *
 * @since 0.1.0
 */
export interface Secret {
  readonly plain: Record<string, unknown>
  readonly secret: Uint8Array | undefined
}

/**
 * Metadata as stored, from its plaintext keys and its sealed part's bytes.
 *
 * @since 0.1.0
 */
export const sealSecret = (
  sealer: Sealer,
  row: CheckpointRow,
  plain: Record<string, unknown>,
  secret: Uint8Array
): string =>
  JSON.stringify({
    ...plain,
    [SEALED_METADATA]: Buffer.from(seal(sealer, secret, metadataPlace(row, plain))).toString("base64")
  })

/**
 * Metadata as stored, from the serializer's JSON text: the keys in
 * `plaintextMetadata` as JSON, the rest sealed under `$sealed`.
 *
 * @since 0.1.0
 */
export const sealMetadata = (
  sealer: Sealer,
  plaintextMetadata: ReadonlySet<string>,
  row: CheckpointRow,
  json: string
): string => {
  const all = JSON.parse(json) as Record<string, unknown>
  const plain: Record<string, unknown> = {}
  const secret: Record<string, unknown> = {}
  for (const name of Object.keys(all)) (plaintextMetadata.has(name) ? plain : secret)[name] = all[name]
  return sealSecret(sealer, row, plain, utf8.encode(JSON.stringify(secret)))
}

/**
 * The plaintext keys and the sealed part's JSON bytes; a string saying what
 * is wrong. Unsealed metadata passes under `allowPlaintext`, counted.
 *
 * @since 0.1.0
 */
export const openSecret = (opener: Opener, row: CheckpointRow, tally: Tally): Secret | string => {
  let stored: unknown
  try {
    stored = JSON.parse(row.metadata)
  } catch {
    return "metadata is not JSON"
  }
  if (!isRecord(stored) || typeof stored[SEALED_METADATA] !== "string") {
    if (!opener.allowPlaintext) return "metadata is not encrypted (allowPlaintext is off)"
    tally.plaintext++
    return { plain: isRecord(stored) ? stored : {}, secret: undefined }
  }
  const { [SEALED_METADATA]: sealed, ...plain } = stored
  const secret = open(opener.keyring, Buffer.from(sealed as string, "base64"), metadataPlace(row, plain))
  return typeof secret === "string" ? `metadata ${secret}` : { plain, secret }
}

/**
 * Metadata's whole JSON text, opened; a string saying what is wrong.
 *
 * @since 0.1.0
 */
export const openMetadata = (opener: Opener, row: CheckpointRow, tally: Tally): { readonly json: string } | string => {
  const opened = openSecret(opener, row, tally)
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
