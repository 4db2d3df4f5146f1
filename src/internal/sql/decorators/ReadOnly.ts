/**
 * A decorator of the SQL driver for a storage opened read-only: every write
 * refused before it reaches a connection. (Beside it, `LatestTuples`, the
 * other decorator of the driver, answers a sole writer's latest reads.)
 *
 * @since 0.4.0
 */
import { Effect } from "effect"
import { StorageFailure } from "../../../CheckpointError.ts"
import type { StorageDriver } from "../../../StorageDriver.ts"

/**
 * The driver with every write refused before it reaches a connection: the
 * application's own client may accept writes, and LangGraph's tables, read
 * through derived relations, could not take them anyway. `threadRecords`
 * says whether a writer enabled thread records (reading them is allowed;
 * enabling them is a write).
 *
 * @since 0.4.0
 */
export const refusingWrites = (
  driver: StorageDriver,
  threadRecords: Effect.Effect<boolean, StorageFailure>
): StorageDriver => {
  const refuse = (operation: string) =>
    Effect.fail(
      new StorageFailure({ operation, retryable: false, cause: "the storage was opened read-only (readOnly: true)" })
    )
  return {
    ...driver,
    put: () => refuse("put"),
    putWrites: () => refuse("putWrites"),
    deleteThread: () => refuse("deleteThread"),
    remove: () => refuse("remove"),
    setParents: () => refuse("setParents"),
    writeThread: () => refuse("writeThread"),
    raiseFormat: () => refuse("raiseFormat"),
    setThreadRecord: () => refuse("setThread"),
    createThreadRecord: () => refuse("createThread"),
    // Records a writer enabled read as they are; enabling them is a write.
    enableThreadRecords: Effect.flatMap(
      threadRecords,
      (enabled) => enabled ? Effect.void : refuse("enableThreadRecords")
    ),
    // Every caller of `exclusive` writes, and it starts by locking the thread's row with a write.
    exclusive: () => refuse("exclusive")
  }
}
