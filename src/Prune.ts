/**
 * Which checkpoints a pruned thread keeps.
 *
 * `keep_latest` keeps the latest checkpoint of each namespace and everything
 * reading it needs: `getTuple` needs its row, writes and the blobs of its
 * channel versions (kept by the driver with any row that stays);
 * `getDeltaChannelHistory` walks its ancestors back to, for each of its
 * channels, the nearest one that stores a value. Every ancestor on those
 * walks stays, and what it needs in turn, so every checkpoint that survives
 * reads back exactly as before.
 *
 * @since 0.1.0
 */
import type { IndexEntry } from "./StorageDriver.ts"

const place = (checkpoint_ns: string, checkpoint_id: string) => JSON.stringify([checkpoint_ns, checkpoint_id])

/**
 * The checkpoints of a thread that `keep_latest` removes.
 *
 * @since 0.1.0
 */
export const removedByKeepLatest = (index: ReadonlyArray<IndexEntry>): Array<IndexEntry> => {
  const byPlace = new Map(index.map((entry) => [place(entry.checkpoint_ns, entry.checkpoint_id), entry]))
  const latest = new Map<string, IndexEntry>()
  for (const entry of index) {
    const current = latest.get(entry.checkpoint_ns)
    if (current === undefined || entry.checkpoint_id > current.checkpoint_id) latest.set(entry.checkpoint_ns, entry)
  }
  const kept = new Set<string>()
  const pending = [...latest.values()]
  while (pending.length > 0) {
    const entry = pending.pop()!
    const key = place(entry.checkpoint_ns, entry.checkpoint_id)
    if (kept.has(key)) continue
    kept.add(key)
    // The walk of this checkpoint's delta history: until every channel is seeded.
    const unseeded = new Set(entry.channels)
    let ancestor = entry.parent_checkpoint_id === undefined
      ? undefined
      : byPlace.get(place(entry.checkpoint_ns, entry.parent_checkpoint_id))
    while (ancestor !== undefined && unseeded.size > 0) {
      pending.push(ancestor)
      for (const channel of ancestor.stored) unseeded.delete(channel)
      ancestor = ancestor.parent_checkpoint_id === undefined
        ? undefined
        : byPlace.get(place(ancestor.checkpoint_ns, ancestor.parent_checkpoint_id))
    }
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
    .filter((entry) => entry.parent_checkpoint_id !== undefined && gone.has(place(entry.checkpoint_ns, entry.parent_checkpoint_id)))
    .map((entry) => ({ ...entry, parent_checkpoint_id: survivingAncestor(entry) }))
  return { removed, reparented }
}
