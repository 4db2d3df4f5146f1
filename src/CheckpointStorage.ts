/**
 * The checkpoint storage service: the one contract every driver meets and the
 * API Effect applications use directly. `make` builds it over any
 * {@link StorageDriver}; all validation, serialization, decoding, ordering
 * and tracing happen here, once, before a driver is touched.
 *
 * @since 0.1.0
 */
import {
  compareWritesSortKeys,
  maxChannelVersion,
  TASKS,
  WRITES_IDX_MAP,
  writesSortKey
} from "@langchain/langgraph-checkpoint"
import { Context, Effect, Layer, Option, Schedule, Schema, type Scope, Stream } from "effect"
import {
  ChannelVersions,
  Checkpoint,
  CheckpointHeader,
  type CheckpointIdRef,
  CheckpointMetadata,
  type CheckpointRef,
  type CheckpointTuple,
  configOf,
  type DeltaChannelHistory,
  ListQuery,
  type Location,
  PendingWrites,
  type StoredWrite,
  TaskRef
} from "./Checkpoint.ts"
import {
  CheckpointNotFound,
  CorruptedCheckpoint,
  formatIssue,
  type InvalidConfig,
  InvalidInput,
  SerializationFailed,
  type StorageFailure,
  type ThreadExists,
  type ThreadNotFound
} from "./CheckpointError.ts"
import { FastJsonPlusSerializer } from "./FastJsonPlus.ts"
import { decodeIdRef, decodeRef, decodeThreadId, invalidInput } from "./Input.ts"
import * as MemoryDriver from "./memory/MemoryDriver.ts"
import * as Serializer from "./Serializer.ts"
import type { Serialized } from "./Serializer.ts"
import * as Sharing from "./Sharing.ts"
import type { BlobRow, CheckpointRow, StorageDriver, StoredCheckpoint, WriteRow } from "./StorageDriver.ts"
import * as ThreadLifecycle from "./ThreadLifecycle.ts"
import type { RetentionPolicy, RetentionReport } from "./ThreadLifecycle.ts"

/** @since 0.1.0 */
export type WriteError = InvalidConfig | InvalidInput | SerializationFailed | StorageFailure

/** @since 0.1.0 */
export type PutError = WriteError | CheckpointNotFound

export type { RetentionPolicy, RetentionReport } from "./ThreadLifecycle.ts"

/** @since 0.1.0 */
export type ReadError = InvalidConfig | InvalidInput | CorruptedCheckpoint | StorageFailure

/**
 * @since 0.1.0
 */
export class CheckpointStorage extends Context.Service<CheckpointStorage, {
  /**
   * Stores a checkpoint under `ref` (whose `checkpoint_id`, if any, is the
   * parent) with its metadata. Only the channels named in `newVersions` have
   * their values stored; the others are read back from earlier checkpoints.
   * Arrays are stored with structural sharing (see `Sharing`): only the
   * elements the thread has not stored yet are written.
   * Atomic: on any error nothing is written. A parent that no longer exists
   * (its thread was deleted or pruned while the writer ran) is
   * `CheckpointNotFound`.
   */
  readonly put: (
    ref: CheckpointRef,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions
  ) => Effect.Effect<CheckpointIdRef, PutError>
  /** Stores the writes a task made against a checkpoint, atomically. */
  readonly putWrites: (
    ref: CheckpointIdRef,
    writes: ReadonlyArray<readonly [channel: string, value: unknown]>,
    task: TaskRef
  ) => Effect.Effect<void, WriteError>
  /** The named checkpoint, or the namespace's latest; `None` when there is none. */
  readonly getTuple: (ref: CheckpointRef) => Effect.Effect<Option.Option<CheckpointTuple>, ReadError>
  /** Matching checkpoints, newest first. */
  readonly list: (query: ListQuery) => Stream.Stream<CheckpointTuple, ReadError>
  /** Removes a thread: every namespace, checkpoint, value and write. */
  readonly deleteThread: (thread_id: string) => Effect.Effect<void, InvalidConfig | StorageFailure>
  /**
   * Copies a whole thread (every namespace, the whole parent chain, values
   * and writes) to `target`, in one transaction, so every checkpoint and
   * DeltaChannel of the copy reads back as in the source. An existing target
   * is an error unless `replace` is set.
   */
  readonly copyThread: (
    source: string,
    target: string,
    options?: { readonly replace?: boolean | undefined }
  ) => Effect.Effect<void, InvalidConfig | InvalidInput | ThreadNotFound | ThreadExists | StorageFailure>
  /**
   * Shrinks threads. `keep_latest` keeps the latest checkpoint of each
   * namespace and everything it needs (see `Prune`): every checkpoint that
   * stays reads back exactly as before. `delete` removes the threads.
   */
  readonly prune: (
    threads: ReadonlyArray<string>,
    options: { readonly strategy: "keep_latest" | "delete" }
  ) => Effect.Effect<void, InvalidConfig | InvalidInput | ThreadNotFound | StorageFailure>
  /**
   * Removes the checkpoints (and their writes) whose metadata `run_id` is one
   * of `runIds`, in every thread. A surviving checkpoint whose parent is
   * removed gets its nearest surviving ancestor as parent, so no chain
   * dangles; its own values are kept.
   */
  readonly deleteForRuns: (runIds: ReadonlyArray<string>) => Effect.Effect<void, InvalidInput | StorageFailure>
  /**
   * Applies a retention policy once: deletes threads inactive for longer than
   * `inactiveFor`, and keeps the `keepLast` newest checkpoints of each
   * namespace (with everything they need, as `prune` does). Answers what it
   * removed.
   */
  readonly applyRetention: (
    policy: RetentionPolicy
  ) => Effect.Effect<RetentionReport, InvalidInput | StorageFailure>
  /**
   * For each channel, the writes on the parent chain back to the nearest
   * ancestor that stored a value for it, oldest first, and that value as the
   * seed (see `BaseCheckpointSaver.getDeltaChannelHistory`).
   */
  readonly getDeltaChannelHistory: (
    ref: CheckpointRef,
    channels: ReadonlyArray<string>
  ) => Effect.Effect<Record<string, DeltaChannelHistory>, ReadError>
}>()("langgraph-checkpoint-effect/CheckpointStorage") {}

/**
 * Metadata is stored as JSON whatever serializer the values use (an
 * encrypting serializer included), so that `list` can filter on it.
 */
const metadataSerializer = Serializer.fromProtocol(new FastJsonPlusSerializer())
const utf8 = new TextDecoder()

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

/** A checkpoint's pieces by hash. */
type Pieces = StoredCheckpoint["pieces"]

const noPieces: Pieces = new Map()

/**
 * Builds the service over a driver.
 *
 * @since 0.1.0
 */
export const make = Effect.fnUntraced(function*(driver: StorageDriver) {
  const serializer = yield* Serializer.Serializer

  const dump = (operation: string, path: string, value: unknown) =>
    serializer.dump(value).pipe(Effect.mapError(({ cause }) => new SerializationFailed({ operation, path, cause })))

  const dumpMetadata = (operation: string, metadata: unknown) =>
    metadataSerializer.dump(metadata).pipe(
      Effect.mapError(({ cause }) => new SerializationFailed({ operation, path: "metadata", cause })),
      Effect.map(({ bytes }) => utf8.decode(bytes))
    )

  const sharing = Sharing.make(
    serializer.protocol instanceof FastJsonPlusSerializer && (yield* Sharing.Enabled)
      ? (value) => (serializer.protocol as FastJsonPlusSerializer).dumpJson(value)
      : undefined
  )

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
   * A changed channel's blob. A channel left without a value gets none: a
   * version with no blob reads as no value (LangGraph's savers store an
   * `empty` row for it, which reads the same and costs a row per step).
   */
  const encodeBlob = Effect.fnUntraced(function*(checkpoint: Checkpoint, channel: string, version: string) {
    const value = Object.hasOwn(checkpoint.channel_values, channel) ? checkpoint.channel_values[channel] : undefined
    if (value === undefined) return []
    return [{ channel, version, ...(yield* encode("put", `channel_values.${channel}`, value)) }]
  })

  const put = Effect.fn("CheckpointStorage.put")(function*(
    ref: CheckpointRef,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions
  ) {
    const location = yield* decodeRef("put", ref)
    const decoded = yield* Schema.decodeEffect(Checkpoint)(checkpoint).pipe(
      Effect.mapError(invalidInput("put", "checkpoint"))
    )
    yield* Schema.decodeEffect(CheckpointMetadata)(metadata).pipe(
      Effect.mapError(invalidInput("put", "metadata"))
    )
    const versions = yield* Schema.decodeEffect(ChannelVersions)(newVersions).pipe(
      Effect.mapError(invalidInput("put", "newVersions"))
    )
    yield* Effect.annotateCurrentSpan({ thread_id: location.thread_id, checkpoint_id: decoded.id })
    const values = (yield* Effect.forEach(
      Object.entries(versions),
      ([channel, version]) => encodeBlob(decoded, channel, String(version))
    )).flat()
    const row: CheckpointRow = {
      thread_id: location.thread_id,
      checkpoint_ns: location.checkpoint_ns,
      checkpoint_id: decoded.id,
      parent_checkpoint_id: location.checkpoint_id,
      checkpoint: {
        v: decoded.v,
        id: decoded.id,
        ts: decoded.ts,
        channel_versions: decoded.channel_versions,
        versions_seen: decoded.versions_seen
      },
      metadata: yield* dumpMetadata("put", metadata)
    }
    /** Shared lists extend what their channels stored before, unless `fresh`. */
    const store = (fresh: boolean) => {
      const laid: Array<Sharing.Laid> = []
      const blobs = values.map((value): BlobRow => {
        if (value._tag === "serialized") {
          return { channel: value.channel, version: value.version, type: value.type, bytes: value.bytes }
        }
        const list = sharing.layOut(row, value.channel, value.version, value.elements, { fresh })
        laid.push(list)
        return list.blob
      })
      return driver.put(row, blobs, {
        pieces: Sharing.distinct(laid.flatMap(({ pieces }) => pieces)),
        requires: laid.flatMap(({ blob, requires }) => requires.map((version) => ({ channel: blob.channel, version })))
      }).pipe(Effect.map((outcome) => ({ outcome, laid })))
    }
    let stored = yield* store(false)
    // What a list extended was removed meanwhile (pruned, or written by a
    // process whose thread was since deleted): store every piece again.
    if (stored.outcome === "base-missing") stored = yield* store(true)
    if (stored.outcome !== "stored") {
      return yield* new CheckpointNotFound({
        operation: "put",
        thread_id: row.thread_id,
        checkpoint_ns: row.checkpoint_ns,
        checkpoint_id: location.checkpoint_id ?? ""
      })
    }
    sharing.stored(row, stored.laid)
    return { thread_id: row.thread_id, checkpoint_ns: row.checkpoint_ns, checkpoint_id: row.checkpoint_id }
  })

  const putWrites = Effect.fn("CheckpointStorage.putWrites")(function*(
    ref: CheckpointIdRef,
    writes: ReadonlyArray<readonly [channel: string, value: unknown]>,
    task: TaskRef
  ) {
    const checkpoint = yield* decodeIdRef("putWrites", ref)
    const decodedWrites = yield* Schema.decodeEffect(PendingWrites)(writes).pipe(
      Effect.mapError(invalidInput("putWrites", "writes"))
    )
    const { task_id, task_path } = yield* Schema.decodeEffect(TaskRef)(task).pipe(
      Effect.mapError(invalidInput("putWrites", "task"))
    )
    yield* Effect.annotateCurrentSpan({ thread_id: checkpoint.thread_id, checkpoint_id: checkpoint.checkpoint_id })
    const encoded = yield* Effect.forEach(
      lastSpecialWrites(decodedWrites),
      ([channel, value, index]) =>
        encode("putWrites", `writes[${index}] (channel "${channel}")`, value).pipe(
          Effect.map((stored) => {
            const { bytes, pieces, type } = stored._tag === "shared"
              ? sharing.writeList(stored.elements)
              : { ...stored, pieces: [] }
            const row: WriteRow = {
              task_id,
              task_path: task_path ?? "",
              idx: Object.hasOwn(WRITES_IDX_MAP, channel) ? WRITES_IDX_MAP[channel]! : index,
              channel,
              type,
              bytes
            }
            return { row, pieces }
          })
        )
    )
    yield* driver.putWrites(
      checkpoint,
      encoded.map(({ row }) => row),
      Sharing.distinct(encoded.flatMap(({ pieces }) => pieces))
    )
  })

  const corrupted = (row: CheckpointRow, detail: string) =>
    new CorruptedCheckpoint({
      thread_id: row.thread_id,
      checkpoint_ns: row.checkpoint_ns,
      checkpoint_id: row.checkpoint_id,
      detail
    })

  /** Shared lists hold `JsonPlusSerializer` text whatever serializer reads the rest. */
  const listSerializer = serializer.protocol instanceof FastJsonPlusSerializer ? serializer : metadataSerializer

  /** Reads a stored value; a shared list is first rebuilt from its pieces. */
  const load = (
    row: CheckpointRow,
    what: string,
    stored: Pick<BlobRow, "type" | "bytes" | "base">,
    pieces: Pieces,
    remembering?: { readonly channel: string; readonly version: string }
  ) => {
    const deserialize = (reader: Serializer.SerializerService, value: Serialized) =>
      reader.load(value).pipe(
        Effect.mapError((error) => corrupted(row, `${what} does not deserialize: ${error.message}`))
      )
    if (stored.type !== Sharing.SHARED) {
      return deserialize(serializer, { type: stored.type, bytes: stored.bytes ?? new Uint8Array() })
    }
    const bytes = sharing.decode(stored, pieces, remembering && { ...row, ...remembering })
    return typeof bytes === "string"
      ? Effect.fail(corrupted(row, `${what}: ${bytes}`))
      : deserialize(listSerializer, { type: "json", bytes })
  }

  const decodeHeader = (row: CheckpointRow) =>
    Schema.decodeUnknownEffect(CheckpointHeader)(row.checkpoint).pipe(
      Effect.mapError((error) => corrupted(row, `checkpoint: ${formatIssue(error.issue)}`))
    )

  const decodeMetadata = (row: CheckpointRow) =>
    metadataSerializer.load({ type: "json", bytes: row.metadata }).pipe(
      Effect.mapError((error) => corrupted(row, `metadata does not deserialize: ${error.message}`)),
      Effect.flatMap(Schema.decodeUnknownEffect(CheckpointMetadata)),
      Effect.mapError((error) =>
        Schema.isSchemaError(error) ? corrupted(row, `metadata: ${formatIssue(error.issue)}`) : error
      )
    )

  const loadWrites = (row: CheckpointRow, writes: ReadonlyArray<WriteRow>, pieces: Pieces) =>
    Effect.forEach(
      sortWrites(writes),
      (write) =>
        load(row, `write ${write.idx} of task ${write.task_id}`, write, pieces).pipe(
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
    remember = false
  ) =>
    Effect.forEach(
      blobs.filter((blob) => blob.type !== "empty" && String(header.channel_versions[blob.channel]) === blob.version),
      (blob) =>
        load(row, `channel "${blob.channel}"`, blob, pieces, remember ? blob : undefined).pipe(
          Effect.map((value) => [blob.channel, value] as const)
        )
    )

  /** Checkpoints older than format 4 kept pending sends as writes on their parent. */
  const migratePendingSends = Effect.fnUntraced(function*(
    row: CheckpointRow,
    parent_checkpoint_id: string,
    checkpoint: Checkpoint
  ) {
    const sends = yield* driver.channelWrites(
      { thread_id: row.thread_id, checkpoint_ns: row.checkpoint_ns, checkpoint_id: parent_checkpoint_id },
      TASKS
    )
    const loaded = yield* loadWrites(row, sends, noPieces)
    const versions = Object.values(checkpoint.channel_versions)
    checkpoint.channel_values[TASKS] = loaded.map(([, , value]) => value)
    checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : 1
  })

  const decodeStored = Effect.fnUntraced(function*(stored: StoredCheckpoint, remember = false) {
    const { blobs, pieces, row, writes } = stored
    const header = yield* decodeHeader(row)
    const checkpoint: Checkpoint = {
      ...header,
      channel_values: Object.fromEntries(yield* loadChannelValues(row, header, blobs, pieces, remember))
    }
    if (header.v < 4 && row.parent_checkpoint_id !== undefined) {
      yield* migratePendingSends(row, row.parent_checkpoint_id, checkpoint)
    }
    const tuple: CheckpointTuple = {
      config: configOf(row.thread_id, row.checkpoint_ns, row.checkpoint_id),
      checkpoint,
      metadata: (yield* decodeMetadata(row)) as CheckpointTuple["metadata"] & {},
      pendingWrites: yield* loadWrites(row, writes, pieces)
    }
    if (row.parent_checkpoint_id !== undefined) {
      tuple.parentConfig = configOf(row.thread_id, row.checkpoint_ns, row.parent_checkpoint_id)
    }
    return tuple
  })

  const getTuple = Effect.fn("CheckpointStorage.getTuple")(function*(ref: CheckpointRef) {
    const location = yield* decodeRef("getTuple", ref)
    yield* annotate(location)
    const stored = yield* driver.getTuple(location)
    return Option.isNone(stored) ? Option.none() : Option.some(yield* decodeStored(stored.value, true))
  })

  const list = (query: ListQuery): Stream.Stream<CheckpointTuple, ReadError> =>
    Stream.unwrap(Effect.gen(function*() {
      const decoded = yield* Schema.decodeEffect(ListQuery)(query).pipe(
        Effect.mapError(invalidInput("list", "query"))
      )
      yield* Effect.annotateCurrentSpan({
        ...(decoded.thread_id === undefined ? {} : { thread_id: decoded.thread_id }),
        ...(decoded.checkpoint_ns === undefined ? {} : { checkpoint_ns: decoded.checkpoint_ns }),
        ...(decoded.limit === undefined ? {} : { limit: decoded.limit })
      })
      const filter = yield* Effect.forEach(
        Object.entries(decoded.filter ?? {}),
        ([name, value]) =>
          Effect.try({
            try: () => [name, JSON.stringify(value)] as const,
            catch: () => new InvalidInput({ operation: "list", argument: "filter", detail: `${name} is not JSON` })
          })
      )
      return driver.list({
        thread_id: decoded.thread_id,
        checkpoint_ns: decoded.checkpoint_ns,
        checkpoint_id: decoded.checkpoint_id || undefined,
        before: decoded.before || undefined,
        limit: decoded.limit,
        filter
      }).pipe(Stream.mapEffect((stored) => decodeStored(stored)))
    })).pipe(Stream.withSpan("CheckpointStorage.list"))

  const deleteThread = Effect.fn("CheckpointStorage.deleteThread")(function*(thread_id: string) {
    const id = yield* decodeThreadId("deleteThread", thread_id)
    yield* Effect.annotateCurrentSpan({ thread_id: id })
    yield* driver.deleteThread(id)
  })

  const getDeltaChannelHistory = Effect.fn("CheckpointStorage.getDeltaChannelHistory")(function*(
    ref: CheckpointRef,
    channels: ReadonlyArray<string>
  ) {
    const location = yield* decodeRef("getDeltaChannelHistory", ref)
    const wanted = yield* Schema.decodeEffect(Schema.Array(Schema.String))(channels).pipe(
      Effect.mapError(invalidInput("getDeltaChannelHistory", "channels"))
    )
    yield* annotate(location)
    if (wanted.length === 0) return {}
    const ancestors = yield* driver.ancestors(location, wanted)
    // Collected newest first, reversed at the end.
    const collected = new Map(wanted.map((channel) => [channel, [] as Array<StoredWrite>]))
    const seeds = new Map<string, unknown>()
    const remaining = new Set(wanted)
    for (const { blobs, pieces, row, writes } of ancestors) {
      if (remaining.size === 0) break
      const header = yield* decodeHeader(row)
      const stepWrites = yield* loadWrites(row, writes.filter((write) => remaining.has(write.channel)), pieces)
      for (const write of stepWrites.reverse()) collected.get(write[1])?.push(write)
      for (const [channel, value] of yield* loadChannelValues(row, header, blobs, pieces)) {
        if (!remaining.has(channel)) continue
        seeds.set(channel, value)
        remaining.delete(channel)
      }
    }
    return Object.fromEntries(wanted.map((channel): [string, DeltaChannelHistory] => {
      const writes = (collected.get(channel) ?? []).reverse()
      return [channel, seeds.has(channel) ? { writes, seed: seeds.get(channel) } : { writes }]
    }))
  })

  const lifecycle = ThreadLifecycle.make(driver)

  return CheckpointStorage.of({
    put,
    putWrites,
    getTuple,
    list,
    deleteThread,
    getDeltaChannelHistory,
    ...lifecycle
  })
})

const annotate = (location: Location) =>
  Effect.annotateCurrentSpan({
    thread_id: location.thread_id,
    checkpoint_ns: location.checkpoint_ns,
    ...(location.checkpoint_id === undefined ? {} : { checkpoint_id: location.checkpoint_id })
  })

/**
 * Builds the service layer over a driver.
 *
 * @since 0.1.0
 */
export const layerDriver = <E, R>(
  driver: Effect.Effect<StorageDriver, E, R>
): Layer.Layer<CheckpointStorage, E, Exclude<R, Scope.Scope>> =>
  Layer.effect(CheckpointStorage, Effect.flatMap(driver, make))

/**
 * An in-memory storage: the reference semantics, for tests and short-lived
 * processes. Each build of the layer starts empty.
 *
 * @since 0.1.0
 */
export const layerMemory: Layer.Layer<CheckpointStorage> = layerDriver(Effect.sync(MemoryDriver.make))

/**
 * Applies a retention policy on a schedule, in a background fiber that lives
 * with the layer. A failed round is logged and the next one runs as planned.
 * On CockroachDB, thread expiry is better left to `enableTtl`; combine it
 * with `keepLast` here.
 *
 * @since 0.1.0
 */
export const layerRetention = (
  policy: RetentionPolicy,
  schedule: Schedule.Schedule<unknown> = Schedule.spaced("1 hour")
): Layer.Layer<never, never, CheckpointStorage> =>
  Layer.effectDiscard(
    CheckpointStorage.use((storage) =>
      storage.applyRetention(policy).pipe(
        Effect.tap((report) => Effect.logDebug("checkpoint retention", report)),
        Effect.catchCause((cause) => Effect.logWarning("checkpoint retention failed", cause)),
        Effect.repeat(schedule),
        Effect.forkScoped,
        Effect.asVoid
      )
    )
  )
