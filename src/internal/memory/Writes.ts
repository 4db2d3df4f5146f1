/**
 * The memory driver's writes: each changes the threads' state inside one
 * `Effect.sync` (so it is atomic), stores copies of the caller's bytes, and
 * keeps what the SQL driver keeps (blobs and pieces written once, a
 * checkpoint's first parent, blobs and pieces removed with the last row
 * referring to them, a thread's record made by its first put and kept by
 * every other write).
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type { BlobRow, Piece, StorageDriver, ThreadRows, WriteRow } from "../../StorageDriver.ts"
import * as StorageFormat from "../StorageFormat.ts"
import {
  copy,
  hold,
  holdNamespace,
  holdThread,
  type MutableThread,
  newRecord,
  type Threads,
  withBases,
  writeKey
} from "./ThreadState.ts"

/**
 * The driver operations that write.
 *
 * @since 0.1.0
 */
export type Writes = Pick<
  StorageDriver,
  "put" | "putWrites" | "deleteThread" | "remove" | "setParents" | "writeThread"
>

/**
 * Runs a change to the state as one step, after any thread-wide operation
 * that holds the driver (see `MemoryDriver`).
 *
 * @since 0.1.0
 */
export type Writing = <A>(change: () => A) => Effect.Effect<A>

/**
 * The writes over a state; `writing` runs the ones a thread-wide operation must wait for.
 *
 * @since 0.1.0
 */
export const writes = (threads: Threads, writing: Writing): Writes => ({
  put: (row, blobs, shared, epoch) =>
    writing(() => {
      if (stale(threads, row.thread_id, epoch)) return "conflict"
      const namespace = threads.get(row.thread_id)?.namespaces.get(row.checkpoint_ns)
      if (row.parent_checkpoint_id !== undefined && namespace?.checkpoints.has(row.parent_checkpoint_id) !== true) {
        return "parent-missing"
      }
      if (!shared.requires.every(({ channel, version }) => namespace?.blobs.get(channel)?.has(version) === true)) {
        return "base-missing"
      }
      const thread = holdThread(threads, row.thread_id)
      addPieces(thread, shared.pieces)
      thread.lastActivity = new Date()
      thread.record ??= newRecord("{}", thread.lastActivity)
      const stored = holdNamespace(thread, row.checkpoint_ns)
      // A put of an id already stored replaces its header and metadata but keeps its first parent, as the SQL
      // driver's upsert does: re-pointing it could close a loop (a checkpoint put again under its own child).
      const first = stored.checkpoints.get(row.checkpoint_id)
      stored.checkpoints.set(
        row.checkpoint_id,
        first === undefined ? row : { ...row, parent_checkpoint_id: first.parent_checkpoint_id }
      )
      for (const blob of blobs) {
        const versions = hold(stored.blobs, blob.channel, () => new Map<string, BlobRow>())
        if (!versions.has(blob.version)) versions.set(blob.version, copy(blob))
      }
      return "stored"
    }),

  putWrites: (checkpoint, rows, pieces, epoch) =>
    writing(() => {
      if (stale(threads, checkpoint.thread_id, epoch)) return "conflict"
      const thread = holdThread(threads, checkpoint.thread_id)
      addPieces(thread, pieces)
      const namespace = holdNamespace(thread, checkpoint.checkpoint_ns)
      const stored = hold(namespace.writes, checkpoint.checkpoint_id, () => new Map<string, WriteRow>())
      for (const write of rows) {
        const key = writeKey(write)
        // Special channels (negative idx) replace an earlier write; ordinary writes keep the first.
        if (write.idx < 0 || !stored.has(key)) stored.set(key, copy(write))
      }
      return "stored" as const
    }),

  deleteThread: (thread_id) =>
    Effect.sync(() => {
      threads.delete(thread_id)
    }),

  remove: (thread_id, checkpoints) =>
    Effect.sync(() => {
      const thread = threads.get(thread_id)
      if (thread === undefined) return
      for (const { checkpoint_id, checkpoint_ns } of checkpoints) {
        const namespace = thread.namespaces.get(checkpoint_ns)
        namespace?.checkpoints.delete(checkpoint_id)
        namespace?.writes.delete(checkpoint_id)
      }
      removeUnreferenced(thread)
    }),

  setParents: (thread_id, checkpoints) =>
    Effect.sync(() => {
      for (const { checkpoint_id, checkpoint_ns, parent_checkpoint_id } of checkpoints) {
        const stored = threads.get(thread_id)?.namespaces.get(checkpoint_ns)?.checkpoints
        const row = stored?.get(checkpoint_id)
        if (stored !== undefined && row !== undefined) stored.set(checkpoint_id, { ...row, parent_checkpoint_id })
      }
    }),

  // The thread's record stays, as the SQL driver's row does; a new thread gets one.
  writeThread: (rows) =>
    writing(() => {
      const record = threads.get(rows.thread_id)?.record ?? newRecord("{}", new Date())
      threads.delete(rows.thread_id)
      threads.set(rows.thread_id, { ...threadOf(rows), record })
    })
})

/** Whether a write of writer `epoch` comes after a newer claim on the thread (see `StorageDriver.claimThread`). */
const stale = (threads: Threads, thread_id: string, epoch: number | undefined) =>
  epoch !== undefined && (threads.get(thread_id)?.record?.epoch ?? 0) > epoch

const addPieces = (thread: MutableThread, added: ReadonlyArray<Piece>) => {
  for (const piece of added) {
    const pieceKey = StorageFormat.pieceKey(piece.hash)
    if (!thread.pieces.has(pieceKey)) thread.pieces.set(pieceKey, piece.bytes)
  }
}

/**
 * The blobs no checkpoint of their namespace refers to (directly or as a
 * base) go, then the pieces nothing left refers to
 * (`StorageFormat.referencedPieces`, as a prune's plan counts them).
 */
const removeUnreferenced = (thread: MutableThread) => {
  const left: Array<BlobRow | WriteRow> = []
  for (const namespace of thread.namespaces.values()) {
    const referenced = new Set(
      Array.from(namespace.checkpoints.values()).flatMap((row) =>
        Object.entries(row.checkpoint.channel_versions).flatMap(([channel, version]) =>
          withBases(namespace, channel, String(version))
        )
      )
    )
    for (const [channel, versions] of namespace.blobs) {
      for (const [version, blob] of versions) {
        if (!referenced.has(blob)) versions.delete(version)
        else left.push(blob)
      }
      if (versions.size === 0) namespace.blobs.delete(channel)
    }
    for (const stored of namespace.writes.values()) left.push(...stored.values())
  }
  const live = StorageFormat.referencedPieces(left, (pieceKey) => thread.pieces.get(pieceKey))
  for (const pieceKey of thread.pieces.keys()) if (!live.has(pieceKey)) thread.pieces.delete(pieceKey)
}

/** A thread holding exactly `rows`. */
const threadOf = (rows: ThreadRows): MutableThread => {
  const thread: MutableThread = {
    lastActivity: rows.last_activity,
    record: undefined,
    namespaces: new Map(),
    pieces: new Map()
  }
  for (const row of rows.checkpoints) {
    holdNamespace(thread, row.checkpoint_ns).checkpoints.set(row.checkpoint_id, { ...row, thread_id: rows.thread_id })
  }
  addPieces(thread, rows.pieces)
  for (const { checkpoint_ns, ...blob } of rows.blobs) {
    hold(holdNamespace(thread, checkpoint_ns).blobs, blob.channel, () => new Map()).set(blob.version, copy(blob))
  }
  for (const { checkpoint_id, checkpoint_ns, ...write } of rows.writes) {
    hold(holdNamespace(thread, checkpoint_ns).writes, checkpoint_id, () => new Map()).set(writeKey(write), copy(write))
  }
  return thread
}
