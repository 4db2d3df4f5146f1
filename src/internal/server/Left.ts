/**
 * What a run left on its thread, read from its graph in this process (not
 * through the embed server's HTTP route): the values as LangGraph's API
 * shows them (a message as `{ ...its fields, type }`, as the embed server
 * writes it) and whether the run paused at an `interrupt()`.
 *
 * @since 0.4.0
 */
import type { EffectCheckpointSaver } from "../../Saver.ts"
import type { Graphs } from "./Graphs.ts"

/**
 * What a run left on its thread: the values as LangGraph's API shows them
 * (undefined when they cannot be read), and whether it paused at an
 * `interrupt()`.
 *
 * @since 0.4.0
 */
export interface Left {
  readonly values: Record<string, unknown> | undefined
  readonly interrupted: boolean
}

interface Dictable {
  readonly toDict: () => { readonly type: string; readonly data: object }
}

const isDictable = (value: unknown): value is Dictable =>
  typeof value === "object" && value !== null && typeof (value as { toDict?: unknown }).toDict === "function"

/** `value` as LangGraph's API writes it: LangChain's messages by their dict form. */
const asApiJson = (value: unknown): string =>
  JSON.stringify(value, function(this: Record<string, unknown>, key, replaced: unknown) {
    const raw = this[key]
    if (!isDictable(raw)) return replaced
    const { data, type } = raw.toDict()
    return { ...data, type }
  })

/**
 * What runs of a served graph left on a thread.
 *
 * @since 0.4.0
 */
export const make =
  (graphs: Graphs, saver: EffectCheckpointSaver) => async (thread_id: string, graph_id: string): Promise<Left> => {
    const graph = graphs.lookup[graph_id]!
    // As the embed server does before it runs or reads a graph.
    graph.checkpointer = saver
    const state = await graph.getState({ configurable: { thread_id } })
    const values: unknown = JSON.parse(asApiJson(state.values) ?? "null")
    return {
      values: typeof values === "object" && values !== null && !Array.isArray(values)
        ? values as Record<string, unknown>
        : undefined,
      interrupted: state.tasks.some((task) => (task.interrupts ?? []).length > 0)
    }
  }
