/**
 * The memory driver's state: one entry per thread, holding that thread's
 * rows per namespace keyed the way the SQL tables key them, and the reads
 * every operation shares (a checkpoint with its blobs, their bases and the
 * pieces they refer to). Nothing here locks: the driver calls it inside one
 * `Effect.sync` per operation.
 *
 * @since 0.1.0
 */
import type { NamespaceState, ThreadRecordState, ThreadState } from "../../MemoryState.ts"
import type { BlobRow, CheckpointRow, SharedBase, StoredCheckpoint, WriteRow } from "../../StorageDriver.ts"
import * as StorageFormat from "../StorageFormat.ts"

/**
 * A new thread record with `metadata`, created at `created_at`.
 *
 * @since 0.4.0
 */
export const newRecord = (metadata: string, created_at: Date): ThreadRecordState => ({
  metadata,
  created_at,
  status: "idle",
  values: undefined,
  epoch: 0,
  runs: new Map()
})

/**
 * A namespace as the driver changes it.
 *
 * @since 0.1.0
 */
export interface MutableNamespace extends NamespaceState {
  readonly checkpoints: Map<string, CheckpointRow>
  readonly blobs: Map<string, Map<string, BlobRow>>
  readonly writes: Map<string, Map<string, WriteRow>>
}

/**
 * A thread as the driver changes it.
 *
 * @since 0.1.0
 */
export interface MutableThread extends ThreadState {
  lastActivity: Date | undefined
  record: ThreadRecordState | undefined
  readonly namespaces: Map<string, MutableNamespace>
  readonly pieces: Map<string, Uint8Array>
}

/**
 * Every thread, by id.
 *
 * @since 0.1.0
 */
export type Threads = Map<string, MutableThread>

/**
 * A pending write's key within its checkpoint: writes are unique by task and index.
 *
 * @since 0.1.0
 */
export const writeKey = (write: Pick<WriteRow, "task_id" | "idx">): string => JSON.stringify([write.task_id, write.idx])

/**
 * The value of `key` in `map`, made by `make` if it was not there.
 *
 * @since 0.1.0
 */
export const hold = <K, V>(map: Map<K, V>, key: K, make: () => V): V => {
  let value = map.get(key)
  if (value === undefined) map.set(key, value = make())
  return value
}

/**
 * The thread, made empty if it was not there.
 *
 * @since 0.1.0
 */
export const holdThread = (threads: Threads, thread_id: string): MutableThread =>
  hold(
    threads,
    thread_id,
    () => ({ lastActivity: undefined, record: undefined, namespaces: new Map(), pieces: new Map() })
  )

/**
 * The namespace of a thread, made empty if it was not there.
 *
 * @since 0.1.0
 */
export const holdNamespace = (thread: MutableThread, checkpoint_ns: string): MutableNamespace =>
  hold(thread.namespaces, checkpoint_ns, () => ({ checkpoints: new Map(), blobs: new Map(), writes: new Map() }))

/**
 * Every checkpoint of a thread, namespace by namespace.
 *
 * @since 0.1.0
 */
export const rowsOf = (thread: ThreadState | undefined): Array<CheckpointRow> =>
  Array.from(thread?.namespaces.values() ?? []).flatMap((namespace) => Array.from(namespace.checkpoints.values()))

/**
 * Whether a thread has any checkpoint (a thread may hold only writes, or only its record).
 *
 * @since 0.2.0
 */
export const hasCheckpoints = (thread: ThreadState | undefined): boolean =>
  Array.from(thread?.namespaces.values() ?? []).some((namespace) => namespace.checkpoints.size > 0)

/**
 * The blob a checkpoint holds for a channel, if stored.
 *
 * @since 0.1.0
 */
export const blobOf = (namespace: NamespaceState | undefined, row: CheckpointRow, channel: string) => {
  const version = row.checkpoint.channel_versions[channel]
  return version === undefined ? undefined : namespace?.blobs.get(channel)?.get(String(version))
}

/**
 * A blob and the bases it extends, down to `StorageFormat.BASE_DEPTH`, as
 * the SQL driver keeps them: what keeps them from being removed.
 *
 * @since 0.1.0
 */
export const withBases = (
  namespace: NamespaceState,
  channel: string,
  version: string,
  depth = 0
): Array<BlobRow> => {
  const blob = namespace.blobs.get(channel)?.get(version)
  if (blob === undefined) return []
  return blob.base === undefined || depth === StorageFormat.BASE_DEPTH
    ? [blob]
    : [blob, ...withBases(namespace, channel, blob.base.version, depth + 1)]
}

/**
 * A blob as read: a shared list carries its bases' lists.
 *
 * @since 0.1.0
 */
export const readBlob = (namespace: NamespaceState | undefined, blob: BlobRow): BlobRow =>
  copy({ ...blob, base: readBase(namespace, blob.channel, blob.base) })

/**
 * A base with the bases below it, down to `StorageFormat.BASE_DEPTH` as the SQL
 * driver reads them: one past the deepest is named without its list (so
 * bases that loop, which stored data may hold, end too).
 */
const readBase = (
  namespace: NamespaceState | undefined,
  channel: string,
  base: SharedBase | undefined,
  depth = 1
): SharedBase | undefined => {
  if (base === undefined) return undefined
  if (depth > StorageFormat.BASE_DEPTH) return { version: base.version, keep: 0, list: undefined, base: undefined }
  const stored = namespace?.blobs.get(channel)?.get(base.version)
  return {
    version: base.version,
    keep: base.keep,
    list: stored?.bytes,
    base: readBase(namespace, channel, stored?.base, depth + 1)
  }
}

/**
 * The pieces the blobs and writes refer to, with their bases' lists', and
 * the pieces derived ones among them are written against.
 */
const piecesFor = (
  thread: ThreadState | undefined,
  rows: ReadonlyArray<BlobRow | WriteRow>
): Map<string, Uint8Array> => {
  const found = new Map<string, Uint8Array>()
  const pieceOf = (key: string) => thread?.pieces.get(key)
  for (const key of StorageFormat.referencedPieces(rows, pieceOf)) {
    const bytes = pieceOf(key)
    if (bytes !== undefined) found.set(key, bytes)
  }
  return found
}

/**
 * A checkpoint as read, with the given blobs and writes and the pieces they refer to.
 *
 * @since 0.1.0
 */
export const withPieces = (
  thread: ThreadState | undefined,
  row: CheckpointRow,
  blobs: Array<BlobRow>,
  writes: Array<WriteRow>
): StoredCheckpoint => ({ row, blobs, writes, pieces: piecesFor(thread, [...blobs, ...writes]) })

/**
 * The pending writes on a checkpoint, as stored (not copied).
 *
 * @since 0.1.0
 */
export const writesAt = (namespace: NamespaceState | undefined, checkpoint_id: string): Array<WriteRow> =>
  Array.from(namespace?.writes.get(checkpoint_id)?.values() ?? [])

/**
 * A checkpoint as read: the blobs of its channel versions, its writes and their pieces.
 *
 * @since 0.1.0
 */
export const stored = (thread: ThreadState | undefined, row: CheckpointRow): StoredCheckpoint => {
  const namespace = thread?.namespaces.get(row.checkpoint_ns)
  return withPieces(
    thread,
    row,
    Object.keys(row.checkpoint.channel_versions).flatMap((channel) => {
      const blob = blobOf(namespace, row, channel)
      return blob === undefined ? [] : [readBlob(namespace, blob)]
    }),
    writesAt(namespace, row.checkpoint_id).map(copy)
  )
}

/**
 * Stored bytes are never shared with callers: a `Uint8Array` value is the
 * caller's own object, which it may mutate after `put` or after a read.
 *
 * @since 0.1.0
 */
export const copy = <A extends { readonly bytes: Uint8Array | undefined }>(row: A): A =>
  row.bytes === undefined ? row : { ...row, bytes: row.bytes.slice() }
