/** Checkpoints and metadata for tests that call the contract directly. */
import { uuid6 } from "@langchain/langgraph-checkpoint"
import type { Checkpoint } from "../../src/index.ts"

/** A checkpoint whose channels all have version 1. */
export const checkpoint = (channel_values: Record<string, unknown> = {}, id = uuid6(-1)): Checkpoint.Checkpoint => ({
  v: 4,
  id,
  ts: new Date().toISOString(),
  channel_values,
  channel_versions: Object.fromEntries(Object.keys(channel_values).map((channel) => [channel, 1])),
  versions_seen: {}
})

export const metadata = (extra: Record<string, unknown> = {}): Checkpoint.CheckpointMetadata => ({
  source: "loop",
  step: 0,
  parents: {},
  ...extra
})
