/**
 * The oracle of the server's tests and benchmark: LangGraph's own embed
 * server (`createEmbedServer`) over LangGraph's `MemorySaver` and a plain
 * in-memory `ThreadSaver`, listening on loopback. What the SDK reads from it
 * is what the same graph gives in-process on `MemorySaver`, on the wire.
 */
import { serve } from "@hono/node-server"
import { MemorySaver } from "@langchain/langgraph"
import { createEmbedServer, type ThreadSaver } from "@langchain/langgraph-api/experimental/embed"
import { Hono } from "hono"
import { HTTPException } from "hono/http-exception"
import type { AddressInfo } from "node:net"
import type { Graph as CompiledGraph } from "../src/ServerOptions.ts"

interface Held {
  thread_id: string
  metadata: Record<string, unknown>
  created_at: Date
  updated_at: Date
}

/** Thread records in a map, as the embed server's own examples keep them. */
export const memoryThreads = (): ThreadSaver => {
  const threads = new Map<string, Held>()
  const json = (held: Held) => ({
    ...held,
    created_at: held.created_at.toISOString(),
    updated_at: held.updated_at.toISOString(),
    status: "idle"
  })
  return {
    get: async (id) => {
      const held = threads.get(id)
      if (held === undefined) throw new HTTPException(404, { message: `Thread ${id} not found` })
      return json(held)
    },
    set: async (id, { kind, metadata }) => {
      const now = new Date()
      const held = threads.get(id)
      const next: Held = held === undefined
        ? { thread_id: id, metadata: { ...metadata }, created_at: now, updated_at: now }
        : { ...held, metadata: kind === "put" ? { ...metadata } : { ...held.metadata, ...metadata }, updated_at: now }
      threads.set(id, next)
      return json(next)
    },
    delete: async (id) => {
      threads.delete(id)
    },
    search: async function*({ limit, metadata, offset, sortBy, sortOrder }) {
      const matching = [...threads.values()]
        .filter((held) =>
          Object.entries(metadata ?? {}).every(([key, value]) =>
            JSON.stringify(held.metadata[key]) === JSON.stringify(value)
          )
        )
        .sort((a, b) => (a[sortBy].getTime() - b[sortBy].getTime()) * (sortOrder === "asc" ? 1 : -1))
      for (const held of matching.slice(offset, offset + limit)) yield { thread: json(held), total: matching.length }
    }
  }
}

export interface ReferenceServer {
  readonly url: string
  readonly checkpointer: MemorySaver
  readonly close: () => Promise<void>
}

/** The embed server over `MemorySaver`, on a free loopback port. */
export const referenceServer = async (graphs: Record<string, CompiledGraph>): Promise<ReferenceServer> => {
  const checkpointer = new MemorySaver()
  const app = new Hono()
  app.route("/", createEmbedServer({ graph: graphs, threads: memoryThreads(), checkpointer }))
  app.onError((error, c) =>
    error instanceof HTTPException
      ? c.json({ detail: error.message }, error.status)
      : c.json({ detail: String(error) }, 500)
  )
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const listening = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, () => resolve(listening))
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    checkpointer,
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
}
