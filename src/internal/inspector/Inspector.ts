/**
 * The inspector: what is stored, seen from outside a graph — threads a page
 * at a time, a thread's history as a tree, a checkpoint made readable, the
 * difference between two checkpoints, what a lifecycle command would remove,
 * and the database's sizes. The `langgraph-checkpoints` command and its web
 * page are its faces; an Effect application can use it directly.
 *
 * It reads through the `CheckpointStorage` in context (so decoding, safe
 * revival and decryption are the storage's own) plus a few queries of its
 * own over the same tables (`Queries`), run by the SQL driver's statement
 * runner. Values the serializer cannot read become `Values.Unreadable`
 * (see `Values.lenient`).
 *
 * @since 0.1.0
 */
import type { CheckpointTuple } from "@langchain/langgraph-checkpoint"
import { Clock, Context, Duration, Effect, Layer, Option, Result, Schema, Stream } from "effect"
import { Name } from "../../Checkpoint.ts"
import { InvalidInput, type StorageFailure, ThreadNotFound } from "../../CheckpointError.ts"
import { CheckpointStorage, type ReadError } from "../../CheckpointStorage.ts"
import type { Dialect } from "../../SqlOptions.ts"
import { invalidInput } from "../Input.ts"
import * as ParentLinks from "../lifecycle/ParentLinks.ts"
import * as Prune from "../lifecycle/Prune.ts"
import * as Retention from "../lifecycle/Retention.ts"
import * as SqlDriver from "../sql/SqlDriver.ts"
import { type Statement, type Statements, statements } from "../sql/Statements.ts"
import type { Tables } from "../sql/Tables.ts"
import * as Namespaces from "./Namespaces.ts"
import { queries, type Stats, type ThreadCursor, type ThreadSummary, toStats } from "./Queries.ts"
import * as Steps from "./Steps.ts"
import * as Tree from "./Tree.ts"
import * as Values from "./Values.ts"

export type { Stats, ThreadCursor, ThreadSummary } from "./Queries.ts"

/**
 * A checkpoint in a thread's history.
 *
 * @since 0.1.0
 */
export interface HistoryEntry {
  readonly checkpoint_ns: string
  readonly checkpoint_id: string
  readonly parent_checkpoint_id: string | undefined
  readonly step: number | undefined
  readonly source: string | undefined
  /** When it was written (the checkpoint's `ts`). */
  readonly ts: string
  readonly next: ReadonlyArray<string>
  /** The values of the interrupts waiting on it. */
  readonly interrupts: ReadonlyArray<unknown>
  readonly changed: ReadonlyArray<string>
  /** The nodes that ran in the step that made it (`Steps.ran`). */
  readonly nodes: ReadonlyArray<string>
  /** One line of what they wrote (`Steps.preview`): untrusted text. */
  readonly preview: string
  /** Metadata `parents`: per enclosing namespace, its checkpoint that started this subgraph. */
  readonly parents: Readonly<Record<string, string>>
}

/**
 * A page of a thread's history, laid out: namespace by namespace (the root
 * first), each laid out over all its checkpoints (so pages line up), the
 * rows `offset` to `offset + limit` of them all in that order; a namespace
 * with none of them is left out.
 *
 * @since 0.1.0
 */
export interface HistoryPage {
  /** The thread's checkpoints in all (in the namespace asked for). */
  readonly total: number
  readonly namespaces: ReadonlyArray<{
    readonly name: string
    /** The parent namespace; null for the root. */
    readonly parent: string | null
    /** The parent namespace's checkpoint that started this subgraph (metadata `parents`), with its step. */
    readonly startedAt: { readonly checkpoint_id: string; readonly step: number | undefined } | null
    /** Its checkpoints in all. */
    readonly total: number
    readonly rows: ReadonlyArray<Tree.Row<HistoryEntry>>
  }>
}

/**
 * A checkpoint, with what the inspector reads out of it.
 *
 * @since 0.1.0
 */
export interface Shown {
  readonly tuple: CheckpointTuple
  readonly next: ReadonlyArray<string>
  readonly interrupts: ReadonlyArray<unknown>
}

/**
 * What a lifecycle command would remove from a thread.
 *
 * @since 0.1.0
 */
export interface Removal {
  readonly thread_id: string
  /** Checkpoints that would go. */
  readonly checkpoints: number
  /** The whole thread goes (else only some checkpoints). */
  readonly whole: boolean
}

/**
 * What retention would do: the removals, and the threads it would leave as
 * they are because their parent links loop (`detail` names the thread and
 * the loop, as `applyRetention`'s report does).
 *
 * @since 0.1.0
 */
export interface RetentionPlan {
  readonly removals: ReadonlyArray<Removal>
  readonly skipped: ReadonlyArray<{ readonly thread_id: string; readonly detail: string }>
}

/**
 * What reading a thread can fail with: a storage or decoding failure, or no
 * such thread.
 *
 * @since 0.1.0
 */
export type InspectError = ReadError | ThreadNotFound

/**
 * What is stored, seen from outside a graph: threads a page at a time, a
 * thread's history, a checkpoint made readable, the difference between two
 * checkpoints, what a lifecycle command would remove (nothing is changed
 * here), and the database's sizes. Read-only: the commands that change the
 * database do it through `CheckpointStorage`.
 *
 * @since 0.1.0
 */
export class Inspector extends Context.Service<Inspector, {
  /** This library's tables, or a database LangGraph's own savers wrote (read as it is). */
  readonly layout: Tables["layout"]
  /**
   * Threads, newest activity first, fetched a page at a time. A `prefix` or
   * cursor id the database cannot hold as text (a NUL, a lone surrogate) is
   * `InvalidInput`.
   */
  readonly threads: (
    query?: {
      readonly limit?: number | undefined
      readonly prefix?: string | undefined
      readonly after?: ThreadCursor | undefined
    }
  ) => Stream.Stream<ThreadSummary, StorageFailure | InvalidInput>
  /**
   * A page of a thread's history laid out as a tree: the layout reads ids
   * alone, and only the page's checkpoints are read whole.
   */
  readonly historyPage: (
    thread_id: string,
    options?: {
      readonly checkpoint_ns?: string | undefined
      readonly offset?: number | undefined
      readonly limit?: number | undefined
    }
  ) => Effect.Effect<HistoryPage, InspectError>
  /** A thread's checkpoints, newest first, every namespace or one. */
  readonly history: (
    thread_id: string,
    options?: { readonly checkpoint_ns?: string | undefined }
  ) => Stream.Stream<HistoryEntry, InspectError>
  /**
   * A checkpoint by its id, or a prefix or suffix of it (the latest of the
   * namespace without one).
   */
  readonly checkpoint: (
    thread_id: string,
    ref?: string | undefined,
    options?: { readonly checkpoint_ns?: string | undefined }
  ) => Effect.Effect<Shown, InspectError>
  /** Two checkpoints and, channel by channel, what changed from the first to the second. */
  readonly diff: (
    thread_id: string,
    a: string,
    b: string
  ) => Effect.Effect<
    { readonly a: Shown; readonly b: Shown; readonly channels: ReadonlyArray<Values.ChannelDiff> },
    InspectError
  >
  /** Each thread's checkpoints and the bytes its rows hold. */
  readonly sizes: (
    thread_ids: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyMap<string, { readonly checkpoints: number; readonly bytes: number }>, StorageFailure>
  /** What a lifecycle command would remove; nothing is changed. */
  readonly plan: {
    readonly delete: (thread_ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Removal>, InspectError>
    readonly keepLatest: (
      thread_ids: ReadonlyArray<string>,
      keep: number
    ) => Effect.Effect<ReadonlyArray<Removal>, InspectError>
    readonly deleteRuns: (run_ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Removal>, StorageFailure>
    readonly retention: (
      policy: { readonly inactiveFor?: Duration.Input | undefined; readonly keepLast?: number | undefined }
    ) => Effect.Effect<RetentionPlan, StorageFailure>
  }
  readonly stats: Effect.Effect<Stats, StorageFailure>
}>()("langgraph-checkpoint-effect/Inspector") {}

/** Threads fetched per query. */
const PAGE = 200

/** The statements the inspector runs, and how it runs them. */
interface Sql {
  readonly run: <Input, Row extends object, Output>(
    operation: string,
    statement: Statement<Input, Row, Output>,
    input: Input
  ) => Effect.Effect<Output, StorageFailure>
  readonly q: ReturnType<typeof queries>
  readonly index: Statements["threadIndex"]
}

type ThreadsQuery = Parameters<Inspector["Service"]["threads"]>[0]

/** Threads, newest activity first, a page of at most `PAGE` per query. */
const threadPages = ({ q, run }: Sql) => (query: ThreadsQuery = {}): Stream.Stream<ThreadSummary, StorageFailure> =>
  Stream.paginate(
    { after: query.after, left: query.limit ?? Number.POSITIVE_INFINITY },
    ({ after, left }) =>
      run("threads", q.threads, { limit: Math.min(PAGE, left), prefix: query.prefix ?? "", after }).pipe(
        Effect.map((page) => {
          const last = page.at(-1)
          const rest = left - page.length
          return [
            page,
            last === undefined || page.length < Math.min(PAGE, left) || rest <= 0
              ? Option.none()
              : Option.some({ after: last.cursor, left: rest })
          ] as const
        })
      )
  )

/**
 * A thread id, namespace, checkpoint reference or prefix as the database
 * holds text: well-formed, without NUL. Checked before a query, whose
 * server would otherwise fail it as a storage failure.
 */
const decodeName = (operation: string, argument: string, value: string) =>
  Schema.decodeEffect(Name)(value).pipe(Effect.mapError(invalidInput(operation, argument)))

/** The threads query's own text arguments, checked (see `decodeName`). */
const checkedThreads = (
  pages: ReturnType<typeof threadPages>
): Inspector["Service"]["threads"] =>
(query = {}) =>
  Stream.unwrap(
    Effect.all([
      query.prefix === undefined ? Effect.void : decodeName("threads", "prefix", query.prefix),
      query.after === undefined ? Effect.void : decodeName("threads", "after", query.after.thread_id)
    ]).pipe(Effect.as(pages(query)))
  )

/** A thread that has checkpoints, but none in the namespace asked for. */
const noNamespace = (operation: string, thread_id: string, checkpoint_ns: string) =>
  new InvalidInput({
    operation,
    argument: "checkpoint_ns",
    detail: `thread "${thread_id}" has checkpoints, but none in namespace "${checkpoint_ns}"`
  })

const shown = (tuple: CheckpointTuple): Shown => ({
  tuple,
  next: Values.nextNodes(tuple.checkpoint),
  interrupts: Values.interrupts(tuple)
})

/** Metadata `parents`, its string entries only (stored data is untrusted). */
const parentsOf = (value: unknown): Record<string, string> =>
  typeof value === "object" && value !== null
    ? Object.fromEntries(Object.entries(value).filter((pair): pair is [string, string] => typeof pair[1] === "string"))
    : {}

const historyEntry = (tuple: CheckpointTuple): HistoryEntry => {
  const metadata: Record<string, unknown> = tuple.metadata ?? {}
  const changed = Values.changedChannels(tuple.checkpoint)
  return {
    checkpoint_ns: tuple.config.configurable?.checkpoint_ns ?? "",
    checkpoint_id: tuple.checkpoint.id,
    parent_checkpoint_id: tuple.parentConfig?.configurable?.checkpoint_id,
    step: typeof metadata.step === "number" ? metadata.step : undefined,
    source: typeof metadata.source === "string" ? metadata.source : undefined,
    ts: tuple.checkpoint.ts,
    next: Values.nextNodes(tuple.checkpoint),
    interrupts: Values.interrupts(tuple).map((value) => Values.toPlain(value)),
    changed,
    nodes: Steps.ran(tuple.checkpoint),
    preview: Steps.preview(tuple.checkpoint, changed),
    parents: parentsOf(metadata.parents)
  }
}

const removals = (
  counts: ReadonlyMap<string, number>,
  whole: (thread_id: string) => boolean
): ReadonlyArray<Removal> =>
  [...counts].filter(([, checkpoints]) => checkpoints > 0).map(([thread_id, checkpoints]) => ({
    thread_id,
    checkpoints,
    whole: whole(thread_id)
  }))

/**
 * What the lifecycle commands would remove, planned as they plan it.
 * `existing` fails with `ThreadNotFound` for the first thread not stored.
 */
const planner = (
  { index, q, run }: Sql,
  existing: (operation: string, thread_ids: ReadonlyArray<string>) => Effect.Effect<void, InspectError>,
  sizes: Inspector["Service"]["sizes"],
  threads: ReturnType<typeof threadPages>
): Inspector["Service"]["plan"] => {
  /**
   * What `prune` and retention's `keepLast` remove, from the thread's index.
   * For a thread whose parent links loop, `loop` answers: `prune` fails,
   * retention leaves the thread, naming it among the skipped.
   */
  const keepNewest = <E = never>(
    thread_ids: ReadonlyArray<string>,
    keep: number,
    loop: (thread_id: string, loop: ParentLinks.Loop) => Effect.Effect<number, E>
  ) =>
    Effect.forEach(thread_ids, (thread_id) =>
      run("plan", index, { thread_id }).pipe(
        Effect.flatMap((entries) => {
          const planned = Prune.keepingLast(entries, keep)
          return Result.isSuccess(planned)
            ? Effect.succeed(planned.success.removed.length)
            : loop(thread_id, planned.failure)
        }),
        Effect.map((removed) => [thread_id, removed] as const)
      )).pipe(Effect.map((counts) => removals(new Map(counts), () => false)))

  const wholeThreads = (thread_ids: ReadonlyArray<string>) =>
    sizes(thread_ids).pipe(
      Effect.map((found) => removals(new Map([...found].map(([id, size]) => [id, size.checkpoints])), () => true))
    )

  return {
    delete: (thread_ids) => existing("delete", thread_ids).pipe(Effect.andThen(wholeThreads(thread_ids))),
    keepLatest: (thread_ids, keep) =>
      existing("prune", thread_ids).pipe(
        Effect.andThen(
          keepNewest(
            thread_ids,
            keep,
            (thread_id, loop) => Effect.fail(ParentLinks.loopError("prune", thread_id, loop))
          )
        )
      ),
    deleteRuns: (run_ids) =>
      run("plan", q.runCheckpoints, { run_ids }).pipe(
        Effect.map((rows) => rows.map((row) => ({ ...row, whole: false })))
      ),
    retention: (policy) =>
      Effect.gen(function*() {
        // Every thread, oldest activity last (a maintenance scan, a page at a time).
        const all = yield* Stream.runCollect(threads())
        const { deleted, trimmed } = Retention.plan(
          {
            inactiveFor: policy.inactiveFor === undefined ? undefined : Duration.fromInputUnsafe(policy.inactiveFor),
            keepLast: policy.keepLast
          },
          yield* Clock.currentTimeMillis,
          all
        )
        const skipped: Array<RetentionPlan["skipped"][number]> = []
        const trims = policy.keepLast === undefined ? [] : yield* keepNewest(
          trimmed.map((thread) => thread.thread_id),
          policy.keepLast,
          (thread_id, loop) =>
            Effect.sync(() => {
              skipped.push({ thread_id, detail: ParentLinks.loopError("retention", thread_id, loop).message })
              return 0
            })
        )
        return { removals: [...yield* wholeThreads(deleted.map((thread) => thread.thread_id)), ...trims], skipped }
      })
  }
}

/**
 * A page of a thread's history, each namespace laid out as a tree: the
 * index says which checkpoints the page holds, and they are read whole
 * (through the storage) a namespace at a time. `stored` checks the thread
 * and namespace first.
 */
const historyPager = <E>(
  storage: CheckpointStorage["Service"],
  { q, run }: Sql,
  stored: (operation: string, thread_id: string, checkpoint_ns: string | undefined) => Effect.Effect<void, E>
) =>
  Effect.fn("Inspector.historyPage")(function*(
    thread_id: string,
    options: {
      readonly checkpoint_ns?: string | undefined
      readonly offset?: number | undefined
      readonly limit?: number | undefined
    } = {}
  ) {
    yield* stored("history", thread_id, options.checkpoint_ns)
    const index = yield* run("history", q.historyIndex, { thread_id, checkpoint_ns: options.checkpoint_ns })
    let skip = options.offset ?? 0
    let left = options.limit ?? Number.POSITIVE_INFINITY
    const namespaces: Array<HistoryPage["namespaces"][number]> = []
    for (const { entries, name, parent } of Namespaces.groups(index)) {
      if (left <= 0) break
      if (skip >= entries.length) {
        skip -= entries.length
        continue
      }
      const laid = Tree.layout(entries, (entry) => entry.checkpoint_id, (entry) => entry.parent_checkpoint_id)
        .slice(skip, skip + left)
      // The page's checkpoints, read whole: those after the one before the page, as many as it shows.
      const read = yield* storage.list({
        thread_id,
        checkpoint_ns: name,
        ...(skip === 0 ? {} : { before: entries[skip - 1]!.checkpoint_id }),
        limit: laid.length
      }).pipe(Stream.map(historyEntry), Stream.runCollect)
      const byId = new Map(read.map((entry) => [entry.checkpoint_id, entry]))
      // A checkpoint removed since the index was read is left out.
      const rows = laid.flatMap((row) => {
        const entry = byId.get(row.entry.checkpoint_id)
        return entry === undefined ? [] : [{ ...row, entry }]
      })
      const started = parent === null ? undefined : read.find((entry) => entry.parents[parent] !== undefined)
      const startedId = parent === null ? undefined : started?.parents[parent]
      const startedAt = parent === null || startedId === undefined ? null : {
        checkpoint_id: startedId,
        step: yield* storage.getTuple({ thread_id, checkpoint_ns: parent, checkpoint_id: startedId }).pipe(
          Effect.map((tuple) => Option.isSome(tuple) ? historyEntry(tuple.value).step : undefined)
        )
      }
      namespaces.push({ name, parent, startedAt, total: entries.length, rows })
      skip = 0
      left -= laid.length
    }
    return { total: index.length, namespaces }
  })

/**
 * Builds the inspector over the `CheckpointStorage` and `SqlClient` in
 * context, reading `tables`.
 *
 * **When to use**
 *
 * Use in an Effect application that already provides the storage and a
 * `SqlClient`, to browse or plan over what is stored from code; `layer`
 * provides the same as a service. The command line and the web page build
 * theirs through `cli/Database`.
 *
 * **Details**
 *
 * Checkpoints are read through the storage (its decoding, safe revival and
 * decryption); the summaries, id lookups, sizes and plans are the
 * inspector's own read-only statements (`Queries`), run by the SQL driver's
 * runner (`SqlDriver.runner`), so they retry as the driver's do. `dialect`
 * decides only what `stats` can ask: CockroachDB does not say how big a
 * table is on disk.
 *
 * **Gotchas**
 *
 * `tables` must be the layout the database holds (`TableOwner.resolve`): a
 * database LangGraph's own savers wrote is read through views of its
 * tables. A value the serializer cannot load fails the read unless the
 * serializer in context is `Values.lenient`.
 *
 * @since 0.1.0
 */
export const make = Effect.fnUntraced(function*(tables: Tables, dialect: Dialect) {
  const storage = yield* CheckpointStorage
  const runSql = yield* SqlDriver.runner()
  const sql: Sql = {
    run: (operation, statement, input) => runSql(`Inspector.${operation}`, statement, input),
    q: queries(tables),
    index: statements(tables).threadIndex
  }
  const { q, run } = sql
  const pages = threadPages(sql)
  const threads = checkedThreads(pages)

  /** The thread's checkpoints whose id is, starts or ends with `ref` ("" : any). */
  const matching = (operation: string, thread_id: string, ref: string, checkpoint_ns: string | undefined) =>
    Effect.all([
      decodeName(operation, "thread_id", thread_id),
      decodeName(operation, "checkpoint", ref),
      checkpoint_ns === undefined ? Effect.void : decodeName(operation, "checkpoint_ns", checkpoint_ns)
    ]).pipe(
      Effect.andThen(run(operation, q.checkpointIds, { thread_id, ref, checkpoint_ns })),
      Effect.flatMap((rows) =>
        rows.length > 0 || ref !== "" ?
          Effect.succeed(rows) :
          Effect.fail(new ThreadNotFound({ operation, thread_id }))
      )
    )

  /** The thread has checkpoints, and (given one) in that namespace: else an error naming which is missing. */
  const stored = (operation: string, thread_id: string, checkpoint_ns: string | undefined) =>
    matching(operation, thread_id, "", undefined).pipe(
      Effect.andThen(
        checkpoint_ns === undefined ? Effect.void : matching(operation, thread_id, "", checkpoint_ns).pipe(
          Effect.catchTag("ThreadNotFound", () => Effect.fail(noNamespace(operation, thread_id, checkpoint_ns))),
          Effect.asVoid
        )
      )
    )

  /** A checkpoint, the command that asked naming the errors. */
  const checkpointFor = (operation: string) =>
    Effect.fn("Inspector.checkpoint")(function*(
      thread_id: string,
      ref?: string | undefined,
      options: { readonly checkpoint_ns?: string | undefined } = {}
    ) {
      yield* stored(operation, thread_id, options.checkpoint_ns)
      let at = { checkpoint_ns: options.checkpoint_ns ?? "", checkpoint_id: undefined as string | undefined }
      if (ref !== undefined) {
        const found = yield* matching(operation, thread_id, ref, options.checkpoint_ns)
        if (found.length !== 1) {
          const where = options.checkpoint_ns === undefined ? "" : ` in namespace "${options.checkpoint_ns}"`
          return yield* new InvalidInput({
            operation,
            argument: "checkpoint",
            detail: found.length === 0
              ? `no checkpoint of thread "${thread_id}"${where} is or starts or ends with "${ref}"`
              : `"${ref}" is ambiguous: ${found.map((row) => row.checkpoint_id).join(", ")}`
          })
        }
        at = found[0]!
      }
      const tuple = yield* storage.getTuple({ thread_id, ...at })
      if (Option.isNone(tuple)) return yield* noNamespace(operation, thread_id, at.checkpoint_ns)
      return shown(tuple.value)
    })

  const checkpoint = checkpointFor("show")
  const diffed = checkpointFor("diff")

  const history = (thread_id: string, options: { readonly checkpoint_ns?: string | undefined } = {}) =>
    Stream.unwrap(
      stored("history", thread_id, options.checkpoint_ns).pipe(
        Effect.as(
          storage.list({
            thread_id,
            ...(options.checkpoint_ns === undefined ? {} : { checkpoint_ns: options.checkpoint_ns })
          }).pipe(Stream.map(historyEntry))
        )
      )
    )

  const historyPage = historyPager(storage, sql, stored)

  const diff = Effect.fn("Inspector.diff")(function*(thread_id: string, a: string, b: string) {
    const [first, second] = yield* Effect.all([diffed(thread_id, a), diffed(thread_id, b)])
    return { a: first, b: second, channels: Values.diff(first.tuple.checkpoint, second.tuple.checkpoint) }
  })

  const sizes = (thread_ids: ReadonlyArray<string>) => run("sizes", q.threadSizes, { thread_ids })

  /** Every thread exists, or the first that does not is `ThreadNotFound`. */
  const existing = (operation: string, thread_ids: ReadonlyArray<string>) =>
    Effect.forEach(thread_ids, (thread_id) => matching(operation, thread_id, "", undefined), { discard: true })

  const stats = Effect.gen(function*() {
    const row = yield* run("stats", q.stats, undefined)
    // CockroachDB does not say how big a table is on disk.
    const onDisk = dialect === "cockroach" ? undefined : yield* run("stats", q.tableSizes, undefined)
    return toStats(row, onDisk)
  }).pipe(Effect.withSpan("Inspector.stats"))

  return Inspector.of({
    layout: tables.layout,
    threads,
    history,
    historyPage,
    checkpoint,
    diff,
    sizes,
    plan: planner(sql, existing, sizes, pages),
    stats
  })
})

/**
 * The inspector over the `CheckpointStorage` and `SqlClient` in context, as
 * a layer (see {@link make}).
 *
 * **When to use**
 *
 * Use to provide {@link Inspector} to an Effect program beside the storage
 * layer it reads through.
 *
 * **Gotchas**
 *
 * `tables` must be the tables the storage reads: resolve them once
 * (`TableOwner.resolve`) and give the same to the storage
 * (`SqlStorage.layerTables`) and here, as `cli/Database` does.
 *
 * @since 0.1.0
 */
export const layer = (tables: Tables, dialect: Dialect) => Layer.effect(Inspector, make(tables, dialect))
