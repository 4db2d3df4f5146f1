/**
 * What LangGraph's clients call that the embed server lacks, each backed by
 * this library: the server's description (`/info`, `/ok`), one assistant
 * per graph (as `langgraph dev` reports them: agent-chat-ui picks its graph
 * in `/assistants/search`), and the thread lifecycle (`count`, `prune` with
 * LangGraph's two strategies, `copy` of the whole history).
 *
 * @since 0.2.0
 */
import { v5 as uuidv5, v7 as uuidv7 } from "@langchain/core/utils/uuid"
import type { Context, Hono } from "hono"
import { HTTPException } from "hono/http-exception"
import type { EffectCheckpointSaver } from "../Saver.ts"
import { VERSION } from "../Version.ts"
import type { Threads } from "./Threads.ts"

/** The namespace LangGraph derives an assistant's id from its graph's id in. */
const NAMESPACE_GRAPH = "6ba7b821-9dad-11d1-80b4-00c04fd430c8"

/**
 * A graph's assistant id, as LangGraph's own servers derive it.
 *
 * @since 0.2.0
 */
export const assistantId = (graph_id: string): string => uuidv5(graph_id, NAMESPACE_GRAPH)

/**
 * The graph id an assistant id names: a graph's own id, or the UUID of its
 * assistant (what `/assistants/search` answers); anything else as given.
 *
 * @since 0.2.0
 */
export const graphOf = (graphs: ReadonlyArray<string>) => {
  const byAssistant = new Map(graphs.map((graph_id) => [assistantId(graph_id), graph_id]))
  return (assistant_id: string): string => byAssistant.get(assistant_id) ?? assistant_id
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The request's JSON body as an object (`{}` when empty; 422 when not an object).
 *
 * @since 0.2.0
 */
export const bodyOf = async (c: Context): Promise<Record<string, unknown>> => {
  const text = await c.req.text()
  if (text.trim() === "") return {}
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw new HTTPException(422, { message: "The request body is not JSON" })
  }
  if (!isObject(body)) throw new HTTPException(422, { message: "The request body must be a JSON object" })
  return body
}

/** An optional metadata filter from a body (422 when not an object). */
const metadataOf = (body: Record<string, unknown>): Record<string, unknown> | undefined => {
  const { metadata } = body
  if (metadata === undefined || metadata === null) return undefined
  if (!isObject(metadata)) throw new HTTPException(422, { message: "metadata must be an object" })
  return metadata
}

/** A non-negative integer from a body, or the default (422 otherwise). */
const count = (value: unknown, name: string, fallback: number, max = Number.MAX_SAFE_INTEGER) => {
  if (value === undefined || value === null) return fallback
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0 || value > max) {
    throw new HTTPException(422, { message: `${name} must be an integer from 0 to ${max}` })
  }
  return value
}

/** Whether `value` holds every key of `filter` with an equal (JSON) value. */
const matches = (value: Record<string, unknown>, filter: Record<string, unknown> | undefined) =>
  filter === undefined ||
  Object.entries(filter).every(([key, wanted]) => JSON.stringify(value[key]) === JSON.stringify(wanted))

/**
 * Registers the routes on `app`.
 *
 * @since 0.2.0
 */
export const register = (
  app: Hono,
  deps: {
    readonly graphs: ReadonlyArray<string>
    readonly threads: Threads
    readonly saver: EffectCheckpointSaver
    readonly started: Date
  }
): void => {
  const { graphs, saver, started, threads } = deps
  const assistants = graphs.map((graph_id) => ({
    assistant_id: assistantId(graph_id),
    graph_id,
    name: graph_id,
    description: null,
    config: {},
    context: {},
    metadata: { created_by: "system" },
    version: 1,
    created_at: started.toISOString(),
    updated_at: started.toISOString()
  }))

  app.get("/ok", (c) => c.json({ ok: true }))

  app.get("/info", (c) =>
    c.json({
      version: VERSION,
      context: "js",
      server: "langgraph-checkpoint-effect",
      flags: { assistants: true, crons: false, langsmith: false, langsmith_tracing_replicas: false }
    }))

  const searchAssistants = (body: Record<string, unknown>) => {
    const metadata = metadataOf(body)
    const { graph_id, name } = body
    return assistants.filter((assistant) =>
      (graph_id === undefined || assistant.graph_id === graph_id) &&
      (typeof name !== "string" || assistant.name.toLowerCase().includes(name.toLowerCase())) &&
      matches(assistant.metadata, metadata)
    )
  }

  app.post("/assistants/search", async (c) => {
    const body = await bodyOf(c)
    const found = searchAssistants(body)
    const offset = count(body.offset, "offset", 0)
    const limit = count(body.limit, "limit", 10, 1000)
    c.header("x-pagination-total", String(found.length))
    return c.json(found.slice(offset, offset + limit))
  })

  app.post("/assistants/count", async (c) => c.json(searchAssistants(await bodyOf(c)).length))

  app.get("/assistants/:assistant_id", (c) => {
    const id = c.req.param("assistant_id")
    const assistant = assistants.find((assistant) => assistant.assistant_id === id || assistant.graph_id === id)
    if (assistant === undefined) throw new HTTPException(404, { message: `Assistant ${id} not found` })
    return c.json(assistant)
  })

  // A thread id that is taken: LangGraph Platform's `if_exists` (default `raise`, 409), which the
  // embed server ignores (it would replace the thread's metadata).
  app.post("/threads", async (c, next) => {
    const { if_exists, thread_id } = await bodyOf(c)
    if (typeof thread_id === "string" && (await threads.exists(thread_id))) {
      if (if_exists === "do_nothing") return c.json(await threads.find(thread_id))
      throw new HTTPException(409, { message: `Thread ${thread_id} already exists` })
    }
    await next()
  })

  app.post("/threads/count", async (c) => c.json(await threads.count(metadataOf(await bodyOf(c)))))

  app.post("/threads/prune", async (c) => {
    const body = await bodyOf(c)
    const { strategy, thread_ids } = body
    if (!Array.isArray(thread_ids) || !thread_ids.every((id) => typeof id === "string")) {
      throw new HTTPException(422, { message: "thread_ids must be an array of strings" })
    }
    if (strategy !== undefined && strategy !== "delete" && strategy !== "keep_latest") {
      throw new HTTPException(422, { message: "strategy must be delete or keep_latest" })
    }
    // Only the threads the request may see are pruned (and counted): the rest are as if absent.
    const visible: Array<string> = []
    for (const id of new Set(thread_ids as ReadonlyArray<string>)) {
      if (await threads.find(id).then(() => true, () => false)) visible.push(id)
    }
    if (visible.length > 0) await saver.prune(visible, { strategy: strategy ?? "delete" })
    return c.json({ pruned_count: visible.length })
  })

  app.post("/threads/:thread_id/copy", async (c) => {
    const source = await threads.find(c.req.param("thread_id"))
    const target = uuidv7()
    await saver.copyThread(source.thread_id, target)
    return c.json(await threads.claim(target, source.metadata))
  })
}
