/**
 * langgraph-checkpoint-effect: LangGraph checkpoints as Effect services.
 *
 * @since 0.1.0
 */
export * as Checkpoint from "./Checkpoint.ts"
export * as CheckpointError from "./CheckpointError.ts"
export * as CheckpointStorage from "./CheckpointStorage.ts"
export * as Encryption from "./Encryption.ts"
export * as ExportFormat from "./ExportFormat.ts"
export * as FormatLevel from "./FormatLevel.ts"
export { SafeJsonPlusSerializer } from "./JsonPlus.ts"
export * as MemoryDriver from "./MemoryDriver.ts"
export * as Metrics from "./Metrics.ts"
export * as Retry from "./Retry.ts"
export * as Revival from "./Revival.ts"
export { EffectCheckpointSaver, type ReencryptRun, type SaverOptions } from "./Saver.ts"
export * as Serializer from "./Serializer.ts"
export * as Sharing from "./Sharing.ts"
export * as StorageDriver from "./StorageDriver.ts"
export type { CronPage, CronQuery, CronRecord } from "./ThreadCrons.ts"
export type { ThreadPage, ThreadQuery, ThreadRecord, ThreadState, ThreadStatus, ThreadUpdate } from "./ThreadRecords.ts"
export type { RunQuery, RunRecord, RunStatus } from "./ThreadRuns.ts"
