/**
 * The places rows are bound to, pure: each sealed row's additional
 * authenticated data names where it belongs, so a row moved to another
 * thread, namespace, checkpoint, channel, version, task or piece fails to
 * open.
 *
 * @since 0.1.0
 */
import type { CheckpointRow, SharedBase, WriteRow } from "../../../StorageDriver.ts"

const utf8 = new TextEncoder()

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

/** The place a row is bound to, as additional data: a JSON array. */
const place = (...parts: ReadonlyArray<string | number>): Uint8Array => utf8.encode(JSON.stringify(parts))

/**
 * A value of a channel (stored as `type`): bound to its thread, namespace,
 * channel, version, type and base.
 *
 * @since 0.1.0
 */
export const blobPlace = (
  thread_id: string,
  checkpoint_ns: string,
  blob: { readonly channel: string; readonly version: string; readonly base?: Omit<SharedBase, "list"> | undefined },
  type: string
): Uint8Array =>
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
 * A pending write (stored as `type`): bound to its checkpoint, task, path,
 * index, channel and type.
 *
 * @since 0.1.0
 */
export const writePlace = (at: CheckpointPlace, write: Omit<WriteRow, "bytes" | "type">, type: string): Uint8Array =>
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

/**
 * A piece: bound to its address.
 *
 * @since 0.1.0
 */
export const piecePlace = (address: string): Uint8Array =>
  place("piece", Buffer.from(address, "latin1").toString("hex"))

/** JSON text with every object's keys sorted: equal for equal JSON values, however stored. */
const canonical = (value: unknown): string => {
  if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? "null"
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  const record = value as Record<string, unknown>
  const keys = Object.keys(record).filter((key) => record[key] !== undefined).sort()
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(record[key])}`).join(",")}}`
}

/**
 * A checkpoint's sealed metadata: bound to the checkpoint, its plaintext
 * keys and its header (its channel versions).
 *
 * @since 0.1.0
 */
export const metadataPlace = (row: CheckpointRow, plain: Record<string, unknown>): Uint8Array =>
  place("metadata", row.thread_id, row.checkpoint_ns, row.checkpoint_id, canonical(plain), canonical(row.checkpoint))
