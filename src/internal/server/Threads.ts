/**
 * The embed server's `ThreadSaver` over this library's thread records
 * (`CheckpointStorage.getThread`/`setThread`/`searchThreads`): durable,
 * searchable by metadata, and confined to the request's identity (see
 * `Auth.ts`): another user's thread is as absent as a thread that never
 * existed (404), whichever route asks.
 *
 * @since 0.2.0
 */
import type { ThreadSaver } from "@langchain/langgraph-api/experimental/embed"
import { HTTPException } from "hono/http-exception"
import { AsyncLocalStorage } from "node:async_hooks"
import type { ThreadQuery, ThreadRecord, ThreadStatus } from "../../CheckpointStorage.ts"
import type { EffectCheckpointSaver } from "../../Saver.ts"
import { identity, mayAccess, OWNER } from "./Auth.ts"
import { assistantId, type Graphs } from "./Graphs.ts"

/**
 * A thread as LangGraph's API answers it.
 *
 * @since 0.2.0
 */
export interface ThreadJson {
  readonly thread_id: string
  readonly created_at: string
  readonly updated_at: string
  readonly metadata: Record<string, unknown>
  readonly status: ThreadStatus
  /** The state's values as its last run left them. */
  readonly values?: Record<string, unknown>
}

/**
 * The `ThreadSaver`, and the same records for the routes this library adds.
 *
 * @since 0.2.0
 */
export interface Threads extends ThreadSaver {
  /** The thread if the request may see it, else 404. */
  readonly find: (thread_id: string) => Promise<ThreadJson>
  /**
   * 404 for a thread that exists and is not the request's; its record for
   * the request's own; undefined for one not there yet.
   */
  readonly admit: (thread_id: string) => Promise<ThreadRecord | undefined>
  /**
   * Creates a thread as the request's own, atomically (of concurrent
   * creators of one id, one gets it): `if_exists` `raise` answers 409 when
   * the request's own thread has the id, `do_nothing` answers that thread;
   * another user's thread is 404 either way.
   */
  readonly create: (
    thread_id: string,
    metadata: Record<string, unknown> | undefined,
    if_exists: "raise" | "do_nothing"
  ) => Promise<ThreadJson>
  /** Prunes the threads the request may see of `thread_ids` (see `prune`): how many. */
  readonly prune: (thread_ids: ReadonlyArray<string>, strategy: "delete" | "keep_latest") => Promise<number>
  /** Sets the record of a thread the server just made (a copy) as the request's own. */
  readonly claim: (thread_id: string, metadata: Record<string, unknown>) => Promise<ThreadJson>
  /** The request's own threads matching `query`. */
  readonly count: (query: ThreadQuery) => Promise<number>
  /** A page of the request's own threads matching `query`, and how many match. */
  readonly page: (
    query: ThreadQuery
  ) => Promise<{ readonly threads: ReadonlyArray<ThreadJson>; readonly total: number }>
}

/** Each request's reads of thread records, by thread id: a run's start asks for its thread three times. */
const requestScope = new AsyncLocalStorage<Map<string, Promise<ThreadRecord | undefined>>>()

/**
 * Runs `f` as one request: within it, a thread record is read once, and
 * what the request writes is what it reads after.
 *
 * @since 0.2.0
 */
export const inRequest = <A>(f: () => A): A => requestScope.run(new Map(), f)

export const notFound = (thread_id: string): HTTPException =>
  new HTTPException(404, { message: `Thread ${thread_id} not found` })

/**
 * Thread records over `saver`. A thread without `graph_id` (one a graph
 * wrote before the server existed) is shown as the server's graph, when it
 * serves only one; a `graph_id` a client gives must name a served graph (or
 * its assistant), and is stored as the graph's id.
 *
 * @since 0.2.0
 */
export const make = (saver: EffectCheckpointSaver, graphs: Graphs, deleted: (thread_id: string) => void): Threads => {
  const defaultGraph = graphs.ids.length === 1 ? graphs.ids[0] : undefined
  const json = (record: ThreadRecord): ThreadJson => ({
    thread_id: record.thread_id,
    created_at: record.created_at.toISOString(),
    updated_at: record.updated_at.toISOString(),
    metadata: record.metadata.graph_id === undefined && defaultGraph !== undefined
      ? { ...record.metadata, graph_id: defaultGraph }
      : record.metadata,
    status: record.status,
    ...(record.values === undefined ? {} : { values: record.values })
  })
  /** The record, read once per request. */
  const read = (thread_id: string): Promise<ThreadRecord | undefined> => {
    const memo = requestScope.getStore()
    if (memo === undefined) return saver.getThread(thread_id)
    let record = memo.get(thread_id)
    if (record === undefined) {
      memo.set(thread_id, record = saver.getThread(thread_id))
      record.catch(() => memo.delete(thread_id))
    }
    return record
  }
  const wrote = <R extends ThreadRecord | undefined>(thread_id: string, record: R): R => {
    requestScope.getStore()?.set(thread_id, Promise.resolve(record))
    return record
  }
  /** A thread deleted by this request: gone from its reads, and from whatever the server kept of it. */
  const forget = (thread_id: string) => {
    wrote(thread_id, undefined)
    deleted(thread_id)
  }
  const visible = async (thread_id: string) => {
    const record = await read(thread_id)
    return record !== undefined && mayAccess(record.metadata) ? record : undefined
  }
  const find = async (thread_id: string) => {
    const record = await visible(thread_id)
    if (record === undefined) throw notFound(thread_id)
    return json(record)
  }
  /**
   * The owner is the server's to set: whatever a client sends under its key
   * is replaced, and it is added to every search.
   */
  const owned = (metadata: Record<string, unknown> | undefined) => {
    const who = identity()
    return who === undefined ? metadata : { ...metadata, [OWNER]: who }
  }
  /**
   * Metadata going in: owned by the request, its `graph_id` a served graph's id (422 otherwise), its
   * `assistant_id`, when it names a served graph, that graph's assistant's UUID, as LangGraph Platform
   * stores it (agent-chat-ui lists the threads of the assistant it was given by it).
   */
  const given = (metadata: Record<string, unknown> | undefined) => {
    const update = owned(metadata) ?? {}
    const assistant = graphs.resolve(update.assistant_id)
    const named = assistant === undefined ? update : { ...update, assistant_id: assistantId(assistant) }
    if (!Object.hasOwn(named, "graph_id")) return named
    const graph_id = graphs.resolve(named.graph_id)
    if (graph_id === undefined) {
      throw new HTTPException(422, { message: "metadata.graph_id must name a graph this server serves" })
    }
    return { ...named, graph_id }
  }
  const admit = async (thread_id: string) => {
    const record = await read(thread_id)
    if (record !== undefined && !mayAccess(record.metadata)) throw notFound(thread_id)
    return record
  }
  return {
    get: find,
    find,
    admit,
    create: async (thread_id, metadata, if_exists) => {
      const update = given(metadata)
      // A thread deleted between the insert and the read is created on the second try.
      for (let attempt = 0;; attempt++) {
        const created = await saver.createThread(thread_id, update)
        if (created !== undefined) return json(wrote(thread_id, created))
        // Taken: the request's own thread is answered as `if_exists` says; another's does not exist for it.
        requestScope.getStore()?.delete(thread_id)
        const existing = await admit(thread_id)
        if (existing === undefined && attempt === 0) continue
        if (existing === undefined) throw notFound(thread_id)
        if (if_exists === "do_nothing") return json(existing)
        throw new HTTPException(409, { message: `Thread ${thread_id} already exists` })
      }
    },
    set: async (thread_id, { kind, metadata }) => {
      const existing = await admit(thread_id)
      const update = given(metadata)
      // The embed server patches every run's thread with its graph: nothing to write when it is so already.
      const unchanged = kind === "patch" && existing !== undefined &&
        Object.entries(update).every(([key, value]) =>
          Object.hasOwn(existing.metadata, key) && JSON.stringify(existing.metadata[key]) === JSON.stringify(value)
        )
      if (unchanged) return json(existing)
      return json(wrote(thread_id, await saver.setThread(thread_id, { kind, metadata: update })))
    },
    claim: async (thread_id, metadata) =>
      json(wrote(thread_id, await saver.setThread(thread_id, { kind: "put", metadata: owned(metadata) }))),
    delete: async (thread_id) => {
      if ((await visible(thread_id)) === undefined) throw notFound(thread_id)
      await saver.deleteThread(thread_id)
      forget(thread_id)
    },
    prune: async (thread_ids, strategy) => {
      // Only the threads the request may see are pruned (and counted): the rest are as if absent.
      // A failure to read one fails the request: a prune that did nothing is not reported as done.
      const pruned: Array<string> = []
      for (const thread_id of new Set(thread_ids)) {
        if ((await visible(thread_id)) !== undefined) pruned.push(thread_id)
      }
      for (const thread_id of pruned) {
        if (strategy === "delete") {
          // A thread with only its record (created, never run) goes too.
          await saver.deleteThread(thread_id)
          forget(thread_id)
        } else {
          // Such a thread has no checkpoint to keep: nothing to do.
          await saver.prune([thread_id], { strategy }).catch((error: unknown) => {
            if ((error as { _tag?: unknown })._tag !== "ThreadNotFound") throw error
          })
        }
      }
      return pruned.length
    },
    search: async function*({ limit, metadata, offset, sortBy, sortOrder }) {
      const page = await saver.searchThreads({
        metadata: owned(metadata),
        limit,
        offset,
        sort_by: sortBy,
        sort_order: sortOrder
      })
      for (const record of page.threads) yield { thread: json(record), total: page.total }
    },
    count: async (query) => (await saver.searchThreads({ ...query, metadata: owned(query.metadata), limit: 0 })).total,
    page: async (query) => {
      const page = await saver.searchThreads({ ...query, metadata: owned(query.metadata) })
      return { threads: page.threads.map(json), total: page.total }
    }
  }
}
