/**
 * Operations on whole threads: copy, export and import, prune, delete runs,
 * retention, re-encryption. Export is one consistent read of the thread's
 * rows; the others plan from the driver's index or rows of the thread (see
 * `Prune`) and run in one transaction that holds the thread, so its writers
 * wait. `make` composes three rooms: moving threads as rows (copy, export,
 * import), shrinking them by plans (prune, delete runs, retention), and
 * re-encrypting them.
 *
 * @since 0.1.0
 */
import { Clock, Effect, Result, Schema, Stream } from "effect"
import { CheckpointHeader } from "../../Checkpoint.ts"
import { InvalidConfig, InvalidInput, ThreadExists, ThreadNotFound } from "../../CheckpointError.ts"
import { encodingsOf, type FormatLevel, levelOf } from "../../FormatLevel.ts"
import type { ReencryptProgress, RetentionPolicy } from "../../Reports.ts"
import type { StorageDriver, ThreadRows } from "../../StorageDriver.ts"
import type { Codec } from "../codec/Codec.ts"
import { decodeThreadId, invalidInput } from "../Input.ts"
import * as Settings from "../Settings.ts"
import * as StorageFormat from "../StorageFormat.ts"
import * as ParentLinks from "./ParentLinks.ts"
import * as Prune from "./Prune.ts"
import * as Retention from "./Retention.ts"
import * as ThreadCheck from "./ThreadCheck.ts"
import { storageOf } from "./ThreadStorage.ts"

/**
 * The thread operations of the service, over a driver.
 *
 * @since 0.1.0
 */
export const make = (driver: StorageDriver, codec: Codec, format: Pick<FormatLevel, "level">) => ({
  ...moving(driver, codec, format),
  ...shrinking(driver, codec),
  reencrypt: reencrypting(driver, codec)
})

/** Fails with `ThreadNotFound` unless the thread has a checkpoint. */
const ensureThread = (driver: StorageDriver, operation: string, thread_id: string) =>
  Effect.flatMap(
    driver.threadExists(thread_id),
    (exists) => exists ? Effect.void : Effect.fail(new ThreadNotFound({ operation, thread_id }))
  )

/** Whole threads moved as rows: `copyThread`, `exportThread`, `importThread`. */
const moving = (driver: StorageDriver, codec: Codec, format: Pick<FormatLevel, "level">) => {
  /** Writes a whole thread, held by `exclusive`; an existing thread is refused unless `replace`. */
  const writeWhole = Effect.fnUntraced(function*(operation: string, rows: ThreadRows, replace: boolean | undefined) {
    if (replace !== true && (yield* driver.threadExists(rows.thread_id))) {
      return yield* new ThreadExists({ operation, thread_id: rows.thread_id })
    }
    yield* driver.writeThread(rows)
  })

  const copyThread = Effect.fn("CheckpointStorage.copyThread")(function*(
    source: string,
    target: string,
    options: { readonly replace?: boolean | undefined; readonly latest?: boolean | undefined } = {}
  ) {
    const from = yield* decodeThreadId("copyThread", source)
    const to = yield* decodeThreadId("copyThread", target)
    if (from === to) {
      return yield* new InvalidInput({
        operation: "copyThread",
        argument: "target",
        detail: `"${to}" is the source thread`
      })
    }
    yield* Effect.annotateCurrentSpan({ source: from, target: to })
    yield* driver.exclusive(
      to,
      Effect.gen(function*() {
        yield* ensureThread(driver, "copyThread", from)
        const all = yield* driver.threadRows(from)
        // A copy is what import would write, so it is refused where import refuses: links that loop would make
        // the copy's walks fail as the source's do, and one more thread that prune and retention cannot shrink.
        // A latest copy's plan finds a loop itself: the links are walked once.
        const latest = options.latest === true ? Prune.keepingLast(Prune.indexOf(all), 1) : undefined
        const loop = latest === undefined
          ? ParentLinks.findLoop(ParentLinks.byNamespace(all.checkpoints))
          : Result.isFailure(latest)
          ? latest.failure
          : undefined
        if (loop !== undefined) return yield* ParentLinks.loopError("copyThread", from, loop)
        const rows = latest !== undefined && Result.isSuccess(latest) ? Prune.rowsLeft(all, latest.success) : all
        yield* Effect.annotateCurrentSpan({ checkpoints: rows.checkpoints.length, of: all.checkpoints.length })
        const now = new Date(yield* Clock.currentTimeMillis)
        // Encrypted rows are bound to their thread: the copy is sealed anew for its own.
        const copy = yield* codec.reseal("copyThread", { ...rows, last_activity: now }, to)
        yield* writeWhole("copyThread", copy, options.replace)
      })
    )
  })

  /** A thread's rows, in one consistent read; a thread without checkpoints is `ThreadNotFound`. */
  const rowsOf = Effect.fnUntraced(function*(operation: string, thread_id: string) {
    const id = yield* decodeThreadId(operation, thread_id, "thread_id")
    yield* Effect.annotateCurrentSpan({ thread_id: id })
    const rows = yield* driver.threadRows(id)
    if (rows.checkpoints.length === 0) return yield* new ThreadNotFound({ operation, thread_id: id })
    yield* Effect.annotateCurrentSpan(sizes(rows))
    return rows
  })

  const exportThread = Effect.fn("CheckpointStorage.exportThread")((thread_id: string) =>
    rowsOf("exportThread", thread_id)
  )

  const importThread = Effect.fn("CheckpointStorage.importThread")(function*(
    rows: ThreadRows,
    options: { readonly replace?: boolean | undefined } = {}
  ) {
    const id = yield* decodeThreadId("importThread", rows.thread_id, "thread_id")
    yield* Effect.annotateCurrentSpan({ thread_id: id, ...sizes(rows) })
    const wrong = ThreadCheck.check(rows)
    if (wrong !== undefined) {
      return yield* new InvalidInput({ operation: "importThread", argument: "rows", detail: wrong.detail })
    }
    // Rows go in as they are: only in encodings every process of the store reads.
    const level = format.level()
    const above = [...encodingsOf(rows)]
      .map((encoding) => ({ encoding, level: levelOf(encoding) }))
      .find((found) => found.level === undefined || found.level > level)
    if (above !== undefined) {
      return yield* new InvalidInput({
        operation: "importThread",
        argument: "rows",
        detail: above.level === undefined
          ? `the rows hold ${above.encoding}, an encoding of a newer release: import them with it`
          : `the rows hold ${above.encoding}, of storage format level ${above.level}, and this database is at ` +
            `level ${level}: raise it first (upgrade-format), once every process reads level ${above.level}`
      })
    }
    yield* Effect.forEach(
      rows.checkpoints,
      (row) =>
        Schema.decodeUnknownEffect(CheckpointContent)({ ...row, checkpoint: StorageFormat.header(row) }).pipe(
          Effect.mapError(invalidInput("importThread", `checkpoint ${row.checkpoint_id}`))
        ),
      { discard: true }
    )
    yield* driver.exclusive(id, writeWhole("importThread", rows, options.replace))
  })

  const threadStorage = Effect.fn("CheckpointStorage.threadStorage")(function*(thread_id: string) {
    const report = storageOf(yield* rowsOf("threadStorage", thread_id))
    yield* Effect.annotateCurrentSpan({ total_bytes: report.total_bytes })
    return report
  })

  return { copyThread, exportThread, importThread, threadStorage }
}

/** The run ids `deleteForRuns` is given: any strings (metadata values, not keys). */
const RunIds = Schema.Array(Schema.String)

/** Threads shrunk by plans (see `Prune`): `prune`, `deleteForRuns`, `applyRetention`. */
const shrinking = (driver: StorageDriver, codec: Codec) => {
  /** Carries out a plan in a thread (held by `exclusive`); a loop in its parent links is `CorruptedCheckpoint`. */
  const carryOut = Effect.fnUntraced(function*(
    operation: string,
    thread_id: string,
    plan: Result.Result<Prune.Plan, ParentLinks.Loop>
  ) {
    if (Result.isFailure(plan)) return yield* ParentLinks.loopError(operation, thread_id, plan.failure)
    const { relinked, removed } = plan.success
    yield* driver.setParents(thread_id, relinked)
    if (removed.length > 0) yield* driver.remove(thread_id, removed)
    return removed.length
  })

  /** Keeps the newest `last` checkpoints of each namespace and what they need; answers how many went. */
  const keepNewest = (operation: string, thread_id: string, last: number) =>
    driver.exclusive(
      thread_id,
      Effect.flatMap(
        driver.threadIndex(thread_id),
        (index) => carryOut(operation, thread_id, Prune.keepingLast(index, last))
      )
    )

  const prune = Effect.fn("CheckpointStorage.prune")(function*(
    threads: ReadonlyArray<string>,
    options: { readonly strategy: "keep_latest" | "delete" }
  ) {
    const ids = yield* Effect.forEach(threads, (thread_id) => decodeThreadId("prune", thread_id))
    if (ids.length === 0) {
      return yield* new InvalidInput({ operation: "prune", argument: "threads", detail: "no thread given" })
    }
    if (options.strategy !== "keep_latest" && options.strategy !== "delete") {
      return yield* new InvalidInput({
        operation: "prune",
        argument: "strategy",
        detail: `unknown strategy "${String(options.strategy)}"`
      })
    }
    // Every thread must exist before any is changed.
    yield* Effect.forEach(ids, (thread_id) => ensureThread(driver, "prune", thread_id), { discard: true })
    yield* Effect.annotateCurrentSpan({ threads: ids.length, strategy: options.strategy })
    yield* Effect.forEach(ids, (thread_id) =>
      options.strategy === "delete"
        ? driver.deleteThread(thread_id)
        : keepNewest("prune", thread_id, 1), { discard: true })
  })

  const deleteForRuns = Effect.fn("CheckpointStorage.deleteForRuns")(function*(runIds: ReadonlyArray<string>) {
    const ids = yield* Schema.decodeUnknownEffect(RunIds)(runIds).pipe(
      Effect.mapError(invalidInput("deleteForRuns", "runIds"))
    )
    if (ids.length === 0) {
      return yield* new InvalidInput({ operation: "deleteForRuns", argument: "runIds", detail: "no run given" })
    }
    if (codec.plaintextMetadata?.has("run_id") === false) {
      return yield* new InvalidInput({
        operation: "deleteForRuns",
        argument: "runIds",
        detail: "run_id is encrypted metadata, so checkpoints cannot be found by it (add it to plaintextMetadata)"
      })
    }
    const wanted = new Set(ids)
    const threads = yield* driver.threadsOfRuns(ids)
    yield* Effect.annotateCurrentSpan({ runs: ids.length, threads: threads.length })
    yield* Effect.forEach(threads, (thread_id) =>
      driver.exclusive(
        thread_id,
        Effect.flatMap(
          driver.threadIndex(thread_id),
          (index) => carryOut("deleteForRuns", thread_id, Prune.deletingRuns(index, wanted))
        )
      ), { discard: true })
  })

  const applyRetention = Effect.fn("CheckpointStorage.applyRetention")(function*(given: RetentionPolicy) {
    // `NaN` or `{}` read as a zero `inactiveFor` would delete every thread.
    const policy = yield* Schema.decodeUnknownEffect(Settings.RetentionSettings)(given, { reportInput: true }).pipe(
      Effect.mapError(invalidInput("applyRetention", "policy"))
    )
    const { deleted, trimmed } = Retention.plan(policy, yield* Clock.currentTimeMillis, yield* driver.threads)
    yield* Effect.forEach(deleted, ({ thread_id }) => driver.deleteThread(thread_id), { discard: true })
    const threadsDeleted = deleted.length
    let checkpointsRemoved = 0
    const skipped: Array<{ readonly thread_id: string; readonly detail: string }> = []
    // A thread whose parent links loop is left as it is, and named: the others are still trimmed.
    const { keepLast } = policy
    if (keepLast !== undefined) {
      for (const { thread_id } of trimmed) {
        checkpointsRemoved += yield* keepNewest("applyRetention", thread_id, keepLast).pipe(
          Effect.catchTag("CorruptedCheckpoint", (error) => {
            skipped.push({ thread_id, detail: error.message })
            return Effect.succeed(0)
          })
        )
      }
    }
    yield* Effect.annotateCurrentSpan({ threadsDeleted, checkpointsRemoved, skipped: skipped.length })
    return { threadsDeleted, checkpointsRemoved, skipped }
  })

  return { prune, deleteForRuns, applyRetention }
}

/** `reencrypt`: every thread's rows rewritten under its current key, thread by thread. */
const reencrypting = (driver: StorageDriver, codec: Codec) => {
  /** Rewrites a thread's rows under its current key, unless they are already. */
  const reencryptThread = (thread_id: string) =>
    driver.exclusive(
      thread_id,
      Effect.gen(function*() {
        const rows = yield* driver.threadRows(thread_id)
        if (rows.checkpoints.length === 0 || codec.isCurrent(rows)) return { outcome: "current" } as const
        yield* driver.writeThread(yield* codec.reseal("reencrypt", rows, thread_id))
        return { outcome: "rewritten" } as const
      })
    ).pipe(
      Effect.catchTags({
        CorruptedCheckpoint: (error) => Effect.succeed({ outcome: "unreadable", detail: error.detail } as const),
        InvalidConfig: (error) => Effect.succeed({ outcome: "unreadable", detail: error.detail } as const)
      })
    )

  return () =>
    Stream.unwrap(Effect.gen(function*() {
      if (!codec.encrypted) {
        return yield* new InvalidConfig({ operation: "reencrypt", detail: "encryption is not configured" })
      }
      const threads = yield* driver.threads
      return Stream.fromIterable(threads).pipe(
        Stream.zipWithIndex,
        Stream.mapEffect(([{ thread_id }, index]) =>
          reencryptThread(thread_id).pipe(
            Effect.map((step): ReencryptProgress => ({ thread_id, ...step, done: index + 1, total: threads.length }))
          )
        )
      )
    })).pipe(Stream.withSpan("CheckpointStorage.reencrypt"))
}

/** What reading a checkpoint row decodes: its header, and its metadata's JSON text. */
const CheckpointContent = Schema.Struct({
  checkpoint: CheckpointHeader,
  metadata: Schema.fromJsonString(Schema.Record(Schema.String, Schema.Unknown))
})

const sizes = (rows: ThreadRows) => ({
  checkpoints: rows.checkpoints.length,
  blobs: rows.blobs.length,
  writes: rows.writes.length,
  pieces: rows.pieces.length
})
