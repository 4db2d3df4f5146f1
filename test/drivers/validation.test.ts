/**
 * The official LangGraph checkpointer validation suite, every spec including
 * the opt-in DeltaChannel history specs, against the adapter on every driver.
 * Some specs reuse fixed thread ids: each starts from an empty storage.
 */
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation"
import type { EffectCheckpointSaver } from "../../src/index.ts"
import { drivers } from "../support/drivers.ts"

for (const driver of drivers("validation").all) {
  const initializer = {
    checkpointerName: `EffectCheckpointSaver (${driver.name})`,
    createCheckpointer: () => driver.saver({}, 2),
    destroyCheckpointer: async (saver: EffectCheckpointSaver) => {
      await saver.close()
      await driver.clear()
    }
  }
  validate(initializer)
  deltaChannelHistoryTests(initializer)
}
