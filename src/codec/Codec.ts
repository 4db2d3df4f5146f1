/**
 * The codec between the storage service and its drivers: decoded values on
 * one side, rows and bytes on the other. One pipeline every driver shares,
 * as effect's `MessageStorage.make` sits over `makeEncoded`:
 *
 * - writing: values through the serializer (safe `JsonPlusSerializer` format
 *   by default), arrays through structural sharing (`Sharing`), metadata as
 *   JSON whatever serializer the values use, so `list` can filter on it;
 * - reading: shared lists reassembled from their pieces, then safe revival
 *   (`Revival`): a record-shaped value that is not allowed stays inert data,
 *   counted on the operation's span (`checkpoint.inert_records` events) and
 *   in the `langgraph_checkpoint_inert_records` metric, and never fails a read;
 * - with `Encryption` provided, sealing (`Sealing`) between the serializer's
 *   bytes and the rows: written rows are sealed for their place, and read
 *   rows opened before anything else looks at them.
 *
 * @since 0.1.0
 */
import {
  type Checkpoint,
  compareWritesSortKeys,
  maxChannelVersion,
  TASKS,
  WRITES_IDX_MAP,
  writesSortKey
} from "@langchain/langgraph-checkpoint"
import { Clock, Effect, Metric, Option, Schema } from "effect"
import {
  CheckpointHeader,
  CheckpointMetadata,
  type CheckpointTuple,
  configOf,
  type StoredWrite
} from "../Checkpoint.ts"
import {
  CorruptedCheckpoint,
  formatIssue,
  InvalidConfig,
  InvalidInput,
  SerializationFailed
} from "../CheckpointError.ts"
import type { BlobRow, CheckpointRow, Piece, StoredCheckpoint, ThreadRows, WriteRow } from "../StorageDriver.ts"
import { Encryption } from "./Encryption.ts"
import * as Revival from "./Revival.ts"
import * as Sealing from "./Sealing.ts"
import * as Serializer from "./Serializer.ts"
import * as Sharing from "./Sharing.ts"

/**
 * The pieces read with a checkpoint, by hash, opened; and why those that
 * could not be opened cannot be used.
 *
 * @since 0.1.0
 */
export interface Pieces {
  readonly readable: ReadonlyMap<string, Uint8Array>
  readonly unreadable: ReadonlyMap<string, string>
}

const noPieces: Pieces = { readable: new Map(), unreadable: new Map() }

const utf8 = new TextDecoder()

/**
 * Counts record-shaped values that reads left as inert data (not allowed,
 * malformed or too deep).
 *
 * @since 0.1.0
 */
export const inertRecords = Metric.counter("langgraph_checkpoint_inert_records", {
  description: "Record-shaped values read back as inert data instead of being revived",
  incremental: true
})

/** What one decoding left inert, and read without a seal. */
interface Tally extends Sealing.Tally {
  inert: number
}

/**
 * A changed channel's value, encoded: the serializer's bytes, or an array's
 * elements for a shared list.
 *
 * @since 0.1.0
 */
export type EncodedValue =
  & { readonly channel: string; readonly version: string }
  & (
    | { readonly _tag: "serialized" } & Serializer.Serialized
    | Extract<Sharing.Encoded, { readonly _tag: "shared" }>
  )

const sortWrites = (writes: ReadonlyArray<WriteRow>): Array<WriteRow> =>
  writes
    .map((write) => ({ write, key: writesSortKey(write.task_path, write.task_id, write.idx) }))
    .sort((a, b) => compareWritesSortKeys(a.key, b.key))
    .map(({ write }) => write)

/**
 * The writes of one batch with their positions, keeping only the last write
 * to each special channel: those share one storage key per task, and the
 * last one is the one that counts.
 */
const lastSpecialWrites = (writes: ReadonlyArray<readonly [string, unknown]>) =>
  writes.flatMap(([channel, value], index) =>
    Object.hasOwn(WRITES_IDX_MAP, channel) && writes.findLastIndex(([other]) => other === channel) !== index
      ? []
      : [[channel, value, index] as const]
  )

/** What reading an encrypted checkpoint without encryption says. */
const NEEDS_KEYS = "it is encrypted: open the storage with encryption and the keys it was written with"

const corrupted = (place: Sealing.CheckpointPlace, detail: string) =>
  new CorruptedCheckpoint({
    thread_id: place.thread_id,
    checkpoint_ns: place.checkpoint_ns,
    checkpoint_id: place.checkpoint_id,
    detail
  })

/**
 * The codec of one storage service, over the `Serializer` and
 * `Sharing.Enabled` in context.
 *
 * @since 0.1.0
 */
export const make = Effect.fnUntraced(function*() {
  const serializer = yield* Serializer.Serializer
  const encryption = yield* Effect.serviceOption(Encryption)
  const sealing = Option.isSome(encryption) ? Sealing.make(encryption.value) : undefined
  /** Metadata and shared lists are JSON text whatever serializer the values use. */
  const json = serializer.json ?? Serializer.Serializer.defaultValue().json!
  // An element of a shared list is one level below its list.
  const sharing = Sharing.make(
    serializer.json !== undefined && (yield* Sharing.Enabled)
      ? (element) => json.dump(element, Revival.MAX_DEPTH - 1)
      : undefined
  )

  const dump = (operation: string, path: string, value: unknown) =>
    serializer.dump(value).pipe(Effect.mapError(({ cause }) => new SerializationFailed({ operation, path, cause })))

  /** An array as shared elements when sharing can hold it, else the serializer's bytes. */
  const encode = Effect.fnUntraced(function*(operation: string, path: string, value: unknown) {
    if (Array.isArray(value)) {
      const encoded = yield* Effect.try({
        try: () => sharing.encode(value),
        catch: (cause) => new SerializationFailed({ operation, path, cause })
      })
      if (encoded !== undefined) return encoded
    }
    return { _tag: "serialized", ...(yield* dump(operation, path, value)) } as const
  })

  /**
   * The changed channels' values. A channel left without a value gets none:
   * a version with no blob reads as no value (LangGraph's savers store an
   * `empty` row for it, which reads the same and costs a row per step).
   */
  const encodeValues = (checkpoint: Checkpoint, versions: Readonly<Record<string, string | number>>) =>
    Effect.forEach(Object.entries(versions), ([channel, version]) => {
      const value = Object.hasOwn(checkpoint.channel_values, channel) ? checkpoint.channel_values[channel] : undefined
      if (value === undefined) return Effect.succeed([])
      return encode("put", `channel_values.${channel}`, value).pipe(
        Effect.map((encoded): Array<EncodedValue> => [{ channel, version: String(version), ...encoded }])
      )
    }).pipe(Effect.map((values) => values.flat()))

  /** The key a thread's new rows are sealed under (none without encryption). */
  const keyOf = (operation: string, thread_id: string) => {
    const key = sealing?.threadKey(thread_id)
    return typeof key === "string"
      ? Effect.fail(new InvalidConfig({ operation, detail: `thread "${thread_id}": ${key}` }))
      : Effect.succeed(key)
  }

  /** A checkpoint's row: its metadata as JSON, sealed but for the plaintext keys when encryption is on. */
  const encodeRow = Effect.fnUntraced(function*(
    operation: string,
    row: Omit<CheckpointRow, "metadata">,
    metadata: unknown
  ) {
    const key = yield* keyOf(operation, row.thread_id)
    const text = yield* Effect.try({
      try: () => utf8.decode(json.dump(metadata)),
      catch: (cause) => new SerializationFailed({ operation, path: "metadata", cause })
    })
    const plain: CheckpointRow = { ...row, metadata: text }
    return key === undefined ? plain : { ...row, metadata: sealing!.sealMetadata(key, plain, text) }
  })

  /**
   * The blobs of a checkpoint's values: shared lists laid out against what
   * their channels stored before (against nothing when `fresh`), sealed when
   * encryption is on.
   */
  const layOut = Effect.fnUntraced(function*(row: CheckpointRow, values: ReadonlyArray<EncodedValue>, fresh: boolean) {
    const key = yield* keyOf("put", row.thread_id)
    const laid: Array<Sharing.Laid> = []
    const blobs = values.map((value): BlobRow => {
      if (value._tag === "serialized") {
        return { channel: value.channel, version: value.version, type: value.type, bytes: value.bytes }
      }
      const list = sharing.layOut(row, value.channel, value.version, value.elements, { fresh, address: key?.address })
      laid.push(list)
      return list.blob
    })
    const pieces = Sharing.distinct(laid.flatMap(({ pieces }) => pieces))
    return {
      blobs: key === undefined
        ? blobs
        : blobs.map((blob) => sealing!.sealBlob(key, row.thread_id, row.checkpoint_ns, blob)),
      laid,
      pieces: key === undefined ? pieces : pieces.map((piece) => sealing!.sealPiece(key, piece)),
      requires: laid.flatMap(({ blob, requires }) => requires.map((version) => ({ channel: blob.channel, version })))
    }
  })

  /** A task's writes against a checkpoint as rows, with the pieces their shared lists need. */
  const encodeWrites = Effect.fnUntraced(function*(
    checkpoint: Sealing.CheckpointPlace,
    writes: ReadonlyArray<readonly [string, unknown]>,
    task: { readonly task_id: string; readonly task_path: string }
  ) {
    const key = yield* keyOf("putWrites", checkpoint.thread_id)
    const encoded = yield* Effect.forEach(
      lastSpecialWrites(writes),
      ([channel, value, index]) =>
        encode("putWrites", `writes[${index}] (channel "${channel}")`, value).pipe(
          Effect.map((stored) => {
            const { bytes, pieces, type } = stored._tag === "shared"
              ? sharing.writeList(stored.elements, key?.address)
              : { ...stored, pieces: [] }
            const idx = Object.hasOwn(WRITES_IDX_MAP, channel) ? WRITES_IDX_MAP[channel]! : index
            const row: WriteRow = { ...task, idx, channel, type, bytes }
            return { row: key === undefined ? row : sealing!.sealWrite(key, checkpoint, row), pieces }
          })
        )
    )
    const pieces = Sharing.distinct(encoded.flatMap(({ pieces }): ReadonlyArray<Piece> => pieces))
    return {
      rows: encoded.map(({ row }) => row),
      pieces: key === undefined ? pieces : pieces.map((piece) => sealing!.sealPiece(key, piece))
    }
  })

  /** A `list` filter: each value as the JSON text metadata stores it as. */
  const encodeFilter = (filter: Readonly<Record<string, unknown>>) =>
    Effect.forEach(
      Object.entries(filter),
      ([name, value]) =>
        sealing !== undefined && !sealing.plaintextMetadata.has(name) ?
          Effect.fail(
            new InvalidInput({
              operation: "list",
              argument: "filter",
              detail: `metadata key "${name}" is encrypted, so it cannot be filtered on (filterable: ${
                [...sealing.plaintextMetadata].join(", ") || "none"
              }; see plaintextMetadata)`
            })
          ) :
          Effect.try({
            try: () => [name, utf8.decode(json.dump(value))] as const,
            catch: () => new InvalidInput({ operation: "list", argument: "filter", detail: `${name} is not JSON` })
          })
    )

  /** Reads JSON under safe revival, adding what stayed inert to the tally. */
  const readJson = (row: CheckpointRow, what: string, bytes: Uint8Array | string, tally: Tally) =>
    Effect.try({
      try: () => {
        const revived = json.read(bytes)
        tally.inert += revived.inert
        return revived.value
      },
      catch: (cause) =>
        corrupted(row, `${what} does not deserialize: ${new Serializer.SerializerError({ cause }).message}`)
    })

  /** Reads a stored value; a shared list is first rebuilt from its pieces. */
  const load = (
    row: CheckpointRow,
    what: string,
    stored: Pick<BlobRow, "type" | "bytes" | "base">,
    pieces: Pieces,
    tally: Tally,
    remembering?: { readonly channel: string; readonly version: string }
  ): Effect.Effect<unknown, CorruptedCheckpoint> => {
    if (stored.type === Sharing.SHARED) {
      const decoded = sharing.decode(stored, pieces.readable, pieces.unreadable)
      if (typeof decoded === "string") return Effect.fail(corrupted(row, `${what}: ${decoded}`))
      if (remembering !== undefined) sharing.remember({ ...row, ...remembering }, decoded)
      return readJson(row, what, decoded.bytes, tally)
    }
    const bytes = stored.bytes ?? new Uint8Array()
    if (serializer.json !== undefined && stored.type === "json") return readJson(row, what, bytes, tally)
    return serializer.load({ type: stored.type, bytes }).pipe(
      Effect.mapError((error) => corrupted(row, `${what} does not deserialize: ${error.message}`))
    )
  }

  const decodeHeader = (row: CheckpointRow) =>
    Schema.decodeUnknownEffect(CheckpointHeader)(row.checkpoint).pipe(
      Effect.mapError((error) => corrupted(row, `checkpoint: ${formatIssue(error.issue)}`))
    )

  const decodeMetadata = (row: CheckpointRow, tally: Tally) =>
    readJson(row, "metadata", row.metadata, tally).pipe(
      Effect.flatMap(Schema.decodeUnknownEffect(CheckpointMetadata)),
      Effect.mapError((error) =>
        Schema.isSchemaError(error) ? corrupted(row, `metadata: ${formatIssue(error.issue)}`) : error
      )
    )

  const loadWrites = (row: CheckpointRow, writes: ReadonlyArray<WriteRow>, pieces: Pieces, tally: Tally) =>
    Effect.forEach(
      sortWrites(writes),
      (write) =>
        load(row, `write ${write.idx} of task ${write.task_id}`, write, pieces, tally).pipe(
          Effect.map((value): StoredWrite => [write.task_id, write.channel, value])
        )
    )

  /**
   * The stored value of each channel at the header's version. `remember`:
   * the lists read are what the thread's next put extends.
   */
  const loadChannelValues = (
    row: CheckpointRow,
    header: CheckpointHeader,
    blobs: ReadonlyArray<BlobRow>,
    pieces: Pieces,
    tally: Tally,
    remember = false
  ) =>
    Effect.forEach(
      blobs.filter((blob) => blob.type !== "empty" && String(header.channel_versions[blob.channel]) === blob.version),
      (blob) =>
        load(row, `channel "${blob.channel}"`, blob, pieces, tally, remember ? blob : undefined).pipe(
          Effect.map((value) => [blob.channel, value] as const)
        )
    )

  /**
   * A stored checkpoint as LangGraph's tuple. `remember`: what a `getTuple`
   * reads is what the thread's next put extends, and its pieces are kept;
   * `parentSends`: the pending sends checkpoints older than format 4 kept as
   * writes on their parent.
   */
  const decodeTuple = Effect.fnUntraced(function*<E>(
    stored: StoredCheckpoint,
    options: {
      readonly remember: boolean
      readonly parentSends: (row: CheckpointRow, parent: string) => Effect.Effect<ReadonlyArray<WriteRow>, E>
    }
  ) {
    const tally = newTally()
    const { blobs, pieces, row, writes } = yield* open(stored, tally)
    if (options.remember) keepRead(pieces)
    const header = yield* decodeHeader(row)
    const checkpoint: Checkpoint = {
      ...header,
      channel_values: Object.fromEntries(
        yield* loadChannelValues(row, header, blobs, pieces, tally, options.remember)
      )
    }
    if (header.v < 4 && row.parent_checkpoint_id !== undefined) {
      const parent = { ...row, checkpoint_id: row.parent_checkpoint_id }
      const sends = yield* loadWrites(
        row,
        yield* openWrites(parent, yield* options.parentSends(row, row.parent_checkpoint_id), tally),
        noPieces,
        tally
      )
      const versions = Object.values(checkpoint.channel_versions)
      checkpoint.channel_values[TASKS] = sends.map(([, , value]) => value)
      checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : 1
    }
    const tuple: CheckpointTuple = {
      config: configOf(row.thread_id, row.checkpoint_ns, row.checkpoint_id),
      checkpoint,
      metadata: (yield* decodeMetadata(row, tally)) as CheckpointTuple["metadata"] & {},
      pendingWrites: yield* loadWrites(row, writes, pieces, tally)
    }
    if (row.parent_checkpoint_id !== undefined) {
      tuple.parentConfig = configOf(row.thread_id, row.checkpoint_ns, row.parent_checkpoint_id)
    }
    yield* report(row, tally)
    return tuple
  })

  /** Opened pieces, and which were sealed (authenticated) or stored plain (checked against their hash). */
  type Opened = Pieces & {
    readonly sealed: ReadonlyMap<string, Uint8Array>
    readonly plain: ReadonlyMap<string, Uint8Array>
  }
  const openedPieces = new WeakMap<ReadonlyMap<string, Uint8Array>, Opened>()

  /** The pieces read with a page (the same map for each of its checkpoints), opened once. */
  const openPieces = (pieces: ReadonlyMap<string, Uint8Array>, tally: Tally): Opened => {
    if (sealing === undefined) return { ...noPieces, readable: pieces, sealed: noPieces.readable, plain: pieces }
    let found = openedPieces.get(pieces)
    if (found === undefined) {
      const { plain, sealed, unreadable } = sealing.openPieces(pieces, tally)
      found = { readable: plain.size === 0 ? sealed : new Map([...sealed, ...plain]), unreadable, sealed, plain }
      openedPieces.set(pieces, found)
    }
    return found
  }

  /** Keeps what a read brought for the next: pieces that opened, or that match their plain hash. */
  const keepRead = (pieces: Opened) => {
    sharing.keepRead(pieces.sealed, true)
    sharing.keepRead(pieces.plain)
  }

  const openWrites = (place: Sealing.CheckpointPlace, writes: ReadonlyArray<WriteRow>, tally: Tally) =>
    Effect.forEach(writes, (write) => {
      const opened = sealing === undefined ? write : sealing.openWrite(place, write, tally)
      return typeof opened === "string"
        ? Effect.fail(corrupted(place, `write ${write.idx} of task ${write.task_id} ${opened}`))
        : Effect.succeed(opened)
    })

  /**
   * A stored checkpoint with its rows opened: metadata, blobs, writes and the
   * pieces read with it (a checkpoint that does not open fails whole).
   */
  const open = Effect.fnUntraced(function*(stored: StoredCheckpoint, tally: Tally) {
    const pieces = openPieces(stored.pieces, tally)
    if (sealing === undefined) {
      // Rows sealed by a storage with encryption on: say so, rather than that their type is unknown.
      // (Their types are the library's own; sealed metadata alone is not taken as a sign, its keys being
      // the caller's.)
      const sealed = (row: { readonly type: string }) => Sealing.isSealed(row.type)
      if (stored.blobs.some(sealed) || stored.writes.some(sealed)) {
        return yield* Effect.fail(corrupted(stored.row, NEEDS_KEYS))
      }
      return { ...stored, pieces }
    }
    const { row } = stored
    const metadata = sealing.openMetadata(row, tally)
    if (typeof metadata === "string") return yield* Effect.fail(corrupted(row, metadata))
    const blobs: Array<BlobRow> = []
    for (const blob of stored.blobs) {
      const opened = sealing.openBlob(row, blob, tally)
      if (typeof opened === "string") return yield* Effect.fail(corrupted(row, `channel "${blob.channel}" ${opened}`))
      blobs.push(opened)
    }
    return {
      row: { ...row, metadata: metadata.json },
      blobs,
      writes: yield* openWrites(row, stored.writes, tally),
      pieces
    }
  })

  /**
   * A thread's rows for `target`: a copy, or the same thread under its
   * current key. Without encryption only the thread id changes.
   */
  const reseal = Effect.fnUntraced(function*(operation: string, rows: ThreadRows, target: string) {
    if (sealing === undefined) {
      return { ...rows, thread_id: target, checkpoints: rows.checkpoints.map((row) => ({ ...row, thread_id: target })) }
    }
    yield* keyOf(operation, target)
    const resealed = sealing.reseal(rows, target)
    return typeof resealed === "string"
      ? yield* new CorruptedCheckpoint({
        thread_id: rows.thread_id,
        checkpoint_ns: "",
        checkpoint_id: "",
        detail: resealed
      })
      : resealed
  })

  return {
    sharing,
    encrypted: sealing !== undefined,
    /** Whether a thread's rows are all sealed under its current key (always, without encryption). */
    isCurrent: (rows: ThreadRows) => sealing?.isCurrent(rows) ?? true,
    plaintextMetadata: sealing?.plaintextMetadata,
    encodeValues,
    encodeRow,
    encodeWrites,
    encodeFilter,
    layOut,
    open,
    reseal,
    decodeTuple,
    decodeHeader,
    loadWrites,
    loadChannelValues,
    report
  } as const
})

/** Records what a read left inert (on the current span and the metric) and read without a seal (the metric). */
const report = (row: CheckpointRow, tally: Tally) =>
  Effect.andThen(
    tally.plaintext === 0 ? Effect.void : Metric.update(Sealing.plaintextRows, tally.plaintext),
    reportInert(row, tally)
  )

const reportInert = (row: CheckpointRow, tally: Tally) =>
  tally.inert === 0 ? Effect.void : Effect.all([Effect.currentSpan, Clock.currentTimeNanos]).pipe(
    Effect.tap(([span, now]) =>
      Effect.sync(() =>
        span.event("checkpoint.inert_records", now, { checkpoint_id: row.checkpoint_id, count: tally.inert })
      )
    ),
    Effect.ignore,
    Effect.andThen(Metric.update(inertRecords, tally.inert))
  )

/**
 * @since 0.1.0
 */
export type Codec = Effect.Success<ReturnType<typeof make>>

/**
 * A fresh tally for reads outside `decodeTuple` (delta histories).
 *
 * @since 0.1.0
 */
export const newTally = (): Tally => ({ inert: 0, plaintext: 0 })
