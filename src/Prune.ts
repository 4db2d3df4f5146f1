/**
 * Which checkpoints a pruned thread keeps.
 *
 * Pruning keeps the newest checkpoints of each namespace (the latest one for
 * `keep_latest`, the newest N for retention) and what reading them needs:
 * `getTuple` needs a checkpoint's row, writes and the blobs of its channel
 * versions (the driver keeps those with any row that stays), and
 * `getDeltaChannelHistory` walks its ancestors back to, for each of its
 * channels, the nearest one that stores a value (or, for a channel never
 * stored, the last one that wrote to it). Those ancestors stay too,
 * with their own rows, writes and blobs. So after pruning, every checkpoint
 * that stays reads back exactly as before, and the kept newest ones rebuild
 * their DeltaChannels exactly as before. (A kept ancestor's own delta
 * history ends where pruning cut: requiring it too would keep every linear
 * thread whole.)
 *
 * @since 0.1.0
 */
import type { IndexEntry } from "./StorageDriver.ts"

const place = (checkpoint_ns: string, checkpoint_id: string) => JSON.stringify([checkpoint_ns, checkpoint_id])

/**
 * The checkpoints of a thread that keeping the `last` newest of each
 * namespace (1 for `keep_latest`) removes.
 *
 * @since 0.1.0
 */
export const removedKeepingLast = (index: ReadonlyArray<IndexEntry>, last = 1): Array<IndexEntry> => {
  const byPlace = new Map(index.map((entry) => [place(entry.checkpoint_ns, entry.checkpoint_id), entry]))
  const byNamespace = new Map<string, Array<IndexEntry>>()
  for (const entry of index) {
    byNamespace.set(entry.checkpoint_ns, [...byNamespace.get(entry.checkpoint_ns) ?? [], entry])
  }
  const parentOf = (entry: IndexEntry) =>
    entry.parent_checkpoint_id === undefined
      ? undefined
      : byPlace.get(place(entry.checkpoint_ns, entry.parent_checkpoint_id))
  const heads = [...byNamespace.values()].flatMap((entries) =>
    entries.sort((a, b) => a.checkpoint_id < b.checkpoint_id ? 1 : a.checkpoint_id > b.checkpoint_id ? -1 : 0).slice(
      0,
      last
    )
  )
  const kept = new Set<string>()
  for (const head of heads) {
    kept.add(place(head.checkpoint_ns, head.checkpoint_id))
    const chain: Array<IndexEntry> = []
    for (
      let ancestor = parentOf(head);
      ancestor !== undefined && !chain.includes(ancestor);
      ancestor = parentOf(ancestor)
    ) chain.push(ancestor)
    // How far up the head's delta history reads, channel by channel: to the
    // nearest stored value, or, for a channel never stored, to its last write
    // (above that the walk finds nothing, so cutting there changes nothing).
    let depth = 0
    for (const channel of head.channels) {
      const seed = chain.findIndex((entry) => entry.stored.includes(channel))
      const reach = seed >= 0 ? seed + 1 : chain.findLastIndex((entry) => entry.written.includes(channel)) + 1
      depth = Math.max(depth, reach)
    }
    for (const entry of chain.slice(0, depth)) kept.add(place(entry.checkpoint_ns, entry.checkpoint_id))
  }
  return index.filter((entry) => !kept.has(place(entry.checkpoint_ns, entry.checkpoint_id)))
}

/**
 * What `deleteForRuns` changes in a thread: the checkpoints the runs created,
 * and the survivors whose parent is among them, pointed at their nearest
 * surviving ancestor so no chain dangles.
 *
 * @since 0.1.0
 */
export const removedByRuns = (index: ReadonlyArray<IndexEntry>, run_ids: ReadonlySet<string>) => {
  const byPlace = new Map(index.map((entry) => [place(entry.checkpoint_ns, entry.checkpoint_id), entry]))
  const removed = index.filter((entry) => entry.run_id !== undefined && run_ids.has(entry.run_id))
  const gone = new Set(removed.map((entry) => place(entry.checkpoint_ns, entry.checkpoint_id)))
  const survivingAncestor = (entry: IndexEntry): string | undefined => {
    let parent = entry.parent_checkpoint_id
    while (parent !== undefined && gone.has(place(entry.checkpoint_ns, parent))) {
      parent = byPlace.get(place(entry.checkpoint_ns, parent))?.parent_checkpoint_id
    }
    return parent
  }
  const reparented = index
    .filter((entry) => !gone.has(place(entry.checkpoint_ns, entry.checkpoint_id)))
    .filter((entry) =>
      entry.parent_checkpoint_id !== undefined && gone.has(place(entry.checkpoint_ns, entry.parent_checkpoint_id))
    )
    .map((entry) => ({ ...entry, parent_checkpoint_id: survivingAncestor(entry) }))
  return { removed, reparented }
}
