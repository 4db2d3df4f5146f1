/**
 * Production topologies, built from real parts by the tests themselves:
 * PgBouncer in transaction mode in front of the test server
 * (`harness/pgbouncer.ts`), a primary with a synchronous streaming standby
 * that fails over (`harness/replication.ts`), and an endpoint that turns
 * read-only. Every driver mode opens and works through the pooler; server
 * backends terminated mid-run, connections killed while idle, a read-only
 * endpoint and a failover reject nothing and lose nothing; the CLI and
 * `web` work through the pooler. (LangGraph's validation suite and the graph
 * scenarios through the pooler: `topology.validation.test.ts`.)
 */
import { PgClient } from "@effect/sql-pg"
import { HumanMessage } from "@langchain/core/messages"
import { Effect, Exit, Layer, Metric, Option, Redacted, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { execFile } from "node:child_process"
import { join } from "node:path"
import { promisify } from "node:util"
import { Client } from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { admin, createDatabase, serverUrl } from "../../harness/databases.ts"
import { chatGraph, text } from "../../harness/inspectedGraph.ts"
import { type Bouncer, startPgBouncer } from "../../harness/pgbouncer.ts"
import { startReplicated } from "../../harness/replication.ts"
import { chatWriters, lostTurns } from "../../harness/writers.ts"
import { CheckpointStorage, EffectCheckpointSaver, Retry } from "../../src/index.ts"
import * as Database from "../../src/internal/cli/Database.ts"
import * as Server from "../../src/internal/inspector/web/Server.ts"
import * as Postgres from "../../src/postgres.ts"
import { standIn } from "../support/cockroach.ts"
import { checkpoint, metadata } from "../support/fixtures.ts"

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The retries counted so far with any of `sqlstates`, every operation together. */
const retriesWith = async (...sqlstates: ReadonlyArray<string>) => {
  const metrics = await Effect.runPromise(Metric.snapshot)
  return metrics
    .filter((metric) =>
      metric.id === "langgraph_checkpoint_retries" &&
      (sqlstates.length === 0 || sqlstates.includes(String(metric.attributes?.["sqlstate"])))
    )
    .reduce((sum, metric) => sum + ((metric.state as { readonly count?: number }).count ?? 0), 0)
}

/** Terminates the server backends of the database `$1` (the pooler's server connections, or a direct pool's). */
const terminate = `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
  WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend'`

const terminateBackends = (database: string) => admin((client) => client.query(terminate, [database]))

const databaseOf = (url: string) => new URL(url).pathname.slice(1)

let bouncer: Bouncer
let database: Awaited<ReturnType<typeof createDatabase>>

beforeAll(async () => {
  bouncer = await startPgBouncer(serverUrl(), { settings: { server_login_retry: 1 } })
  database = await createDatabase("topology")
}, 60_000)

afterAll(async () => {
  await bouncer?.stop()
  await database?.drop()
})

describe("through PgBouncer in transaction mode", () => {
  /** Each mode's URL for a database of the test server, through the pooler. */
  const modes = [
    { name: "postgres://", through: (url: string) => bouncer.through(url) },
    { name: "cockroachdb://", through: (url: string) => standIn(bouncer.through(url)) }
  ] as const

  it(
    "every driver mode opens and works: postgres://, cockroachdb://, readOnly, migrations from many processes at once, the driver's transactions",
    async () => {
      const fresh = await createDatabase("topology_modes")
      try {
        // Migrations from three pools at once (a lock taken inside each step's transaction), one
        // mode after the other (each dialect serializes its migrators in its own way), then a
        // graph on each pool.
        const savers: Array<EffectCheckpointSaver> = []
        try {
          for (const mode of modes) {
            savers.push(
              ...await Promise.all(
                Array.from({ length: 3 }, () => EffectCheckpointSaver.fromConnString(mode.through(fresh.url)))
              )
            )
          }
          for (const [i, saver] of savers.entries()) {
            const reply = await chatGraph(saver).invoke(
              { messages: [new HumanMessage(`hello ${i}`)] },
              { configurable: { thread_id: `mode-${i}` } }
            )
            expect(reply.messages.map(text)).toEqual([`hello ${i}`, `heard "hello ${i}" (1 messages)`])
          }
          // The driver's own transactions (deleteThread holds the thread's row), many at once:
          // named prepared statements would break them behind the pooler.
          await Promise.all(savers.map((saver, i) => saver.deleteThread(`mode-${i}`)))
          for (const [i, saver] of savers.entries()) {
            expect(await saver.getTuple({ configurable: { thread_id: `mode-${i}` } })).toBeUndefined()
          }
          await chatGraph(savers[0]!).invoke({ messages: [new HumanMessage("kept")] }, {
            configurable: { thread_id: "kept" }
          })
        } finally {
          await Promise.all(savers.map((saver) => saver.close()))
        }
        const versions = await admin((client) => client.query("SELECT v FROM checkpoint_migrations"), fresh.url)
        // LangGraph's steps 0-9 and this library's 100-105, each applied once whatever raced.
        expect(versions.rowCount).toBe(16)

        // Read-only: reads work; the pool's transactions begin READ ONLY.
        const reader = EffectCheckpointSaver.fromLayer(
          Postgres.layer({ url: bouncer.through(fresh.url), readOnly: true })
        )
        try {
          const tuple = await reader.getTuple({ configurable: { thread_id: "kept" } })
          expect(tuple?.checkpoint.channel_values["messages"]).toHaveLength(2)
          await expect(reader.deleteThread("kept")).rejects.toThrow(/read-only/)
        } finally {
          await reader.close()
        }
        const refused = await Effect.runPromise(
          Effect.flip(Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            return yield* sql.withTransaction(sql`INSERT INTO checkpoint_migrations (v) VALUES (77)`)
          })).pipe(Effect.provide(Postgres.layerSqlClient({ url: bouncer.through(fresh.url), readOnly: true })))
        )
        expect(Retry.sqlState(refused)).toBe("25006")

        // Named prepared statements: on a direct connection, not through the pooler (see `Pooler`).
        const prepared = (url: string) =>
          Effect.runPromise(
            Effect.gen(function*() {
              const sql = yield* SqlClient.SqlClient
              yield* sql`SELECT 1 AS one`
              const rows = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM pg_prepared_statements`
              return rows[0]?.n
            }).pipe(Effect.provide(Postgres.layerSqlClient({ url, poolSize: 1 })))
          )
        expect(await prepared(fresh.url)).toBeGreaterThan(0)
        expect(await prepared(bouncer.through(fresh.url))).toBe(0)
      } finally {
        await fresh.drop()
      }
    },
    60_000
  )

  it("layerClient inside the application's transaction: commits with it, rolls back with it", async () => {
    const url = bouncer.through(database.url)
    await (await EffectCheckpointSaver.fromConnString(url)).close()
    // The application's own client turns named prepared statements off for the pooler.
    const app = PgClient.layer({ url: Redacted.make(url), prepare: false })
    const outcome = await Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const storage = yield* CheckpointStorage.CheckpointStorage
        yield* sql`CREATE TABLE IF NOT EXISTS audit (note text)`
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* storage.put({ thread_id: "joined" }, checkpoint(), metadata(), {})
          yield* sql`INSERT INTO audit VALUES ('joined')`
        }))
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* storage.put({ thread_id: "rolled-back" }, checkpoint(), metadata(), {})
          return yield* Effect.fail("the application changed its mind" as const)
        })).pipe(Effect.ignore)
        return {
          joined: Option.isSome(yield* storage.getTuple({ thread_id: "joined" })),
          rolledBack: Option.isSome(yield* storage.getTuple({ thread_id: "rolled-back" })),
          audit: yield* sql`SELECT note FROM audit`
        }
      }).pipe(Effect.provide(Postgres.layerClient().pipe(Layer.provideMerge(app))))
    )
    expect(outcome).toEqual({ joined: true, rolledBack: false, audit: [{ note: "joined" }] })
  })

  it("a startup parameter the pooler refuses is an InvalidConfig at once, naming it and the pooler", async () => {
    const started = Date.now()
    const error = await EffectCheckpointSaver.fromConnString(
      `${bouncer.through(database.url)}?options=-c%20statement_timeout%3D5000`
    ).then((saver) => saver.close(), (cause: unknown) => cause)
    expect(Date.now() - started).toBeLessThan(2_000)
    expect(error).toMatchObject({ _tag: "InvalidConfig" })
    expect(String(error)).toMatch(/startup parameter "options".*PgBouncer/)
  })

  for (const mode of modes) {
    it(
      `${mode.name}: server backends terminated in a loop while 8 threads write: nothing rejected, nothing lost`,
      async () => {
        const saver = await EffectCheckpointSaver.fromConnString(mode.through(database.url))
        try {
          const writers = chatWriters(saver, 8, `killed-${mode.name}`)
          const killed = await admin(async (client) => {
            let count = 0
            for (let round = 0; round < 10; round++) {
              await sleep(100)
              count += (await client.query(terminate, [databaseOf(database.url)])).rowCount ?? 0
            }
            return count
          })
          const outcome = await writers.stop()
          expect(killed).toBeGreaterThan(0)
          expect(outcome.rejected).toEqual([])
          expect(outcome.acknowledged.size).toBe(8)
          expect(await lostTurns(saver, outcome)).toEqual([])
        } finally {
          await saver.close()
        }
      },
      60_000
    )
  }

  it("connections killed while idle, by the server and by the pooler, are replaced silently: no error escapes", async () => {
    const escaped: Array<unknown> = []
    const record = (error: unknown) => void escaped.push(error)
    process.on("uncaughtException", record)
    process.on("unhandledRejection", record)
    const direct = await EffectCheckpointSaver.fromConnString(database.url, { connection: { poolSize: 4 } })
    const pooled = await EffectCheckpointSaver.fromConnString(bouncer.through(database.url), {
      connection: { poolSize: 4 }
    })
    try {
      const busy = (saver: EffectCheckpointSaver, round: number) =>
        Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            saver.put({ configurable: { thread_id: `idle-${round}-${i}` } }, checkpoint(), metadata(), {}))
        )
      await Promise.all([busy(direct, 0), busy(pooled, 0)])
      // The server ends every idle session (the direct pool's, and the pooler's server connections)…
      await terminateBackends(databaseOf(database.url))
      // …and the pooler drops its clients, as a load balancer reaping idle connections would.
      await bouncer.console(`KILL ${databaseOf(database.url)}`)
      await bouncer.console(`RESUME ${databaseOf(database.url)}`)
      await sleep(200)
      await Promise.all([busy(direct, 1), busy(pooled, 1)])
      expect(await direct.getTuple({ configurable: { thread_id: "idle-1-7" } })).toBeDefined()
      expect(await pooled.getTuple({ configurable: { thread_id: "idle-1-7" } })).toBeDefined()
    } finally {
      await direct.close()
      await pooled.close()
      process.removeListener("uncaughtException", record)
      process.removeListener("unhandledRejection", record)
    }
    expect(escaped).toEqual([])
  })

  it("an endpoint read-only for 2 s (25006) while 8 threads write: nothing rejected, nothing lost", async () => {
    const fresh = await createDatabase("topology_read_only")
    const name = databaseOf(fresh.url)
    const saver = await EffectCheckpointSaver.fromConnString(bouncer.through(fresh.url))
    try {
      const before = await retriesWith("25006")
      const writers = chatWriters(saver, 8, "read-only")
      await sleep(500)
      // New sessions are read-only, and every current one ends: what a standby or a demoted primary answers.
      await admin((client) => client.query(`ALTER DATABASE "${name}" SET default_transaction_read_only = on`))
      await terminateBackends(name)
      await sleep(2_000)
      await admin((client) => client.query(`ALTER DATABASE "${name}" RESET default_transaction_read_only`))
      await terminateBackends(name)
      const resumed = writers.turns()
      await sleep(1_000)
      const outcome = await writers.stop()
      expect(outcome.rejected).toEqual([])
      expect(await retriesWith("25006")).toBeGreaterThan(before)
      expect(outcome.acknowledgedAt.length).toBeGreaterThan(resumed)
      expect(await lostTurns(saver, outcome)).toEqual([])
    } finally {
      await saver.close()
      await fresh.drop()
    }
  }, 60_000)

  it("the CLI (a reading and a writing command) and web", async () => {
    const url = bouncer.through(database.url)
    const saver = await EffectCheckpointSaver.fromConnString(url)
    try {
      await chatGraph(saver).invoke({ messages: [new HumanMessage("hi")] }, { configurable: { thread_id: "cli" } })
    } finally {
      await saver.close()
    }
    const main = join(import.meta.dirname, "..", "..", "src", "internal", "cli", "main.ts")
    const cli = (args: ReadonlyArray<string>) =>
      promisify(execFile)(process.execPath, [main, ...args], { encoding: "utf8", timeout: 60_000 })
    // The web inspector as web.test.ts serves it: in this process, over the database the URL names.
    const web = async () => {
      const scope = Effect.runSync(Scope.make())
      try {
        const running = await Effect.runPromise(Effect.gen(function*() {
          const services = yield* Layer.buildWithScope(Database.layer(url, "read"), scope)
          return yield* Server.start().pipe(Effect.provideContext(services), Scope.provide(scope))
        }))
        const response = await fetch(`http://127.0.0.1:${running.port}/api/threads?prefix=cli`, {
          headers: { [Server.TOKEN_HEADER]: running.token }
        })
        return { status: response.status, body: JSON.stringify(await response.json()) }
      } finally {
        await Effect.runPromise(Scope.close(scope, Exit.void))
      }
    }
    // At once: each command is a process that takes seconds to load.
    const [threads, copied, page] = await Promise.all([
      cli(["threads", url, "--prefix", "cli", "--json"]),
      cli(["copy", url, "cli", "copied-cli"]),
      web()
    ])
    expect(JSON.parse(threads.stdout).map((thread: { thread_id: string }) => thread.thread_id)).toEqual(["cli"])
    expect(copied.stdout).toContain("copied cli to copied-cli")
    expect(page.status).toBe(200)
    expect(page.body).toContain(`"cli"`)
  }, 60_000)
})

describe("failover", () => {
  it(
    "primary stopped, synchronous standby promoted, pooler repointed: nothing acknowledged lost, nothing rejected, writes resume within 15 s",
    async () => {
      const cluster = await startReplicated()
      const pooler = await startPgBouncer(cluster.primary.url, {
        settings: { server_login_retry: 1 },
        databases: ["postgres"]
      })
      try {
        const saver = await EffectCheckpointSaver.fromConnString(pooler.through(cluster.primary.url))
        try {
          const retriesBefore = await retriesWith()
          const writers = chatWriters(saver, 8, "failover")
          await sleep(1_000)
          const beforeFailover = writers.turns()
          // Writers caught mid-statement by the stop (not only between statements, which the
          // pooler would hold and pass on to the new primary unseen): a lock on the primary holds
          // their writes until at least one waits on it.
          const holder = new Client({ connectionString: cluster.primary.url })
          await holder.connect()
          holder.on("error", () => {})
          await holder.query("BEGIN")
          await holder.query("LOCK TABLE checkpoints IN SHARE MODE")
          while (
            (await holder.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'"))
              .rows[0].n === 0
          ) await sleep(20)
          cluster.stopPrimary()
          await holder.end().catch(() => {})
          cluster.promote()
          const promotedAt = Date.now()
          await pooler.repoint({ host: "127.0.0.1", port: cluster.standby.port })
          await sleep(2_500)
          const outcome = await writers.stop()
          expect(beforeFailover).toBeGreaterThan(0)
          expect(outcome.rejected).toEqual([])
          const resumedAt = outcome.acknowledgedAt.find((at) => at > promotedAt)
          expect(resumedAt).toBeDefined()
          expect(resumedAt! - promotedAt).toBeLessThan(15_000)
          // Every acknowledged turn is on the new primary.
          expect(await lostTurns(saver, outcome)).toEqual([])
          // The retry metric shows the failover (the writers held by the lock met the stop).
          expect(await retriesWith()).toBeGreaterThan(retriesBefore)
        } finally {
          await saver.close()
        }
      } finally {
        await pooler.stop()
        cluster.stop()
      }
    },
    90_000
  )
})
