/**
 * The server under load, shortly (`npm run bench:server` is the long
 * version, beside LangGraph's own): 50 clients of LangGraph's SDK, each on a
 * thread of its own, loop chat turns (a run streamed with a new human
 * message, read to its end) for 12 seconds against `serve()` on PostgreSQL.
 * Then: no turn lost (every thread's state holds exactly two messages per
 * turn, in order, each answer `echo: <text>`), no error and no stream the
 * SDK had to rejoin, the heap after a full GC at most 64 MiB above where it
 * was before the load, and every run the server still knows finished, no
 * more of them kept than `keepFinished` (set low, so that the load passes
 * it several times).
 */
import type { Client } from "@langchain/langgraph-sdk"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { chatGraph, messagesOf, replyTo } from "../../harness/chatGraph.ts"
import { createDatabase } from "../../harness/databases.ts"
import { loadClients } from "../../harness/loadClients.ts"
import { type LangGraphServer, serve } from "../../src/server.ts"

const CLIENTS = 50
const SECONDS = 12
const KEEP_FINISHED = 50
const MIB = 1024 * 1024

/**
 * A full GC: `globalThis.gc` under `--expose-gc`, else V8's own, exposed
 * now (vitest's workers run without the flag); undefined if neither.
 */
const collector = (): (() => void) | undefined => {
  const exposed = (globalThis as { gc?: () => void }).gc
  if (exposed !== undefined) return exposed
  try {
    setFlagsFromString("--expose-gc")
    const gc: unknown = runInNewContext("gc")
    return typeof gc === "function" ? gc as () => void : undefined
  } catch {
    return undefined
  }
}

interface Thread {
  readonly client: Client
  readonly thread_id: string
  /** The texts of the turns acknowledged (their streams ended with the answer), in order. */
  readonly turns: Array<string>
}

describe("the server under load", () => {
  let database: Awaited<ReturnType<typeof createDatabase>>
  let server: LangGraphServer
  beforeAll(async () => {
    database = await createDatabase("server_load")
    server = await serve({
      graphs: { chat: chatGraph() },
      database: database.url,
      port: 0,
      runs: { keepFinished: KEEP_FINISHED }
    })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
    await database?.drop()
  })

  it(`loses no turn of ${CLIENTS} clients streaming for ${SECONDS} s, and stays bounded`, async () => {
    const gc = collector()
    const errors: Array<string> = []
    const loaded = await loadClients(server.url, CLIENTS)
    const threads: Array<Thread> = loaded.clients.map((thread) => ({ ...thread, turns: [] }))
    const turn = async (thread: Thread, text: string) => {
      try {
        let last: unknown
        for await (
          const chunk of thread.client.runs.stream(thread.thread_id, "chat", {
            input: { messages: [{ type: "human", content: text }] },
            streamMode: ["values", "messages-tuple"]
          })
        ) {
          if (chunk.event === "values") last = chunk.data
          else if (chunk.event === "error") throw new Error(`error event: ${JSON.stringify(chunk.data)}`)
        }
        const final = messagesOf(last)
        if (final.at(-1)?.content !== replyTo(text) || final.at(-2)?.content !== text) {
          throw new Error(`the stream ended without the answer: ${JSON.stringify(final.at(-1))}`)
        }
        thread.turns.push(text)
      } catch (error) {
        errors.push(`${text}: ${error instanceof Error ? error.message : String(error)}`)
      }
    }
    // One turn each first, so that what the first requests load and compile is not counted as growth.
    await Promise.all(threads.map((thread, i) => turn(thread, `client ${i}, warm-up`)))
    gc?.()
    const before = process.memoryUsage().heapUsed

    const deadline = performance.now() + SECONDS * 1000
    await Promise.all(threads.map(async (thread, i) => {
      for (let n = 0; performance.now() < deadline; n++) await turn(thread, `client ${i}, turn ${n}`)
    }))
    const turns = threads.reduce((sum, thread) => sum + thread.turns.length, 0)

    expect(errors.slice(0, 5)).toEqual([])
    expect(loaded.reconnects()).toBe(0)
    // Enough load to mean something: more turns than the runs kept, several times over.
    expect(turns).toBeGreaterThan(2 * KEEP_FINISHED)

    // No turn lost: each thread's state is its turns, two messages each, in order.
    for (const thread of threads) {
      const state = await thread.client.threads.getState(thread.thread_id)
      const messages = messagesOf(state.values).map((message) => [message.type, message.content])
      expect(messages).toEqual(thread.turns.flatMap((text) => [["human", text], ["ai", replyTo(text)]]))
    }

    // Every run recorded, finished: a thread's newest page of them (10, the default), one per turn.
    const statuses: Array<string> = []
    for (const thread of threads) {
      const response = await fetch(`${server.url}/threads/${thread.thread_id}/runs`)
      expect(response.status).toBe(200)
      const runs = await response.json() as Array<{ readonly status: string; readonly thread_id: string }>
      expect(runs.length).toBe(Math.min(thread.turns.length + 1, 10))
      for (const run of runs) {
        expect(run.thread_id).toBe(thread.thread_id)
        statuses.push(run.status)
      }
    }
    expect(new Set(statuses)).toEqual(new Set(["success"]))

    // Memory bounded: what the load left on the heap, the server still open.
    if (gc === undefined) {
      console.warn("[server.load] no way to force a GC in this process: the heap check is skipped")
      return
    }
    gc()
    const after = process.memoryUsage().heapUsed
    console.log(
      `[server.load] ${turns} turns in ${SECONDS} s (${(turns / SECONDS).toFixed(0)}/s), heap after GC ${
        (before / MIB).toFixed(0)
      } → ${(after / MIB).toFixed(0)} MiB`
    )
    expect(after).toBeLessThanOrEqual(before + 64 * MIB)
  }, 60_000)
})
