/**
 * The server when things go wrong, through LangGraph's SDK:
 *
 * - the database goes away in the middle of a run (its connections killed,
 *   new ones refused): the run ends in `error` (recorded once the database
 *   is back), the thread's status says its last run failed,
 *   every turn acknowledged before is still there, and once the database
 *   is back the thread takes the next turn;
 * - what a client sends is stored data like any other: a message carrying
 *   LangChain's serialized secrets and constructors comes back as the plain
 *   data it was, never resolved from the environment or built into a class.
 */
import { Client } from "@langchain/langgraph-sdk"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { chatGraph, replyTo } from "../../harness/chatGraph.ts"
import { admin, createDatabase } from "../../harness/databases.ts"
import { EffectCheckpointSaver } from "../../src/index.ts"
import { type LangGraphServer, serve } from "../../src/server.ts"

const human = (content: string, extra: Record<string, unknown> = {}) => ({
  messages: [{ type: "human", content, ...extra }]
})

type Chunk = { readonly event: string; readonly data: unknown }

const texts = (values: unknown): Array<string> =>
  ((values as { messages?: Array<{ content: unknown }> }).messages ?? []).map((message) => String(message.content))

describe("the server on PostgreSQL, when the database goes away mid-run", () => {
  let database: Awaited<ReturnType<typeof createDatabase>>
  let server: LangGraphServer
  let client: Client
  const name = () => new URL(database.url).pathname.slice(1)
  beforeAll(async () => {
    database = await createDatabase("server_faults")
    server = await serve({
      graphs: { chat: chatGraph(), slow: chatGraph({ slow: 60 }) },
      // A short retry window: the test waits for the run to give up, not for a failover.
      checkpointer: await EffectCheckpointSaver.fromConnString(database.url, { retryWindow: "1 second" }),
      port: 0
    })
    client = new Client({ apiUrl: server.url })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
    await server?.checkpointer.close()
    await admin((pg) => pg.query(`ALTER DATABASE "${name()}" WITH ALLOW_CONNECTIONS true`)).catch(() => undefined)
    await database?.drop()
  })

  it(
    "ends the run in error, the thread with every acknowledged turn, and goes on once it is back",
    async () => {
      const { thread_id } = await client.threads.create()
      for (const text of ["one", "two"]) {
        for await (const _ of client.runs.stream(thread_id, "chat", { input: human(text) })) { /* to the end */ }
      }
      let run_id: string | undefined
      const chunks: Array<Chunk> = []
      let cut = false
      for await (
        const chunk of client.runs.stream(thread_id, "slow", {
          input: human("three"),
          streamMode: ["messages-tuple", "values"],
          onRunCreated: (created) => {
            run_id = created.run_id
          }
        })
      ) {
        chunks.push(chunk)
        if (!cut && chunk.event === "messages") {
          cut = true
          await admin((pg) =>
            pg.query(`ALTER DATABASE "${name()}" WITH ALLOW_CONNECTIONS false`).then(() =>
              pg.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [name()])
            )
          )
        }
      }
      expect(cut).toBe(true)
      expect(chunks.at(-1)?.event).toBe("error")

      await admin((pg) => pg.query(`ALTER DATABASE "${name()}" WITH ALLOW_CONNECTIONS true`))
      // The run's end is recorded once the database is back, the thread's status with it: its last run failed.
      await expect.poll(async () => (await client.runs.get(thread_id, run_id!)).status, { timeout: 15_000 }).toBe(
        "error"
      )
      const thread = await client.threads.get(thread_id)
      expect(thread.status).toBe("error")
      const values = texts((await client.threads.getState(thread_id)).values)
      expect(values.slice(0, 4)).toEqual(["one", replyTo("one"), "two", replyTo("two")])
      expect(values).not.toContain(replyTo("three"))
      for await (const _ of client.runs.stream(thread_id, "chat", { input: human("four") })) { /* to the end */ }
      expect(texts((await client.threads.getState(thread_id)).values).at(-1)).toBe(replyTo("four"))
    },
    90_000
  )
})

describe("what a client sends, read back", () => {
  let server: LangGraphServer
  beforeAll(async () => {
    server = await serve({ graphs: { chat: chatGraph() }, database: "pglite:", port: 0 })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
  })

  it("stays the data it was: no secret resolved, no class built", async () => {
    process.env.LCE_SERVER_TEST_SECRET = "the secret value"
    const client = new Client({ apiUrl: server.url })
    const { thread_id } = await client.threads.create({ metadata: { __proto__: { polluted: true } } as never })
    const planted = {
      secret: { lc: 1, type: "secret", id: ["LCE_SERVER_TEST_SECRET"] },
      built: {
        lc: 1,
        type: "constructor",
        id: ["langchain_core", "messages", "SystemMessage"],
        kwargs: { content: "x" }
      },
      proto: JSON.parse(`{"__proto__": {"polluted": true}}`)
    }
    for await (
      const _ of client.runs.stream(thread_id, "chat", { input: human("hello", { additional_kwargs: planted }) })
    ) { /* to the end */ }
    const state = await client.threads.getState(thread_id)
    const stored = (state.values as { messages: Array<{ additional_kwargs: Record<string, unknown> }> }).messages[0]!
    // As sent, escaped on the wire as LangGraph's API escapes anything shaped like LangChain's
    // serialization (the `__proto__` key is dropped there too). LangGraph's embed server on
    // MemorySaver builds the SystemMessage the client named and answers its re-serialized kwargs.
    expect(stored.additional_kwargs).toEqual({
      secret: { __lc_escaped__: planted.secret },
      built: { __lc_escaped__: planted.built },
      proto: {}
    })
    expect(JSON.stringify(state)).not.toContain("the secret value")
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    const history = await client.threads.getHistory(thread_id)
    expect(JSON.stringify(history)).not.toContain("the secret value")
    // And the saver, read directly, agrees.
    const tuple = await server.checkpointer.getTuple({ configurable: { thread_id } })
    expect(JSON.stringify(tuple)).not.toContain("the secret value")
  })
})
