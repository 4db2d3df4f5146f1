/**
 * The suites the CockroachDB dialect must pass that no other file runs on
 * it: LangGraph's validation suite (with DeltaChannel history), the graph
 * scenarios, and writers conflicting for real under SERIALIZABLE. On the
 * cluster in COCKROACH_URL, or on PostgreSQL in SERIALIZABLE mode without one
 * (see `support/cockroach.ts`).
 */
import { it } from "@effect/vitest"
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation"
import { describe } from "vitest"
import { EffectCheckpointSaver } from "../../src/index.ts"
import { conflictingWriters } from "../scenarios/conflicts.ts"
import { graphScenarios } from "../scenarios/graphs.ts"
import { cockroachSuite } from "../support/cockroach.ts"
import { createDatabase } from "../support/databases.ts"

let database: Awaited<ReturnType<typeof createDatabase>>
const crdb = cockroachSuite("suites", () => database.url)

const initializer = {
  checkpointerName: "EffectCheckpointSaver (cockroach dialect)",
  beforeAll: async () => {
    database = await createDatabase("crdb_suites")
  },
  afterAll: async () => {
    await crdb.drop()
    await database.drop()
  },
  createCheckpointer: () => EffectCheckpointSaver.fromLayer(crdb.layer({ poolSize: 2 })),
  // Some specs reuse fixed thread ids: each starts from empty tables.
  destroyCheckpointer: async (saver: EffectCheckpointSaver) => {
    await saver.close()
    await crdb.admin((client) =>
      client.query(
        "DELETE FROM checkpoint_writes; DELETE FROM checkpoint_blobs; DELETE FROM checkpoint_pieces; DELETE FROM checkpoints"
      )
    )
  }
}

validate(initializer)
deltaChannelHistoryTests(initializer)

graphScenarios("cockroach dialect", async () => EffectCheckpointSaver.fromLayer(crdb.layer({ poolSize: 4 })))

describe("real conflicts on the cockroach dialect", () => {
  it.live(
    "SERIALIZABLE writers on the same threads conflict for real, and every operation commits",
    () => conflictingWriters(crdb.layer({ poolSize: 8 })),
    60_000
  )
})
