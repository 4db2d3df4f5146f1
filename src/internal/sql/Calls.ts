/**
 * The write calls the SQL driver stores, as it hands them on: one `put`,
 * one `putWrites`, and how a task's writes went. They sit beside the driver
 * (`SqlDriver`) so that the statements that store them (`statements/Writes`)
 * and group commit, which batches them (`GroupCommit`), both take them from
 * here, neither from the other.
 *
 * @since 0.4.0
 */
import type { Location } from "../../Checkpoint.ts"
import type { BlobRow, CheckpointRow, Piece, PutShared, WriteRow } from "../../StorageDriver.ts"

/**
 * One `put`, as the driver stores it.
 *
 * @since 0.4.0
 */
export interface PutCall {
  readonly row: CheckpointRow
  readonly blobs: ReadonlyArray<BlobRow>
  readonly shared: PutShared
  /** The writer's epoch, when it claimed the thread (see `StorageDriver.claimThread`). */
  readonly epoch?: number | undefined
}

/**
 * One `putWrites`, as the driver stores it.
 *
 * @since 0.4.0
 */
export interface WritesCall {
  readonly checkpoint: Location & { readonly checkpoint_id: string }
  readonly writes: ReadonlyArray<WriteRow>
  readonly pieces: ReadonlyArray<Piece>
  /** The writer's epoch, when it claimed the thread (see `StorageDriver.claimThread`). */
  readonly epoch?: number | undefined
}

/**
 * How a task's writes went: stored, or refused for a stale writer's claim.
 *
 * @since 0.4.0
 */
export type WritesOutcome = "stored" | "conflict"
