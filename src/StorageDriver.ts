/**
 * The small interface a storage backend implements: rows and bytes only.
 *
 * `CheckpointStorage.make` turns a driver into the service users see, doing
 * all validation and tracing, and (through its codec, `codec/Codec`) all
 * serialization, sealing and decoding, in one place, so every driver
 * (memory, SQL) gets the same semantics and errors for free. The rows mirror
 * the three LangGraph tables: checkpoints, per-channel blobs keyed by
 * (thread, namespace, channel, version) and written once, and pending
 * writes; plus the pieces of shared lists (see `StorageFormat`).
 *
 * @since 0.1.0
 */
import type { Effect, Option, Stream } from "effect"
import type { Location, StoredHeader } from "./Checkpoint.ts"
import type { IncompatibleSchema, StorageFailure } from "./CheckpointError.ts"

/**
 * One checkpoint without its channel values.
 *
 * @since 0.1.0
 */
export interface CheckpointRow {
  readonly thread_id: string
  readonly checkpoint_ns: string
  readonly checkpoint_id: string
  readonly parent_checkpoint_id: string | undefined
  /**
   * Validated on the way in; decoded again on the way out, since storage
   * may hold anything. Its id may be left to the row (see `StoredHeader`).
   */
  readonly checkpoint: StoredHeader
  /** The serializer's JSON text of the metadata. */
  readonly metadata: string
}

/**
 * One channel's value at one version. `type: "empty"` (no bytes), as
 * LangGraph's own savers write it, records that the channel had no value at
 * that version; this library writes no row instead, which reads the same.
 *
 * @since 0.1.0
 */
export interface BlobRow {
  readonly channel: string
  readonly version: string
  readonly type: string
  readonly bytes: Uint8Array | undefined
  /** Of a shared list (see `Sharing`): the list it extends. */
  readonly base?: SharedBase | undefined
  /**
   * From `ancestors` only (optional for a driver): the MD5 of the stored
   * bytes, in hex; the bytes are left out when it is one the caller knows.
   */
  readonly digest?: string | undefined
}

/**
 * The base of a shared list: its first `keep` entries are those of the list
 * stored at `version` of the same channel, which may have a base of its own
 * (lists are at most three deep). Reads return that list's bytes as `list`
 * and its own base the same way.
 *
 * @since 0.1.0
 */
export interface SharedBase {
  readonly version: string
  readonly keep: number
  readonly list?: Uint8Array | undefined
  readonly base?: SharedBase | undefined
}

/**
 * A content-addressed piece of a thread: one element of a shared list,
 * stored once per thread whatever refers to it.
 *
 * @since 0.1.0
 */
export interface Piece {
  readonly hash: Uint8Array
  readonly bytes: Uint8Array
}

/**
 * What a `put` stores besides the checkpoint and its blobs: the pieces its
 * lists add, and the blobs (by channel and version, in the checkpoint's
 * namespace) that hold the pieces it refers to without sending them.
 *
 * @since 0.1.0
 */
export interface PutShared {
  readonly pieces: ReadonlyArray<Piece>
  readonly requires: ReadonlyArray<{ readonly channel: string; readonly version: string }>
  /**
   * The channel versions the put writes (LangGraph's `newVersions`), with a
   * value or not: one that has no blob among the put's has no value. What a
   * driver may know of a put beyond its rows (no driver needs it to store).
   */
  readonly written?: ReadonlyArray<readonly [channel: string, version: string]> | undefined
}

/**
 * What a caller of `ancestors` holds, whose bytes may be left out: blobs by
 * digest (see {@link BlobRow.digest}), pieces by hash (back to back).
 *
 * @since 0.1.0
 */
export interface KnownToWalk {
  readonly blobs: ReadonlyArray<string>
  readonly pieces: Uint8Array
}

/**
 * `stored`; `parent-missing` (nothing written): the parent checkpoint is
 * gone; `base-missing` (nothing written): a required blob is gone.
 *
 * @since 0.1.0
 */
export type PutOutcome = "stored" | "parent-missing" | "base-missing" | "conflict"

/**
 * One pending write of a task against a checkpoint. Special channels
 * (`WRITES_IDX_MAP`) have negative `idx` and replace an earlier write with the
 * same `(task_id, idx)`; ordinary writes are kept as first written.
 *
 * @since 0.1.0
 */
export interface WriteRow {
  readonly task_id: string
  readonly task_path: string
  readonly idx: number
  readonly channel: string
  readonly type: string
  readonly bytes: Uint8Array
}

/**
 * A checkpoint as stored, with the blobs of its channel versions and its
 * pending writes (in any order: the service sorts them).
 *
 * @since 0.1.0
 */
export interface StoredCheckpoint {
  readonly row: CheckpointRow
  readonly blobs: ReadonlyArray<BlobRow>
  readonly writes: ReadonlyArray<WriteRow>
  /**
   * The pieces its shared blobs and writes refer to, by `StorageFormat.pieceKey`
   * (possibly more: checkpoints read together may share one map).
   */
  readonly pieces: ReadonlyMap<string, Uint8Array>
}

/**
 * A checkpoint's ancestors as `ancestors` finds them.
 *
 * @since 0.1.0
 */
export interface Ancestors {
  /** Nearest first. */
  readonly chain: ReadonlyArray<StoredCheckpoint>
  /**
   * When the parent links loop: the id of a checkpoint on the loop, where
   * the walk stopped (the chain may then hold checkpoints twice).
   */
  readonly loopsAt: string | undefined
}

/**
 * What `list` selects, resolved: `undefined` means "any".
 *
 * @since 0.1.0
 */
export interface ListSelection {
  readonly thread_id: string | undefined
  readonly checkpoint_ns: string | undefined
  readonly checkpoint_id: string | undefined
  readonly before: string | undefined
  readonly limit: number | undefined
  /** Top-level metadata keys and the JSON values they must equal. */
  readonly filter: ReadonlyArray<readonly [key: string, json: string]>
}

/**
 * A storage backend: what `CheckpointStorage.make` needs to store and find
 * rows, and nothing about what they mean.
 *
 * **When to use**
 *
 * Implement it to put checkpoints somewhere new (another database, a key
 * value store); build the service over it with `CheckpointStorage.make` or
 * `layerDriver`. The library's drivers are `MemoryDriver` and `SqlDriver`
 * (PostgreSQL, PGlite, CockroachDB).
 *
 * **Details**
 *
 * Arguments arrive validated and encoded: a driver never serializes,
 * decodes or checks a value, and stores bytes as given (sealed or not).
 * What it must keep is stated per member: atomicity, the upsert rules of
 * blobs and writes, when pieces may go, and the thread hold of
 * `exclusive`. Errors are `StorageFailure` only; every other outcome is
 * data (`PutOutcome`, `Option`, `Ancestors.loopsAt`).
 *
 * **Gotchas**
 *
 * Stored data is untrusted on the way out: rows may have been edited, and
 * walks over parent links (`ancestors`) must end even when they loop. Run
 * the contract kit on a new driver (`runContractOnLayer` from
 * `langgraph-checkpoint-effect/testing`, over `layerDriver`) before using
 * it: the service cannot make up for a `put` that is not atomic.
 *
 * @since 0.1.0
 */
export interface StorageDriver {
  /**
   * Stores a checkpoint, the blobs of the channels it changed and the pieces
   * they add, atomically. Idempotent: the checkpoint row is replaced, blobs
   * and pieces already present are kept. Stores nothing when the row names a
   * parent, or `shared` a blob, that does not exist (any more), or when
   * `epoch` is older than the thread's writer epoch (see `claimThread`):
   * `"conflict"`, checked in the same atomic step.
   *
   * Pieces are removed only with the last blob or write referring to them,
   * and only by operations holding the thread (`exclusive`): a put holds the
   * thread before it checks what it requires, so nothing it relies on can
   * disappear before it commits.
   */
  readonly put: (
    row: CheckpointRow,
    blobs: ReadonlyArray<BlobRow>,
    shared: PutShared,
    epoch?: number | undefined
  ) => Effect.Effect<PutOutcome, StorageFailure>
  /**
   * Stores a task's writes against a checkpoint, and the pieces they refer
   * to, atomically, with the upsert rule of {@link WriteRow}. With an
   * `epoch` (see {@link claimThread}) older than the thread's, nothing is
   * stored: `"conflict"`. As `put`, in one atomic step with the check.
   */
  readonly putWrites: (
    checkpoint: Location & { readonly checkpoint_id: string },
    writes: ReadonlyArray<WriteRow>,
    pieces: ReadonlyArray<Piece>,
    epoch?: number | undefined
  ) => Effect.Effect<"stored" | "conflict", StorageFailure>
  /**
   * The named checkpoint, or the namespace's latest when `checkpoint_id` is
   * undefined. Pieces whose hashes are in `known` (back to back, as in a
   * list: the caller has them) may be left out of its `pieces`.
   */
  readonly getTuple: (
    location: Location,
    known: Uint8Array
  ) => Effect.Effect<Option.Option<StoredCheckpoint>, StorageFailure>
  /** Matching checkpoints, newest (greatest id) first. */
  readonly list: (selection: ListSelection) => Stream.Stream<StoredCheckpoint, StorageFailure>
  /** The pending writes on one checkpoint's channel (for migrating checkpoints older than format 4). */
  readonly channelWrites: (
    checkpoint: Location & { readonly checkpoint_id: string },
    channel: string
  ) => Effect.Effect<ReadonlyArray<WriteRow>, StorageFailure>
  /**
   * The ancestors of a checkpoint (the namespace's latest when unnamed),
   * nearest first, following parent ids. Each carries only the blobs and
   * writes of `channels`. The walk may stop at the first ancestor by which
   * every channel has met a non-empty blob, and ends at a parent that is
   * not stored. It always ends: parent links that loop (stored data is
   * not sealed) stop it where it comes back to a checkpoint it passed.
   * `known`: what the caller holds, whose bytes may be left out. A row
   * with no blob of `channels` may carry an empty header, and any row
   * empty metadata: the walk reads neither. An ancestor with neither a
   * blob nor a write of `channels` may be left out, but for the nearest
   * and one where the walk came back.
   */
  readonly ancestors: (
    location: Location,
    channels: ReadonlyArray<string>,
    known: KnownToWalk
  ) => Effect.Effect<Ancestors, StorageFailure>
  /** Removes every checkpoint, blob, piece and write of a thread, and its record, atomically. */
  readonly deleteThread: (thread_id: string) => Effect.Effect<void, StorageFailure>
  /** Whether the thread has any checkpoint. */
  readonly threadExists: (thread_id: string) => Effect.Effect<boolean, StorageFailure>
  /** Every checkpoint of a thread, without values: what pruning plans from. */
  readonly threadIndex: (thread_id: string) => Effect.Effect<ReadonlyArray<IndexEntry>, StorageFailure>
  /**
   * Removes the given checkpoints of a thread with their writes, the blobs
   * no remaining checkpoint references (directly or as a base) and the
   * pieces nothing remaining refers to, atomically.
   */
  readonly remove: (
    thread_id: string,
    checkpoints: ReadonlyArray<{ readonly checkpoint_ns: string; readonly checkpoint_id: string }>
  ) => Effect.Effect<void, StorageFailure>
  /** Points checkpoints at new parents (none when `parent_checkpoint_id` is undefined). */
  readonly setParents: (
    thread_id: string,
    checkpoints: ReadonlyArray<Pick<IndexEntry, "checkpoint_ns" | "checkpoint_id" | "parent_checkpoint_id">>
  ) => Effect.Effect<void, StorageFailure>
  /** Every thread with its last activity (the time of its latest put). */
  readonly threads: Effect.Effect<
    ReadonlyArray<{ readonly thread_id: string; readonly last_activity: Date }>,
    StorageFailure
  >
  /** The threads holding checkpoints whose metadata `run_id` is one of `run_ids`. */
  readonly threadsOfRuns: (run_ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>, StorageFailure>
  /** Every row of a thread, as one consistent read. */
  readonly threadRows: (thread_id: string) => Effect.Effect<ThreadRows, StorageFailure>
  /**
   * Replaces everything `rows.thread_id` holds with `rows`, atomically: a
   * copy, or a thread rewritten (re-encrypted) while held by `exclusive`.
   */
  readonly writeThread: (rows: ThreadRows) => Effect.Effect<void, StorageFailure>
  /**
   * The store's storage format level (see `FormatLevel.LEVELS`). Fails
   * with `IncompatibleSchema` when a newer release changed the store's
   * schema in a way this one does not know.
   */
  readonly formatStatus: Effect.Effect<FormatStatus, IncompatibleSchema | StorageFailure>
  /** Raises the store to format `level` (nothing when it is there already); answers its level afterwards. */
  readonly raiseFormat: (level: number) => Effect.Effect<FormatStatus, IncompatibleSchema | StorageFailure>
  /**
   * A thread's record (see {@link ThreadRecordRow}); `None` when the thread
   * has neither checkpoints nor a record.
   *
   * @since 0.2.0
   */
  readonly threadRecord: (thread_id: string) => Effect.Effect<Option.Option<ThreadRecordRow>, StorageFailure>
  /**
   * Creates or updates a record: `metadata` (JSON text of an object)
   * replaces the stored one, or is merged into it at the top level when
   * `merge` (into nothing when what is stored is not an object); touches
   * `updated_at`; keeps `created_at`. Answers the record after. Atomic; a
   * thread without checkpoints gets a record all the same.
   *
   * @since 0.2.0
   */
  readonly setThreadRecord: (
    thread_id: string,
    metadata: string,
    merge: boolean
  ) => Effect.Effect<ThreadRecordRow, StorageFailure>
  /**
   * Creates a record with `metadata` (JSON text of an object) only if the
   * thread has neither checkpoints nor a record, in one atomic step: `None`
   * when it has (nothing changed), so of concurrent creators of one thread
   * exactly one gets the record.
   *
   * @since 0.4.0
   */
  readonly createThreadRecord: (
    thread_id: string,
    metadata: string
  ) => Effect.Effect<Option.Option<ThreadRecordRow>, StorageFailure>
  /**
   * Records whose metadata contains `metadata` (JSONB `@>` semantics;
   * undefined = all), sorted, paged, with the total count of matches.
   *
   * @since 0.2.0
   */
  readonly searchThreadRecords: (
    query: ThreadRecordQuery
  ) => Effect.Effect<{ readonly records: ReadonlyArray<ThreadRecordRow>; readonly total: number }, StorageFailure>
  /**
   * Takes the thread's next writer epoch, atomically (the thread's record
   * made if it has none): from then on a `put` or `putWrites` made with an
   * older epoch is `"conflict"`. Answers the new epoch (1, 2, …). With
   * `run`, the claim is the run's: its record stored (as `putRunRecord`
   * does) and the thread `busy`, in the same atomic step.
   *
   * @since 0.4.0
   */
  readonly claimThread: (thread_id: string, run?: RunRecordRow) => Effect.Effect<number, StorageFailure>
  /**
   * Sets a thread's status (and its values, JSON text, when given; else
   * they stay) and touches its `updated_at`; the record is made if the
   * thread has none.
   *
   * @since 0.4.0
   */
  readonly setThreadState: (
    thread_id: string,
    status: string,
    values: string | undefined
  ) => Effect.Effect<void, StorageFailure>
  /**
   * Stores a run's record (a new one, or a change of an existing one: its
   * status, `updated_at` and metadata; `created_at` stays), the thread's
   * record made if it has none; with `thread`, sets the thread's state as
   * `setThreadState` does, atomically with the run's record.
   *
   * @since 0.4.0
   */
  readonly putRunRecord: (
    row: RunRecordRow,
    thread?: { readonly status: string; readonly values: string | undefined }
  ) => Effect.Effect<void, StorageFailure>
  /**
   * A thread's run by id; `None` when it has none of that id.
   *
   * @since 0.4.0
   */
  readonly runRecord: (thread_id: string, run_id: string) => Effect.Effect<Option.Option<RunRecordRow>, StorageFailure>
  /**
   * A thread's runs, newest first (ties by `run_id`, descending), those of
   * `status` only when given; a page of them.
   *
   * @since 0.4.0
   */
  readonly runRecords: (
    thread_id: string,
    query: { readonly limit: number; readonly offset: number; readonly status: string | undefined }
  ) => Effect.Effect<ReadonlyArray<RunRecordRow>, StorageFailure>
  /**
   * Removes a run's record: whether there was one.
   *
   * @since 0.4.0
   */
  readonly deleteRunRecord: (thread_id: string, run_id: string) => Effect.Effect<boolean, StorageFailure>
  /**
   * Stores a cron's record: a new one, or all of an existing one but its
   * `created_at`. Whether it was stored: not when it names a thread
   * without a record. A thread's crons go with it (`deleteThread`).
   *
   * @since 0.4.0
   */
  readonly putCronRecord: (row: CronRecordRow) => Effect.Effect<boolean, StorageFailure>
  /**
   * A cron by id; `None` when there is none of that id.
   *
   * @since 0.4.0
   */
  readonly cronRecord: (cron_id: string) => Effect.Effect<Option.Option<CronRecordRow>, StorageFailure>
  /**
   * The crons a query selects, oldest first (ties by `cron_id`): a page of
   * them and how many match in all.
   *
   * @since 0.4.0
   */
  readonly cronRecords: (
    query: CronRecordQuery
  ) => Effect.Effect<{ readonly crons: ReadonlyArray<CronRecordRow>; readonly total: number }, StorageFailure>
  /**
   * Removes a cron's record: whether there was one.
   *
   * @since 0.4.0
   */
  readonly deleteCronRecord: (cron_id: string) => Effect.Effect<boolean, StorageFailure>
  /**
   * Moves a cron's `next_run_date` from `from` to `to` (none: the cron
   * has no next tick), compare-and-set: whether it was `from`.
   *
   * @since 0.4.0
   */
  readonly advanceCronRecord: (
    cron_id: string,
    from: Date,
    to: Date | undefined
  ) => Effect.Effect<boolean, StorageFailure>
  /**
   * Makes the store hold thread records (SQL: applies migration 1000, see
   * `Migrations.enableThreadRecords`); idempotent. The other record members
   * need it first. Every thread with checkpoints has a record from then on:
   * `put` creates one (and never changes its metadata), `deleteThread`
   * removes it.
   *
   * @since 0.2.0
   */
  readonly enableThreadRecords: Effect.Effect<void, IncompatibleSchema | StorageFailure>
  /**
   * Runs `effect` while the thread's writers wait (SQL: one transaction
   * holding the thread's row lock), so what it reads stays true until it
   * writes.
   */
  readonly exclusive: <A, E, R>(
    thread_id: string,
    effect: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | StorageFailure, R>
}

/**
 * A store's storage format level, and for a raised one the release that
 * raised it and when.
 *
 * @since 0.1.0
 */
export interface FormatStatus {
  readonly level: number
  readonly raised?: { readonly release: string; readonly at: Date } | undefined
}

/**
 * A thread's record, as LangGraph's thread API shows it: metadata of its
 * own (apart from any checkpoint's), when it was created, when it last
 * changed (its last activity: a put, or its record set).
 *
 * @since 0.2.0
 */
export interface ThreadRecordRow {
  readonly thread_id: string
  /** JSON text, as stored (untrusted: not necessarily an object). */
  readonly metadata: string
  readonly created_at: Date
  readonly updated_at: Date
  /** Its status, as stored (see `setThreadState`): `idle` until set. */
  readonly status: string
  /** Its values (JSON text), as stored; undefined until set. */
  readonly values: string | undefined
}

/**
 * A run's record, as stored: the thread it ran on, the graph it ran
 * (`assistant_id`), its status and metadata (JSON text, untrusted), its
 * `multitask_strategy`, and when it was created and last changed.
 *
 * @since 0.4.0
 */
export interface RunRecordRow {
  readonly thread_id: string
  readonly run_id: string
  readonly assistant_id: string
  readonly status: string
  readonly metadata: string
  readonly multitask_strategy: string
  readonly created_at: Date
  readonly updated_at: Date
}

/**
 * A cron's record, as stored: the run it starts at each tick of its
 * `schedule` (`payload`, JSON text: the run's body), on its thread, or
 * (`thread_id` undefined) on a thread of its own each time.
 *
 * @since 0.4.0
 */
export interface CronRecordRow {
  readonly cron_id: string
  /** Its thread; undefined for a stateless cron. */
  readonly thread_id: string | undefined
  readonly assistant_id: string
  /** A cron expression (5 or 6 fields). */
  readonly schedule: string
  /** An IANA time zone; undefined for UTC. */
  readonly timezone: string | undefined
  /** No tick after it; undefined for none. */
  readonly end_time: Date | undefined
  readonly enabled: boolean
  /** `delete` or `keep` (a stateless cron's thread after its run). */
  readonly on_run_completed: string
  /** JSON text, as stored (untrusted). */
  readonly payload: string
  /** JSON text, as stored (untrusted). */
  readonly metadata: string
  /** Its next tick; undefined when it has none. */
  readonly next_run_date: Date | undefined
  readonly created_at: Date
  readonly updated_at: Date
}

/**
 * What `cronRecords` selects, resolved.
 *
 * @since 0.4.0
 */
export interface CronRecordQuery {
  /** JSON text of an object the crons' metadata must contain; undefined for every cron. */
  readonly metadata: string | undefined
  readonly thread_id: string | undefined
  readonly assistant_id: string | undefined
  readonly enabled: boolean | undefined
  readonly limit: number
  readonly offset: number
}

/**
 * What `searchThreadRecords` selects, resolved. Ties of the sort key are
 * broken by `thread_id` in the same direction, so pages are stable.
 *
 * @since 0.2.0
 */
export interface ThreadRecordQuery {
  /** JSON text of an object the records' metadata must contain; undefined for every record. */
  readonly metadata: string | undefined
  /** JSON text of an object the records' values must contain; undefined for any values. */
  readonly values: string | undefined
  /** The status records must have; undefined for any. */
  readonly status: string | undefined
  /** The threads to select among; undefined for all. */
  readonly ids: ReadonlyArray<string> | undefined
  readonly limit: number
  readonly offset: number
  readonly sort_by: "created_at" | "updated_at" | "thread_id"
  readonly sort_order: "asc" | "desc"
}

/**
 * A checkpoint's place in its thread, without its values.
 *
 * @since 0.1.0
 */
export interface IndexEntry {
  readonly checkpoint_ns: string
  readonly checkpoint_id: string
  readonly parent_checkpoint_id: string | undefined
  /** The channels of the checkpoint. */
  readonly channels: ReadonlyArray<string>
  /** Those whose value at the checkpoint's version is stored (not empty). */
  readonly stored: ReadonlyArray<string>
  /** The channels its pending writes write to. */
  readonly written: ReadonlyArray<string>
  /** The `run_id` of its metadata, if a string. */
  readonly run_id: string | undefined
}

/**
 * Every row of one thread, as stored: what copies and rewrites (re-encryption)
 * move. Blobs carry their base's version and `keep` only.
 *
 * @since 0.1.0
 */
export interface ThreadRows {
  readonly thread_id: string
  /** The time of its latest put (kept when a thread is rewritten). */
  readonly last_activity: Date
  readonly checkpoints: ReadonlyArray<CheckpointRow>
  readonly blobs: ReadonlyArray<BlobRow & { readonly checkpoint_ns: string }>
  readonly writes: ReadonlyArray<WriteRow & { readonly checkpoint_ns: string; readonly checkpoint_id: string }>
  readonly pieces: ReadonlyArray<Piece>
}
