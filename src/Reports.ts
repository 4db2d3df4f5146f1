/**
 * What the thread operations are given and what they answer: a retention
 * policy, and the reports of a retention round, of a re-encryption run and
 * of where a thread's bytes are.
 * Apart from `ThreadLifecycle` (the operations, over the codec) so that the
 * service's declarations, and so the package's, name these small types and
 * nothing of the codec.
 *
 * @since 0.2.0
 */
import type { Duration } from "effect"

/**
 * @since 0.1.0
 */
export interface RetentionPolicy {
  /** Delete threads whose latest put is older than this (a finite duration, more than 0). */
  readonly inactiveFor?: Duration.Input | undefined
  /** Keep this many newest checkpoints per namespace (and what they need): an integer, 1 or more. */
  readonly keepLast?: number | undefined
}

/**
 * @since 0.1.0
 */
export interface RetentionReport {
  readonly threadsDeleted: number
  readonly checkpointsRemoved: number
  /**
   * Threads left as they were because their stored parent links loop (see
   * `ParentLinks`), each with what `prune` says of it: a round of retention
   * still does the others.
   */
  readonly skipped: ReadonlyArray<{ readonly thread_id: string; readonly detail: string }>
}

/**
 * One step of `reencrypt`: a thread done and how far along. `rewritten`: now
 * sealed under its current key; `current`: it already was; `unreadable`: a
 * row does not open (its key was removed, say, or it was altered; `detail`
 * says which), so the thread was left as it is.
 *
 * @since 0.1.0
 */
export interface ReencryptProgress {
  readonly thread_id: string
  readonly outcome: "rewritten" | "current" | "unreadable"
  readonly detail?: string | undefined
  readonly done: number
  readonly total: number
}

/**
 * What a whole `reencrypt` run did: how many threads it rewrote and found
 * current, and the threads it could not open (with why), which keep their
 * old key until it can.
 *
 * @since 0.1.0
 */
export interface ReencryptSummary {
  readonly total: number
  readonly rewritten: number
  readonly current: number
  readonly unreadable: ReadonlyArray<{ readonly thread_id: string; readonly detail: string }>
}

/**
 * The summary of a run's steps.
 *
 * @since 0.1.0
 */
export const summarizeReencrypt = (steps: Iterable<ReencryptProgress>): ReencryptSummary => {
  let total = 0
  let rewritten = 0
  let current = 0
  const unreadable: Array<{ readonly thread_id: string; readonly detail: string }> = []
  for (const step of steps) {
    total = step.total
    if (step.outcome === "rewritten") rewritten++
    else if (step.outcome === "current") current++
    else unreadable.push({ thread_id: step.thread_id, detail: step.detail ?? "" })
  }
  return { total, rewritten, current, unreadable }
}

/**
 * Rows and their bytes.
 *
 * @since 0.4.0
 */
export interface StorageSection {
  readonly count: number
  readonly bytes: number
  /** The bytes of their text uncompressed (see `StorageFormat.COMPRESSED`): `bytes` where nothing is compressed. */
  readonly raw_bytes: number
}

/**
 * Where a thread's bytes are, as stored (encrypted rows count as sealed):
 * the top level in LangGraph Agent Server's shape (`GET
 * /threads/{id}/storage`), each section with its rows and bytes.
 *
 * @since 0.4.0
 */
export interface ThreadStorage {
  readonly thread_id: string
  /** The sum of the three sections. */
  readonly total_bytes: number
  /** The same uncompressed. */
  readonly total_raw_bytes: number
  /** Checkpoint rows: the checkpoint document (its JSON text) and its metadata. */
  readonly checkpoints: StorageSection
  /**
   * Stored channel values, one row per channel version, by channel; and
   * the pieces the thread's shared lists are made of, each stored once
   * whichever checkpoints share it (counted in the section's bytes).
   */
  readonly channel_values: StorageSection & {
    readonly by_channel: Readonly<Record<string, StorageSection>>
    readonly shared_pieces: StorageSection
  }
  /** Task writes (what each step wrote, kept with the checkpoint it followed), by channel. */
  readonly pending_writes: StorageSection & { readonly by_channel: Readonly<Record<string, StorageSection>> }
}
