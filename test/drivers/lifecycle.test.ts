/** copyThread and prune on every driver. */
import { Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll } from "vitest"
import { CheckpointStorage, EffectCheckpointSaver } from "../../src/index.ts"
import * as Pglite from "../../src/pglite.ts"
import * as Postgres from "../../src/postgres.ts"
import { lifecycleScenarios } from "../scenarios/lifecycle.ts"
import { cockroachSuite } from "../support/cockroach.ts"
import { createDatabase } from "../support/databases.ts"

let database: Awaited<ReturnType<typeof createDatabase>>
const crdb = cockroachSuite("lifecycle", () => database.url)
let pglite: ManagedRuntime.ManagedRuntime<CheckpointStorage.CheckpointStorage, unknown>
beforeAll(async () => {
  database = await createDatabase("lifecycle")
  pglite = ManagedRuntime.make(Pglite.layer())
  await pglite.context()
}, 60_000)
afterAll(async () => {
  await pglite.dispose()
  await crdb.drop()
  await database.drop()
})

lifecycleScenarios("memory", async () => EffectCheckpointSaver.fromLayer(CheckpointStorage.layerMemory))
lifecycleScenarios(
  "postgres",
  async () => EffectCheckpointSaver.fromLayer(Postgres.layer({ url: database.url, poolSize: 4 }))
)
lifecycleScenarios(
  "cockroach dialect",
  async () =>
    EffectCheckpointSaver.fromLayer(
      crdb.layer({ poolSize: 4 })
    )
)
lifecycleScenarios("pglite", async () => EffectCheckpointSaver.fromLayer(Layer.succeedContext(await pglite.context())))
