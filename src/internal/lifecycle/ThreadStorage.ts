/**
 * Where a thread's bytes are (`CheckpointStorage.threadStorage`): the report
 * of its rows as stored, each section with its rows, bytes, and bytes
 * uncompressed. Its shapes are in `Reports.ts`, which the web page reads
 * too; this module reads stored bytes (`StorageFormat`), which the page
 * cannot load.
 *
 * @since 0.4.0
 */
import type { StorageSection, ThreadStorage } from "../../Reports.ts"
import * as StorageFormat from "../StorageFormat.ts"

const utf8 = new TextEncoder()

type Section = { count: number; bytes: number; raw_bytes: number }

/** Adds a row of `bytes` (`raw` uncompressed) to `channel`'s section. */
const add = (sections: Map<string, Section>, channel: string, bytes: number, raw: number) => {
  const section = sections.get(channel) ?? { count: 0, bytes: 0, raw_bytes: 0 }
  section.count++
  section.bytes += bytes
  section.raw_bytes += raw
  sections.set(channel, section)
}

/** Sections by channel, largest first, as own properties whatever a channel is named (`__proto__` too). */
const byChannel = (sections: Map<string, Section>) =>
  Object.fromEntries([...sections].sort((a, b) => b[1].bytes - a[1].bytes))

const total = (sections: Iterable<StorageSection>) =>
  [...sections].reduce((sum, section) => ({
    count: sum.count + section.count,
    bytes: sum.bytes + section.bytes,
    raw_bytes: sum.raw_bytes + section.raw_bytes
  }), { count: 0, bytes: 0, raw_bytes: 0 })

/**
 * A value's bytes uncompressed: a compressed one's text's length, as it says
 * (see `StorageFormat.compress`); a sealed one's as stored.
 */
const rawOf = (type: string, bytes: Uint8Array | undefined) =>
  bytes === undefined ? 0 : type === StorageFormat.COMPRESSED ? StorageFormat.textLength(bytes) : bytes.byteLength

/**
 * The storage report of a thread's rows.
 *
 * @since 0.4.0
 */
export const storageOf = (rows: {
  readonly thread_id: string
  readonly checkpoints: ReadonlyArray<{ readonly checkpoint: unknown; readonly metadata: string }>
  readonly blobs: ReadonlyArray<
    { readonly channel: string; readonly type: string; readonly bytes: Uint8Array | undefined }
  >
  readonly writes: ReadonlyArray<{ readonly channel: string; readonly type: string; readonly bytes: Uint8Array }>
  readonly pieces: ReadonlyArray<{ readonly bytes: Uint8Array }>
}): ThreadStorage => {
  const header = rows.checkpoints.reduce(
    (sum, row) => sum + utf8.encode(JSON.stringify(row.checkpoint)).length + utf8.encode(row.metadata).length,
    0
  )
  const checkpoints = { count: rows.checkpoints.length, bytes: header, raw_bytes: header }
  const blobs = new Map<string, Section>()
  for (const blob of rows.blobs) add(blobs, blob.channel, blob.bytes?.byteLength ?? 0, rawOf(blob.type, blob.bytes))
  const writes = new Map<string, Section>()
  for (const write of rows.writes) add(writes, write.channel, write.bytes.byteLength, rawOf(write.type, write.bytes))
  const pieces = {
    count: rows.pieces.length,
    bytes: rows.pieces.reduce((sum, piece) => sum + piece.bytes.byteLength, 0),
    raw_bytes: rows.pieces.reduce((sum, piece) => sum + StorageFormat.textLength(piece.bytes), 0)
  }
  const values = total(blobs.values())
  const pending = total(writes.values())
  const all = total([checkpoints, values, pieces, pending])
  return {
    thread_id: rows.thread_id,
    total_bytes: all.bytes,
    total_raw_bytes: all.raw_bytes,
    checkpoints,
    channel_values: {
      count: values.count,
      bytes: values.bytes + pieces.bytes,
      raw_bytes: values.raw_bytes + pieces.raw_bytes,
      by_channel: byChannel(blobs),
      shared_pieces: pieces
    },
    pending_writes: { ...pending, by_channel: byChannel(writes) }
  }
}
