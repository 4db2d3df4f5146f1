/**
 * The operations the contract kit generates: abstract steps whose targets
 * are indices into what earlier steps created, so every generated (and every
 * shrunk) sequence is meaningful.
 *
 * @since 0.1.0
 */
import { ERROR, INTERRUPT, RESUME, SCHEDULED } from "@langchain/langgraph-checkpoint"
import { Arbitrary, Schema } from "effect"

/**
 * Names the operations draw from: unicode and astral characters, never NUL (keys are SQL text).
 *
 * @since 0.1.0
 */
export const names = {
  threads: ["thread-a", "thread é 😀", "t"],
  namespaces: ["", "child:1|node"],
  channels: ["messages", "count", "blob", "delta", "ch 😀"],
  writeChannels: ["messages", "count", "blob", "delta", "ch 😀", ERROR, INTERRUPT, SCHEDULED, RESUME],
  tasks: ["task-1", "task-2", "tâsk-3"],
  taskPaths: ["", "~0", "~1, node", "\u{1F600}"],
  metadataKeys: ["run_id", "tag", "user 😀"]
} as const

const below = (count: number) => Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: count - 1 }))

/** A short array: only the sequence itself grows with the run's size. */
const few = <S extends Schema.Constraint>(item: S, max: number) => Schema.Array(item).check(Schema.isMaxLength(max))

/** An index into what exists when the step runs (taken modulo its size), or the last one put. */
const Pick = Schema.Union([Schema.Literal("last"), below(64)])

/**
 * A channel value: JSON, bytes, strings with NUL and astral characters, a
 * large string, or a list: the first `length` elements of one fixed
 * sequence, without the one at `without` (lists of different lengths share
 * their prefixes, as a growing `messages` channel does); or a record of the
 * same elements under keys, as a `files` map a node returns whole grows.
 *
 * @since 0.1.0
 */
export const Value = Schema.Union([
  Schema.Json,
  Schema.Uint8Array,
  Schema.Literals(["NUL \u0000 inside", "astral \u{1F600}\u{10FFFF}", "", "\u0000"]),
  Schema.TaggedStruct("Large", { size: Schema.Int.check(Schema.isBetween({ minimum: 1_000, maximum: 100_000 })) }),
  Schema.TaggedStruct("List", {
    length: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 48 })),
    without: Schema.NullOr(below(48))
  }),
  Schema.TaggedStruct("Record", {
    length: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 48 })),
    without: Schema.NullOr(below(48))
  })
])

/**
 * A generated channel value (see the schema of the same name).
 *
 * @since 0.1.0
 */
export type Value = typeof Value.Type

const Primitive = Schema.Union([Schema.String, Schema.Int, Schema.Boolean])

/** A channel changed by a `put`: a new value, or `null` for no value any more. */
const Change = Schema.Struct({ channel: below(names.channels.length), value: Schema.NullOr(Value) })

const Write = Schema.Struct({ channel: below(names.writeChannels.length), value: Value })

const Writers = few(
  Schema.Struct({ task: below(names.tasks.length), path: below(names.taskPaths.length), writes: few(Write, 4) }),
  4
)

/** A checkpoint after the latest of its namespace, after an earlier one (a fork), or a new root. */
const Put = Schema.TaggedStruct("Put", {
  thread: below(names.threads.length),
  ns: below(names.namespaces.length),
  parent: Schema.Union([Schema.Literals(["latest", "none"]), Pick]),
  changes: few(Change, 4),
  metadata: few(Schema.Struct({ key: below(names.metadataKeys.length), value: Primitive }), 2)
})

/** Every operation but `put`. */
const Other = Schema.Union([
  /**
   * Writes of one task against an existing checkpoint, and maybe a second
   * batch from the same task (a retried task writing its error again).
   */
  Schema.TaggedStruct("PutWrites", {
    target: Pick,
    task: below(names.tasks.length),
    path: below(names.taskPaths.length),
    writes: few(Write, 4),
    again: Schema.NullOr(few(Write, 4))
  }),
  Schema.TaggedStruct("GetTuple", {
    thread: below(names.threads.length),
    ns: below(names.namespaces.length),
    target: Schema.Union([Schema.Literal("latest"), Pick])
  }),
  Schema.TaggedStruct("List", {
    thread: Schema.Union([Schema.Literal("any"), below(names.threads.length)]),
    ns: Schema.Union([Schema.Literal("any"), below(names.namespaces.length)]),
    before: Schema.NullOr(Pick),
    limit: Schema.NullOr(below(5)),
    filter: Schema.NullOr(Schema.Struct({ key: below(names.metadataKeys.length), value: Primitive }))
  }),
  Schema.TaggedStruct("DeleteThread", { thread: below(names.threads.length) }),
  Schema.TaggedStruct("DeltaHistory", { target: Pick, channels: few(below(names.channels.length), 5) }),
  /** Thread lifecycle, run when the saver has these methods (as EffectCheckpointSaver does). */
  Schema.TaggedStruct("CopyThread", {
    thread: below(names.threads.length),
    target: below(names.threads.length),
    replace: Schema.Boolean
  }),
  Schema.TaggedStruct("Prune", {
    thread: below(names.threads.length),
    strategy: Schema.Literals(["keep_latest", "delete"])
  }),
  /** The runs of picked checkpoints (their metadata `run_id`), and maybe one no checkpoint has. */
  Schema.TaggedStruct("DeleteForRuns", { of: few(Pick, 2), unknown: Schema.Boolean }),
  /** Several tasks' writes to one checkpoint, and sibling checkpoints of it, all at once. */
  Schema.TaggedStruct("Concurrent", {
    target: Pick,
    writers: Writers,
    siblings: few(few(Change, 3), 3)
  })
])

/**
 * One generated operation: a put, or a step over what earlier puts created.
 *
 * @since 0.1.0
 */
export const Operation = Schema.Union([Put, ...Other.members])

/**
 * One generated operation (see the schema of the same name).
 *
 * @since 0.1.0
 */
export type Operation = typeof Operation.Type

/** Steps of a `put` and another operation, each optional: about half the operations write checkpoints. */
const Step = Schema.Struct({ put: Schema.NullOr(Put), other: Schema.NullOr(Other) })

/**
 * Sequences of operations, shrinking towards short ones.
 *
 * @since 0.1.0
 */
export const operations: Arbitrary.Arbitrary<ReadonlyArray<Operation>> = Arbitrary.schema(Schema.Array(Step)).pipe(
  Arbitrary.map((steps) => steps.flatMap(({ other, put }) => [put, other].filter((op) => op !== null)))
)
