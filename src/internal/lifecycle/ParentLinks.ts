/**
 * A thread's parent links, checked. Parent ids are stored in the clear and
 * are not sealed, and a database can be edited by hand, restored in part or
 * imported: its links may loop (a checkpoint its own ancestor, itself
 * included) or name a checkpoint its namespace does not hold. Every walk
 * over them in this library either checks them here first or bounds itself,
 * so such data ends in a typed error, never in a walk that does not end.
 *
 * A missing parent is not corrupt for a walk: it ends there, as a
 * namespace's first checkpoint does. Only `importThread` refuses one, since
 * nothing this library writes has one (`put` requires its parent, and
 * `prune`/`deleteForRuns` re-point what they orphan).
 *
 * @since 0.1.0
 */
import { CorruptedCheckpoint } from "../../CheckpointError.ts"

/**
 * A checkpoint's link to its parent, in its namespace.
 *
 * @since 0.1.0
 */
export interface Link {
  readonly checkpoint_ns: string
  readonly checkpoint_id: string
  readonly parent_checkpoint_id: string | undefined
}

/**
 * Parent links that loop: the checkpoints on the loop, in order, each the
 * parent of the one before and the first the parent of the last.
 *
 * @since 0.1.0
 */
export interface Loop {
  readonly checkpoint_ns: string
  readonly ids: ReadonlyArray<string>
}

/**
 * The links of each namespace, by checkpoint id.
 *
 * @since 0.1.0
 */
export const byNamespace = <A extends Link>(links: Iterable<A>): Map<string, Map<string, A>> => {
  const namespaces = new Map<string, Map<string, A>>()
  for (const link of links) {
    let byId = namespaces.get(link.checkpoint_ns)
    if (byId === undefined) namespaces.set(link.checkpoint_ns, byId = new Map())
    byId.set(link.checkpoint_id, link)
  }
  return namespaces
}

/**
 * A loop among the links, if there is one. Linear in their number: each
 * checkpoint is followed once, and a path that reaches a checkpoint already
 * known to end (at a root or a missing parent) stops there.
 *
 * @since 0.1.0
 */
export const findLoop = (namespaces: ReadonlyMap<string, ReadonlyMap<string, Link>>): Loop | undefined => {
  for (const [checkpoint_ns, byId] of namespaces) {
    /** "path": on the path being followed; "ends": its ancestors end. */
    const state = new Map<string, "path" | "ends">()
    for (const start of byId.keys()) {
      if (state.has(start)) continue
      const path: Array<string> = []
      let id: string | undefined = start
      while (id !== undefined && byId.has(id) && !state.has(id)) {
        state.set(id, "path")
        path.push(id)
        id = byId.get(id)!.parent_checkpoint_id
      }
      if (id !== undefined && state.get(id) === "path") return { checkpoint_ns, ids: path.slice(path.indexOf(id)) }
      for (const on of path) state.set(on, "ends")
    }
  }
  return undefined
}

/**
 * The first link whose parent its namespace does not hold, if any.
 *
 * @since 0.1.0
 */
export const findMissingParent = <A extends Link>(
  namespaces: ReadonlyMap<string, ReadonlyMap<string, A>>
): A | undefined => {
  for (const byId of namespaces.values()) {
    for (const link of byId.values()) {
      if (link.parent_checkpoint_id !== undefined && !byId.has(link.parent_checkpoint_id)) return link
    }
  }
  return undefined
}

/** Ids shown of a long loop. */
const SHOWN = 4

/**
 * What a loop is, in words: `its parent chain loops (a → b → a)`.
 *
 * @since 0.1.0
 */
export const describeLoop = (loop: Loop): string => {
  const ids = loop.ids.length <= SHOWN ? loop.ids : [...loop.ids.slice(0, SHOWN - 1), "…"]
  const length = loop.ids.length > SHOWN ? `, ${loop.ids.length} checkpoints` : ""
  return `its parent chain loops (${[...ids, loop.ids[0]!].join(" → ")}${length})`
}

/**
 * The error of an operation whose walk found a loop: `CorruptedCheckpoint`
 * naming a checkpoint on it.
 *
 * @since 0.1.0
 */
export const loopError = (operation: string, thread_id: string, loop: Loop): CorruptedCheckpoint =>
  new CorruptedCheckpoint({
    thread_id,
    checkpoint_ns: loop.checkpoint_ns,
    checkpoint_id: loop.ids[0]!,
    detail: `${operation}: ${describeLoop(loop)}`
  })
