/**
 * What several parts of the catalogue share: the columns of a checkpoint
 * row, a thread's input, and rows as the parallel arrays `unnest` takes.
 *
 * @since 0.1.0
 */
import type { Location } from "../../Checkpoint.ts"
import type { BlobRow, Piece, WriteRow } from "../../StorageDriver.ts"

/** A checkpoint, by its full address. */
export type CheckpointAddress = Location & { readonly checkpoint_id: string }

/** A statement's input that is one thread. */
export const ofThread = (input: { readonly thread_id: string }) => input

const emptyBytes = new Uint8Array(0)

/** Blobs as the parallel arrays `unnest` takes ("" and -1 for no base: an array of only nulls has no type). */
export const blobArrays = (blobs: ReadonlyArray<BlobRow>) => ({
  blob_channels: blobs.map((blob) => blob.channel),
  blob_versions: blobs.map((blob) => blob.version),
  blob_types: blobs.map((blob) => blob.type),
  blob_values: blobs.map((blob) => blob.bytes ?? emptyBytes),
  blob_bases: blobs.map((blob) => blob.base?.version ?? ""),
  blob_keeps: blobs.map((blob) => blob.base?.keep ?? -1)
})

/** Writes as the parallel arrays `unnest` takes. */
export const writeArrays = (writes: ReadonlyArray<WriteRow>) => ({
  write_idxs: writes.map((write) => write.idx),
  write_channels: writes.map((write) => write.channel),
  write_types: writes.map((write) => write.type),
  write_values: writes.map((write) => write.bytes)
})

/** Pieces as the parallel arrays `unnest` takes. */
export const pieceArrays = (pieces: ReadonlyArray<Piece>) => ({
  piece_hashes: pieces.map((piece) => piece.hash),
  piece_values: pieces.map((piece) => piece.bytes)
})

/** A checkpoint row's columns, in the order statements insert and read them. */
export const columns = "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata"
