/**
 * The memory driver's reads: each answers from the threads' state inside one
 * `Effect.sync`, and hands out copies, never the stored bytes.
 *
 * @since 0.1.0
 */
import { Effect, Option, Stream } from "effect"
import type { Location } from "../../Checkpoint.ts"
import type { ThreadState } from "../../MemoryState.ts"
import type { CheckpointRow, IndexEntry, ListSelection, StorageDriver, StoredCheckpoint } from "../../StorageDriver.ts"
import { blobOf, copy, hasCheckpoints, readBlob, rowsOf, stored, withPieces, writesAt } from "./ThreadState.ts"

/**
 * The driver operations that only read.
 *
 * @since 0.1.0
 */
export type Reads = Pick<
  StorageDriver,
  | "getTuple"
  | "list"
  | "channelWrites"
  | "ancestors"
  | "threadExists"
  | "threadIndex"
  | "threads"
  | "threadsOfRuns"
  | "threadRows"
>

/**
 * The reads over a state.
 *
 * @since 0.1.0
 */
export const reads = (threads: ReadonlyMap<string, ThreadState>): Reads => {
  const namespace = (location: Location) => threads.get(location.thread_id)?.namespaces.get(location.checkpoint_ns)

  const find = (location: Location): CheckpointRow | undefined => {
    const checkpoints = namespace(location)?.checkpoints
    if (checkpoints === undefined) return undefined
    return location.checkpoint_id === undefined ? latest(checkpoints) : checkpoints.get(location.checkpoint_id)
  }

  const storedRow = (row: CheckpointRow) => stored(threads.get(row.thread_id), row)

  // As the SQL driver lists them: threads holding only writes, or only a record, are not.
  const listed = () => Array.from(threads).filter(([, thread]) => hasCheckpoints(thread))

  return {
    // Sends every piece whatever the caller has: nothing crosses a wire.
    getTuple: (location) => Effect.sync(() => Option.map(Option.fromUndefinedOr(find(location)), storedRow)),

    list: (selection) => Stream.suspend(() => Stream.fromIterable(selectRows(threads, selection).map(storedRow))),

    channelWrites: (checkpoint, channel) =>
      Effect.sync(() =>
        writesAt(namespace(checkpoint), checkpoint.checkpoint_id)
          .filter((write) => write.channel === channel)
          .map(copy)
      ),

    // Nothing to save by leaving known blobs out: every blob comes whole, without a digest.
    ancestors: (location, channels) =>
      Effect.sync(() => ancestors(threads.get(location.thread_id), find, location, channels)),

    threadExists: (thread_id) => Effect.sync(() => rowsOf(threads.get(thread_id)).length > 0),

    threadIndex: (thread_id) => Effect.sync(() => threadIndex(threads.get(thread_id))),

    threads: Effect.sync(() =>
      listed().map(([thread_id, thread]) => ({ thread_id, last_activity: thread.lastActivity ?? new Date(0) }))
    ),

    threadsOfRuns: (run_ids) =>
      Effect.sync(() => {
        const wanted = new Set(run_ids)
        return listed().flatMap(([thread_id, thread]) =>
          rowsOf(thread).some((row) => wanted.has(runIdOf(row) ?? "")) ? [thread_id] : []
        )
      }),

    threadRows: (thread_id) =>
      Effect.sync(() => {
        const thread = threads.get(thread_id)
        const namespaces = Array.from(thread?.namespaces ?? [])
        return {
          thread_id,
          last_activity: thread?.lastActivity ?? new Date(0),
          checkpoints: rowsOf(thread),
          blobs: namespaces.flatMap(([checkpoint_ns, { blobs }]) =>
            Array.from(blobs.values()).flatMap((versions) =>
              Array.from(versions.values(), (blob) => ({ ...copy(blob), checkpoint_ns }))
            )
          ),
          writes: namespaces.flatMap(([checkpoint_ns, { writes }]) =>
            Array.from(writes).flatMap(([checkpoint_id, stored]) =>
              Array.from(stored.values(), (write) => ({ ...copy(write), checkpoint_ns, checkpoint_id }))
            )
          ),
          pieces: Array.from(thread?.pieces ?? [], ([pieceKey, bytes]) => ({
            hash: Buffer.from(pieceKey, "latin1"),
            bytes: bytes.slice()
          }))
        }
      })
  }
}

/** Each checkpoint once: parent links that loop stop the walk where it comes back. */
const ancestors = (
  thread: ThreadState | undefined,
  find: (location: Location) => CheckpointRow | undefined,
  location: Location,
  channels: ReadonlyArray<string>
) => {
  const wanted = new Set(channels)
  const remaining = new Set(channels)
  const chain: Array<StoredCheckpoint> = []
  const namespace = thread?.namespaces.get(location.checkpoint_ns)
  const target = find(location)
  const passed = new Set(target === undefined ? [] : [target.checkpoint_id])
  let parentId = target?.parent_checkpoint_id
  while (parentId !== undefined && remaining.size > 0) {
    if (passed.has(parentId)) return { chain, loopsAt: parentId }
    passed.add(parentId)
    const row = namespace?.checkpoints.get(parentId)
    if (row === undefined) break
    const rowBlobs = channels.flatMap((channel) => {
      const blob = blobOf(namespace, row, channel)
      return blob === undefined || blob.type === "empty" ? [] : [readBlob(namespace, blob)]
    })
    const rowWrites = writesAt(namespace, row.checkpoint_id).filter((write) => wanted.has(write.channel))
    chain.push(withPieces(thread, row, rowBlobs, rowWrites.map(copy)))
    for (const blob of rowBlobs) remaining.delete(blob.channel)
    parentId = row.parent_checkpoint_id
  }
  return { chain, loopsAt: undefined }
}

const threadIndex = (thread: ThreadState | undefined): Array<IndexEntry> =>
  rowsOf(thread).map((row) => {
    const namespace = thread?.namespaces.get(row.checkpoint_ns)
    const channels = Object.keys(row.checkpoint.channel_versions)
    return {
      checkpoint_ns: row.checkpoint_ns,
      checkpoint_id: row.checkpoint_id,
      parent_checkpoint_id: row.parent_checkpoint_id,
      channels,
      stored: channels.filter((channel) => (blobOf(namespace, row, channel)?.type ?? "empty") !== "empty"),
      written: [...new Set(writesAt(namespace, row.checkpoint_id).map((write) => write.channel))],
      run_id: runIdOf(row)
    }
  })

const latest = (checkpoints: ReadonlyMap<string, CheckpointRow>): CheckpointRow | undefined => {
  let found: CheckpointRow | undefined
  for (const row of checkpoints.values()) {
    if (found === undefined || row.checkpoint_id > found.checkpoint_id) found = row
  }
  return found
}

const selectRows = (threads: ReadonlyMap<string, ThreadState>, selection: ListSelection): Array<CheckpointRow> => {
  const rows: Array<CheckpointRow> = []
  const threadIds = selection.thread_id === undefined ? threads.keys() : [selection.thread_id]
  for (const thread_id of threadIds) {
    for (const [checkpoint_ns, { checkpoints }] of threads.get(thread_id)?.namespaces ?? []) {
      if (selection.checkpoint_ns !== undefined && checkpoint_ns !== selection.checkpoint_ns) continue
      for (const row of checkpoints.values()) if (matches(selection, row)) rows.push(row)
    }
  }
  rows.sort(newestFirst)
  return selection.limit === undefined ? rows : rows.slice(0, selection.limit)
}

const matches = (selection: ListSelection, row: CheckpointRow): boolean => {
  if (selection.checkpoint_id !== undefined && row.checkpoint_id !== selection.checkpoint_id) return false
  if (selection.before !== undefined && row.checkpoint_id >= selection.before) return false
  if (selection.filter.length === 0) return true
  const metadata: Record<string, unknown> = JSON.parse(row.metadata)
  return selection.filter.every(([name, json]) =>
    Object.hasOwn(metadata, name) && jsonEqual(metadata[name], JSON.parse(json))
  )
}

const runIdOf = (row: CheckpointRow): string | undefined => {
  const run_id: unknown = (JSON.parse(row.metadata) as Record<string, unknown>).run_id
  return typeof run_id === "string" ? run_id : undefined
}

const newestFirst = (a: CheckpointRow, b: CheckpointRow): number =>
  compare(b.checkpoint_id, a.checkpoint_id) || compare(a.thread_id, b.thread_id) ||
  compare(a.checkpoint_ns, b.checkpoint_ns)

const compare = (a: string, b: string): number => a < b ? -1 : a > b ? 1 : 0

/** Deep equality of JSON values (object key order does not matter), as `jsonb =` compares. */
const jsonEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const aKeys = Object.keys(a)
  const bKeys = Object.keys(b)
  return aKeys.length === bKeys.length &&
    aKeys.every((k) =>
      Object.hasOwn(b, k) && jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])
    )
}
