/**
 * A thread's history grouped by namespace, the root first, each subgraph's
 * namespace under its parent: what the CLI and the page draw, shared.
 *
 * @since 0.1.0
 */

/**
 * A namespace's parent: `a:1|b:2` is under `a:1`, `a:1` under the root.
 *
 * @since 0.1.0
 */
export const parentOf = (name: string) => name.includes("|") ? name.slice(0, name.lastIndexOf("|")) : ""

/**
 * The entries by namespace, sorted by name (so the root "" first), in one
 * pass, each keeping the entries' order; `parent` is null for the root.
 *
 * @since 0.1.0
 */
export const groups = <A extends { readonly checkpoint_ns: string }>(
  entries: ReadonlyArray<A>
): Array<{ readonly name: string; readonly parent: string | null; readonly entries: ReadonlyArray<A> }> => {
  const byName = new Map<string, Array<A>>()
  for (const entry of entries) {
    const list = byName.get(entry.checkpoint_ns)
    if (list === undefined) byName.set(entry.checkpoint_ns, [entry])
    else list.push(entry)
  }
  return [...byName.keys()].sort().map((name) => ({
    name,
    parent: name === "" ? null : parentOf(name),
    entries: byName.get(name)!
  }))
}
