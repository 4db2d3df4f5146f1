/**
 * The official LangGraph checkpointer validation suite, every spec including
 * the opt-in DeltaChannel history specs, against the adapter.
 */
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation"
import { CheckpointStorage, EffectCheckpointSaver } from "../../src/index.ts"

const initializer = {
  checkpointerName: "EffectCheckpointSaver (memory)",
  createCheckpointer: () => EffectCheckpointSaver.fromLayer(CheckpointStorage.layerMemory),
  destroyCheckpointer: (saver: EffectCheckpointSaver) => saver.close()
}

validate(initializer)
deltaChannelHistoryTests(initializer)
