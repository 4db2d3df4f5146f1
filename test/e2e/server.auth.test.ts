/**
 * The server's trust boundary, through LangGraph's SDK: with an auth
 * handler (LangGraph's own `Auth`), each user owns the threads they create,
 * and another user's client gets 404 for every route on them (read, state,
 * history, search, count, stream, rejoin, cancel, update, copy, prune,
 * delete), exactly as for a thread that does not exist; a request without
 * credentials gets 401. A client cannot take ownership by writing the
 * `owner` key itself. Serving beyond loopback without a handler is refused.
 */
import { Client } from "@langchain/langgraph-sdk"
import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { chatGraph, replyTo } from "../../harness/chatGraph.ts"
import { type LangGraphServer, serve } from "../../src/server.ts"

const human = (content: string) => ({ messages: [{ type: "human", content }] })

const drain = async (stream: AsyncIterable<unknown>) => {
  for await (const _ of stream) { /* read to the end */ }
}

/** Bearer tokens name their user; anything else is refused. */
const auth = new Auth().authenticate((request: Request) => {
  const token = request.headers.get("authorization")?.replace(/^Bearer /, "")
  if (token !== "alice-token" && token !== "bob-token") throw new HTTPException(401, { message: "who are you?" })
  return { identity: token.replace("-token", ""), permissions: [] }
})

describe("the server with an auth handler", () => {
  let server: LangGraphServer
  let dir: string
  let alice: Client
  let bob: Client
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "lce-server-auth-"))
    server = await serve({
      graphs: { chat: chatGraph(), slow: chatGraph({ slow: 50 }) },
      database: `pglite:${dir}`,
      auth,
      port: 0,
      // On, so that its guard is tested.
      protocol: true
    })
    alice = new Client({ apiUrl: server.url, defaultHeaders: { authorization: "Bearer alice-token" } })
    bob = new Client({ apiUrl: server.url, defaultHeaders: { authorization: "Bearer bob-token" } })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
    await rm(dir, { recursive: true, force: true })
  })

  it("refuses a request without credentials", async () => {
    const search = { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }
    expect((await fetch(`${server.url}/threads/search`, search)).status).toBe(401)
    expect((await fetch(`${server.url}/info`, { headers: { authorization: "Bearer mallory" } })).status).toBe(401)
    // The health check answers anyone (a load balancer's, Kubernetes' readiness probe), and says nothing more.
    const health = await fetch(`${server.url}/ok`)
    expect([health.status, await health.json()]).toEqual([200, { ok: true }])
    expect((await fetch(`${server.url}/ok`, { method: "POST" })).status).toBe(401)
  })

  it("keeps each user's threads their own on every route", async () => {
    // The owner is the server's to set: what a client writes under its key is replaced.
    const thread = await alice.threads.create({ metadata: { topic: "secret", owner: "bob" } })
    const id = thread.thread_id
    expect(thread.metadata).toMatchObject({ topic: "secret", owner: "alice" })
    await drain(alice.runs.stream(id, "chat", { input: human("my secret") }))
    const slow = await alice.runs.create(id, "slow", { input: human("a slow one") })

    const absent = /HTTP 404/
    await expect(bob.threads.get(id)).rejects.toThrow(absent)
    await expect(bob.threads.getState(id)).rejects.toThrow(absent)
    await expect(bob.threads.getHistory(id)).rejects.toThrow(absent)
    await expect(bob.threads.update(id, { metadata: { topic: "mine now" } })).rejects.toThrow(absent)
    await expect(bob.threads.updateState(id, { values: human("injected") })).rejects.toThrow(absent)
    await expect(drain(bob.runs.stream(id, "chat", { input: human("let me in") }))).rejects.toThrow(absent)
    await expect(drain(bob.runs.joinStream(id, slow.run_id))).rejects.toThrow(absent)
    await expect(bob.runs.get(id, slow.run_id)).rejects.toThrow(absent)
    await expect(bob.runs.cancel(id, slow.run_id)).rejects.toThrow(absent)
    await expect(bob.threads.copy(id)).rejects.toThrow(absent)
    await expect(bob.threads.delete(id)).rejects.toThrow(absent)
    expect(await bob.threads.prune([id], { strategy: "delete" })).toEqual({ pruned_count: 0 })
    expect(await bob.threads.search({ metadata: { topic: "secret" } })).toEqual([])
    expect(await bob.threads.search()).toEqual([])
    expect(await bob.threads.count()).toBe(0)
    // The thread protocol's event stream, which never asks the ThreadSaver, is guarded too.
    const events = await fetch(`${server.url}/threads/${id}/stream/events`, {
      method: "POST",
      headers: { authorization: "Bearer bob-token", "content-type": "application/json" },
      body: "{}"
    })
    expect(events.status).toBe(404)

    // Nothing of bob's reached alice's thread; the slow run went on.
    await alice.runs.join(id, slow.run_id)
    const state = await alice.threads.getState(id)
    expect((state.values as { messages: Array<{ content: string }> }).messages.map((m) => m.content)).toEqual([
      "my secret",
      replyTo("my secret"),
      "a slow one",
      replyTo("a slow one")
    ])
    expect((await alice.threads.get(id)).metadata).toMatchObject({ topic: "secret", owner: "alice" })
    expect(await alice.threads.count()).toBe(1)

    // Bob's own thread is his, and alice cannot see it either.
    const own = await bob.threads.create({ metadata: { topic: "secret" } })
    expect(await bob.threads.count()).toBe(1)
    await expect(alice.threads.get(own.thread_id)).rejects.toThrow(absent)
    expect((await alice.threads.search({ metadata: { topic: "secret" } })).map((t) => t.thread_id)).toEqual([id])
    const copy = await alice.threads.copy(id)
    expect(copy.metadata).toMatchObject({ owner: "alice" })
    expect(await alice.threads.prune([id, own.thread_id], { strategy: "delete" })).toEqual({ pruned_count: 1 })
    await expect(bob.threads.get(own.thread_id)).resolves.toMatchObject({ thread_id: own.thread_id })
  }, 60_000)

  it("keeps each user's crons their own, and the threads their ticks make", async () => {
    const absent = /HTTP 404/
    const { thread_id } = await alice.threads.create()
    await expect(bob.crons.createForThread(thread_id, "chat", { schedule: "0 0 1 1 *" })).rejects.toThrow(absent)
    const cron = await alice.crons.createForThread(thread_id, "chat", {
      schedule: "0 0 1 1 *",
      metadata: { owner: "bob" }
    })
    expect(cron).toMatchObject({ user_id: "alice", metadata: { owner: "alice" } })
    await expect(bob.crons.update(cron.cron_id, { enabled: false })).rejects.toThrow(absent)
    await expect(bob.crons.delete(cron.cron_id)).rejects.toThrow(absent)
    expect(await bob.crons.search()).toEqual([])
    expect(await bob.crons.count()).toBe(0)
    expect(await alice.crons.count()).toBe(1)
    // A stateless cron's thread is its creator's.
    const ticking = await bob.crons.create("chat", {
      schedule: "* * * * * *",
      input: human("bob's tick"),
      onRunCompleted: "keep"
    })
    const ticked = { values: { messages: [{ content: "bob's tick" }] } }
    for (const deadline = Date.now() + 20_000; (await bob.threads.search(ticked)).length === 0;) {
      if (Date.now() > deadline) throw new Error("no tick within 20 s")
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    await bob.crons.delete(ticking.cron_id)
    expect(await alice.threads.search(ticked)).toEqual([])
    expect((await bob.threads.search(ticked))[0]?.metadata).toMatchObject({ owner: "bob", graph_id: "chat" })
    await alice.crons.delete(cron.cron_id)
  }, 60_000)
})

describe("listening beyond loopback", () => {
  it("needs an auth handler", async () => {
    await expect(serve({ graphs: { chat: chatGraph() }, database: "memory:", host: "0.0.0.0", port: 0 }))
      .rejects.toThrow(/needs an auth handler/)
  })
})
