import { afterAll, beforeAll } from "vitest"
import { EffectCheckpointSaver } from "../../src/index.ts"
import * as Postgres from "../../src/postgres.ts"
import { graphScenarios } from "../scenarios/graphs.ts"
import { createDatabase } from "../support/databases.ts"

let database: Awaited<ReturnType<typeof createDatabase>>
beforeAll(async () => {
  database = await createDatabase("graphs")
})
afterAll(() => database.drop())

graphScenarios(
  "postgres",
  async () => EffectCheckpointSaver.fromLayer(Postgres.layer({ url: database.url, poolSize: 4 }))
)
