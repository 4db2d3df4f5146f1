/**
 * A whole thread's rows sealed anew: for a copy under another thread id (a
 * seal binds a row to its thread), or the same thread under its current key
 * (`reencrypt`). Without encryption only the thread id changes.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { CorruptedCheckpoint } from "../CheckpointError.ts"
import type { ThreadRows } from "../StorageDriver.ts"
import { keyOf } from "./Parts.ts"
import type * as Sealing from "./Sealing.ts"

/**
 * A thread's rows for `target`: a copy, or the same thread under its
 * current key.
 *
 * @since 0.1.0
 */
export const reseal = (sealing: Sealing.Sealing | undefined) =>
  Effect.fnUntraced(function*(operation: string, rows: ThreadRows, target: string) {
    if (sealing === undefined) {
      return { ...rows, thread_id: target, checkpoints: rows.checkpoints.map((row) => ({ ...row, thread_id: target })) }
    }
    yield* keyOf(sealing, operation, target)
    const resealed = sealing.reseal(rows, target)
    return typeof resealed === "string"
      ? yield* new CorruptedCheckpoint({
        thread_id: rows.thread_id,
        checkpoint_ns: "",
        checkpoint_id: "",
        detail: resealed
      })
      : resealed
  })

/**
 * Whether a thread's rows are all sealed under its current key (always,
 * without encryption).
 *
 * @since 0.1.0
 */
export const isCurrent = (sealing: Sealing.Sealing | undefined) => (rows: ThreadRows): boolean =>
  sealing?.isCurrent(rows) ?? true
