/**
 * The server scaled out: three `serve` processes on one PostgreSQL
 * database, each call of LangGraph's SDK going to another replica (as
 * behind a round-robin load balancer). A run is seen, listed, joined,
 * stream-joined (from its `Last-Event-ID` too), cancelled and refused
 * (`reject`) from a replica other than the one that took it; a run whose
 * replica is killed (SIGKILL) mid-node ends `success` on another, with one
 * reply and its thread not left busy; three enqueued runs whose replica
 * dies finish in order; a replica stopped with SIGTERM hands its run over;
 * a cron fires once per tick whichever replica holds it.
 * Through PgBouncer in transaction mode, two replicas do the same: the
 * cluster's shard locks are rows, not session locks a pooler would share.
 */
import type { Client } from "@langchain/langgraph-sdk"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { replyTo } from "../../harness/chatGraph.ts"
import { createDatabase, serverUrl } from "../../harness/databases.ts"
import { type Bouncer, startPgBouncer } from "../../harness/pgbouncer.ts"
import { type Replica, replicas } from "../../harness/replicas.ts"

const human = (content: string) => ({ messages: [{ type: "human", content }] })

const texts = (values: unknown): Array<string> =>
  ((values as { messages?: Array<{ content: unknown }> }).messages ?? []).map((message) => String(message.content))

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

let database: Awaited<ReturnType<typeof createDatabase>>
let cluster: ReturnType<typeof replicas>

/** The replicas' clients, a new one for each call (round robin). */
let turn = 0
const any = (): Client => cluster.running[turn++ % cluster.running.length]!.client

/** Until `f` answers something `done` accepts (polled), within `ms`. */
const until = async <A>(f: () => Promise<A>, done: (value: A) => boolean, ms = 30_000) => {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await f().catch(() => undefined)
    if (value !== undefined && done(value)) return value
    if (Date.now() > deadline) throw new Error(`not done within ${ms} ms: ${JSON.stringify(value)}`)
    await sleep(200)
  }
}

/** The replica that executes the slow graph on `thread_id` now (its latest execution). */
const executor = async (thread_id: string, executions = 1): Promise<Replica> => {
  const pid = (await until(async () => cluster.executors(thread_id), (pids) => pids.length >= executions)).at(-1)!
  return cluster.byPid(pid)!
}

beforeAll(async () => {
  database = await createDatabase("replicas")
  cluster = replicas(database.url)
  await Promise.all([cluster.start(), cluster.start(), cluster.start()])
}, 120_000)

afterAll(async () => {
  await cluster?.stopAll()
  await database?.drop()
})

describe("three replicas on one PostgreSQL", { concurrent: false }, () => {
  it("serve a run from any replica: seen, listed, joined, stream-joined, refused, cancelled", async () => {
    const { thread_id } = await any().threads.create()
    // Long enough (a token each 120 ms) to be running through every call below.
    const question = "a question to answer slowly, word after word, while the other replicas are asked about it"
    const run = await any().runs.create(thread_id, "slow", { input: human(question) })
    const taker = await executor(thread_id)
    const others = cluster.running.filter((replica) => replica !== taker).map((replica) => replica.client)
    expect((await others[0]!.runs.get(thread_id, run.run_id)).status).toBe("running")
    expect((await others[1]!.runs.list(thread_id)).map((listed) => listed.run_id)).toEqual([run.run_id])
    expect((await others[0]!.threads.get(thread_id)).status).toBe("busy")
    // A second run on the busy thread, through another replica: refused (reject), nothing written.
    await expect(others[1]!.runs.create(thread_id, "chat", { input: human("me too") })).rejects.toThrow(/409/)
    // Joined from the others, while it runs: the stream, and from its Last-Event-ID.
    const seen: Array<{ id?: string; event: string }> = []
    for await (const chunk of others[0]!.runs.joinStream(thread_id, run.run_id, { streamMode: ["values"] })) {
      seen.push(chunk as { id?: string; event: string })
    }
    expect(seen.at(-1)?.event).toBe("values")
    const joined = await others[1]!.runs.join(thread_id, run.run_id)
    expect(texts(joined)).toEqual([question, replyTo(question)])
    expect((await any().runs.get(thread_id, run.run_id)).status).toBe("success")
    expect((await any().threads.get(thread_id)).status).toBe("idle")

    // Cancelled from a replica other than the one running it: it stops where it runs.
    const long = await any().runs.create(thread_id, "slow", { input: human("a long answer nobody waits for") })
    const runner = await executor(thread_id, 2)
    const elsewhere = cluster.running.find((replica) => replica !== runner)!.client
    await elsewhere.runs.cancel(thread_id, long.run_id, true)
    expect((await any().runs.get(thread_id, long.run_id)).status).toBe("interrupted")
    expect(texts((await any().threads.getState(thread_id)).values)).not.toContain(
      replyTo("a long answer nobody waits for")
    )
    // The thread takes the next run, from any replica.
    await any().runs.wait(thread_id, "chat", { input: human("still here") })
    expect(texts((await any().threads.getState(thread_id)).values).at(-1)).toBe(replyTo("still here"))
  }, 90_000)

  it("a run whose replica is killed mid-node ends success on another, once, its thread not left busy", async () => {
    const { thread_id } = await any().threads.create()
    const run = await any().runs.create(thread_id, "slow", { input: human("an answer cut short by a kill") })
    const victim = await executor(thread_id)
    await sleep(300)
    const killed = Date.now()
    await cluster.stop(victim, "SIGKILL")
    const ended = await until(() => any().runs.get(thread_id, run.run_id), (got) => got.status === "success", 30_000)
    expect(ended.status).toBe("success")
    expect(Date.now() - killed).toBeLessThan(30_000)
    // Executed again elsewhere, from the thread's last checkpoint: one question, one reply.
    expect(cluster.executors(thread_id)).toHaveLength(2)
    expect(texts((await any().threads.getState(thread_id)).values)).toEqual([
      "an answer cut short by a kill",
      replyTo("an answer cut short by a kill")
    ])
    expect((await any().threads.get(thread_id)).status).toBe("idle")
    await cluster.start()
  }, 90_000)

  it("three enqueued runs whose replica dies finish in order", async () => {
    const { thread_id } = await any().threads.create()
    const questions = ["first in line", "second in line", "third in line"]
    const runs = []
    for (const question of questions) {
      runs.push(await any().runs.create(thread_id, "slow", { input: human(question), multitaskStrategy: "enqueue" }))
    }
    const victim = await executor(thread_id)
    await cluster.stop(victim, "SIGKILL")
    for (const run of runs) {
      await until(() => any().runs.get(thread_id, run.run_id), (got) => got.status === "success", 60_000)
    }
    expect(texts((await any().threads.getState(thread_id)).values)).toEqual(
      questions.flatMap((question) => [question, replyTo(question)])
    )
    await cluster.start()
  }, 120_000)

  it("a replica stopped with SIGTERM hands its run over: it ends success on another", async () => {
    const { thread_id } = await any().threads.create()
    const run = await any().runs.create(thread_id, "slow", { input: human("an answer through a rolling deploy") })
    const leaving = await executor(thread_id)
    await sleep(200)
    // It stops as a program stopped by a signal does (130), having released its shards.
    expect(await cluster.stop(leaving, "SIGTERM")).toBe(130)
    await until(() => any().runs.get(thread_id, run.run_id), (got) => got.status === "success", 30_000)
    expect(texts((await any().threads.getState(thread_id)).values)).toEqual([
      "an answer through a rolling deploy",
      replyTo("an answer through a rolling deploy")
    ])
    await cluster.start()
  }, 90_000)

  it("a cron fires once per tick across the replicas, and stops when deleted, from any replica", async () => {
    const { thread_id } = await any().threads.create()
    const cron = await any().crons.createForThread(thread_id, "chat", {
      schedule: "* * * * * *",
      input: human("tick"),
      multitaskStrategy: "enqueue"
    })
    expect(cron).toMatchObject({ thread_id, schedule: "* * * * * *", enabled: true })
    const started = Date.now()
    await until(() => any().runs.list(thread_id, { limit: 100 }), (runs) => runs.length >= 4, 30_000)
    await any().crons.delete(cron.cron_id)
    const elapsed = (Date.now() - started) / 1000
    expect(await any().crons.search({ threadId: thread_id })).toEqual([])
    // Every run ends; no tick ran on two replicas (at most one run a second, their ids all different).
    const runs = await until(
      () => any().runs.list(thread_id, { limit: 100 }),
      (listed) => listed.every((run) => run.status === "success"),
      30_000
    )
    expect(new Set(runs.map((run) => run.run_id)).size).toBe(runs.length)
    expect(runs.length).toBeLessThanOrEqual(Math.ceil(elapsed) + 1)
    expect(runs.every((run) => run.metadata?.cron_id === cron.cron_id)).toBe(true)
    expect(texts((await any().threads.getState(thread_id)).values)).toEqual(
      runs.flatMap(() => ["tick", replyTo("tick")])
    )
    // Deleted: no tick fires after.
    await sleep(2_500)
    expect(await any().runs.list(thread_id, { limit: 100 })).toHaveLength(runs.length)
  }, 90_000)
})

describe("two replicas through PgBouncer in transaction mode", { concurrent: false }, () => {
  let bouncer: Bouncer
  let pooled: ReturnType<typeof replicas>
  let pooledDatabase: Awaited<ReturnType<typeof createDatabase>>
  beforeAll(async () => {
    bouncer = await startPgBouncer(serverUrl(), { settings: { server_login_retry: 1 } })
    pooledDatabase = await createDatabase("replicas_pooled")
    pooled = replicas(bouncer.through(pooledDatabase.url))
    await Promise.all([pooled.start(), pooled.start()])
  }, 120_000)
  afterAll(async () => {
    await pooled?.stopAll()
    await bouncer?.stop()
    await pooledDatabase?.drop()
  })

  it("serve a run from either, and resume it on the other when its runner is killed", async () => {
    const [a, b] = pooled.running.map((replica) => replica.client) as [Client, Client]
    const { thread_id } = await a.threads.create()
    const run = await b.runs.create(thread_id, "slow", { input: human("through the pooler") })
    const pid = (await until(async () => pooled.executors(thread_id), (pids) => pids.length > 0))[0]!
    const victim = pooled.byPid(pid)!
    const survivor = pooled.running.find((replica) => replica !== victim)!.client
    expect((await survivor.runs.get(thread_id, run.run_id)).status).toBe("running")
    await pooled.stop(victim, "SIGKILL")
    await until(() => survivor.runs.get(thread_id, run.run_id), (got) => got.status === "success", 30_000)
    expect(texts((await survivor.threads.getState(thread_id)).values)).toEqual([
      "through the pooler",
      replyTo("through the pooler")
    ])
  }, 90_000)
})
