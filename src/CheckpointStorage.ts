/**
 * The checkpoint storage service: the one contract every driver meets and the
 * API Effect applications use directly. `make` builds it over any
 * {@link StorageDriver}: validation, ordering and tracing happen here, and
 * encoding, sealing and decoding in its codec (`codec/Codec`), once, before
 * a driver is touched; the thread operations (copy, import, prune,
 * retention, re-encryption) are `lifecycle/ThreadLifecycle`'s, and the
 * guard that refuses every operation once the store's format level or
 * schema moved past this process is `FormatGuard`'s.
 *
 * @since 0.1.0
 */
import { TASKS } from "@langchain/langgraph-checkpoint"
import { Clock, Context, Effect, Layer, Option, Schedule, Schema, type Scope, Stream } from "effect"
import {
  ChannelVersions,
  Checkpoint,
  type CheckpointIdRef,
  CheckpointMetadata,
  type CheckpointRef,
  type CheckpointTuple,
  type DeltaChannelHistory,
  ListQuery,
  type Location,
  Name,
  PendingWrites,
  TaskRef
} from "./Checkpoint.ts"
import {
  CheckpointNotFound,
  CorruptedCheckpoint,
  formatIssue,
  type IncompatibleSchema,
  InvalidConfig,
  type InvalidInput,
  type SerializationFailed,
  type StorageFailure,
  ThreadConflict,
  type ThreadExists,
  type ThreadNotFound
} from "./CheckpointError.ts"
import * as FormatLevel from "./FormatLevel.ts"
import type { FormatError } from "./FormatLevel.ts"
import * as Codec from "./internal/codec/Codec.ts"
import * as Walks from "./internal/codec/Walks.ts"
import * as Guard from "./internal/FormatGuard.ts"
import {
  argumentDecoder,
  decodeIdRef,
  decodeRef,
  decodeThreadId,
  invalidInput,
  writerEpochOf
} from "./internal/Input.ts"
import * as ThreadLifecycle from "./internal/lifecycle/ThreadLifecycle.ts"
import * as Settings from "./internal/Settings.ts"
import * as MemoryDriver from "./MemoryDriver.ts"
import type { ReencryptProgress, RetentionPolicy, RetentionReport, ThreadStorage } from "./Reports.ts"
import type { FormatStatus, StorageDriver, StoredCheckpoint, ThreadRows } from "./StorageDriver.ts"
import * as ThreadCrons from "./ThreadCrons.ts"
import type { CronPage, CronQuery, CronRecord } from "./ThreadCrons.ts"
import * as ThreadRecords from "./ThreadRecords.ts"
import type { ThreadPage, ThreadQuery, ThreadRecord, ThreadState, ThreadUpdate } from "./ThreadRecords.ts"
import * as ThreadRuns from "./ThreadRuns.ts"
import type { RunQuery, RunRecord } from "./ThreadRuns.ts"

export type { FormatError } from "./FormatLevel.ts"

/** @since 0.1.0 */
export type WriteError = InvalidConfig | InvalidInput | SerializationFailed | StorageFailure | FormatError

/** @since 0.1.0 */
export type PutError = WriteError | CheckpointNotFound | ThreadConflict

export type {
  ReencryptProgress,
  ReencryptSummary,
  RetentionPolicy,
  RetentionReport,
  StorageSection,
  ThreadStorage
} from "./Reports.ts"
export { summarizeReencrypt } from "./Reports.ts"
export type { CronPage, CronQuery, CronRecord } from "./ThreadCrons.ts"
export type { ThreadPage, ThreadQuery, ThreadRecord, ThreadState, ThreadStatus, ThreadUpdate } from "./ThreadRecords.ts"
export type { RunQuery, RunRecord, RunStatus } from "./ThreadRuns.ts"

/** @since 0.1.0 */
export type ReadError = InvalidConfig | InvalidInput | CorruptedCheckpoint | StorageFailure | FormatError

/**
 * Checkpoint storage for LangGraph threads, as an Effect service: what
 * `EffectCheckpointSaver` adapts to LangGraph's `BaseCheckpointSaver`, and
 * what Effect programs call directly (`put`, `getTuple`, `list`, … with
 * typed errors, spans and streams).
 *
 * Every backend (memory, PGlite, PostgreSQL, CockroachDB) gives the same
 * service, built by {@link make} over its {@link StorageDriver}: the
 * semantics, errors and encodings are the service's, not the backend's.
 * Provide it with {@link layerMemory}, {@link layerDriver}, or the layers of
 * `langgraph-checkpoint-effect/postgres`, `/pglite` and `/cockroach`.
 *
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
  /**
   * Stores the writes a task made against a checkpoint, atomically. With a
   * `writer_epoch` in `ref` older than the thread's, nothing is written:
   * `ThreadConflict` (see `claimThread`).
   */
  readonly putWrites: (
    ref: CheckpointIdRef,
    writes: ReadonlyArray<readonly [channel: string, value: unknown]>,
    task: TaskRef
  ) => Effect.Effect<void, WriteError | ThreadConflict>
  /** The named checkpoint, or the namespace's latest; `None` when there is none. */
  readonly getTuple: (ref: CheckpointRef) => Effect.Effect<Option.Option<CheckpointTuple>, ReadError>
  /**
   * Matching checkpoints, newest first. A checkpoint that cannot be read
   * ends the stream there with `CorruptedCheckpoint` naming its thread,
   * namespace and id, whichever threads the query spans: the checkpoints
   * before it were emitted; damage is never skipped in silence.
   */
  readonly list: (query: ListQuery) => Stream.Stream<CheckpointTuple, ReadError>
  /** Removes a thread: every namespace, checkpoint, value and write, and its record. */
  readonly deleteThread: (thread_id: string) => Effect.Effect<void, InvalidConfig | StorageFailure | FormatError>
  /**
   * Copies a whole thread (every namespace, the whole parent chain, values
   * and writes) to `target`, in one transaction, so every checkpoint and
   * DeltaChannel of the copy reads back as in the source. An existing target
   * is an error unless `replace` is set. With `latest`, only what the
   * source's latest state needs: each namespace's latest checkpoint (with
   * the ancestors its DeltaChannels' history reads, as `prune` keeps), its
   * writes, values and pieces; the copy's history starts there, and it
   * takes the storage of one state, however long the source's history.
   */
  readonly copyThread: (
    source: string,
    target: string,
    options?: { readonly replace?: boolean | undefined; readonly latest?: boolean | undefined }
  ) => Effect.Effect<
    void,
    InvalidConfig | InvalidInput | CorruptedCheckpoint | ThreadNotFound | ThreadExists | StorageFailure | FormatError
  >
  /**
   * A whole thread's stored rows (every namespace, the whole chain, values,
   * pending writes and shared pieces), as one consistent read: what
   * `importThread` writes back, and `ExportFormat` writes to a file.
   *
   * **When to use**
   *
   * To back a thread up, or move it to another storage (another database,
   * another backend): the rows are the stored bytes, nothing decoded or
   * encoded again, so the thread reads back exactly as here wherever it is
   * imported. A thread without checkpoints is `ThreadNotFound`.
   */
  readonly exportThread: (
    thread_id: string
  ) => Effect.Effect<ThreadRows, InvalidInput | ThreadNotFound | StorageFailure | FormatError>
  /**
   * Where a thread's bytes are, as stored: its checkpoints, its channel
   * values by channel (and the pieces its shared lists are made of), its
   * writes by channel. Read from one consistent read of the thread's rows,
   * as `exportThread` reads them. A thread without checkpoints is
   * `ThreadNotFound`.
   */
  readonly threadStorage: (
    thread_id: string
  ) => Effect.Effect<ThreadStorage, InvalidInput | ThreadNotFound | StorageFailure | FormatError>
  /**
   * Writes a thread's rows (from `exportThread`, here or on another
   * storage) back as thread `rows.thread_id`, in one transaction holding the
   * thread, keeping its `last_activity`. An existing thread is `ThreadExists`
   * unless `replace` is set; then it is replaced whole.
   *
   * **When to use**
   *
   * To restore an export, or finish moving a thread between storages (any
   * driver to any other): every checkpoint then reads back (`getTuple`,
   * `list`, `getDeltaChannelHistory`) as it did where it was exported, and
   * a graph continues on it.
   *
   * **Details**
   *
   * The rows are checked before anything is written (see `ThreadCheck`):
   * `InvalidInput` names what is wrong (no checkpoint, a row of another
   * thread, a blob or write in a namespace without checkpoints, a row given
   * twice, parent links that loop or name a checkpoint the rows do not hold,
   * a value nested deeper than `put` accepts, a checkpoint header or
   * metadata that does not decode). Values are written as they are:
   * encrypted rows stay sealed, and since a seal binds a row to its thread
   * id, they read back when imported under the same thread id into a storage
   * with the same keys (to move a thread to another id, import it, then
   * `copyThread`). Plain rows imported where encryption is on read only with
   * `allowPlaintext`, until `reencrypt` seals them.
   */
  readonly importThread: (
    rows: ThreadRows,
    options?: { readonly replace?: boolean | undefined }
  ) => Effect.Effect<void, InvalidInput | ThreadExists | StorageFailure | FormatError>
  /**
   * Shrinks threads. `keep_latest` keeps the latest checkpoint of each
   * namespace and everything it needs (see `Prune`): every checkpoint that
   * stays reads back exactly as before, except that one whose parent is
   * removed names no parent any more. `delete` removes the threads. A thread
   * whose stored parent links loop is `CorruptedCheckpoint`, left as it was.
   */
  readonly prune: (
    threads: ReadonlyArray<string>,
    options: { readonly strategy: "keep_latest" | "delete" }
  ) => Effect.Effect<
    void,
    InvalidConfig | InvalidInput | ThreadNotFound | CorruptedCheckpoint | StorageFailure | FormatError
  >
  /**
   * Removes the checkpoints (and their writes) whose metadata `run_id` is one
   * of `runIds`, in every thread. A surviving checkpoint whose parent is
   * removed gets its nearest surviving ancestor as parent, so no chain
   * dangles; its own values are kept. A thread whose stored parent links
   * loop is `CorruptedCheckpoint`, left as it was (the threads before it
   * are done).
   */
  readonly deleteForRuns: (
    runIds: ReadonlyArray<string>
  ) => Effect.Effect<void, InvalidInput | CorruptedCheckpoint | StorageFailure | FormatError>
  /**
   * Applies a retention policy once: deletes threads inactive for longer than
   * `inactiveFor`, and keeps the `keepLast` newest checkpoints of each
   * namespace (with everything they need, as `prune` does). Answers what it
   * removed, and which threads it left because their parent links loop.
   */
  readonly applyRetention: (
    policy: RetentionPolicy
  ) => Effect.Effect<RetentionReport, InvalidInput | StorageFailure | FormatError>
  /**
   * Rewrites every thread's rows under its current key (`keyFor`, or the
   * primary), thread by thread, each holding the thread so its writers wait;
   * seals rows stored before encryption was on (with `allowPlaintext`).
   * Threads already sealed under their key are skipped, so a run that stops
   * can be run again; a thread that does not open (a removed tenant key) is
   * reported `unreadable` and left. After a run with none unreadable, keys
   * no thread uses can leave the ring.
   */
  readonly reencrypt: () => Stream.Stream<ReencryptProgress, InvalidConfig | StorageFailure | FormatError>
  /**
   * For each channel, the writes on the parent chain back to the nearest
   * ancestor that stored a value for it, oldest first, and that value as the
   * seed (see `BaseCheckpointSaver.getDeltaChannelHistory`).
   */
  readonly getDeltaChannelHistory: (
    ref: CheckpointRef,
    channels: ReadonlyArray<string>
  ) => Effect.Effect<Record<string, DeltaChannelHistory>, ReadError>
  /**
   * The store's storage format level, read now, beside the highest this
   * process supports (see `FormatLevel.LEVELS` and Upgrading in the
   * README). `IncompatibleFormat` when the store is above it.
   */
  readonly formatLevel: () => Effect.Effect<FormatReport, StorageFailure | FormatError>
  /**
   * Raises the store's storage format level to `level` (default the highest
   * this process supports): from then on, every process writes the level's
   * encodings, and a release that does not read them refuses the store.
   *
   * **When to use**
   *
   * Once every process on the store runs a release that reads `level`: the
   * last step of a rolling deploy (`langgraph-checkpoints upgrade-format`
   * does the same from a shell). Until then, new releases write only what
   * the store's level allows, so older ones beside them, and a rollback to
   * them, read everything.
   *
   * **Details**
   *
   * Safe to repeat: a store at `level` or above is left as it is. It runs
   * the schema steps of the level (SQL), under the migrations' lock.
   *
   * **Gotchas**
   *
   * There is no way back: a rollback to a release that does not read
   * `level` is refused (`IncompatibleSchema` or `IncompatibleFormat`).
   */
  readonly upgradeFormat: (level?: number) => Effect.Effect<FormatReport, InvalidInput | StorageFailure | FormatError>
  /**
   * A thread's record (see `ThreadRecords`): its own metadata, when it was
   * created and last changed; `None` when the thread has neither
   * checkpoints nor a record. Every thread a graph wrote has one.
   *
   * **Gotchas**
   *
   * The first record operation on a service enables records in the store
   * (SQL: migration 1000, see `Migrations.enableThreadRecords`), which a
   * process of release 0.1.0 on the same database then refuses: call it
   * once no such process is left. A read-only storage reads records only
   * where a writer enabled them.
   *
   * @since 0.2.0
   */
  readonly getThread: (
    thread_id: string
  ) => Effect.Effect<Option.Option<ThreadRecord>, InvalidConfig | StorageFailure | FormatError>
  /**
   * Creates or changes a thread's record, atomically: `put` replaces its
   * metadata, `patch` merges into it at the top level; `updated_at` moves,
   * `created_at` stays. A thread without checkpoints gets a record (which
   * `deleteThread` removes); puts never change its metadata. Metadata is a
   * plain JSON object of at most 256 KiB, nested at most 32 deep, or
   * `InvalidInput`. Answers the record after.
   *
   * @since 0.2.0
   */
  readonly setThread: (
    thread_id: string,
    update: ThreadUpdate
  ) => Effect.Effect<ThreadRecord, InvalidConfig | InvalidInput | StorageFailure | FormatError>
  /**
   * Creates a thread's record with `metadata` (default `{}`, checked as
   * `setThread` checks it) only if the thread has neither checkpoints nor a
   * record, atomically: `None` when it has, and then nothing changed. Of
   * concurrent creators of one thread id, exactly one gets `Some`.
   *
   * @since 0.4.0
   */
  readonly createThread: (
    thread_id: string,
    metadata?: Record<string, unknown>
  ) => Effect.Effect<Option.Option<ThreadRecord>, InvalidConfig | InvalidInput | StorageFailure | FormatError>
  /**
   * The records whose metadata contains `query.metadata` (see
   * {@link ThreadQuery}), one page in a stable order, with the count of
   * every match.
   *
   * @since 0.2.0
   */
  readonly searchThreads: (
    query: ThreadQuery
  ) => Effect.Effect<ThreadPage, InvalidInput | StorageFailure | FormatError>
  /**
   * Sets what a thread's runs leave in its record: its status, and its
   * values when given (a JSON object of at most 16 MiB, nested at most 500
   * deep); `updated_at` moves. The record is made if the thread has none.
   *
   * @since 0.4.0
   */
  readonly setThreadState: (
    thread_id: string,
    state: ThreadState
  ) => Effect.Effect<void, InvalidConfig | InvalidInput | StorageFailure | FormatError>
  /**
   * Takes the thread's next writer epoch, atomically, and answers it: from
   * then on a `put` or `putWrites` whose config carries an older
   * `writer_epoch` writes nothing and fails with `ThreadConflict` (see
   * `ThreadRuns`). Pass the answer as `configurable.writer_epoch` with every
   * write of the new writer (a graph run's config carries it). With `run`
   * (of that thread), the claim is the run's: its record is stored as
   * `putRun` stores it, and the thread is `busy`, in the same atomic step.
   *
   * @since 0.4.0
   */
  readonly claimThread: (
    thread_id: string,
    run?: RunRecord
  ) => Effect.Effect<number, InvalidConfig | InvalidInput | StorageFailure | FormatError>
  /**
   * Stores a run's record (see {@link RunRecord}): a new one, or a change
   * of one (status, metadata, `updated_at`; `created_at` stays). With
   * `thread`, sets the thread's state as `setThreadState` does, in the same
   * atomic step.
   *
   * @since 0.4.0
   */
  readonly putRun: (
    run: RunRecord,
    thread?: ThreadState
  ) => Effect.Effect<void, InvalidConfig | InvalidInput | StorageFailure | FormatError>
  /**
   * A thread's run; `None` when the thread has no run of that id.
   *
   * @since 0.4.0
   */
  readonly getRun: (
    thread_id: string,
    run_id: string
  ) => Effect.Effect<Option.Option<RunRecord>, InvalidConfig | InvalidInput | StorageFailure | FormatError>
  /**
   * A page of a thread's runs, newest first (see {@link RunQuery}).
   *
   * @since 0.4.0
   */
  readonly listRuns: (
    thread_id: string,
    query?: RunQuery
  ) => Effect.Effect<ReadonlyArray<RunRecord>, InvalidConfig | InvalidInput | StorageFailure | FormatError>
  /**
   * Removes a run's record: whether there was one.
   *
   * @since 0.4.0
   */
  readonly deleteRun: (
    thread_id: string,
    run_id: string
  ) => Effect.Effect<boolean, InvalidConfig | InvalidInput | StorageFailure | FormatError>
  /**
   * Stores a cron's record (see {@link CronRecord}): a new one, or all of
   * one but its `created_at`. Its schedule and time zone must parse, and
   * its thread, when it names one, must have a record (`InvalidInput`).
   *
   * @since 0.4.0
   */
  readonly putCron: (cron: CronRecord) => Effect.Effect<void, InvalidInput | StorageFailure | FormatError>
  /**
   * A cron; `None` when there is none of that id.
   *
   * @since 0.4.0
   */
  readonly getCron: (
    cron_id: string
  ) => Effect.Effect<Option.Option<CronRecord>, InvalidInput | StorageFailure | FormatError>
  /**
   * A page of crons, oldest first, and how many match (see {@link CronQuery}).
   *
   * @since 0.4.0
   */
  readonly searchCrons: (
    query?: CronQuery
  ) => Effect.Effect<CronPage, InvalidConfig | InvalidInput | StorageFailure | FormatError>
  /**
   * Removes a cron's record: whether there was one.
   *
   * @since 0.4.0
   */
  readonly deleteCron: (cron_id: string) => Effect.Effect<boolean, InvalidInput | StorageFailure | FormatError>
  /**
   * Moves a cron's `next_run_date` from `from` to `to` (undefined: no next
   * tick), only if it is `from`: of two firings of one tick, one moves it.
   * Whether it did.
   *
   * @since 0.4.0
   */
  readonly advanceCron: (
    cron_id: string,
    from: Date,
    to: Date | undefined
  ) => Effect.Effect<boolean, InvalidInput | StorageFailure | FormatError>
}>()("langgraph-checkpoint-effect/CheckpointStorage") {}

/**
 * A store's storage format level, and the highest this process supports.
 *
 * @since 0.1.0
 */
export interface FormatReport extends FormatStatus {
  readonly supported: number
}

/**
 * Builds the service over a driver.
 *
 * **When to use**
 *
 * To run the service over a driver of your own, or a driver wrapped (to
 * count or fail its calls in a test, say); to get it as a layer, use
 * {@link layerDriver}.
 *
 * **Details**
 *
 * The codec is built here, from what the context holds at that moment: the
 * `Serializer` (default: LangGraph's JSON with safe revival),
 * `Sharing.Enabled` (default on) and, if provided, `Encryption`. The service
 * validates every argument with Schema, encodes values before the driver is
 * called, and decodes (and opens) rows after.
 *
 * **Gotchas**
 *
 * Each call builds a service with its own memory of what its threads stored
 * (the lists the next put extends, and up to 64 MiB of pieces a read need
 * not fetch again, each thread's forgotten a minute after its last use):
 * build it once per process and share it. Two services over one database
 * stay correct, each just remembers less.
 *
 * @since 0.1.0
 */
export const make = (
  driver: StorageDriver
): Effect.Effect<CheckpointStorage["Service"], InvalidConfig | StorageFailure | FormatError, Scope.Scope> =>
  service(driver)

/** The service over `driver`: its format level opened, its codec built, the operations composed. */
const service = Effect.fnUntraced(function*(driver: StorageDriver) {
  const format = yield* Guard.open(driver)
  const codec = yield* Codec.make(format)
  const deleteThread = Effect.fn("CheckpointStorage.deleteThread")(function*(thread_id: string) {
    const id = yield* decodeThreadId("deleteThread", thread_id)
    yield* Effect.annotateCurrentSpan({ thread_id: id })
    yield* driver.deleteThread(id)
  })
  const enableRecords = ThreadRecords.enabler(driver)
  return CheckpointStorage.of({
    ...Guard.guarded(driver, format, {
      ...writing(driver, codec, enableRecords),
      ...reading(driver, codec),
      deleteThread,
      ...ThreadLifecycle.make(driver, codec, format),
      ...ThreadRecords.make(driver, enableRecords),
      ...ThreadRuns.make(driver, enableRecords),
      ...ThreadCrons.make(driver, enableRecords)
    }),
    ...Guard.operations(driver, format)
  })
})

/** The arguments of `put` and `putWrites`, decoded at once (see `Input.decoder`). */
const checkpointOf = argumentDecoder(Checkpoint, "put", "checkpoint")
const metadataOf = argumentDecoder(CheckpointMetadata, "put", "metadata")
const versionsOf = argumentDecoder(ChannelVersions, "put", "newVersions")
const writesOf = argumentDecoder(PendingWrites, "putWrites", "writes")
const taskOf = argumentDecoder(TaskRef, "putWrites", "task")

/**
 * The service's writes: `put` and `putWrites`, validated, encoded and
 * stored; fenced by the writer's epoch when the config carries one (see
 * `ThreadRuns`), once `enableRecords` made the store hold epochs.
 */
const writing = (
  driver: StorageDriver,
  codec: Codec.Codec,
  enableRecords: Effect.Effect<void, IncompatibleSchema | StorageFailure>
) => {
  /** The writer's epoch in `ref`, if any, with the store made to hold epochs. */
  const fencing = (operation: string, ref: object) =>
    Effect.tap(writerEpochOf(operation, ref), (epoch) => epoch === undefined ? Effect.void : enableRecords)
  const conflict = (operation: string, thread_id: string, epoch: number | undefined) =>
    new ThreadConflict({ operation, thread_id, epoch: epoch ?? 0 })

  const put = Effect.fn("CheckpointStorage.put")(function*(
    ref: CheckpointRef,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions
  ) {
    const location = yield* decodeRef("put", ref)
    const epoch = yield* fencing("put", ref)
    const decoded = yield* checkpointOf(checkpoint)
    yield* metadataOf(metadata)
    const versions = yield* versionsOf(newVersions)
    yield* Effect.annotateCurrentSpan({ thread_id: location.thread_id, checkpoint_id: decoded.id })
    const encoded = yield* codec.encodeCheckpoint(location, decoded, metadata, versions)
    const { row } = encoded
    let layout = encoded.layout
    let outcome = yield* driver.put(row, layout.blobs, layout, epoch)
    // What a list extended was removed meanwhile (pruned, or written by a
    // process whose thread was since deleted): store every piece again.
    if (outcome === "base-missing") {
      layout = encoded.afresh()
      outcome = yield* driver.put(row, layout.blobs, layout, epoch)
    }
    if (outcome === "conflict") return yield* conflict("put", row.thread_id, epoch)
    if (outcome !== "stored") {
      return yield* new CheckpointNotFound({
        operation: "put",
        thread_id: row.thread_id,
        checkpoint_ns: row.checkpoint_ns,
        checkpoint_id: location.checkpoint_id ?? ""
      })
    }
    codec.remember(row, layout)
    return { thread_id: row.thread_id, checkpoint_ns: row.checkpoint_ns, checkpoint_id: row.checkpoint_id }
  })

  const putWrites = Effect.fn("CheckpointStorage.putWrites")(function*(
    ref: CheckpointIdRef,
    writes: ReadonlyArray<readonly [channel: string, value: unknown]>,
    task: TaskRef
  ) {
    const checkpoint = yield* decodeIdRef("putWrites", ref)
    const epoch = yield* fencing("putWrites", ref)
    const decodedWrites = yield* writesOf(writes)
    const { task_id, task_path } = yield* taskOf(task)
    yield* Effect.annotateCurrentSpan({ thread_id: checkpoint.thread_id, checkpoint_id: checkpoint.checkpoint_id })
    const { pieces, rows } = yield* codec.encodeWrites(checkpoint, decodedWrites, {
      task_id,
      task_path: task_path ?? ""
    })
    const outcome = yield* driver.putWrites(checkpoint, rows, pieces, epoch)
    if (outcome === "conflict") return yield* conflict("putWrites", checkpoint.thread_id, epoch)
  })

  return { put, putWrites }
}

const isNotHeld = (error: unknown): error is Codec.NotHeld => error instanceof Codec.NotHeld

/**
 * A read that names what this process holds (`known`), so that the server
 * leaves it out. Should some of it leave memory before the answer is
 * decoded (`NotHeld`, a `checkpoint.not_held` event on the span), the read
 * runs once more, naming `nothing`; any other failure, damage above all
 * (`CorruptedCheckpoint`), is the caller's after one read.
 */
const namingHeld = <K, A, E, R>(
  read: (known: K) => Effect.Effect<A, E | Codec.NotHeld, R>,
  known: K,
  empty: boolean,
  nothing: K
): Effect.Effect<A, E | CorruptedCheckpoint, R> => {
  const afresh = Effect.suspend(() => withoutNaming(read(nothing)))
  return empty ? afresh : read(known).pipe(
    Effect.catchIf(isNotHeld, (gone) =>
      Effect.all([Effect.currentSpan, Clock.currentTimeNanos]).pipe(
        Effect.tap(([span, now]) => Effect.sync(() => span.event("checkpoint.not_held", now, { detail: gone.detail }))),
        Effect.ignore,
        Effect.andThen(afresh)
      ))
  )
}

/** A read that named nothing: what it still finds missing, the driver left out unasked, which is damage to it. */
const withoutNaming = <A, E, R>(
  read: Effect.Effect<A, E | Codec.NotHeld, R>
): Effect.Effect<A, E | CorruptedCheckpoint, R> =>
  Effect.catchIf(read, isNotHeld, (gone) => Effect.fail(gone.corrupted))

/** The channels a delta history is asked for: names stored as keys. */
const Channels = Schema.Array(Name)

/** The service's reads: `getTuple`, `list` and `getDeltaChannelHistory`, fetched and decoded. */
const reading = (driver: StorageDriver, codec: Codec.Codec) => {
  /** A stored checkpoint decoded, with its parent's pending sends first read when it is older than format 4. */
  const decodeStored = Effect.fnUntraced(function*(
    stored: StoredCheckpoint,
    options: { readonly remember?: boolean; readonly recognize?: boolean; readonly named?: Uint8Array } = {}
  ) {
    const from = codec.sendsFrom(stored)
    const sends = from === undefined ? undefined : yield* driver.channelWrites(from, TASKS)
    return yield* codec.decodeTuple(stored, { remember: false, ...options, sends })
  })

  const getTuple = Effect.fn("CheckpointStorage.getTuple")(function*(ref: CheckpointRef) {
    const location = yield* decodeRef("getTuple", ref)
    yield* annotate(location)
    // Pieces this process has are not fetched again: a long thread's read
    // brings only what is new (see `namingHeld`).
    const read = (known: Uint8Array) =>
      driver.getTuple(location, known).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.succeedNone,
          // The latest checkpoint is what a graph's next step writes again, one item longer.
          onSome: (stored) =>
            Effect.asSome(
              decodeStored(stored, { remember: true, recognize: location.checkpoint_id === undefined, named: known })
            )
        }))
      )
    const known = codec.knownPieces(location)
    return yield* namingHeld(read, known, known.byteLength === 0, new Uint8Array())
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
      const filter = yield* codec.encodeFilter(decoded.filter ?? {})
      return driver.list({
        thread_id: decoded.thread_id,
        checkpoint_ns: decoded.checkpoint_ns,
        checkpoint_id: decoded.checkpoint_id || undefined,
        before: decoded.before || undefined,
        limit: decoded.limit,
        filter
      }).pipe(Stream.mapEffect((stored) => withoutNaming(decodeStored(stored))))
    })).pipe(Stream.withSpan("CheckpointStorage.list"))

  const getDeltaChannelHistory = Effect.fn("CheckpointStorage.getDeltaChannelHistory")(function*(
    ref: CheckpointRef,
    channels: ReadonlyArray<string>
  ) {
    const location = yield* decodeRef("getDeltaChannelHistory", ref)
    const wanted = yield* Schema.decodeEffect(Channels)(channels).pipe(
      Effect.mapError(invalidInput("getDeltaChannelHistory", "channels"))
    )
    yield* annotate(location)
    if (wanted.length === 0) return {}
    // What this process holds is not fetched again: a walk ends at the same
    // snapshot turn after turn, over nearly the same writes (see `namingHeld`).
    const walk = (known: Walks.Known) =>
      driver.ancestors(location, wanted, known).pipe(
        Effect.flatMap(({ chain, loopsAt }) =>
          loopsAt === undefined ? codec.deltaHistory(chain, wanted, known) : Effect.fail(
            new CorruptedCheckpoint({
              thread_id: location.thread_id,
              checkpoint_ns: location.checkpoint_ns,
              checkpoint_id: loopsAt,
              detail: `getDeltaChannelHistory: its parent chain loops (the parents of ${
                location.checkpoint_id ?? "the namespace's latest checkpoint"
              } lead back to it)`
            })
          )
        )
      )
    const known = codec.knownToWalk(location)
    return yield* namingHeld(walk, known, known.blobs.length === 0 && known.pieces.byteLength === 0, Walks.nothing)
  })

  return { getTuple, list, getDeltaChannelHistory }
}

const annotate = (location: Location) =>
  Effect.annotateCurrentSpan({
    thread_id: location.thread_id,
    checkpoint_ns: location.checkpoint_ns,
    ...(location.checkpoint_id === undefined ? {} : { checkpoint_id: location.checkpoint_id })
  })

/**
 * Builds the service layer over a driver.
 *
 * **When to use**
 *
 * To provide `CheckpointStorage` over a driver effect: a custom backend,
 * or one of the library's drivers built by hand (the SQL layers are this
 * over `SqlDriver`).
 *
 * **Details**
 *
 * The driver effect runs when the layer is built, in the layer's scope (a
 * driver holding a connection or a background fiber releases it when the
 * layer closes). The codec reads `Serializer`, `Sharing.Enabled` and
 * `Encryption` from what is provided to this layer (see {@link make}).
 *
 * **Gotchas**
 *
 * Provide `Encryption` (and a `Serializer` layer) to this layer, not to the
 * program using the storage: it is read once, when the layer is built, and
 * a storage built without it neither seals nor opens sealed rows.
 *
 * @since 0.1.0
 */
export const layerDriver = <E, R>(
  driver: Effect.Effect<StorageDriver, E, R>
): Layer.Layer<CheckpointStorage, E | InvalidConfig | StorageFailure | FormatError, Exclude<R, Scope.Scope>> =>
  Layer.effect(CheckpointStorage, Effect.flatMap(driver, make))

/**
 * An in-memory storage: the reference semantics, for tests and short-lived
 * processes.
 *
 * **When to use**
 *
 * In tests, examples and processes whose threads need not outlive them; it
 * behaves as the SQL backends do, errors and all (the same suites run on
 * each).
 *
 * **Details**
 *
 * Rows are kept as the SQL drivers store them (values encoded, sealed with
 * `Encryption`), so encoding costs and failures show here too; stored bytes
 * are copied in and out, never shared with callers.
 *
 * The layer provides the driver beneath the storage too, as the
 * `MemoryDriver` service: a program or a test can look at what is stored
 * (`threads`, keyed as the SQL tables are) beside what the storage reads.
 *
 * **Gotchas**
 *
 * Each build of the layer starts empty: two runtimes (or two tests) built
 * from it see two storages, and everything goes when its scope closes.
 *
 * @since 0.1.0
 */
export const layerMemory: Layer.Layer<CheckpointStorage | MemoryDriver.MemoryDriver, InvalidConfig> = Layer.effect(
  CheckpointStorage,
  MemoryDriver.MemoryDriver.use(({ driver }) => make(driver)).pipe(
    Effect.catchIf((error) => !(error instanceof InvalidConfig), Effect.die)
  )
).pipe(
  Layer.provideMerge(Layer.effect(
    MemoryDriver.MemoryDriver,
    // A new store, at the level this process writes: never above it, and always read.
    Effect.map(FormatLevel.supported, (formatLevel) => MemoryDriver.makeInspectable({ formatLevel }))
  ))
)

/**
 * Applies a retention policy on a schedule, in a background fiber that lives
 * with the layer.
 *
 * **When to use**
 *
 * To keep a long-running service's storage bounded: threads inactive for
 * `inactiveFor` deleted, each namespace trimmed to its `keepLast` newest
 * checkpoints (with what they need), without a cron job of your own.
 *
 * **Details**
 *
 * The first round runs when the layer is built, the next ones on `schedule`
 * (default: hourly). A failed round is logged (`checkpoint retention
 * failed`) and the next one runs as planned; threads whose parent links
 * loop are skipped and logged, the others done.
 *
 * **Gotchas**
 *
 * Every process including the layer runs its own rounds: safe (each thread
 * is held while it is trimmed) but repeated, so include it in one process
 * where that matters. On CockroachDB, thread expiry is better left to
 * `enableTtl`; combine it with `keepLast` here. A policy every round would
 * refuse (an `inactiveFor` that is not a finite duration more than 0, a
 * `keepLast` under 1) is an `InvalidConfig` when the layer is built.
 *
 * @since 0.1.0
 */
export const layerRetention = (
  policy: RetentionPolicy,
  schedule: Schedule.Schedule<unknown> = Schedule.spaced("1 hour")
): Layer.Layer<never, InvalidConfig, CheckpointStorage> =>
  Layer.effectDiscard(
    Schema.decodeUnknownEffect(Settings.RetentionSettings)(policy, { reportInput: true }).pipe(
      Effect.mapError((error) => new InvalidConfig({ operation: "layerRetention", detail: formatIssue(error.issue) })),
      Effect.andThen(CheckpointStorage.use((storage) =>
        storage.applyRetention(policy).pipe(
          Effect.tap((report) =>
            report.skipped.length === 0
              ? Effect.logDebug("checkpoint retention", report)
              : Effect.logWarning("checkpoint retention left threads whose parent links loop", report)
          ),
          Effect.catchCause((cause) => Effect.logWarning("checkpoint retention failed", cause)),
          Effect.repeat(schedule),
          Effect.forkScoped,
          Effect.asVoid
        )
      ))
    )
  )
