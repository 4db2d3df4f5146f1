/**
 * Which checkpoints a pruned thread keeps, and where the parent links of
 * those that stay then point: pure plans, from the thread's index.
 *
 * Pruning keeps the newest checkpoints of each namespace (the latest one for
 * `keep_latest`, the newest N for retention) and what reading them needs:
 * `getTuple` needs a checkpoint's row, writes and the blobs of its channel
 * versions (the driver keeps those, and their bases and pieces, with any row
 * that stays). LangGraph asks `getDeltaChannelHistory` of a checkpoint only
 * for the channels whose value it does not store (a DeltaChannel between
 * snapshots), and walks its ancestors back to, for each, the nearest one that
 * stores a value (or, for a channel never stored, the last one that wrote to
 * it). Those ancestors stay too, with their own rows, writes and blobs.
 * LangGraph's trigger channels (`__start__`, `branch:to:*`, `join:*`, its
 * task queue) are never read so, and are last stored where a run began: were
 * they followed, every linear thread would stay whole. So after pruning,
 * every kept newest checkpoint reads back, and rebuilds its DeltaChannels,
 * exactly as before; a kept ancestor's own delta history ends where pruning
 * cut. A checkpoint that stays while its parent goes names no parent any
 * more, so no link dangles (`importThread` refuses dangling links).
 *
 * Plans are linear in the thread's size (a sort of each namespace's ids
 * aside), and a thread whose parent links loop has no plan: the loop is the
 * answer, for the caller to report.
 *
 * @since 0.1.0
 */
import { Result } from "effect"
import type { IndexEntry, ThreadRows } from "../../StorageDriver.ts"
import * as StorageFormat from "../StorageFormat.ts"
import * as ParentLinks from "./ParentLinks.ts"

/**
 * A checkpoint pointed at a new parent (none when `parent_checkpoint_id` is
 * undefined).
 *
 * @since 0.1.0
 */
export type Relink = Pick<IndexEntry, "checkpoint_ns" | "checkpoint_id" | "parent_checkpoint_id">

/**
 * What an operation changes in a thread.
 *
 * @since 0.1.0
 */
export interface Plan {
  /** The checkpoints removed, with their writes. */
  readonly removed: ReadonlyArray<IndexEntry>
  /** Checkpoints that stay whose parent is removed, with their new parent. */
  readonly relinked: ReadonlyArray<Relink>
}

const newestFirst = (a: IndexEntry, b: IndexEntry) =>
  a.checkpoint_id < b.checkpoint_id ? 1 : a.checkpoint_id > b.checkpoint_id ? -1 : 0

/**
 * The plan of keeping the `last` newest checkpoints of each namespace (1 for
 * `keep_latest`) and what they need.
 *
 * @since 0.1.0
 */
export const keepingLast = (
  index: ReadonlyArray<IndexEntry>,
  last = 1
): Result.Result<Plan, ParentLinks.Loop> => {
  const namespaces = ParentLinks.byNamespace(index)
  const loop = ParentLinks.findLoop(namespaces)
  if (loop !== undefined) return Result.fail(loop)
  const kept = new Set<IndexEntry>()
  for (const byId of namespaces.values()) keepNewest([...byId.values()], last, kept)
  const removed = index.filter((entry) => !kept.has(entry))
  const relinked = index.filter((entry) => {
    if (!kept.has(entry) || entry.parent_checkpoint_id === undefined) return false
    const parent = namespaces.get(entry.checkpoint_ns)!.get(entry.parent_checkpoint_id)
    return parent !== undefined && !kept.has(parent)
  }).map(({ checkpoint_id, checkpoint_ns }): Relink => ({
    checkpoint_ns,
    checkpoint_id,
    parent_checkpoint_id: undefined
  }))
  return Result.succeed({ removed, relinked })
}

/**
 * Adds to `kept` the `last` newest of a namespace's entries (whose links do
 * not loop) and the ancestors their delta histories read.
 *
 * Each head needs its ancestors up to its *endpoint*: the farthest, over the
 * channels it reads back (see `readsBack`), of the nearest ancestor storing the channel (else the farthest
 * one writing to it). Those are found for every checkpoint at once, from the
 * roots down, channel by channel; then each head's chain is marked up to its
 * endpoint, heads with the farthest endpoints first, so a chain that meets
 * one already marked can stop there: everything above, up to its own
 * endpoint, is marked. Every checkpoint is so visited a bounded number of
 * times per channel.
 */
const keepNewest = (entries: ReadonlyArray<IndexEntry>, last: number, kept: Set<IndexEntry>) => {
  const n = entries.length
  const position = new Map(entries.map((entry, i) => [entry.checkpoint_id, i]))
  const parent = Int32Array.from(
    entries,
    (entry) => entry.parent_checkpoint_id === undefined ? -1 : position.get(entry.parent_checkpoint_id) ?? -1
  )
  const heads = entries.map((_, i) => i).sort((a, b) => newestFirst(entries[a]!, entries[b]!)).slice(0, last)
  for (const head of heads) kept.add(entries[head]!)

  // Depths (a root is at 0), each path climbed once; then every checkpoint after its parent.
  const depth = new Int32Array(n).fill(-1)
  const climbed: Array<number> = []
  for (let i = 0; i < n; i++) {
    let at = i
    while (at >= 0 && depth[at]! < 0) {
      climbed.push(at)
      at = parent[at]!
    }
    let d = at < 0 ? -1 : depth[at]!
    while (climbed.length > 0) depth[climbed.pop()!] = ++d
  }
  const order = Int32Array.from({ length: n }, (_, i) => i).sort((a, b) => depth[a]! - depth[b]!)

  // For each channel a head reads back: the nearest checkpoint at or above each one storing it, and the farthest writing to it.
  const readBack = heads.map((head) => readsBack(entries[head]!))
  const channels = new Map<string, { seed: Int32Array; writer: Int32Array }>()
  for (const names of readBack) {
    for (const channel of names) {
      if (!channels.has(channel)) channels.set(channel, { seed: new Int32Array(n), writer: new Int32Array(n) })
    }
  }
  const stores = flags(entries, channels, (entry) => entry.stored)
  const writes = flags(entries, channels, (entry) => entry.written)
  for (const [channel, { seed, writer }] of channels) {
    const stored = stores.get(channel)!
    const written = writes.get(channel)!
    for (const i of order) {
      const up = parent[i]!
      seed[i] = stored[i] === 1 ? i : up < 0 ? -1 : seed[up]!
      writer[i] = up >= 0 && writer[up]! >= 0 ? writer[up]! : written[i] === 1 ? i : -1
    }
  }

  const reaches: Array<{ readonly from: number; readonly to: number }> = []
  heads.forEach((head, h) => {
    const from = parent[head]!
    if (from < 0) return
    let to = -1
    for (const channel of readBack[h]!) {
      const { seed, writer } = channels.get(channel)!
      const end = seed[from]! >= 0 ? seed[from]! : writer[from]!
      if (end >= 0 && (to < 0 || depth[end]! < depth[to]!)) to = end
    }
    if (to >= 0) reaches.push({ from, to })
  })
  const marked = new Uint8Array(n)
  for (const { from, to } of reaches.sort((a, b) => depth[a.to]! - depth[b.to]!)) {
    for (let at = from; marked[at] === 0; at = parent[at]!) {
      marked[at] = 1
      kept.add(entries[at]!)
      if (at === to) break
    }
  }
}

/**
 * The channels whose history LangGraph may read from a checkpoint: those it
 * has a version of but no stored value, other than LangGraph's triggers.
 */
const readsBack = (entry: IndexEntry): ReadonlyArray<string> => {
  const stored = new Set(entry.stored)
  return entry.channels.filter((channel) => !stored.has(channel) && !isTrigger(channel))
}

/**
 * Whether a channel is one LangGraph uses only to trigger nodes: `__start__`
 * (the input), `branch:to:<node>`, `join:<nodes>:<node>` (waiting edges) and
 * `__pregel_tasks` (`Send`s). None is a DeltaChannel, so none is read back.
 *
 * @since 0.1.0
 */
export const isTrigger = (channel: string): boolean =>
  channel === "__start__" || channel === "__pregel_tasks" || channel.startsWith("branch:to:") ||
  channel.startsWith("join:")

/** For each channel, which entries name it in `names` (1), as flags by position. */
const flags = (
  entries: ReadonlyArray<IndexEntry>,
  channels: ReadonlyMap<string, unknown>,
  names: (entry: IndexEntry) => ReadonlyArray<string>
) => {
  const byChannel = new Map([...channels.keys()].map((channel) => [channel, new Uint8Array(entries.length)]))
  entries.forEach((entry, i) => {
    for (const name of names(entry)) {
      const flag = byChannel.get(name)
      if (flag !== undefined) flag[i] = 1
    }
  })
  return byChannel
}

/**
 * The plan of `deleteForRuns` in a thread: the checkpoints the runs created
 * go, and the survivors whose parent goes point at their nearest surviving
 * ancestor, so no chain dangles.
 *
 * @since 0.1.0
 */
export const deletingRuns = (
  index: ReadonlyArray<IndexEntry>,
  run_ids: ReadonlySet<string>
): Result.Result<Plan, ParentLinks.Loop> => {
  const namespaces = ParentLinks.byNamespace(index)
  const loop = ParentLinks.findLoop(namespaces)
  if (loop !== undefined) return Result.fail(loop)
  const gone = (entry: IndexEntry | undefined): boolean => entry?.run_id !== undefined && run_ids.has(entry.run_id)
  /** For a removed entry: what its children point at now (its nearest surviving ancestor). */
  const above = new Map<IndexEntry, string | undefined>()
  const survivorFrom = (byId: ReadonlyMap<string, IndexEntry>, id: string) => {
    const climbed: Array<IndexEntry> = []
    let at: string | undefined = id
    while (at !== undefined) {
      const entry = byId.get(at)
      if (entry === undefined || !gone(entry)) break
      if (above.has(entry)) {
        at = above.get(entry)
        break
      }
      climbed.push(entry)
      at = entry.parent_checkpoint_id
    }
    for (const entry of climbed) above.set(entry, at)
    return at
  }
  const relinked = index.flatMap((entry): Array<Relink> => {
    if (gone(entry) || entry.parent_checkpoint_id === undefined) return []
    const byId = namespaces.get(entry.checkpoint_ns)!
    if (!gone(byId.get(entry.parent_checkpoint_id))) return []
    return [{
      checkpoint_ns: entry.checkpoint_ns,
      checkpoint_id: entry.checkpoint_id,
      parent_checkpoint_id: survivorFrom(byId, entry.parent_checkpoint_id)
    }]
  })
  return Result.succeed({ removed: index.filter(gone), relinked })
}

/** A checkpoint's or blob's place in its thread, as a map key (keys hold no NUL). */
const placeOf = (...parts: ReadonlyArray<string>) => parts.join("\u0000")

/**
 * A thread's index (see `StorageDriver.threadIndex`) from its rows, for a
 * plan made of rows already read (a copy's); `run_id` is left out.
 *
 * @since 0.4.0
 */
export const indexOf = (rows: ThreadRows): Array<IndexEntry> => {
  const stored = new Set(
    rows.blobs.filter((blob) => blob.type !== "empty").map((blob) =>
      placeOf(blob.checkpoint_ns, blob.channel, blob.version)
    )
  )
  const written = new Map<string, Set<string>>()
  for (const write of rows.writes) {
    const place = placeOf(write.checkpoint_ns, write.checkpoint_id)
    const channels = written.get(place) ?? new Set()
    channels.add(write.channel)
    written.set(place, channels)
  }
  return rows.checkpoints.map((row) => {
    const versions = Object.entries(row.checkpoint.channel_versions ?? {})
    return {
      checkpoint_ns: row.checkpoint_ns,
      checkpoint_id: row.checkpoint_id,
      parent_checkpoint_id: row.parent_checkpoint_id,
      channels: versions.map(([channel]) => channel),
      stored: versions.filter(([channel, version]) => stored.has(placeOf(row.checkpoint_ns, channel, String(version))))
        .map(([channel]) => channel),
      written: [...written.get(placeOf(row.checkpoint_ns, row.checkpoint_id)) ?? []],
      run_id: undefined
    }
  })
}

/**
 * The rows a plan leaves of a thread: the checkpoints it keeps (relinked),
 * their writes, the blobs their versions name with the bases those extend,
 * and the pieces all these refer to with the bases of derived ones. What a
 * driver keeps when it carries the plan out, worked out on rows in memory
 * (a copy of a thread's latest state).
 *
 * @since 0.4.0
 */
export const rowsLeft = (rows: ThreadRows, plan: Plan): ThreadRows => {
  const removed = new Set(plan.removed.map((entry) => placeOf(entry.checkpoint_ns, entry.checkpoint_id)))
  const parents = new Map(
    plan.relinked.map((entry) => [placeOf(entry.checkpoint_ns, entry.checkpoint_id), entry.parent_checkpoint_id])
  )
  const checkpoints = rows.checkpoints.flatMap((row) => {
    const place = placeOf(row.checkpoint_ns, row.checkpoint_id)
    if (removed.has(place)) return []
    return [parents.has(place) ? { ...row, parent_checkpoint_id: parents.get(place) } : row]
  })
  const writes = rows.writes.filter((write) => !removed.has(placeOf(write.checkpoint_ns, write.checkpoint_id)))
  const blobs = new Map(rows.blobs.map((blob) => [placeOf(blob.checkpoint_ns, blob.channel, blob.version), blob]))
  const needed = new Set<ThreadRows["blobs"][number]>()
  const need = (checkpoint_ns: string, channel: string, version: string, depth: number) => {
    const blob = blobs.get(placeOf(checkpoint_ns, channel, version))
    if (blob === undefined || needed.has(blob)) return
    needed.add(blob)
    if (blob.base !== undefined && depth < StorageFormat.BASE_DEPTH) {
      need(checkpoint_ns, channel, blob.base.version, depth + 1)
    }
  }
  for (const row of checkpoints) {
    for (const [channel, version] of Object.entries(row.checkpoint.channel_versions ?? {})) {
      need(row.checkpoint_ns, channel, String(version), 0)
    }
  }
  const pieces = new Map(rows.pieces.map((piece) => [StorageFormat.pieceKey(piece.hash), piece.bytes]))
  const live = StorageFormat.referencedPieces([...needed, ...writes], (key) => pieces.get(key))
  return {
    ...rows,
    checkpoints,
    blobs: rows.blobs.filter((blob) => needed.has(blob)),
    writes,
    pieces: rows.pieces.filter((piece) => live.has(StorageFormat.pieceKey(piece.hash)))
  }
}
