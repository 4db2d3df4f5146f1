/**
 * langgraph-checkpoint-effect: LangGraph checkpoints as Effect services.
 *
 * @since 0.1.0
 */
export * as Checkpoint from "./Checkpoint.ts"
export * as CheckpointError from "./CheckpointError.ts"
export * as CheckpointStorage from "./CheckpointStorage.ts"
export * as Encryption from "./codec/Encryption.ts"
export { SafeJsonPlusSerializer } from "./codec/JsonPlus.ts"
export * as Revival from "./codec/Revival.ts"
export * as Serializer from "./codec/Serializer.ts"
export * as Sharing from "./codec/SharingEnabled.ts"
export * as FormatLevel from "./FormatLevel.ts"
export * as ExportFormat from "./lifecycle/ExportFormat.ts"
export * as MemoryDriver from "./memory/MemoryDriver.ts"
export * as Metrics from "./Metrics.ts"
export { EffectCheckpointSaver, type ReencryptRun, type SaverOptions } from "./Saver.ts"
export * as Retry from "./sql/Retry.ts"
export * as StorageDriver from "./StorageDriver.ts"
export type { CronPage, CronQuery, CronRecord } from "./ThreadCrons.ts"
export type { ThreadPage, ThreadQuery, ThreadRecord, ThreadState, ThreadStatus, ThreadUpdate } from "./ThreadRecords.ts"
export type { RunQuery, RunRecord, RunStatus } from "./ThreadRuns.ts"
