/** Types of workload.mjs (plain JavaScript so that Node 20 can run it too). */
import type { BaseMessage } from "@langchain/core/messages"
import type { RunnableConfig } from "@langchain/core/runnables"
import type { BaseCheckpointSaver, Checkpoint, CheckpointMetadata, PendingWrite } from "@langchain/langgraph-checkpoint"

export declare const reseed: () => void
export declare const random: () => number
export declare const text: (count: number) => string
export declare const message: (step: number) => BaseMessage
export declare const jsonBytes: (value: unknown) => Uint8Array
export declare const serializedSize: (value: unknown) => number

export declare class ChatThread {
  messages: Array<BaseMessage>
  last: ReturnType<ChatThread["checkpointOf"]> | undefined
  version: number | undefined
  config: RunnableConfig
  step: number
  readonly saver: BaseCheckpointSaver
  constructor(saver: BaseCheckpointSaver, thread_id: string)
  start(): Promise<this>
  nextMessage(): BaseMessage
  putWrites(next?: BaseMessage): Promise<BaseMessage>
  put(next: BaseMessage): Promise<void>
  superStep(next?: BaseMessage): Promise<void>
  writesOf(next: BaseMessage): Array<PendingWrite>
  checkpointOf(messages: Array<BaseMessage>, previous: number | undefined): {
    checkpoint: Checkpoint
    metadata: CheckpointMetadata
    newVersions: Record<string, number>
  }
}

export declare const rotated: <A>(items: ReadonlyArray<A>, round: number) => Array<[number, A]>
export declare const time: (f: () => Promise<unknown>) => Promise<number>

export interface EmbeddedParameters {
  readonly steps: number
  readonly readSizes: ReadonlyArray<number>
  readonly reads: number
}

/** Samples in milliseconds: `saver` is the saver under test, `memory` the MemorySaver beside it. */
export interface SidedSamples {
  readonly saver: Array<number>
  readonly memory: Array<number>
}

export interface EmbeddedSamples {
  readonly superStep: SidedSamples
  /** One per read size, in the order of `readSizes`. */
  readonly getTupleLatest: ReadonlyArray<SidedSamples & { readonly size: number }>
}

export declare const embeddedWorkload: (
  saver: BaseCheckpointSaver,
  memory: BaseCheckpointSaver,
  parameters: EmbeddedParameters
) => Promise<EmbeddedSamples>
