/**
 * LangGraph's validation suite (with DeltaChannel history) and the graph
 * scenarios through PgBouncer in transaction mode, for `postgres://` and
 * `cockroachdb://` (the SERIALIZABLE stand-in, see `support/cockroach.ts`):
 * every saver is opened from its URL through the pooler, so migrations,
 * the driver's own transactions and group commit all go through it. See
 * `topology.test.ts` for the rest of the topology.
 */
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation"
import { afterAll, beforeAll } from "vitest"
import { createDatabase, serverUrl } from "../../harness/databases.ts"
import { type Bouncer, startPgBouncer } from "../../harness/pgbouncer.ts"
import { EffectCheckpointSaver } from "../../src/index.ts"
import { graphScenarios } from "../scenarios/graphs.ts"
import { standIn } from "../support/cockroach.ts"
import { clearDatabase } from "../support/drivers.ts"

let bouncer: Bouncer
beforeAll(async () => {
  bouncer = await startPgBouncer(serverUrl())
})
afterAll(() => bouncer?.stop())

/** Each mode's URL through the pooler, to a database of its own. */
const modes = [
  { name: "postgres://", through: (url: string) => bouncer.through(url) },
  { name: "cockroachdb://", through: (url: string) => standIn(bouncer.through(url)) }
] as const

for (const mode of modes) {
  let database: Awaited<ReturnType<typeof createDatabase>>
  const saver = (poolSize: number) =>
    EffectCheckpointSaver.fromConnString(mode.through(database.url), { connection: { poolSize } })
  const initializer = {
    checkpointerName: `EffectCheckpointSaver (${mode.name} through PgBouncer)`,
    beforeAll: async () => {
      database = await createDatabase("topology_validation")
    },
    afterAll: async () => {
      await database.drop()
    },
    createCheckpointer: () => saver(2),
    // Some specs reuse fixed thread ids: each starts from empty tables.
    destroyCheckpointer: async (checkpointer: EffectCheckpointSaver) => {
      await checkpointer.close()
      await clearDatabase(database.url)
    }
  }
  validate(initializer)
  deltaChannelHistoryTests(initializer)
  graphScenarios(`${mode.name} through PgBouncer`, () => saver(4))
}
