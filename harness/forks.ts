/**
 * Histories too big to write by running a graph: checkpoints put through a
 * saver's `put` directly, their ids made here (time-ordered, a parent's
 * older than its children's) so that the puts go side by side. Each is what
 * a chat's model step leaves: one message, `messages` at the next version.
 */
import { AIMessage } from "@langchain/core/messages"
import { uuid6 } from "@langchain/langgraph-checkpoint"
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint"

/**
 * The `i`-th checkpoint put: `messages` at a version of its own, as this
 * library's `getNextVersion` gives (the next integer and a fraction), so
 * that forks do not share one (a value is stored per channel and version).
 */
const versionOf = (step: number, i: number) => `${step + 1}.${String(i).padStart(8, "0")}`

const checkpointOf = (id: string, step: number, version: string, text: string) => ({
  v: 4,
  id,
  ts: new Date().toISOString(),
  channel_values: { messages: [new AIMessage(text)] },
  channel_versions: { messages: version },
  versions_seen: { model: { "branch:to:model": step } }
})

/** Time-ordered ids, made ahead. */
const ids = (count: number) => Array.from({ length: count }, () => uuid6(-1))

/** Puts `count` checkpoints, `at(i)` giving each its id, parent and step, `width` at a time. */
const putAll = async (
  saver: BaseCheckpointSaver,
  thread_id: string,
  count: number,
  at: (i: number) => { readonly id: string; readonly parent: string | undefined; readonly step: number },
  width: number
) => {
  for (let start = 0; start < count; start += width) {
    await Promise.all(
      Array.from({ length: Math.min(width, count - start) }, (_, k) => {
        const { id, parent, step } = at(start + k)
        const version = versionOf(step, start + k)
        return saver.put(
          {
            configurable: { thread_id, checkpoint_ns: "", ...(parent === undefined ? {} : { checkpoint_id: parent }) }
          },
          checkpointOf(id, step, version, `answer ${start + k}`),
          { source: "loop", step, parents: {} },
          { messages: version }
        )
      })
    )
  }
}

/**
 * A root, its child, and `forks` children of that child (what edit or
 * regenerate in a chat UI make). Returns the fork point's id.
 */
export const putForks = async (saver: BaseCheckpointSaver, thread_id: string, forks: number, width = 8) => {
  const made = ids(forks + 2)
  await putAll(saver, thread_id, 2, (i) => ({ id: made[i]!, parent: i === 0 ? undefined : made[0], step: i }), 1)
  await putAll(saver, thread_id, forks, (i) => ({ id: made[i + 2]!, parent: made[1], step: 2 }), width)
  return made[1]!
}

/** A linear thread of `length` checkpoints. */
export const putChain = async (saver: BaseCheckpointSaver, thread_id: string, length: number, width = 8) => {
  const made = ids(length)
  await putAll(saver, thread_id, length, (i) => ({
    id: made[i]!,
    parent: i === 0 ? undefined : made[i - 1],
    step: i
  }), width)
}
