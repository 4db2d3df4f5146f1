/**
 * The suites that hold without encryption, with encryption on: the official
 * validation suite (DeltaChannel history included), the graph scenarios and
 * the lifecycle scenarios, on every driver.
 */
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation"
import { describe } from "vitest"
import type { EffectCheckpointSaver, SaverOptions } from "../../src/index.ts"
import { keyOf } from "../scenarios/encryption.ts"
import { graphScenarios } from "../scenarios/graphs.ts"
import { lifecycleScenarios } from "../scenarios/lifecycle.ts"
import { drivers } from "../support/drivers.ts"

/** Two keys, the second primary: reads go through the ring, writes through the primary. */
const options: SaverOptions = { encryption: { keys: { k1: keyOf(1), k2: keyOf(2) }, primary: "k2" } }

const matrix = drivers("encrypted")

for (const driver of matrix.all) {
  const makeSaver = async () => driver.saver(options)
  describe(`${driver.name}, encrypted`, () => {
    graphScenarios(`${driver.name}, encrypted`, makeSaver)
    lifecycleScenarios(`${driver.name}, encrypted`, makeSaver)
  })
}

for (const driver of [matrix.memory, matrix.postgres, matrix.pglite]) {
  const initializer = {
    checkpointerName: `EffectCheckpointSaver (${driver.name}, encrypted)`,
    createCheckpointer: async () => driver.saver(options),
    // The validation suite reuses thread ids: each spec starts from an empty storage.
    destroyCheckpointer: async (saver: EffectCheckpointSaver) => {
      await saver.close()
      await driver.clear()
    }
  }
  validate(initializer)
  deltaChannelHistoryTests(initializer)
}
