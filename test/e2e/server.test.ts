/**
 * The server through LangGraph's own client, unmodified: `@langchain/langgraph-sdk`'s
 * `Client` against this library's server (a real port, on PGlite and on
 * PostgreSQL) and against LangGraph's own embed server over `MemorySaver`
 * (`referenceServer`), the same conversation on both: creating threads,
 * streaming runs in three modes, state, history with `limit` and `before`,
 * an `interrupt()` resumed with a `Command`, a fork by `updateState`,
 * search. The two recordings must be equal once ids and timestamps are
 * normalised. Then what only this server does, each checked against what
 * the thread held before: rejoining a running stream (also after a dropped
 * connection, from its last event id), cancelling a streaming run (its
 * answer never lands), count, copy (the whole history), prune with both
 * strategies and delete (every row counted), the errors a client gets, and
 * the buffer a run nobody reads keeps.
 */
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph"
import { Client } from "@langchain/langgraph-sdk"
import { mkdtemp, rm } from "node:fs/promises"
import http from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { approvedWith, chatGraph, replyTo } from "../../harness/chatGraph.ts"
import { admin, createDatabase } from "../../harness/databases.ts"
import { type ReferenceServer, referenceServer } from "../../harness/referenceServer.ts"
import * as Tables from "../../src/internal/sql/Tables.ts"
import { type LangGraphServer, serve } from "../../src/server.ts"
import { normalise } from "../support/differential.ts"

/** The status of `GET /info` asked with another `Host` header (fetch cannot set one). */
const statusWithHost = (base: string, host: string) =>
  new Promise<number>((resolve, reject) => {
    const request = http.get(`${base}/info`, { headers: { host } }, (response) => {
      response.resume()
      resolve(response.statusCode ?? 0)
    })
    request.on("error", reject)
  })

type Chunk = { readonly event: string; readonly data: unknown }

const human = (content: string) => ({ messages: [{ type: "human", content }] })

/** A JSON POST's request options. */
const json = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body)
})

/** The chat graph as a subgraph: one node of a parent graph. */
const nestedGraph = () =>
  new StateGraph(MessagesAnnotation).addNode("inner", chatGraph()).addEdge(START, "inner").addEdge("inner", END)
    .compile()

const graphs = () => ({ chat: chatGraph(), slow: chatGraph({ slow: 40 }), nested: nestedGraph() })

/** Every chunk of a stream, as the SDK yields them. */
const collect = async (stream: AsyncIterable<Chunk>): Promise<Array<Chunk>> => {
  const chunks: Array<Chunk> = []
  for await (const chunk of stream) chunks.push({ event: chunk.event, data: chunk.data })
  return chunks
}

/** The texts of a state's messages. */
const texts = (values: unknown): Array<string> =>
  ((values as { messages?: Array<{ content: unknown }> }).messages ?? []).map((message) => String(message.content))

/**
 * The conversation both servers are asked, recorded: what every call
 * answered. `chat` is the assistant serving `chatGraph()`.
 */
const conversation = async (client: Client): Promise<Array<readonly [string, unknown]>> => {
  const recording: Array<readonly [string, unknown]> = []
  const record = (label: string, value: unknown) => recording.push([label, value])
  const thread = await client.threads.create({ metadata: { topic: "greeting", user: "ada" } })
  record("create", thread)
  const id = thread.thread_id
  record(
    "stream hello",
    await collect(client.runs.stream(id, "chat", {
      input: human("hello"),
      streamMode: ["values", "updates", "messages-tuple"]
    }))
  )
  record("state", await client.threads.getState(id))
  record("stream approve", await collect(client.runs.stream(id, "chat", { input: human("please approve") })))
  record("state at interrupt", await client.threads.getState(id))
  record(
    "resume",
    await collect(client.runs.stream(id, "chat", { command: { resume: "yes" }, streamMode: ["values", "updates"] }))
  )
  record("state resumed", await client.threads.getState(id, undefined, { subgraphs: true }))
  const history = await client.threads.getHistory(id)
  record("history", history)
  record("history limit 2", await client.threads.getHistory(id, { limit: 2 }))
  const earlier = history.at(-3)!
  record(
    "history before",
    // The embed server takes `before` as a checkpoint id (LangGraph Platform also takes a config).
    await client.threads.getHistory(id, { before: earlier.checkpoint.checkpoint_id as never })
  )
  record("state at checkpoint", await client.threads.getState(id, earlier.checkpoint.checkpoint_id!))
  // A fork: the state after the first answer, with another human message.
  const afterHello = history.find((state) => texts(state.values).length === 2 && state.next.length === 0)!
  const forked = await client.threads.updateState(id, {
    values: human("a fork"),
    checkpointId: afterHello.checkpoint.checkpoint_id!
  })
  record("fork", forked)
  record("state forked", await client.threads.getState(id))
  record(
    "stream on the fork",
    await collect(client.runs.stream(id, "chat", { input: null, streamMode: ["values"] }))
  )
  record("history after fork", await client.threads.getHistory(id, { limit: 3 }))
  // A subgraph paused inside: its state under the parent's task, and its stream's namespaces.
  const nested = await client.threads.create({ metadata: { topic: "nested" } })
  record(
    "nested stream",
    await collect(client.runs.stream(nested.thread_id, "nested", {
      input: human("approve the inner one"),
      streamMode: ["values", "updates"],
      streamSubgraphs: true
    }))
  )
  record("nested state with subgraphs", await client.threads.getState(nested.thread_id, undefined, { subgraphs: true }))
  record(
    "nested resume",
    await collect(client.runs.stream(nested.thread_id, "nested", {
      command: { resume: "yes" },
      streamMode: ["values"],
      streamSubgraphs: true
    }))
  )
  record("nested history", await client.threads.getHistory(nested.thread_id))
  await client.threads.create({ metadata: { topic: "other", user: "ada" } })
  record("search", await client.threads.search({ metadata: { topic: "greeting" } }))
  record("get", await client.threads.get(id))
  return recording
}

/**
 * What the two may differ in: a checkpoint's metadata `run_id`, which this
 * library's savers record by default (as LangGraph's PostgreSQL saver and
 * Platform do; `deleteForRuns` and a cancel's rollback find a run's
 * checkpoints by it) and `MemorySaver` does not; and a thread's `values`,
 * which LangGraph Platform answers with a thread (agent-chat-ui titles its
 * threads by them) and the embed server does not; and a thread's metadata
 * `assistant_id`, the assistant's UUID here as LangGraph Platform stores it,
 * where the embed server stores the graph id.
 */
const comparable = (recording: unknown) =>
  normalise(JSON.parse(JSON.stringify(recording), function(this: Record<string, unknown>, key, value) {
    if (key === "run_id" && "source" in this && "step" in this) return undefined
    if (key === "assistant_id" && "graph_id" in this) return undefined
    return key === "values" && "thread_id" in this && "status" in this ? undefined : value
  }))

describe.each(
  [
    ["PGlite", async () => `pglite:${await mkdtemp(join(tmpdir(), "lce-server-"))}`],
    ["PostgreSQL", async () => (await createDatabase("server")).url]
  ] as const
)("the server on %s, through LangGraph's SDK", (backend, database) => {
  let server: LangGraphServer
  let reference: ReferenceServer
  let url: string
  let client: Client
  beforeAll(async () => {
    url = await database()
    server = await serve({
      graphs: graphs(),
      database: url,
      port: 0,
      runs: { maxEvents: 64 }
    })
    reference = await referenceServer(graphs())
    client = new Client({ apiUrl: server.url })
  }, 120_000)
  afterAll(async () => {
    await server?.close()
    await reference?.close()
    if (url?.startsWith("pglite:")) await rm(url.slice("pglite:".length), { recursive: true, force: true })
  })

  it("answers the conversation as LangGraph's embed server on MemorySaver does", async () => {
    const ours = await conversation(client)
    const theirs = await conversation(new Client({ apiUrl: reference.url }))
    expect(comparable(ours)).toEqual(comparable(theirs))
    // The subgraph's own state is there, under the parent's task paused in it.
    const nested = ours.find(([label]) => label === "nested state with subgraphs")![1] as {
      tasks: Array<{ state?: { values?: unknown; next?: Array<string> } }>
    }
    expect(nested.tasks[0]?.state?.next).toEqual(["review"])
    expect(texts(nested.tasks[0]?.state?.values)).toEqual(["approve the inner one", replyTo("approve the inner one")])
    // And the conversation is what the graph says.
    const state = ours.find(([label]) => label === "state resumed")![1]
    expect(texts((state as { values: unknown }).values)).toEqual([
      "hello",
      replyTo("hello"),
      "please approve",
      replyTo("please approve"),
      approvedWith("yes")
    ])
    // A thread shows the values its state had when its last run ended, as the API writes them, and whether
    // that run paused.
    const id = (ours[0]![1] as { readonly thread_id: string }).thread_id
    const [thread, last] = await Promise.all([client.threads.get(id), client.threads.getState(id)])
    expect(thread.values).toEqual(last.values)
    expect(thread.status).toBe("idle")
    const paused = await client.threads.create()
    await collect(client.runs.stream(paused.thread_id, "chat", { input: human("please approve") }))
    const [waiting, atInterrupt] = await Promise.all([
      client.threads.get(paused.thread_id),
      client.threads.getState(paused.thread_id)
    ])
    expect(waiting.status).toBe("interrupted")
    expect(texts(waiting.values)).toEqual(["please approve", replyTo("please approve")])
    expect(waiting.values).toEqual(atInterrupt.values)
  }, 60_000)

  it("lets a client rejoin a running stream, from its last event after a dropped connection", async () => {
    const { thread_id } = await client.threads.create()
    const run = await client.runs.create(thread_id, "slow", {
      input: human("a long answer to wait for"),
      streamMode: ["values", "messages-tuple"]
    })
    const first: Array<Chunk> = []
    const dropped = new AbortController()
    let lastEventId: string | undefined
    // The SDK ends the stream quietly when its signal aborts.
    for await (const chunk of client.runs.joinStream(thread_id, run.run_id, { signal: dropped.signal })) {
      first.push(chunk)
      lastEventId = (chunk as { id?: string }).id
      if (first.length === 3) dropped.abort()
    }
    expect(first).toHaveLength(3)
    const rest = await collect(client.runs.joinStream(thread_id, run.run_id, { lastEventId: lastEventId! }))
    const whole = await collect(client.runs.joinStream(thread_id, run.run_id))
    expect(whole.length).toBeGreaterThan(3)
    expect([...first, ...rest].map((chunk) => chunk.data)).toEqual(whole.map((chunk) => chunk.data))
    expect(texts((await client.threads.getState(thread_id)).values)).toEqual([
      "a long answer to wait for",
      replyTo("a long answer to wait for")
    ])
    expect((await client.runs.get(thread_id, run.run_id)).status).toBe("success")
  }, 60_000)

  it("stops a streaming run that is cancelled: its answer never lands, the thread takes the next", async () => {
    const { thread_id } = await client.threads.create()
    let run_id: string | undefined
    const chunks: Array<Chunk> = []
    for await (
      const chunk of client.runs.stream(thread_id, "slow", {
        input: human("an answer nobody will get to read"),
        streamMode: ["messages-tuple"],
        onRunCreated: (created) => {
          run_id = created.run_id
        }
      })
    ) {
      chunks.push(chunk)
      if (chunks.filter((c) => c.event === "messages").length === 2) {
        await client.runs.cancel(thread_id, run_id!, true)
      }
    }
    expect((await client.runs.get(thread_id, run_id!)).status).toBe("interrupted")
    expect((await client.threads.get(thread_id)).status).toBe("idle")
    expect(texts((await client.threads.getState(thread_id)).values)).not.toContain(
      replyTo("an answer nobody will get to read")
    )
    await collect(client.runs.stream(thread_id, "chat", { input: human("next") }))
    expect(texts((await client.threads.getState(thread_id)).values).at(-1)).toBe(replyTo("next"))
  }, 60_000)

  it("counts, copies the whole history, prunes with both strategies and deletes", async () => {
    const made = []
    for (const topic of ["a", "b", "b"]) {
      const { thread_id } = await client.threads.create({ metadata: { topic, lifecycle: backend } })
      for (const text of ["one", "two"]) await collect(client.runs.stream(thread_id, "chat", { input: human(text) }))
      made.push(thread_id)
    }
    expect(await client.threads.count({ metadata: { lifecycle: backend } })).toBe(3)
    expect(await client.threads.count({ metadata: { lifecycle: backend, topic: "b" } })).toBe(2)

    const [a, b1, b2] = made as [string, string, string]
    const copy = await client.threads.copy(a)
    expect(copy.thread_id).not.toBe(a)
    expect(copy.metadata).toMatchObject({ topic: "a", lifecycle: backend })
    const strip = (history: unknown, thread_id: string) =>
      normalise(JSON.parse(JSON.stringify(history).replaceAll(thread_id, "<thread>")))
    expect(strip(await client.threads.getHistory(copy.thread_id), copy.thread_id)).toEqual(
      strip(await client.threads.getHistory(a), a)
    )

    const before = await client.threads.getState(b1)
    expect(await client.threads.prune([b1], { strategy: "keep_latest" })).toEqual({ pruned_count: 1 })
    expect(await client.threads.getHistory(b1)).toHaveLength(1)
    expect((await client.threads.getState(b1)).values).toEqual(before.values)
    await collect(client.runs.stream(b1, "chat", { input: human("three") }))
    expect(texts((await client.threads.getState(b1)).values)).toEqual([
      "one",
      replyTo("one"),
      "two",
      replyTo("two"),
      "three",
      replyTo("three")
    ])

    expect(await client.threads.prune([b2, crypto.randomUUID()], { strategy: "delete" })).toEqual({ pruned_count: 1 })
    await expect(client.threads.get(b2)).rejects.toThrow(/404/)
    await client.threads.delete(a)
    await expect(client.threads.get(a)).rejects.toThrow(/404/)
    expect(await client.threads.count({ metadata: { lifecycle: backend } })).toBe(2)
    if (backend === "PostgreSQL") {
      const tables = Tables.make()
      const counts = await admin(async (pg) => {
        const rows: Record<string, number> = {}
        for (const table of [tables.checkpoints, tables.blobs, tables.writes, tables.pieces, tables.threads]) {
          const result = await pg.query(`SELECT count(*)::int AS n FROM ${table} WHERE thread_id = ANY($1)`, [[a, b2]])
          rows[table] = result.rows[0].n
        }
        return rows
      }, url)
      expect(Object.values(counts).every((n) => n === 0)).toBe(true)
    }
  }, 90_000)

  it("says where a thread's bytes are (GET /threads/{id}/storage), as the saver reports them", async () => {
    const storage = (thread_id: string) => fetch(`${server.url}/threads/${thread_id}/storage`)
    const { thread_id } = await client.threads.create()
    // Created, never run: nothing stored yet.
    expect(await (await storage(thread_id)).json()).toMatchObject({
      thread_id,
      total_bytes: 0,
      total_raw_bytes: 0,
      checkpoints: { count: 0, bytes: 0 },
      channel_values: { count: 0, bytes: 0 },
      pending_writes: { count: 0, bytes: 0 }
    })
    for (const text of ["one", "two"]) await collect(client.runs.stream(thread_id, "chat", { input: human(text) }))
    const answered = await (await storage(thread_id)).json() as { total_bytes: number }
    expect(answered).toEqual(await server.checkpointer.threadStorage(thread_id))
    expect(answered.total_bytes).toBeGreaterThan(0)
    expect((await storage(crypto.randomUUID())).status).toBe(404)
  })

  it("answers what a client gets wrong as LangGraph Platform does", async () => {
    const missing = crypto.randomUUID()
    const get = await fetch(`${server.url}/threads/${missing}`)
    expect(get.status).toBe(404)
    expect(await get.json()).toEqual({ detail: `Thread ${missing} not found` })
    expect((await fetch(`${server.url}/threads/${missing}/state`)).status).toBe(404)
    expect((await fetch(`${server.url}/threads/${missing}/history`, json({}))).status).toBe(404)
    const malformed = await fetch(`${server.url}/threads/search`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{ not json"
    })
    expect(malformed.status).toBe(422)
    expect(await malformed.json()).toHaveProperty("detail")
    const wrongShape = await fetch(`${server.url}/threads`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ metadata: "not an object" })
    })
    expect(wrongShape.status).toBe(422)
    expect((await fetch(`${server.url}/threads/not-a-uuid`)).status).toBe(422)
    // The embed server's thread event protocol is off unless asked for (its buffers are unbounded).
    expect((await fetch(`${server.url}/threads/${missing}/commands`, json({}))).status).toBe(404)
    // A page from another site may not call it: no CORS grant.
    const foreign = await fetch(`${server.url}/info`, { headers: { origin: "https://evil.example" } })
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull()
    const local = await fetch(`${server.url}/info`, { headers: { origin: "http://localhost:3000" } })
    expect(local.headers.get("access-control-allow-origin")).toBe("http://localhost:3000")
    // A name re-pointed at this machine does not reach it.
    expect(await statusWithHost(server.url, "evil.example")).toBe(421)
    expect(await statusWithHost(server.url, "localhost")).toBe(200)
  })

  it("reports one assistant per graph, as langgraph dev does", async () => {
    const assistants = await client.assistants.search()
    expect(assistants.map((assistant) => assistant.graph_id).sort()).toEqual(["chat", "nested", "slow"])
    const chat = assistants.find((assistant) => assistant.graph_id === "chat")!
    expect(await client.assistants.get(chat.assistant_id)).toEqual(chat)
    // A run may name the assistant by its UUID, as agent-chat-ui does after picking it.
    const { thread_id } = await client.threads.create()
    await collect(client.runs.stream(thread_id, chat.assistant_id, { input: human("by uuid") }))
    expect(texts((await client.threads.getState(thread_id)).values)).toEqual(["by uuid", replyTo("by uuid")])
    // Stored as LangGraph Platform stores it: agent-chat-ui lists the threads by either id it was given.
    expect((await client.threads.get(thread_id)).metadata).toMatchObject({
      graph_id: "chat",
      assistant_id: chat.assistant_id
    })
    for (const metadata of [{ assistant_id: chat.assistant_id }, { graph_id: "chat" }]) {
      expect((await client.threads.search({ metadata })).map((thread) => thread.thread_id)).toContain(thread_id)
    }
    const info = await (await fetch(`${server.url}/info`)).json()
    expect(info).toMatchObject({ context: "js", flags: { assistants: true } })
  })

  it("refuses a taken thread id unless told to keep it, and one run at a time unless told to queue", async () => {
    const { thread_id } = await client.threads.create({ metadata: { kept: true } })
    await expect(client.threads.create({ threadId: thread_id, metadata: { kept: false } })).rejects.toThrow(/409/)
    expect(await client.threads.create({ threadId: thread_id, ifExists: "do_nothing" })).toMatchObject({
      metadata: { kept: true }
    })
    // Two runs at once: the second is refused (`reject`, the default) while the first goes on...
    const first = await client.runs.create(thread_id, "slow", { input: human("first") })
    await expect(client.runs.create(thread_id, "chat", { input: human("second") })).rejects.toThrow(/409/)
    // ...and two queued behind it run after it, in order.
    const queued = await Promise.all(
      ["third", "fourth"].map((text, at) =>
        new Promise((resolve) => setTimeout(resolve, at * 50)).then(() =>
          client.runs.create(thread_id, "chat", { input: human(text), multitaskStrategy: "enqueue" })
        )
      )
    )
    for (const run of [first, ...queued]) await client.runs.join(thread_id, run.run_id)
    expect(texts((await client.threads.getState(thread_id)).values)).toEqual([
      "first",
      replyTo("first"),
      "third",
      replyTo("third"),
      "fourth",
      replyTo("fourth")
    ])
  }, 60_000)

  it("runs crons: on a thread and stateless, each tick once, updated, searched, counted and deleted", async () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
    const until = async (done: () => Promise<boolean>) => {
      for (const deadline = Date.now() + 20_000; !(await done());) {
        if (Date.now() > deadline) throw new Error("not done within 20 s")
        await sleep(100)
      }
    }
    const info = await (await fetch(`${server.url}/info`)).json()
    expect(info).toMatchObject({ flags: { crons: true } })
    const { thread_id } = await client.threads.create()
    const cron = await client.crons.createForThread(thread_id, "chat", {
      schedule: "* * * * * *",
      input: human("tick"),
      metadata: { purpose: "test" },
      multitaskStrategy: "enqueue"
    })
    expect(cron).toMatchObject({ thread_id, assistant_id: "chat", enabled: true, metadata: { purpose: "test" } })
    expect(Date.parse(cron.next_run_date!)).toBeGreaterThan(Date.now() - 1000)
    await until(async () => (await client.runs.list(thread_id)).length >= 2)
    // Disabled: the ticks stop; the runs started end, each with its reply.
    const disabled = await client.crons.update(cron.cron_id, { enabled: false })
    expect(disabled).toMatchObject({ enabled: false, next_run_date: null, payload: { input: human("tick") } })
    await until(async () => (await client.runs.list(thread_id)).every((run) => run.status === "success"))
    const runs = await client.runs.list(thread_id)
    expect(runs.every((run) => run.metadata?.cron_id === cron.cron_id)).toBe(true)
    expect(texts((await client.threads.getState(thread_id)).values)).toEqual(
      runs.flatMap(() => ["tick", replyTo("tick")])
    )
    await sleep(1_500)
    expect(await client.runs.list(thread_id)).toHaveLength(runs.length)
    // A stateless cron runs each tick on a thread of its own, kept when asked.
    const stateless = await client.crons.create("chat", {
      schedule: "* * * * * *",
      input: human("stateless tick"),
      onRunCompleted: "keep"
    })
    expect(stateless).toMatchObject({ thread_id: null, on_run_completed: "keep" })
    const ticked = { values: { messages: [{ content: replyTo("stateless tick") }] } }
    await until(async () => (await client.threads.search(ticked)).length >= 2)
    expect(await client.crons.search({ assistantId: "chat" })).toHaveLength(2)
    expect(await client.crons.count({ threadId: thread_id })).toBe(1)
    expect((await client.crons.search({ metadata: { purpose: "test" } })).map((found) => found.cron_id)).toEqual([
      cron.cron_id
    ])
    // By default, the thread goes once its run ended.
    const vanishing = await client.crons.create("chat", { schedule: "* * * * * *", input: human("vanishing tick") })
    const first = Date.parse(vanishing.next_run_date!)
    await until(async () => {
      const found = (await client.crons.search({ assistantId: "chat" })).find((one) =>
        one.cron_id === vanishing.cron_id
      )
      return Date.parse(found!.next_run_date!) >= first + 2_000
    })
    await client.crons.delete(vanishing.cron_id)
    await until(async () =>
      (await client.threads.search({ values: { messages: [{ content: "vanishing tick" }] } })).length === 0
    )
    await client.crons.delete(stateless.cron_id)
    await client.crons.delete(cron.cron_id)
    expect(await client.crons.search({})).toEqual([])
    await sleep(1_500)
    const kept = (await client.threads.search(ticked)).length
    await sleep(1_500)
    expect(await client.threads.search(ticked)).toHaveLength(kept)
    // What does not parse is refused, and nothing is stored.
    await expect(client.crons.create("chat", { schedule: "every minute" })).rejects.toThrow(/422/)
    await expect(client.crons.create("chat", { schedule: "* * * * *", timezone: "Mars/Olympus" })).rejects.toThrow(
      /422/
    )
    await expect(client.crons.create("nope", { schedule: "* * * * *" })).rejects.toThrow(/404/)
    await expect(client.crons.delete(cron.cron_id)).rejects.toThrow(/404/)
    expect(await client.crons.count({})).toBe(0)
  }, 60_000)

  it("keeps what the embed server caps: a run nobody reads holds at most its buffer", async () => {
    const { thread_id } = await client.threads.create()
    const text = "x".repeat(3 * 400)
    const run = await client.runs.create(thread_id, "chat", {
      input: human(text),
      streamMode: ["messages-tuple"]
    })
    await client.runs.join(thread_id, run.run_id)
    // 400 tokens were streamed; the run kept the last 64 events for a reader that never came.
    const joined = await collect(client.runs.joinStream(thread_id, run.run_id))
    expect(joined.length).toBeLessThanOrEqual(64)
    expect(joined.length).toBeGreaterThan(32)
    expect(texts((await client.threads.getState(thread_id)).values).at(-1)).toBe(replyTo(text))
  }, 60_000)
})
