/**
 * A thread's history grouped by namespace, the root first, each subgraph's
 * group tied to the parent checkpoint that started it (metadata `parents`
 * names it): what the CLI and the page draw, shared.
 *
 * @since 0.1.0
 */
import type { HistoryEntry } from "./Inspector.ts"

/**
 * A namespace's checkpoints, newest first, and where it hangs.
 *
 * @since 0.1.0
 */
export interface Group<A extends HistoryEntry = HistoryEntry> {
  readonly name: string
  /** The parent namespace (`a:1|b:2` is under `a:1`, `a:1` under the root ""); null for the root. */
  readonly parent: string | null
  /** The parent namespace's checkpoint that started this subgraph, with its step when it is in the history. */
  readonly startedAt: { readonly checkpoint_id: string; readonly step: number | undefined } | null
  readonly entries: ReadonlyArray<A>
}

/**
 * A namespace's parent: `a:1|b:2` is under `a:1`, `a:1` under the root.
 *
 * @since 0.1.0
 */
export const parentOf = (name: string) => name.includes("|") ? name.slice(0, name.lastIndexOf("|")) : ""

/**
 * The entries by namespace (sorted by name, so the root "" first), in one
 * pass, each keeping the entries' order.
 *
 * @since 0.1.0
 */
export const groups = <A extends HistoryEntry>(entries: ReadonlyArray<A>): Array<Group<A>> => {
  const byName = new Map<string, Array<A>>()
  const byId = new Map<string, A>()
  for (const entry of entries) {
    const list = byName.get(entry.checkpoint_ns)
    if (list === undefined) byName.set(entry.checkpoint_ns, [entry])
    else list.push(entry)
    byId.set(`${entry.checkpoint_ns}\u0000${entry.checkpoint_id}`, entry)
  }
  return [...byName.keys()].sort().map((name) => {
    const members = byName.get(name)!
    const parent = name === "" ? null : parentOf(name)
    const started = parent === null ? undefined : members.find((entry) => entry.parents[parent] !== undefined)
    const checkpoint_id = parent === null ? undefined : started?.parents[parent]
    return {
      name,
      parent,
      startedAt: parent === null || checkpoint_id === undefined ? null : {
        checkpoint_id,
        step: byId.get(`${parent}\u0000${checkpoint_id}`)?.step
      },
      entries: members
    }
  })
}
