/**
 * The shapes in which the in-memory driver holds a thread, as
 * `MemoryDriver.threads` shows them to tests: one entry per thread, its rows
 * per namespace keyed the way the SQL tables key them.
 *
 * @since 0.4.0
 */
import type { BlobRow, CheckpointRow, RunRecordRow, WriteRow } from "./StorageDriver.ts"

/**
 * One namespace of a thread, as the driver holds it.
 *
 * @since 0.1.0
 */
export interface NamespaceState {
  /** Checkpoint id → row. */
  readonly checkpoints: ReadonlyMap<string, CheckpointRow>
  /** Channel → version → blob (written once). */
  readonly blobs: ReadonlyMap<string, ReadonlyMap<string, BlobRow>>
  /** Checkpoint id → {@link writeKey} → pending write. */
  readonly writes: ReadonlyMap<string, ReadonlyMap<string, WriteRow>>
}

/**
 * One thread, as the driver holds it.
 *
 * @since 0.1.0
 */
export interface ThreadState {
  /**
   * The time of its latest put, of the copy that wrote it or of its record
   * set; undefined while it holds only writes.
   */
  readonly lastActivity: Date | undefined
  /**
   * Its record (see `StorageDriver.threadRecord`), whose `updated_at` is
   * `lastActivity`: made by its first put, or by setting it; undefined while
   * it holds only writes.
   *
   * @since 0.2.0
   */
  readonly record: ThreadRecordState | undefined
  /** Namespace → its rows. */
  readonly namespaces: ReadonlyMap<string, NamespaceState>
  /** `StorageFormat.pieceKey` → the piece's bytes, stored once per thread. */
  readonly pieces: ReadonlyMap<string, Uint8Array>
}

/**
 * A thread's record as the driver holds it.
 *
 * @since 0.2.0
 */
export interface ThreadRecordState {
  /** JSON text of an object. */
  readonly metadata: string
  readonly created_at: Date
  /** Its status (see `StorageDriver.setThreadState`). */
  readonly status: string
  /** Its values, JSON text; undefined until set. */
  readonly values: string | undefined
  /** Its writer epoch (see `StorageDriver.claimThread`): 0 until claimed. */
  readonly epoch: number
  /** Its runs' records, by run id. */
  readonly runs: ReadonlyMap<string, RunRecordRow>
}
