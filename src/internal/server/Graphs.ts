/**
 * The graphs a server serves, and the one place a client's id is turned
 * into one of them. An assistant id or a graph id arrives from clients by
 * many paths (a run's `assistant_id`, a stateless run, a thread's metadata
 * `graph_id`, the event protocol's `run.start`): each must name a served
 * graph or its assistant's UUID, else the request is refused (404) before
 * anything looks it up.
 *
 * The embed server looks graphs up by indexing the record it was given and
 * then assigns `store` and `checkpointer` on what it found: given an
 * ordinary object, `"__proto__"` would find `Object.prototype` and every
 * object in the process would gain a checkpointer. So the embed server gets
 * {@link Graphs.lookup}: a record with no prototype whose unknown keys are
 * refused, never `undefined` (a second fence behind the checks).
 *
 * @since 0.4.0
 */
import { v5 as uuidv5 } from "@langchain/core/utils/uuid"
import { HTTPException } from "hono/http-exception"
import type { Graph } from "../../ServerOptions.ts"

/** The namespace LangGraph derives an assistant's id from its graph's id in. */
const NAMESPACE_GRAPH = "6ba7b821-9dad-11d1-80b4-00c04fd430c8"

/**
 * A graph's assistant id, as LangGraph's own servers derive it.
 *
 * @since 0.2.0
 */
export const assistantId = (graph_id: string): string => uuidv5(graph_id, NAMESPACE_GRAPH)

/**
 * @since 0.4.0
 */
export interface Graphs {
  /** The served graph ids, in the order given. */
  readonly ids: ReadonlyArray<string>
  /** The graph id an assistant id or graph id names; undefined when it names no served graph. */
  readonly resolve: (id: unknown) => string | undefined
  /** The graph id `id` names, or 404 (`what` names the id: "Assistant"). */
  readonly require: (id: unknown, what: string) => string
  /** The graphs by id for the embed server: no prototype, and an unknown key is a 404, never `undefined`. */
  readonly lookup: Readonly<Record<string, Graph>>
}

const notServed = (id: unknown, what: string) =>
  new HTTPException(404, {
    message: typeof id === "string" ? `${what} ${JSON.stringify(id.slice(0, 200))} not found` : `${what} not given`
  })

/**
 * The served graphs of `graphs` (its own enumerable keys).
 *
 * @since 0.4.0
 */
export const make = (graphs: Readonly<Record<string, Graph>>): Graphs => {
  const byId = new Map(Object.entries(graphs))
  const byAssistant = new Map([...byId.keys()].map((graph_id) => [assistantId(graph_id), graph_id]))
  const resolve = (id: unknown) => typeof id !== "string" ? undefined : byId.has(id) ? id : byAssistant.get(id)
  const require = (id: unknown, what: string) => {
    const graph_id = resolve(id)
    if (graph_id === undefined) throw notServed(id, what)
    return graph_id
  }
  const lookup = new Proxy(Object.freeze(Object.assign(Object.create(null) as Record<string, Graph>, graphs)), {
    get: (target, key) => {
      if (typeof key === "symbol") return undefined
      if (byId.has(key)) return target[key]
      throw notServed(key, "Graph")
    }
  })
  return { ids: [...byId.keys()], resolve, require, lookup }
}
