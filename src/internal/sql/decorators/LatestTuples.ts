/**
 * A decorator of the SQL driver (as `ReadOnly` beside it is), for a sole
 * writer: what it knows without asking, each namespace's latest
 * checkpoint as it wrote it. Every invoke of a graph starts by reading its
 * thread's latest checkpoint, which the same process put at the end of the
 * previous invoke; where nothing else writes the database (an embedded
 * PGlite the layer opened itself: one process, one session), the driver
 * keeps what a `put` and the `putWrites` after it stored, shaped as the
 * read would return it, and answers `getTuple` of the latest from it with
 * no statement.
 *
 * Only what is certain is kept. A put or writes are applied to a
 * namespace's entry when they committed outside any caller's transaction
 * and nothing whose outcome is unknown here touched the thread meanwhile
 * (ticks per thread); a put whose parent is not the entry, or anything else
 * that writes a thread (delete, prune, copy, import, a transaction, a
 * failure), forgets it, and the next read asks the database and keeps its
 * answer. A kept checkpoint answers only a caller
 * that holds every piece it refers to and does not bring (one that lost a
 * piece asks again naming none held, and gets them all).
 *
 * The rows are those a read returns: the header's and the metadata's keys
 * in `jsonb`'s order (by length, then bytes), each blob's base with the
 * list it extends, writes by LangGraph's upsert rule.
 *
 * @since 0.4.0
 */
import { Context, Effect, Exit, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { StorageFailure } from "../../../CheckpointError.ts"
import type {
  BlobRow,
  CheckpointRow,
  PutShared,
  SharedBase,
  StorageDriver,
  StoredCheckpoint,
  WriteRow
} from "../../../StorageDriver.ts"
import * as StorageFormat from "../../StorageFormat.ts"

/**
 * Set by a layer that opened a database no other process or connection
 * writes: the driver may then answer latest reads from what it wrote.
 *
 * @since 0.4.0
 */
export const SoleWriter = Context.Reference<boolean>("langgraph-checkpoint-effect/sql/SoleWriter", {
  defaultValue: () => false
})

/** Entries kept (each namespace's latest), the least recently used leaving first. */
const MAX_ENTRIES = 4_096
/** Bytes of blobs, writes and pieces kept in all. */
const MAX_BYTES = 64 * 1024 * 1024
/** Threads whose last write is remembered one by one (see `make`). */
const MAX_GENERATIONS = 65_536

/** A namespace's latest checkpoint as a read returns it; `null`: it holds none. */
type Latest = StoredCheckpoint | null

const utf8 = new TextEncoder()

/** `jsonb`'s order of object keys (as UTF-8): shorter first, then by their bytes. */
const jsonbKeyOrder = (x: Uint8Array, y: Uint8Array) => x.length - y.length || Buffer.compare(x, y)

/** A JSON value with every object's keys inserted in `jsonb`'s order, as a read parses them. */
const inJsonbOrder = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(inJsonbOrder)
  if (value === null || typeof value !== "object") return value
  const object = value as Record<string, unknown>
  const ordered: Record<string, unknown> = {}
  const keys = Object.keys(object).map((key) => [key, utf8.encode(key)] as const)
  for (const [key] of keys.sort((a, b) => jsonbKeyOrder(a[1], b[1]))) ordered[key] = inJsonbOrder(object[key])
  return ordered
}

/** Text that `jsonb` stores with escapes (`Jsonb`): its stored keys would sort otherwise. */
const escaped = (json: string) => json.includes("\\u") || json.includes("\uE000")

/** The row as a read returns it, or none when `jsonb` would hold it otherwise than as given. */
const asRead = (row: CheckpointRow): CheckpointRow | undefined => {
  const header = JSON.stringify(row.checkpoint)
  if (escaped(header) || escaped(row.metadata)) return undefined
  return {
    ...row,
    checkpoint: inJsonbOrder(JSON.parse(header)) as CheckpointRow["checkpoint"],
    metadata: JSON.stringify(inJsonbOrder(JSON.parse(row.metadata)))
  }
}

/** A base as a read names it at `depth`: with its list down to `BASE_DEPTH`, named alone below. */
const baseAt = (base: SharedBase, depth: number): SharedBase | undefined =>
  depth > StorageFormat.BASE_DEPTH
    ? { version: base.version, keep: 0, list: undefined, base: undefined }
    : base.list === undefined
    ? undefined
    : {
      version: base.version,
      keep: base.keep,
      list: base.list,
      base: base.base === undefined ? undefined : baseAt(base.base, depth + 1)
    }

const ascii = /^[\x20-\x7e]*$/

/**
 * Whether `row` is the put of a child of `parent` that becomes the latest: the
 * latest is the greatest id (`ORDER BY checkpoint_id DESC`, bytewise in PGlite's
 * C collation: as JavaScript compares ASCII).
 */
const follows = (row: CheckpointRow, parent: CheckpointRow) =>
  row.parent_checkpoint_id === parent.checkpoint_id && newer(row, parent)

/** Whether `row`'s id is greater than `other`'s, as the database orders them (known for ASCII ids only). */
const newer = (row: CheckpointRow, other: CheckpointRow) =>
  ascii.test(row.checkpoint_id) && ascii.test(other.checkpoint_id) && row.checkpoint_id > other.checkpoint_id

/** Blob `blob` as a read returns it, its base found among `held`; none when the base is not there. */
const blobAsRead = (blob: BlobRow, held: ReadonlyArray<BlobRow>): BlobRow | undefined => {
  if (blob.base === undefined) {
    return { channel: blob.channel, version: blob.version, type: blob.type, bytes: blob.bytes }
  }
  const { keep, version } = blob.base
  const extended = listOf(blob.channel, version, held)
  if (extended === undefined) return undefined
  const below = extended.base === undefined ? undefined : baseAt(extended.base, 2)
  if (extended.base !== undefined && below === undefined) return undefined
  return { ...blob, base: { version, keep, list: extended.list, base: below } }
}

/** The list stored at a channel's version, with its base, among `held` blobs and the bases they carry. */
const listOf = (channel: string, version: string, held: ReadonlyArray<BlobRow>): SharedBase | undefined => {
  for (const blob of held) {
    if (blob.channel !== channel) continue
    if (blob.version === version) {
      return blob.bytes === undefined ? undefined : { version, keep: 0, list: blob.bytes, base: blob.base }
    }
    for (let base = blob.base; base !== undefined; base = base.base) {
      if (base.version === version) return base.list === undefined ? undefined : base
    }
  }
  return undefined
}

/**
 * The pieces a read of a kept checkpoint must bring unless its caller holds
 * them, as `Projection`'s read finds them (`StorageFormat.referencedPieces`),
 * worked out once per checkpoint kept.
 */
const needed = new WeakMap<StoredCheckpoint, ReadonlyArray<string>>()

const neededOf = (stored: StoredCheckpoint): ReadonlyArray<string> => {
  const known = needed.get(stored)
  if (known !== undefined) return known
  const keys = [...StorageFormat.referencedPieces([...stored.blobs, ...stored.writes], (key) => stored.pieces.get(key))]
  needed.set(stored, keys)
  return keys
}

/**
 * The namespace's new latest after `row` was put over `previous` (its
 * parent, or `null` when the namespace held none): each channel's blob from
 * the put, or the parent's at an unchanged version. None when that is not
 * certain.
 */
const afterPut = (
  previous: Latest | undefined,
  row: CheckpointRow,
  blobs: ReadonlyArray<BlobRow>,
  { pieces, written = [] }: PutShared
): StoredCheckpoint | undefined => {
  if (previous === undefined) return undefined
  if (previous === null ? row.parent_checkpoint_id !== undefined : !follows(row, previous.row)) return undefined
  if (blobs.some((blob) => blob.type === "empty")) return undefined
  const read = asRead(row)
  if (read === undefined) return undefined
  const before = previous?.row.checkpoint.channel_versions ?? {}
  const held = previous?.blobs ?? []
  const kept: Array<BlobRow> = []
  for (const [channel, version] of Object.entries(row.checkpoint.channel_versions)) {
    const put = blobs.find((blob) => blob.channel === channel && blob.version === String(version))
    if (put !== undefined) {
      const asStored = blobAsRead(put, held)
      if (asStored === undefined) return undefined
      kept.push(asStored)
    } else if (channel in before && String(before[channel]) === String(version)) {
      const unchanged = held.find((blob) => blob.channel === channel && blob.version === String(version))
      if (unchanged !== undefined) kept.push(unchanged)
    } else if (!written.some(([name, at]) => name === channel && at === String(version))) {
      // A version this put did not write nor the parent hold: stored by another checkpoint, unknown here.
      return undefined
    }
    // Else written without a value (a channel emptied, as `__start__` once read): no blob, as read.
  }
  // The parent's pieces the new latest still refers to, and the put's.
  const all = new Map(previous?.pieces)
  for (const piece of pieces) all.set(StorageFormat.pieceKey(piece.hash), piece.bytes)
  const keys = neededOf({ row: read, blobs: kept, writes: [], pieces: all })
  const stored: StoredCheckpoint = {
    row: read,
    blobs: kept,
    writes: [],
    pieces: new Map(keys.flatMap((key) => {
      const piece = all.get(key)
      return piece === undefined ? [] : [[key, piece] as const]
    }))
  }
  needed.set(stored, keys)
  return stored
}

/** Whether `stored` brings every piece its read needs that the caller (`known`) does not hold. */
const complete = (stored: StoredCheckpoint, known: Uint8Array) => {
  const missing = neededOf(stored).filter((key) => !stored.pieces.has(key))
  if (missing.length === 0) return true
  const held = new Set(StorageFormat.unpackHashes(known))
  return missing.every((key) => held.has(key))
}

/**
 * `stored` after a task's writes against `checkpoint_id`: when they are its
 * own, over its writes by LangGraph's rule (special channels, with a
 * negative `idx`, replace; others keep the first); their pieces in any case
 * (a put that follows refers to them without sending them again).
 */
const withWrites = (
  stored: StoredCheckpoint,
  checkpoint_id: string,
  writes: ReadonlyArray<WriteRow>,
  pieces: ReadonlyArray<{ readonly hash: Uint8Array; readonly bytes: Uint8Array }>
): StoredCheckpoint => {
  const byKey = new Map(stored.writes.map((write) => [`${write.task_id}\u0000${write.idx}`, write]))
  if (stored.row.checkpoint_id === checkpoint_id) {
    for (const write of writes) {
      const key = `${write.task_id}\u0000${write.idx}`
      if (write.idx < 0 || !byKey.has(key)) byKey.set(key, write)
    }
  }
  const known = new Map(stored.pieces)
  for (const piece of pieces) known.set(StorageFormat.pieceKey(piece.hash), piece.bytes)
  return { ...stored, writes: [...byKey.values()], pieces: known }
}

const sizeOf = (stored: Latest) => {
  if (stored === null) return 0
  let bytes = 0
  for (const blob of stored.blobs) bytes += (blob.bytes?.byteLength ?? 0) + (blob.base?.list?.byteLength ?? 0)
  for (const write of stored.writes) bytes += write.bytes.byteLength
  for (const piece of stored.pieces.values()) bytes += piece.byteLength
  return bytes
}

/**
 * `driver` answering latest reads from what it wrote; `inTransaction`: whether
 * the caller runs inside a transaction of its own (whose writes may yet roll
 * back, and whose reads may see what others do not).
 *
 * @since 0.4.0
 */
export const make = (driver: StorageDriver, inTransaction: Effect.Effect<boolean>): StorageDriver => {
  /** Each namespace's latest, by thread and namespace; a `Map` kept in the order of use. */
  const latest = new Map<string, Latest>()
  let bytes = 0
  /**
   * Per thread, two ticks of `clock`: `written`, the last start or end of
   * any write (a read keeps its answer only when none came during it), and
   * `reset`, the last write whose outcome is not known here (a delete, a
   * prune, an import, a transaction's, a failed one): a put or writes keep
   * what they stored only when none came during them. Past
   * `MAX_GENERATIONS` threads they are dropped together, and `floor` stands
   * for them all.
   */
  const ticks = new Map<string, { readonly written: number; readonly reset: number }>()
  let clock = 0
  let floor = 0

  const keyOf = (thread_id: string, checkpoint_ns: string) => `${thread_id}\u0000${checkpoint_ns}`
  const forget = (key: string) => {
    const stored = latest.get(key)
    if (stored === undefined) return
    latest.delete(key)
    bytes -= sizeOf(stored)
  }
  const keep = (key: string, stored: Latest) => {
    forget(key)
    latest.set(key, stored)
    bytes += sizeOf(stored)
    for (const [oldest] of latest) {
      if (latest.size <= MAX_ENTRIES && bytes <= MAX_BYTES) break
      forget(oldest)
    }
  }
  const ticksOf = (thread_id: string) => ticks.get(thread_id) ?? { written: floor, reset: floor }
  /** Marks a thread written now; `reset`: in a way not known here, which forgets what is kept of it. */
  const mark = (thread_id: string, reset: boolean) => {
    if (ticks.size >= MAX_GENERATIONS && !ticks.has(thread_id)) {
      ticks.clear()
      floor = ++clock
    }
    const now = ++clock
    ticks.set(thread_id, { written: now, reset: reset ? now : ticksOf(thread_id).reset })
    if (reset) { for (const key of latest.keys()) if (key.startsWith(`${thread_id}\u0000`)) forget(key) }
    return now
  }

  /**
   * A put or writes of one thread: `apply` keeps what it stored when it
   * committed on its own (outside a caller's transaction) and nothing whose
   * outcome is not known here came between. Puts and writes of the thread
   * under way together are expected (LangGraph does not wait for a task's
   * writes before the next put): each applies what it stored in turn.
   */
  const writing = <A, E>(thread_id: string, write: Effect.Effect<A, E>, apply: (outcome: A) => void) =>
    Effect.flatMap(inTransaction, (inside) => {
      const started = mark(thread_id, inside)
      return Effect.onExit(write, (exit) =>
        Effect.sync(() => {
          const known = !inside && Exit.isSuccess(exit) && ticksOf(thread_id).reset < started
          mark(thread_id, !known)
          if (known) apply(exit.value)
        }))
    })

  /** Whatever the effect writes of the threads forgets them, before and after. */
  const forgetting = <A, E, R>(threads: ReadonlyArray<string> | "all", effect: Effect.Effect<A, E, R>) => {
    const forgetThem = Effect.sync(() => {
      if (threads !== "all") return threads.forEach((thread_id) => mark(thread_id, true))
      latest.clear()
      bytes = 0
      ticks.clear()
      floor = ++clock
    })
    return Effect.andThen(forgetThem, Effect.ensuring(effect, forgetThem))
  }

  return {
    ...driver,

    put: (row, blobs, shared, epoch) => {
      const key = keyOf(row.thread_id, row.checkpoint_ns)
      // The namespace's latest as the put starts: its parent, which the new latest builds on.
      const parent = latest.get(key)
      return writing(row.thread_id, driver.put(row, blobs, shared, epoch), (outcome) => {
        if (outcome !== "stored") return
        const current = latest.get(key)
        // A put whose checkpoint is not the greatest id leaves the latest as it was.
        if (current != null && current !== parent && !newer(row, current.row)) return
        // The parent as kept now, with the pieces of writes stored since the put began, if any.
        const base = current != null && parent != null && current.row.checkpoint_id === parent.row.checkpoint_id
          ? current
          : parent
        const next = current === parent || current != null ? afterPut(base, row, blobs, shared) : undefined
        if (next === undefined) forget(key)
        else keep(key, next)
      })
    },

    putWrites: (checkpoint, writes, pieces, epoch) => {
      const key = keyOf(checkpoint.thread_id, checkpoint.checkpoint_ns)
      return writing(checkpoint.thread_id, driver.putWrites(checkpoint, writes, pieces, epoch), (outcome) => {
        const current = latest.get(key)
        if (outcome === "stored" && current != null) {
          keep(key, withWrites(current, checkpoint.checkpoint_id, writes, pieces))
        }
      })
    },

    getTuple: (location, known) => {
      if (location.checkpoint_id !== undefined) return driver.getTuple(location, known)
      const key = keyOf(location.thread_id, location.checkpoint_ns)
      return Effect.flatMap(inTransaction, (inside): Effect.Effect<Option.Option<StoredCheckpoint>, StorageFailure> => {
        if (inside) return driver.getTuple(location, known)
        const held = latest.get(key)
        // Kept, and with every piece the caller does not hold (else a caller that lost one asks afresh).
        if (held === null || (held !== undefined && complete(held, known))) {
          latest.delete(key)
          latest.set(key, held)
          return Effect.succeed(Option.fromNullOr(held))
        }
        const started = clock
        return Effect.tap(driver.getTuple(location, known), (found) =>
          Effect.sync(() => {
            if (ticksOf(location.thread_id).written <= started) keep(key, Option.getOrNull(found))
          }))
      })
    },

    deleteThread: (thread_id) => forgetting([thread_id], driver.deleteThread(thread_id)),
    remove: (thread_id, checkpoints) => forgetting([thread_id], driver.remove(thread_id, checkpoints)),
    setParents: (thread_id, checkpoints) => forgetting([thread_id], driver.setParents(thread_id, checkpoints)),
    writeThread: (rows) => forgetting([rows.thread_id], driver.writeThread(rows)),
    raiseFormat: (level) => forgetting("all", driver.raiseFormat(level)),
    exclusive: (thread_id, effect) => forgetting([thread_id], driver.exclusive(thread_id, effect))
  }
}

/**
 * `driver` over the `SqlClient` in context answering latest reads from what
 * it wrote (see {@link make}), outside any transaction of the caller's.
 *
 * @since 0.4.0
 */
export const over = (driver: StorageDriver): Effect.Effect<StorageDriver, never, SqlClient.SqlClient> =>
  Effect.map(
    Effect.service(SqlClient.SqlClient),
    (sql) => make(driver, Effect.map(Effect.serviceOption(sql.transactionService), Option.isSome))
  )
