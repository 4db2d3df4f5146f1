/**
 * What a run left on its thread, seen in its own event stream: when the
 * client asked for `values`, the last root `values` event is the thread's
 * values as LangGraph's API shows them (the graph streams the channels its
 * state shows, serialized as the embed server writes them), and a last
 * `{"__interrupt__": [...]}` one says it paused. Reading that instead of the
 * thread's last checkpoint spares a read and a decode of the whole state,
 * which grows with the thread, at every run's end.
 *
 * @since 0.4.0
 */
import type { Left } from "./Left.ts"

/** How an interrupt's `values` event begins (the embed server's `JSON.stringify`: no space). */
const INTERRUPT = "{\"__interrupt__\":"

const objectOf = (text: string): Record<string, unknown> | undefined => {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? value as Record<string, unknown>
      : undefined
  } catch {
    return undefined
  }
}

/**
 * A watcher of one execution's events.
 *
 * @since 0.4.0
 */
export const make = () => {
  let values: string | undefined
  let interrupt: string | undefined
  return {
    /** Sees an event as the embed server wrote it (subgraphs' are `values|<namespace>`). */
    event: (event: string, data: string) => {
      if (event !== "values") return
      if (data.startsWith(INTERRUPT)) interrupt = data
      else {
        values = data
        interrupt = undefined
      }
    },
    /** What the run left, if its stream said it (it had `values`): undefined to read it from the thread. */
    left: (): Left | undefined => {
      const read = values === undefined ? undefined : objectOf(values)
      if (read === undefined) return undefined
      const interrupts = interrupt === undefined ? [] : objectOf(interrupt)?.__interrupt__
      return { values: read, interrupted: Array.isArray(interrupts) && interrupts.length > 0 }
    }
  }
}
