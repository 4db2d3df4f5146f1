/**
 * The PgBouncer kill loop, long: 8 agents write through PgBouncer in
 * transaction mode while the server terminates the pooler's server
 * connections again and again (every 20 ms, 40 times a run), 20 runs in a
 * row for each driver mode (`postgres://` and `cockroachdb://`). Not one
 * turn may be rejected, nor lost: a server connection that dies under the
 * pooler is a lost connection to the client (PgBouncer says so as FATAL
 * 08P01: "server conn crashed?", "server connection closed", "invalid
 * server parameter"), and idempotent work is retried.
 *
 * `npm run test:long` (its own vitest project: minutes, not `npm test`'s).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { admin, createDatabase, serverUrl } from "../../harness/databases.ts"
import { type Bouncer, startPgBouncer } from "../../harness/pgbouncer.ts"
import { chatWriters, lostTurns } from "../../harness/writers.ts"
import { EffectCheckpointSaver } from "../../src/index.ts"
import { standIn } from "../support/cockroach.ts"

const RUNS = Number(process.env.KILL_RUNS ?? 20)

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const terminate = `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
  WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend'`

let bouncer: Bouncer
let database: Awaited<ReturnType<typeof createDatabase>>

beforeAll(async () => {
  bouncer = await startPgBouncer(serverUrl(), { settings: { server_login_retry: 1 } })
  database = await createDatabase("pooler_kills")
}, 60_000)

afterAll(async () => {
  await bouncer?.stop()
  await database?.drop()
})

describe("PgBouncer's server connections terminated in a loop while 8 threads write", () => {
  const modes = [
    { name: "postgres://", through: (url: string) => bouncer.through(url) },
    { name: "cockroachdb://", through: (url: string) => standIn(bouncer.through(url)) }
  ] as const
  for (const mode of modes) {
    it(`${mode.name}: ${RUNS} runs in a row reject nothing and lose nothing`, async () => {
      const name = new URL(database.url).pathname.slice(1)
      for (let run = 0; run < RUNS; run++) {
        const saver = await EffectCheckpointSaver.fromConnString(mode.through(database.url))
        try {
          const writers = chatWriters(saver, 8, `kills-${mode.name}-${run}`)
          const killed = await admin(async (client) => {
            let count = 0
            for (let round = 0; round < 40; round++) {
              await sleep(20)
              count += (await client.query(terminate, [name])).rowCount ?? 0
            }
            return count
          })
          const outcome = await writers.stop()
          expect(killed).toBeGreaterThan(0)
          expect(outcome.rejected.map(String), `run ${run}`).toEqual([])
          expect(outcome.acknowledged.size).toBe(8)
          expect(await lostTurns(saver, outcome)).toEqual([])
        } finally {
          await saver.close()
        }
      }
    }, RUNS * 30_000)
  }
})
