/**
 * Each stored row's columns as the statements that write them take them,
 * declared once (the one encoding of a checkpoint, blob, write and piece
 * row: JSON as text, "" and -1 for none), with what else several parts of
 * the catalogue share: a checkpoint row's column list, a checkpoint's
 * address and a thread's input. See `Rows` for how a statement takes them.
 *
 * @since 0.1.0
 */
import type { Location } from "../../../Checkpoint.ts"
import type { BlobRow, CheckpointRow, Piece, WriteRow } from "../../../StorageDriver.ts"
import * as Jsonb from "../Jsonb.ts"
import type { Kind } from "./Rows.ts"

/** A checkpoint, by its full address. */
export type CheckpointAddress = Location & { readonly checkpoint_id: string }

/** A statement's input that is one thread. */
export const ofThread = (input: { readonly thread_id: string }) => input

const emptyBytes = new Uint8Array(0)

/** A checkpoint row's own columns (JSON as text, "" for no parent: an array of only nulls has no type). */
export const checkpointColumns: Kind<CheckpointRow> = {
  checkpoint_ns: ["text", (row) => row.checkpoint_ns],
  checkpoint_id: ["text", (row) => row.checkpoint_id],
  parent: ["text", (row) => row.parent_checkpoint_id ?? ""],
  checkpoint: ["text", (row) => JSON.stringify(row.checkpoint)],
  metadata: ["text", (row) => Jsonb.encode(row.metadata)]
}

/** A blob's columns ("" and -1 for no base). */
export const blobColumns: Kind<BlobRow> = {
  channel: ["text", (blob) => blob.channel],
  version: ["text", (blob) => blob.version],
  type: ["text", (blob) => blob.type],
  blob: ["bytea", (blob) => blob.bytes ?? emptyBytes],
  base: ["text", (blob) => blob.base?.version ?? ""],
  keep: ["int4", (blob) => blob.base?.keep ?? -1]
}

/** A pending write's columns. */
export const writeColumns: Kind<WriteRow> = {
  task_id: ["text", (write) => write.task_id],
  task_path: ["text", (write) => write.task_path],
  idx: ["int4", (write) => write.idx],
  channel: ["text", (write) => write.channel],
  type: ["text", (write) => write.type],
  blob: ["bytea", (write) => write.bytes]
}

/** A piece's columns. */
export const pieceColumns: Kind<Piece> = {
  hash: ["bytea", (piece) => piece.hash],
  blob: ["bytea", (piece) => piece.bytes]
}

/** A checkpoint row's columns, in the order statements insert and read them. */
export const columns = "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata"
