/**
 * The suites that hold without encryption, with encryption on: the official
 * validation suite (DeltaChannel history included), the graph scenarios and
 * the lifecycle scenarios, on every driver.
 */
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation"
import { Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe } from "vitest"
import { CheckpointStorage, EffectCheckpointSaver, type SaverOptions } from "../../src/index.ts"
import * as Pglite from "../../src/pglite.ts"
import * as Postgres from "../../src/postgres.ts"
import { keyOf } from "../scenarios/encryption.ts"
import { graphScenarios } from "../scenarios/graphs.ts"
import { lifecycleScenarios } from "../scenarios/lifecycle.ts"
import { cockroachSuite } from "../support/cockroach.ts"
import { createDatabase } from "../support/databases.ts"

/** Two keys, the second primary: reads go through the ring, writes through the primary. */
const options: SaverOptions = { encryption: { keys: { k1: keyOf(1), k2: keyOf(2) }, primary: "k2" } }

let database: Awaited<ReturnType<typeof createDatabase>>
let pglite: ManagedRuntime.ManagedRuntime<CheckpointStorage.CheckpointStorage, unknown>
const crdb = cockroachSuite("encrypted", () => database.url)
beforeAll(async () => {
  database = await createDatabase("encrypted")
  pglite = ManagedRuntime.make(Pglite.layer())
  await pglite.context()
}, 60_000)
afterAll(async () => {
  await pglite.dispose()
  await crdb.drop()
  await database.drop()
})

const savers = {
  memory: async () => EffectCheckpointSaver.fromLayer(CheckpointStorage.layerMemory, options),
  postgres: async () =>
    EffectCheckpointSaver.fromLayer(Postgres.layer({ url: database.url, schema: "encrypted", poolSize: 4 }), options),
  "cockroach dialect": async () => EffectCheckpointSaver.fromLayer(crdb.layer({ poolSize: 4 }), options),
  pglite: async () => EffectCheckpointSaver.fromLayer(Layer.succeedContext(await pglite.context()), options)
}

for (const [name, makeSaver] of Object.entries(savers)) {
  describe(`${name}, encrypted`, () => {
    graphScenarios(`${name}, encrypted`, makeSaver)
    lifecycleScenarios(`${name}, encrypted`, makeSaver)
  })
}

/** Every thread the storage holds goes after each spec (the validation suite reuses thread ids). */
const clear = (saver: EffectCheckpointSaver) =>
  (async () => {
    const threads = new Set<string>()
    for await (const tuple of saver.list({})) threads.add(String(tuple.config.configurable?.thread_id))
    for (const thread of threads) await saver.deleteThread(thread)
  })()

for (const name of ["memory", "postgres", "pglite"] as const) {
  const initializer = {
    checkpointerName: `EffectCheckpointSaver (${name}, encrypted)`,
    createCheckpointer: savers[name],
    destroyCheckpointer: async (saver: EffectCheckpointSaver) => {
      await clear(saver)
      await saver.close()
    }
  }
  validate(initializer)
  deltaChannelHistoryTests(initializer)
}
