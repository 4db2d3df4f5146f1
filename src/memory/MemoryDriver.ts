/**
 * The in-memory driver: the reference semantics every SQL driver is tested
 * against. Each operation runs synchronously inside one `Effect.sync`, so it
 * is atomic with respect to concurrent fibers and callers.
 *
 * @since 0.1.0
 */
import { Context, Effect, Option, Semaphore, Stream } from "effect"
import type { Location } from "../Checkpoint.ts"
import * as StorageFormat from "../codec/StorageFormat.ts"
import type {
  BlobRow,
  CheckpointRow,
  IndexEntry,
  ListSelection,
  Piece,
  SharedBase,
  StorageDriver,
  StoredCheckpoint,
  WriteRow
} from "../StorageDriver.ts"

type Namespaces = Map<string, Map<string, CheckpointRow>>

const key = (...parts: ReadonlyArray<string | number>): string => JSON.stringify(parts)

/** What every key of a thread's blobs and writes starts with. */
const threadPrefix = (thread_id: string): string => key(thread_id).slice(0, -1) + ","

/** Set while a fiber runs `exclusive`: the writes it makes do not wait for themselves. */
const Held = Context.Reference<boolean>("langgraph-checkpoint-effect/memory/Held", { defaultValue: () => false })

/**
 * Builds a fresh, empty in-memory driver.
 *
 * @since 0.1.0
 */
export const make = (): StorageDriver => {
  // thread → namespace → checkpoint id → row
  const threads = new Map<string, Namespaces>()
  // [thread, ns, channel, version] → blob
  const blobs = new Map<string, BlobRow>()
  // [thread, ns, checkpoint id] → [task id, idx] → write
  const writes = new Map<string, Map<string, WriteRow>>()
  // thread → time of its latest put
  const activity = new Map<string, Date>()
  // thread → piece key → bytes (the service's own, never handed to callers: kept as given)
  const pieces = new Map<string, Map<string, Uint8Array>>()
  // Writers wait while an `exclusive` runs (one at a time, whatever the thread: memory is fast).
  const lock = Semaphore.makeUnsafe(1)
  const writing = <A>(write: () => A) =>
    Effect.flatMap(Held, (held) => held ? Effect.sync(write) : lock.withPermits(1)(Effect.sync(write)))

  const addPieces = (thread_id: string, added: ReadonlyArray<Piece>) => {
    let stored = pieces.get(thread_id)
    if (stored === undefined) pieces.set(thread_id, stored = new Map())
    for (const piece of added) {
      const pieceKey = StorageFormat.pieceKey(piece.hash)
      if (!stored.has(pieceKey)) stored.set(pieceKey, piece.bytes)
    }
  }

  /** A blob as read: a shared list carries its bases' lists. */
  const readBlob = (thread_id: string, checkpoint_ns: string, blob: BlobRow): BlobRow =>
    copy({ ...blob, base: readBase(thread_id, checkpoint_ns, blob.channel, blob.base) })

  /**
   * A base with the bases below it, down to `StorageFormat.BASE_DEPTH` as the SQL
   * driver reads them: one past the deepest is named without its list (so
   * bases that loop, which stored data may hold, end too).
   */
  const readBase = (
    thread_id: string,
    checkpoint_ns: string,
    channel: string,
    base: SharedBase | undefined,
    depth = 1
  ): SharedBase | undefined => {
    if (base === undefined) return undefined
    if (depth > StorageFormat.BASE_DEPTH) return { version: base.version, keep: 0, list: undefined, base: undefined }
    const stored = blobs.get(key(thread_id, checkpoint_ns, channel, base.version))
    return {
      version: base.version,
      keep: base.keep,
      list: stored?.bytes,
      base: readBase(thread_id, checkpoint_ns, channel, stored?.base, depth + 1)
    }
  }

  /** A blob's key and those of the bases it extends, down to `StorageFormat.BASE_DEPTH`, as the SQL driver keeps them. */
  const withBases = (
    thread_id: string,
    checkpoint_ns: string,
    channel: string,
    version: string,
    depth = 0
  ): Array<string> => {
    const blobKey = key(thread_id, checkpoint_ns, channel, version)
    const base = blobs.get(blobKey)?.base
    return base === undefined || depth === StorageFormat.BASE_DEPTH
      ? [blobKey]
      : [blobKey, ...withBases(thread_id, checkpoint_ns, channel, base.version, depth + 1)]
  }

  const chainLists = (base: SharedBase | undefined): Array<Uint8Array> =>
    base === undefined ? [] : [...(base.list === undefined ? [] : [base.list]), ...chainLists(base.base)]

  /** The pieces the blobs and writes refer to, with their bases'. */
  const piecesFor = (thread_id: string, rows: ReadonlyArray<BlobRow | WriteRow>): Map<string, Uint8Array> => {
    const stored = pieces.get(thread_id)
    const keys = new Set(rows.flatMap((row) => [
      ...StorageFormat.references(row),
      ...("base" in row ? chainLists(row.base) : []).flatMap((list) =>
        StorageFormat.references({ type: row.type, bytes: list })
      )
    ]))
    return new Map([...keys].flatMap((pieceKey) => {
      const bytes = stored?.get(pieceKey)
      return bytes === undefined ? [] : [[pieceKey, bytes] as const]
    }))
  }

  const withPieces = (row: CheckpointRow, rowBlobs: Array<BlobRow>, rowWrites: Array<WriteRow>): StoredCheckpoint => ({
    row,
    blobs: rowBlobs,
    writes: rowWrites,
    pieces: piecesFor(row.thread_id, [...rowBlobs, ...rowWrites])
  })

  const namespace = (thread_id: string, checkpoint_ns: string) => threads.get(thread_id)?.get(checkpoint_ns)

  const latest = (checkpoints: Map<string, CheckpointRow>): CheckpointRow | undefined => {
    let found: CheckpointRow | undefined
    for (const row of checkpoints.values()) {
      if (found === undefined || row.checkpoint_id > found.checkpoint_id) found = row
    }
    return found
  }

  const find = (location: Location): CheckpointRow | undefined => {
    const checkpoints = namespace(location.thread_id, location.checkpoint_ns)
    if (checkpoints === undefined) return undefined
    return location.checkpoint_id === undefined ? latest(checkpoints) : checkpoints.get(location.checkpoint_id)
  }

  const blobOf = (row: CheckpointRow, channel: string): BlobRow | undefined => {
    const version = row.checkpoint.channel_versions[channel]
    return version === undefined
      ? undefined
      : blobs.get(key(row.thread_id, row.checkpoint_ns, channel, String(version)))
  }

  const writesAt = (thread_id: string, checkpoint_ns: string, checkpoint_id: string): ReadonlyArray<WriteRow> =>
    Array.from(writes.get(key(thread_id, checkpoint_ns, checkpoint_id))?.values() ?? [])

  const writesOf = (row: CheckpointRow) => writesAt(row.thread_id, row.checkpoint_ns, row.checkpoint_id)

  const stored = (row: CheckpointRow): StoredCheckpoint =>
    withPieces(
      row,
      Object.keys(row.checkpoint.channel_versions).flatMap((channel) => {
        const blob = blobOf(row, channel)
        return blob === undefined ? [] : [readBlob(row.thread_id, row.checkpoint_ns, blob)]
      }),
      writesOf(row).map(copy)
    )

  const matches = (selection: ListSelection) => (row: CheckpointRow): boolean => {
    if (selection.checkpoint_id !== undefined && row.checkpoint_id !== selection.checkpoint_id) return false
    if (selection.before !== undefined && row.checkpoint_id >= selection.before) return false
    if (selection.filter.length === 0) return true
    const metadata: Record<string, unknown> = JSON.parse(row.metadata)
    return selection.filter.every(([name, json]) =>
      Object.hasOwn(metadata, name) && jsonEqual(metadata[name], JSON.parse(json))
    )
  }

  const selectRows = (selection: ListSelection): Array<CheckpointRow> => {
    const rows: Array<CheckpointRow> = []
    const threadIds = selection.thread_id === undefined ? threads.keys() : [selection.thread_id]
    for (const thread_id of threadIds) {
      for (const [checkpoint_ns, checkpoints] of threads.get(thread_id) ?? []) {
        if (selection.checkpoint_ns !== undefined && checkpoint_ns !== selection.checkpoint_ns) continue
        for (const row of checkpoints.values()) if (matches(selection)(row)) rows.push(row)
      }
    }
    rows.sort(newestFirst)
    return selection.limit === undefined ? rows : rows.slice(0, selection.limit)
  }

  const driver: StorageDriver = {
    put: (row, rowBlobs, shared) =>
      writing(() => {
        if (
          row.parent_checkpoint_id !== undefined &&
          namespace(row.thread_id, row.checkpoint_ns)?.has(row.parent_checkpoint_id) !== true
        ) {
          return "parent-missing"
        }
        if (
          !shared.requires.every(({ channel, version }) =>
            blobs.has(key(row.thread_id, row.checkpoint_ns, channel, version))
          )
        ) {
          return "base-missing"
        }
        addPieces(row.thread_id, shared.pieces)
        activity.set(row.thread_id, new Date())
        let namespaces = threads.get(row.thread_id)
        if (namespaces === undefined) threads.set(row.thread_id, namespaces = new Map())
        let checkpoints = namespaces.get(row.checkpoint_ns)
        if (checkpoints === undefined) namespaces.set(row.checkpoint_ns, checkpoints = new Map())
        checkpoints.set(row.checkpoint_id, row)
        for (const blob of rowBlobs) {
          const blobKey = key(row.thread_id, row.checkpoint_ns, blob.channel, blob.version)
          if (!blobs.has(blobKey)) blobs.set(blobKey, copy(blob))
        }
        return "stored"
      }),

    putWrites: (checkpoint, rows, added) =>
      writing(() => {
        addPieces(checkpoint.thread_id, added)
        const writesKey = key(checkpoint.thread_id, checkpoint.checkpoint_ns, checkpoint.checkpoint_id)
        let stored = writes.get(writesKey)
        if (stored === undefined) writes.set(writesKey, stored = new Map())
        for (const write of rows) {
          const writeKey = key(write.task_id, write.idx)
          if (write.idx >= 0 && stored.has(writeKey)) continue
          stored.set(writeKey, copy(write))
        }
      }),

    // Sends every piece whatever the caller has: nothing crosses a wire.
    getTuple: (location) => Effect.sync(() => Option.map(Option.fromUndefinedOr(find(location)), stored)),

    list: (selection) => Stream.suspend(() => Stream.fromIterable(selectRows(selection).map(stored))),

    channelWrites: (checkpoint, channel) =>
      Effect.sync(() =>
        writesAt(checkpoint.thread_id, checkpoint.checkpoint_ns, checkpoint.checkpoint_id)
          .filter((write) => write.channel === channel)
          .map(copy)
      ),

    // Each checkpoint once: parent links that loop stop the walk where it comes back.
    ancestors: (location, channels) =>
      Effect.sync(() => {
        const wanted = new Set(channels)
        const remaining = new Set(channels)
        const chain: Array<StoredCheckpoint> = []
        const checkpoints = namespace(location.thread_id, location.checkpoint_ns)
        const target = find(location)
        const passed = new Set(target === undefined ? [] : [target.checkpoint_id])
        let parentId = target?.parent_checkpoint_id
        while (parentId !== undefined && remaining.size > 0) {
          if (passed.has(parentId)) return { chain, loopsAt: parentId }
          passed.add(parentId)
          const row = checkpoints?.get(parentId)
          if (row === undefined) break
          const rowBlobs = channels.flatMap((channel) => {
            const blob = blobOf(row, channel)
            return blob === undefined || blob.type === "empty" ? [] : [readBlob(row.thread_id, row.checkpoint_ns, blob)]
          })
          chain.push(withPieces(row, rowBlobs, writesOf(row).filter((write) => wanted.has(write.channel)).map(copy)))
          for (const blob of rowBlobs) remaining.delete(blob.channel)
          parentId = row.parent_checkpoint_id
        }
        return { chain, loopsAt: undefined }
      }),

    deleteThread: (thread_id) => Effect.sync(() => deleteThread(thread_id)),

    threadExists: (thread_id) => Effect.sync(() => rowsOf(thread_id).length > 0),

    threadIndex: (thread_id) =>
      Effect.sync(() =>
        rowsOf(thread_id).map((row): IndexEntry => {
          const channels = Object.keys(row.checkpoint.channel_versions)
          return {
            checkpoint_ns: row.checkpoint_ns,
            checkpoint_id: row.checkpoint_id,
            parent_checkpoint_id: row.parent_checkpoint_id,
            channels,
            stored: channels.filter((channel) => (blobOf(row, channel)?.type ?? "empty") !== "empty"),
            written: [...new Set(writesOf(row).map((write) => write.channel))],
            run_id: runIdOf(row)
          }
        })
      ),

    remove: (thread_id, checkpoints) =>
      Effect.sync(() => {
        for (const { checkpoint_id, checkpoint_ns } of checkpoints) {
          namespace(thread_id, checkpoint_ns)?.delete(checkpoint_id)
          writes.delete(key(thread_id, checkpoint_ns, checkpoint_id))
        }
        const referenced = new Set(
          rowsOf(thread_id).flatMap((row) =>
            Object.entries(row.checkpoint.channel_versions).flatMap(([channel, version]) =>
              withBases(thread_id, row.checkpoint_ns, channel, String(version))
            )
          )
        )
        const prefix = threadPrefix(thread_id)
        for (const blobKey of blobs.keys()) {
          if (blobKey.startsWith(prefix) && !referenced.has(blobKey)) blobs.delete(blobKey)
        }
        const live = new Set<string>()
        for (const [blobKey, blob] of blobs) {
          if (blobKey.startsWith(prefix)) { for (const piece of StorageFormat.references(blob)) live.add(piece) }
        }
        for (const [writesKey, stored] of writes) {
          if (!writesKey.startsWith(prefix)) continue
          for (const write of stored.values()) for (const piece of StorageFormat.references(write)) live.add(piece)
        }
        for (const pieceKey of pieces.get(thread_id)?.keys() ?? []) {
          if (!live.has(pieceKey)) pieces.get(thread_id)!.delete(pieceKey)
        }
      }),

    setParents: (thread_id, checkpoints) =>
      Effect.sync(() => {
        for (const { checkpoint_id, checkpoint_ns, parent_checkpoint_id } of checkpoints) {
          const row = namespace(thread_id, checkpoint_ns)?.get(checkpoint_id)
          if (row !== undefined) {
            namespace(thread_id, checkpoint_ns)!.set(checkpoint_id, { ...row, parent_checkpoint_id })
          }
        }
      }),

    threads: Effect.sync(() =>
      Array.from(threads.keys()).map((thread_id) => ({
        thread_id,
        last_activity: activity.get(thread_id) ?? new Date(0)
      }))
    ),

    threadsOfRuns: (run_ids) =>
      Effect.sync(() => {
        const wanted = new Set(run_ids)
        return Array.from(threads.keys()).filter((thread_id) =>
          rowsOf(thread_id).some((row) => wanted.has(runIdOf(row) ?? ""))
        )
      }),

    threadRows: (thread_id) =>
      Effect.sync(() => {
        const prefix = threadPrefix(thread_id)
        const rowKey = (tableKey: string) => JSON.parse(tableKey) as [string, string, string, string]
        return {
          thread_id,
          last_activity: activity.get(thread_id) ?? new Date(0),
          checkpoints: rowsOf(thread_id),
          blobs: Array.from(blobs).flatMap(([blobKey, blob]) =>
            blobKey.startsWith(prefix) ? [{ ...copy(blob), checkpoint_ns: rowKey(blobKey)[1] }] : []
          ),
          writes: Array.from(writes).flatMap(([writesKey, stored]) => {
            if (!writesKey.startsWith(prefix)) return []
            const [, checkpoint_ns, checkpoint_id] = rowKey(writesKey)
            return Array.from(stored.values(), (write) => ({ ...copy(write), checkpoint_ns, checkpoint_id }))
          }),
          pieces: Array.from(pieces.get(thread_id) ?? [], ([pieceKey, bytes]) => ({
            hash: Buffer.from(pieceKey, "latin1"),
            bytes: bytes.slice()
          }))
        }
      }),

    writeThread: (rows) =>
      writing(() => {
        const { thread_id } = rows
        deleteThread(thread_id)
        const namespaces: Namespaces = new Map()
        for (const row of rows.checkpoints) {
          let checkpoints = namespaces.get(row.checkpoint_ns)
          if (checkpoints === undefined) namespaces.set(row.checkpoint_ns, checkpoints = new Map())
          checkpoints.set(row.checkpoint_id, { ...row, thread_id })
        }
        threads.set(thread_id, namespaces)
        activity.set(thread_id, rows.last_activity)
        addPieces(thread_id, rows.pieces)
        for (const { checkpoint_ns, ...blob } of rows.blobs) {
          blobs.set(key(thread_id, checkpoint_ns, blob.channel, blob.version), copy(blob))
        }
        for (const { checkpoint_id, checkpoint_ns, ...write } of rows.writes) {
          const writesKey = key(thread_id, checkpoint_ns, checkpoint_id)
          let stored = writes.get(writesKey)
          if (stored === undefined) writes.set(writesKey, stored = new Map())
          stored.set(key(write.task_id, write.idx), copy(write))
        }
      }),

    // Each operation is atomic on its own; writers also wait for `exclusive`,
    // so what a thread-wide operation reads stays true until it writes.
    exclusive: (_thread_id, effect) =>
      Effect.flatMap(
        Held,
        (held) => held ? effect : lock.withPermits(1)(Effect.provideService(effect, Held, true))
      )
  }
  return driver

  function runIdOf(row: CheckpointRow): string | undefined {
    const run_id: unknown = (JSON.parse(row.metadata) as Record<string, unknown>).run_id
    return typeof run_id === "string" ? run_id : undefined
  }

  function rowsOf(thread_id: string): Array<CheckpointRow> {
    return Array.from(threads.get(thread_id)?.values() ?? []).flatMap((checkpoints) => Array.from(checkpoints.values()))
  }

  function deleteThread(thread_id: string): void {
    threads.delete(thread_id)
    activity.delete(thread_id)
    pieces.delete(thread_id)
    const prefix = threadPrefix(thread_id)
    for (const table of [blobs, writes]) {
      for (const rowKey of table.keys()) if (rowKey.startsWith(prefix)) table.delete(rowKey)
    }
  }
}

/**
 * Stored bytes are never shared with callers: a `Uint8Array` value is the
 * caller's own object, which it may mutate after `put` or after a read.
 */
const copy = <A extends { readonly bytes: Uint8Array | undefined }>(row: A): A =>
  row.bytes === undefined ? row : { ...row, bytes: row.bytes.slice() }

const newestFirst = (a: CheckpointRow, b: CheckpointRow): number =>
  a.checkpoint_id < b.checkpoint_id ? 1 : a.checkpoint_id > b.checkpoint_id ?
    -1 :
    a.thread_id < b.thread_id ?
    -1 :
    a.thread_id > b.thread_id ?
    1 :
    a.checkpoint_ns < b.checkpoint_ns
    ? -1
    : a.checkpoint_ns > b.checkpoint_ns
    ? 1
    : 0

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
