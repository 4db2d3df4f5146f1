/**
 * The clients of the server's load runs (the e2e load test, `npm run
 * bench:server`): LangGraph's SDK `Client`s, one thread each, that never
 * retry (a failed request is an error, not a delay) and count the streams
 * the SDK rejoined by itself after a broken connection.
 */
import { Client } from "@langchain/langgraph-sdk"

export interface LoadClients {
  readonly clients: ReadonlyArray<{ readonly client: Client; readonly thread_id: string }>
  /** Streams the SDK rejoined so far. */
  readonly reconnects: () => number
}

export const loadClients = async (url: string, count: number): Promise<LoadClients> => {
  let reconnects = 0
  const clients = await Promise.all(Array.from({ length: count }, async () => {
    const client = new Client({
      apiUrl: url,
      callerOptions: { maxRetries: 0 },
      onRequest: (target, init) => {
        if (init.method === "GET" && /\/runs\/[^/]+\/stream$/.test(target.pathname)) reconnects++
        return init
      }
    })
    const { thread_id } = await client.threads.create()
    return { client, thread_id }
  }))
  return { clients, reconnects: () => reconnects }
}
