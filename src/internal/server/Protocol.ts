/**
 * The embed server's thread event protocol (`POST /threads/:id/commands`,
 * `POST /threads/:id/stream/events`), one session per thread.
 *
 * The embed server keeps every event of a thread's runs for late readers,
 * by thread id, for as long as it lives. Shared by all threads, that buffer
 * outlived the thread: once a thread was deleted, whoever named its id next
 * replayed its events. So each thread gets an embed server of its own for
 * the protocol (about 90 KiB), bound to the thread as it was when the
 * session began: when the thread is deleted (here, on another replica, by
 * the CLI) or replaced, its session and every event in it are dropped.
 *
 * Before its first `run.start` a thread has no record: its session is then
 * its creator's alone (404 to every other identity), begun by a command
 * (as LangGraph's SDK does: it opens no event stream on a thread that does
 * not exist yet). A `run.start` must name a served graph.
 *
 * @since 0.4.0
 */
import { createEmbedServer } from "@langchain/langgraph-api/experimental/embed"
import type { Context } from "hono"
import type { EffectCheckpointSaver } from "../../Saver.ts"
import { identity } from "./Auth.ts"
import type { Graphs } from "./Graphs.ts"
import { bodyOf } from "./Routes.ts"
import { notFound, type Threads } from "./Threads.ts"

interface Session {
  /** The identity that began it (undefined without authentication). */
  readonly owner: string | undefined
  /** When the thread it belongs to was created; undefined until the thread has a record. */
  created: number | undefined
  readonly fetch: (request: Request) => Response | Promise<Response>
}

/**
 * @since 0.4.0
 */
export interface Protocol {
  /** Answers a protocol request for the thread in its path. */
  readonly handle: (c: Context) => Promise<Response>
  /** Drops a thread's session (it was deleted). */
  readonly drop: (thread_id: string) => void
}

/**
 * The protocol over `threads`, running `graphs`.
 *
 * @since 0.4.0
 */
export const make = (graphs: Graphs, threads: Threads, saver: EffectCheckpointSaver): Protocol => {
  const sessions = new Map<string, Session>()
  const begin = (thread_id: string, created: number | undefined): Session => {
    const embed = createEmbedServer({ graph: graphs.lookup, threads, checkpointer: saver })
    const session: Session = { owner: identity(), created, fetch: (request) => embed.fetch(request) }
    sessions.set(thread_id, session)
    return session
  }

  /**
   * The thread's session as the request may use it: 404 for another's
   * thread; a new one for a thread that was deleted or replaced since (only
   * a command begins one: an event stream of a thread that has neither a
   * record nor the request's own session is 404).
   */
  const sessionOf = async (thread_id: string, command: boolean): Promise<Session> => {
    const record = await threads.admit(thread_id)
    const created = record?.created_at.getTime()
    const session = sessions.get(thread_id)
    if (session !== undefined) {
      if (session.created === undefined && created !== undefined) session.created = created
      if (session.created === created && (created !== undefined || session.owner === identity())) return session
      if (session.created !== created) sessions.delete(thread_id)
    }
    if (record === undefined && (!command || sessions.has(thread_id))) throw notFound(thread_id)
    return begin(thread_id, created)
  }

  const json = (c: Context, body: unknown) =>
    new Request(c.req.raw.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body)
    })

  /** A command as the embed server takes it: a `run.start`'s assistant resolved to a served graph (404 otherwise). */
  const command = async (c: Context): Promise<Request> => {
    const body = await bodyOf(c)
    const params = body.params
    if (body.method !== "run.start" || typeof params !== "object" || params === null) {
      return json(c, body)
    }
    const assistant_id = graphs.require((params as Record<string, unknown>).assistant_id, "Assistant")
    return json(c, { ...body, params: { ...params, assistant_id } })
  }

  return {
    handle: async (c) => {
      const thread_id = c.req.param("thread_id")!
      const isCommand = c.req.path.endsWith("/commands")
      // The thread's record is checked (404 for another's) before the body is read.
      const session = await sessionOf(thread_id, isCommand)
      return session.fetch(isCommand ? await command(c) : json(c, await bodyOf(c)))
    },
    drop: (thread_id) => void sessions.delete(thread_id)
  }
}
