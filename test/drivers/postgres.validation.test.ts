/**
 * The official LangGraph validation suite, every spec including DeltaChannel
 * history, against the adapter over PostgreSQL.
 */
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation"
import { EffectCheckpointSaver } from "../../src/index.ts"
import * as Postgres from "../../src/postgres.ts"
import { admin, createDatabase } from "../support/databases.ts"

let database: Awaited<ReturnType<typeof createDatabase>>

const initializer = {
  checkpointerName: "EffectCheckpointSaver (postgres)",
  beforeAll: async () => {
    database = await createDatabase("validation")
  },
  afterAll: async () => {
    await database.drop()
  },
  createCheckpointer: () => EffectCheckpointSaver.fromLayer(Postgres.layer({ url: database.url, poolSize: 2 })),
  // Some specs reuse fixed thread ids: each starts from empty tables.
  destroyCheckpointer: async (saver: EffectCheckpointSaver) => {
    await saver.close()
    await admin((client) => client.query("TRUNCATE checkpoints, checkpoint_blobs, checkpoint_writes"), database.url)
  }
}

validate(initializer)
deltaChannelHistoryTests(initializer)
