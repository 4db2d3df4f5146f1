/**
 * The checkpoint domain: Schema codecs for everything that crosses the
 * library's boundary (references, checkpoints, metadata, pending writes and
 * list options), shaped exactly like LangGraph's own types so that values pass
 * between the adapter and the service without translation.
 *
 * @since 0.1.0
 */
import type {
  Checkpoint as LangGraphCheckpoint,
  CheckpointMetadata as LangGraphMetadata,
  CheckpointPendingWrite,
  CheckpointTuple as LangGraphTuple,
  DeltaChannelHistory as LangGraphDeltaHistory,
  PendingWrite as LangGraphPendingWrite
} from "@langchain/langgraph-checkpoint"
import { Effect, Schema } from "effect"

const nulIssue = "must be well-formed Unicode without the NUL character (U+0000)"

/** Keys are SQL `text`: no NUL, and no unpaired surrogate (it would be stored as U+FFFD). */
const isKey = (key: string) => !key.includes("\u0000") && key.isWellFormed()

/**
 * A name stored as a key (a namespace, channel, node or task path). Keys are
 * SQL `text`, which cannot hold U+0000 or an unpaired surrogate; values and
 * metadata can.
 *
 * @since 0.1.0
 */
export const Name = Schema.String.check(Schema.makeFilter((key: string) => isKey(key) || nulIssue))

/** An identifier LangGraph writes as a key: a thread, a checkpoint or a task. */
const Id = Name.check(Schema.isNonEmpty())

/**
 * A record keyed by names. (A record whose key schema fails drops the entry;
 * here a NUL in a key is an error instead.)
 */
const NameRecord = <Value extends Schema.Constraint>(value: Value) =>
  Schema.Record(Schema.String, value).check(
    Schema.makeFilter((record: object) =>
      Object.keys(record).filter((key) => !isKey(key)).map((key) => ({ path: [key], issue: nulIssue }))
    )
  )

/**
 * A channel version: LangGraph uses integers by default, savers may use strings.
 *
 * @since 0.1.0
 */
export const ChannelVersion = Schema.Union([Schema.String, Schema.Finite])

/** @since 0.1.0 */
export const ChannelVersions = NameRecord(ChannelVersion)

/**
 * The version after `current`: the next integer plus a random fraction.
 *
 * Channel values are stored once per (thread, namespace, channel, version),
 * so two branches of a thread (a fork from an earlier checkpoint) must never
 * give different values the same version. Plain counters would: both
 * branches would write version 3. The random fraction keeps versions unique
 * across branches while staying numbers that grow with every step, as
 * LangGraph requires.
 *
 * @since 0.1.0
 */
export const nextVersion = (current: string | number | undefined): number => {
  const integer = typeof current === "string" ? Number.parseInt(current, 10) : current
  return Math.floor(Number.isFinite(integer) ? integer! : 0) + 1 + Math.random() / 2
}

/** @since 0.1.0 */
export type ChannelVersions = typeof ChannelVersions.Type

/** `checkpoint_ns`: absent means the root namespace `""`. */
const Namespace = Name.pipe(Schema.withDecodingDefault(Effect.succeed("")))

/**
 * `checkpoint_id` as LangGraph passes it: an empty string or `undefined` both
 * mean "none" (see `getCheckpointId` in `@langchain/langgraph-checkpoint`).
 * Stored as a key: no NUL.
 */
const OptionalCheckpointId = Schema.optional(Name)

/**
 * Where a checkpoint lives: the `configurable` part of a LangGraph
 * `RunnableConfig`. `checkpoint_ns` defaults to the root namespace `""`;
 * `checkpoint_id` (or its legacy alias `thread_ts`) selects one checkpoint,
 * and without it reads take the latest.
 *
 * Other keys (callbacks, user values) are ignored, so a `configurable` can be
 * passed as it is.
 *
 * @since 0.1.0
 */
export const CheckpointRef = Schema.Struct({
  thread_id: Id,
  checkpoint_ns: Namespace,
  checkpoint_id: OptionalCheckpointId,
  thread_ts: OptionalCheckpointId
})

/** @since 0.1.0 */
export type CheckpointRef = typeof CheckpointRef.Encoded

/**
 * A reference to one existing checkpoint: what `putWrites` attaches writes to.
 *
 * @since 0.1.0
 */
export const CheckpointIdRef = Schema.Struct({
  thread_id: Id,
  checkpoint_ns: Namespace,
  checkpoint_id: Id
})

/** @since 0.1.0 */
export type CheckpointIdRef = typeof CheckpointIdRef.Encoded

/**
 * A namespace of a thread: where a channel's values belong.
 *
 * @since 0.2.0
 */
export interface ThreadNamespace {
  readonly thread_id: string
  readonly checkpoint_ns: string
}

/**
 * A resolved location: thread, namespace and, when one was named, the
 * checkpoint. This is what drivers receive.
 *
 * @since 0.1.0
 */
export interface Location extends ThreadNamespace {
  readonly checkpoint_id: string | undefined
}

/**
 * Resolves a decoded reference, applying the legacy `thread_ts` alias.
 *
 * @since 0.1.0
 */
export const locate = (ref: typeof CheckpointRef.Type): Location => ({
  thread_id: ref.thread_id,
  checkpoint_ns: ref.checkpoint_ns,
  checkpoint_id: ref.checkpoint_id || ref.thread_ts || undefined
})

/**
 * The parts of a checkpoint other than its channel values. Stored as JSON by
 * every driver; channel values are stored apart, per channel and version.
 *
 * @since 0.1.0
 */
export const CheckpointHeader = Schema.Struct({
  v: Schema.Finite,
  id: Id,
  ts: Schema.String,
  channel_versions: ChannelVersions,
  versions_seen: NameRecord(ChannelVersions)
})

/** @since 0.1.0 */
export type CheckpointHeader = typeof CheckpointHeader.Type

/**
 * A checkpoint's header as stored: from storage format level 3 on, a store
 * with structural sharing leaves out its id, which is its row's (see
 * `StorageFormat.HEADER_WITHOUT_ID`).
 *
 * @since 0.3.0
 */
export type StoredHeader = Omit<CheckpointHeader, "id"> & { readonly id?: string | undefined }

/**
 * A LangGraph checkpoint (format version 4; older versions are read too).
 *
 * @since 0.1.0
 */
export const Checkpoint = Schema.Struct({
  ...CheckpointHeader.fields,
  channel_values: Schema.Record(Schema.String, Schema.Unknown)
})

/** @since 0.1.0 */
export type Checkpoint = LangGraphCheckpoint

/**
 * Checkpoint metadata. The keys LangGraph defines are checked; every other
 * key is kept exactly as given, because LangGraph adds keys in minor releases
 * and users add their own.
 *
 * @since 0.1.0
 */
export const CheckpointMetadata = Schema.StructWithRest(
  Schema.Struct({
    source: Schema.optional(Schema.String),
    step: Schema.optional(Schema.Finite),
    parents: Schema.optional(Schema.Record(Schema.String, Schema.String))
  }),
  [Schema.Record(Schema.String, Schema.Unknown)]
)

/** @since 0.1.0 */
export type CheckpointMetadata = LangGraphMetadata

const isPrimitive = (value: unknown): value is string | number | boolean =>
  typeof value === "string" || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value))

/**
 * What config keys `put` records in the metadata by default: the run id,
 * which `deleteForRuns` selects by (LangGraph's server passes it; LangGraph.js
 * copies `configurable.run_id` into `config.metadata`).
 *
 * @since 0.1.0
 */
export const defaultMetadataFromConfig: ReadonlyArray<string> = ["run_id"]

/**
 * The metadata a LangGraph `put` stores: exactly the checkpoint's own, as
 * LangGraph's savers store it, plus each of `keys` the call's config has —
 * looked up in `config.metadata`, then in `config.configurable` — when it is
 * a string, a finite number or a boolean. The checkpoint's own keys win.
 *
 * Nothing else is copied: LangGraph.js fills `config.metadata` itself
 * (`ls_integration`, `assistant_id`, `thread_id`, …), and the official
 * savers store none of it.
 *
 * @since 0.1.0
 */
export const metadataWithConfig = (
  config: { readonly metadata?: object | undefined; readonly configurable?: object | undefined },
  metadata: CheckpointMetadata,
  keys: ReadonlyArray<string> = defaultMetadataFromConfig
): CheckpointMetadata => {
  // Not an object: left for validation to reject.
  if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata)) return metadata
  let merged: Record<string, unknown> | undefined
  for (const key of keys) {
    if (Object.hasOwn(metadata, key)) continue
    const value = ownValue(config.metadata, key) ?? ownValue(config.configurable, key)
    if (!isPrimitive(value)) continue
    merged ??= { ...metadata }
    merged[key] = value
  }
  return (merged ?? metadata) as CheckpointMetadata
}

const ownValue = (source: object | undefined, key: string): unknown =>
  typeof source === "object" && source !== null && Object.hasOwn(source, key)
    ? (source as Record<string, unknown>)[key]
    : undefined

/**
 * A write a task made: `[channel, value]`.
 *
 * @since 0.1.0
 */
export const PendingWrite = Schema.Tuple([Name, Schema.Unknown])

/** @since 0.1.0 */
export type PendingWrite = LangGraphPendingWrite

/** @since 0.1.0 */
export const PendingWrites = Schema.Array(PendingWrite)

/**
 * A stored write as reads return it: `[task_id, channel, value]`.
 *
 * @since 0.1.0
 */
export type StoredWrite = CheckpointPendingWrite

/**
 * A `RunnableConfig` as tuples carry it: the location in `configurable`.
 *
 * @since 0.1.0
 */
export const TupleConfig = Schema.Struct({
  configurable: Schema.Struct({ thread_id: Id, checkpoint_ns: Schema.String, checkpoint_id: Id })
})

/**
 * A checkpoint with its metadata, parent and pending writes, as `getTuple`
 * and `list` return it (e.g. to validate another saver's output).
 *
 * @since 0.1.0
 */
export const CheckpointTuple = Schema.Struct({
  config: TupleConfig,
  checkpoint: Checkpoint,
  metadata: Schema.optional(CheckpointMetadata),
  parentConfig: Schema.optional(TupleConfig),
  pendingWrites: Schema.optional(Schema.Array(Schema.Tuple([Schema.String, Schema.String, Schema.Unknown])))
})

/** @since 0.1.0 */
export type CheckpointTuple = LangGraphTuple

/**
 * The writes and seed that rebuild a `DeltaChannel` (see
 * `BaseCheckpointSaver.getDeltaChannelHistory`).
 *
 * @since 0.1.0
 */
export type DeltaChannelHistory = LangGraphDeltaHistory

/**
 * What `list` selects. Every field is optional: without `thread_id` every
 * thread is listed, without `checkpoint_ns` every namespace.
 *
 * @since 0.1.0
 */
export const ListQuery = Schema.Struct({
  thread_id: Schema.optional(Id),
  /** Without it, every namespace. */
  checkpoint_ns: Schema.optional(Name),
  checkpoint_id: OptionalCheckpointId,
  /** Only checkpoints older than this checkpoint id. */
  before: OptionalCheckpointId,
  /** At most this many checkpoints. */
  limit: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  /** Only checkpoints whose metadata has these top-level keys with equal (JSON) values. */
  filter: Schema.optional(Schema.Record(Schema.String, Schema.Unknown))
})

/** @since 0.1.0 */
export type ListQuery = typeof ListQuery.Encoded

/**
 * The task that made a batch of writes, and its path (`writesSortKey`).
 *
 * @since 0.1.0
 */
export const TaskRef = Schema.Struct({
  task_id: Id,
  task_path: Schema.optional(Name)
})

/** @since 0.1.0 */
export type TaskRef = typeof TaskRef.Encoded

/**
 * The config LangGraph expects back from `put` and in tuples.
 *
 * @since 0.1.0
 */
export const configOf = (thread_id: string, checkpoint_ns: string, checkpoint_id: string) => ({
  configurable: { thread_id, checkpoint_ns, checkpoint_id }
})
