/**
 * What LangGraph's clients call that the embed server lacks, each backed by
 * this library: the server's description (`/info`, `/ok`), one assistant
 * per graph (as `langgraph dev` reports them: agent-chat-ui picks its graph
 * in `/assistants/search`), and the thread lifecycle (`count`, `prune` with
 * LangGraph's two strategies, `copy` of the whole history).
 *
 * @since 0.2.0
 */
import { v7 as uuidv7 } from "@langchain/core/utils/uuid"
import type { Context, Hono } from "hono"
import { HTTPException } from "hono/http-exception"
import type { ThreadQuery, ThreadStatus } from "../../CheckpointStorage.ts"
import type { EffectCheckpointSaver } from "../../Saver.ts"
import { storageOf } from "../lifecycle/ThreadStorage.ts"
import { VERSION } from "../Version.ts"
import { assistantId, type Graphs } from "./Graphs.ts"
import { isObject } from "./Json.ts"
import type { Threads } from "./Threads.ts"

/** A UUID, as LangGraph's thread routes take them. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

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

/** The thread query a search or count body says (the storage checks what it holds: 422 otherwise). */
const queryOf = (body: Record<string, unknown>): ThreadQuery => {
  const { ids, limit, offset, sort_by, sort_order, status, values } = body
  if (values !== undefined && values !== null && !isObject(values)) {
    throw new HTTPException(422, { message: "values must be an object" })
  }
  if (ids !== undefined && ids !== null && !(Array.isArray(ids) && ids.every((id) => typeof id === "string"))) {
    throw new HTTPException(422, { message: "ids must be an array of strings" })
  }
  return {
    metadata: metadataOf(body),
    ...(isObject(values) ? { values } : {}),
    ...(Array.isArray(ids) ? { ids: ids as ReadonlyArray<string> } : {}),
    ...(typeof status === "string" ? { status: status as ThreadStatus } : {}),
    limit: count(limit, "limit", 10, 1000),
    offset: count(offset, "offset", 0),
    sort_by: sort_by === "updated_at" || sort_by === "thread_id" ? sort_by : "created_at",
    sort_order: sort_order === "asc" ? "asc" : "desc"
  }
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
  Object.entries(filter).every(([key, wanted]) =>
    Object.hasOwn(value, key) && JSON.stringify(value[key]) === JSON.stringify(wanted)
  )

/**
 * Registers the routes on `app`.
 *
 * @since 0.2.0
 */
export const register = (
  app: Hono,
  deps: {
    readonly graphs: Graphs
    readonly threads: Threads
    readonly saver: EffectCheckpointSaver
    readonly started: Date
  }
): void => {
  const { graphs, saver, started, threads } = deps
  const assistants = graphs.ids.map((graph_id) => ({
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
      flags: { assistants: true, crons: true, langsmith: false, langsmith_tracing_replicas: false }
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

  // Created in one step (of two creators of one id, one gets it), with LangGraph Platform's
  // `if_exists` (default `raise`, 409), which the embed server ignores (it would replace the thread).
  app.post("/threads", async (c) => {
    const body = await bodyOf(c)
    const { if_exists, thread_id } = body
    if (thread_id !== undefined && (typeof thread_id !== "string" || !UUID.test(thread_id))) {
      throw new HTTPException(422, { message: "thread_id must be a UUID" })
    }
    if (if_exists !== undefined && if_exists !== "raise" && if_exists !== "do_nothing") {
      throw new HTTPException(422, { message: "if_exists must be raise or do_nothing" })
    }
    return c.json(await threads.create(thread_id ?? uuidv7(), metadataOf(body), if_exists ?? "raise"))
  })

  app.post("/threads/count", async (c) => c.json(await threads.count(queryOf(await bodyOf(c)))))

  // Search by metadata, values, status and ids (the embed server's takes metadata alone).
  app.post("/threads/search", async (c) => {
    const page = await threads.page(queryOf(await bodyOf(c)))
    c.header("x-pagination-total", String(page.total))
    return c.json(page.threads)
  })

  app.post("/threads/prune", async (c) => {
    const body = await bodyOf(c)
    const { strategy, thread_ids } = body
    if (!Array.isArray(thread_ids) || !thread_ids.every((id) => typeof id === "string")) {
      throw new HTTPException(422, { message: "thread_ids must be an array of strings" })
    }
    if (strategy !== undefined && strategy !== "delete" && strategy !== "keep_latest") {
      throw new HTTPException(422, { message: "strategy must be delete or keep_latest" })
    }
    return c.json({ pruned_count: await threads.prune(thread_ids as ReadonlyArray<string>, strategy ?? "delete") })
  })

  app.post("/threads/:thread_id/copy", async (c) => {
    const source = await threads.find(c.req.param("thread_id"))
    const target = uuidv7()
    await saver.copyThread(source.thread_id, target)
    return c.json(await threads.claim(target, source.metadata))
  })

  // Where the thread's bytes are (LangGraph's Agent Server answers 501 for a checkpointer not its own).
  app.get("/threads/:thread_id/storage", async (c) => {
    const { thread_id } = await threads.find(c.req.param("thread_id"))
    return c.json(
      await saver.threadStorage(thread_id).catch((error: unknown) => {
        // A thread created but never run has no checkpoints: nothing stored yet.
        if ((error as { _tag?: unknown } | null)?._tag === "ThreadNotFound") return nothingStored(thread_id)
        throw error
      })
    )
  })
}

/** The storage report of a thread without checkpoints. */
const nothingStored = (thread_id: string) =>
  storageOf({ thread_id, checkpoints: [], blobs: [], writes: [], pieces: [] })
