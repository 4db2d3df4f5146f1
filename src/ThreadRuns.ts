/**
 * What a thread's writers and runs leave in the store, beside its
 * checkpoints: the writer epoch that keeps two writers from interleaving
 * their super-steps in one history, and the records of its runs, as
 * LangGraph's run API shows them. The service's `claimThread`, `putRun`,
 * `getRun`, `listRuns` and `deleteRun`, over the driver's (see
 * `StorageDriver.claimThread`, `putRunRecord`).
 *
 * **One writer per thread.** `claimThread` takes the thread's next epoch
 * (for a run, with its record and the thread `busy`, in one step); a
 * writer then passes it with every write as `configurable.writer_epoch` (a
 * graph run's config carries it to its puts, its subgraphs' too). From a
 * newer claim on, a `put` or `putWrites` of an older epoch writes nothing
 * and fails with `ThreadConflict`, in the same atomic step as the write
 * would have been: the newer writer's history is never interleaved with the
 * older's. Writes without an epoch are not fenced; LangGraph's own forks
 * (`updateState` on an older checkpoint, time travel) are writes like any
 * other and work as before.
 *
 * Run records go with their thread: `deleteThread` (and a prune that
 * deletes it) removes them. A run's record and its thread's state are
 * stored in one step when given together (`putRun(run, thread)`): a reader
 * never sees a run ended on a thread still busy with it. Their metadata is stored data, read back by
 * `JSON.parse` alone.
 *
 * Both are held once thread records are enabled (SQL: migrations 1000 and
 * 1001), which their first call does, as `getThread`'s does.
 *
 * @since 0.4.0
 */
import { Effect, Option, Schema } from "effect"
import { InvalidInput } from "./CheckpointError.ts"
import { decodeThreadId, encodeJsonObject, invalidInput, nameOf, readJsonObject } from "./internal/Input.ts"
import type { RunRecordRow, StorageDriver } from "./StorageDriver.ts"
import { stateOf, type ThreadState } from "./ThreadRecords.ts"

/**
 * A run's status, as LangGraph's run API shows it.
 *
 * @since 0.4.0
 */
export type RunStatus = "pending" | "running" | "success" | "error" | "timeout" | "interrupted"

const RUN_STATUSES: ReadonlySet<string> = new Set<RunStatus>([
  "pending",
  "running",
  "success",
  "error",
  "timeout",
  "interrupted"
])

/**
 * A run's record: the thread it runs on, the assistant (graph) it runs, its
 * status, its metadata (a JSON object), its `multitask_strategy`, and when
 * it was created and last changed.
 *
 * @since 0.4.0
 */
export interface RunRecord {
  readonly thread_id: string
  readonly run_id: string
  readonly assistant_id: string
  readonly status: RunStatus
  readonly metadata: Record<string, unknown>
  readonly multitask_strategy: string
  readonly created_at: Date
  readonly updated_at: Date
}

/**
 * A page of a thread's runs: newest first, `limit` (0 to 1000, default 10)
 * after the first `offset` (default 0), of one `status` when given.
 *
 * @since 0.4.0
 */
export interface RunQuery {
  readonly limit?: number | undefined
  readonly offset?: number | undefined
  readonly status?: RunStatus | undefined
}

const Paging = Schema.Struct({
  limit: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 1000 }))),
  offset: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)))
})

const toRun = (row: RunRecordRow): RunRecord => ({
  ...row,
  // Stored data is untrusted: a status this release does not know reads as an error.
  status: RUN_STATUSES.has(row.status) ? row.status as RunStatus : "error",
  metadata: readJsonObject(row.metadata)
})

const runStatusOf = (operation: string, status: unknown) =>
  typeof status === "string" && RUN_STATUSES.has(status)
    ? Effect.succeed(status as RunStatus)
    : Effect.fail(
      new InvalidInput({
        operation,
        argument: "status",
        detail: `expected one of ${[...RUN_STATUSES].join(", ")}, got ${JSON.stringify(status) ?? typeof status}`
      })
    )

/**
 * The service's claims and run records over a driver, once `enable` made
 * the store hold them.
 *
 * @since 0.4.0
 */
export const make = <E>(driver: StorageDriver, enable: Effect.Effect<void, E>) => {
  /** A run's record as given, validated (`InvalidInput` naming what is wrong). */
  const rowOf = Effect.fnUntraced(function*(operation: string, run: RunRecord) {
    const given: Partial<RunRecord> = typeof run === "object" && run !== null ? run : {}
    return {
      thread_id: yield* decodeThreadId(operation, String(given.thread_id), "run.thread_id"),
      run_id: yield* nameOf(operation, "run.run_id", given.run_id),
      assistant_id: yield* nameOf(operation, "run.assistant_id", given.assistant_id),
      status: yield* runStatusOf(operation, given.status),
      metadata: yield* encodeJsonObject(operation, "run.metadata", given.metadata ?? {}),
      multitask_strategy: yield* nameOf(operation, "run.multitask_strategy", given.multitask_strategy),
      created_at: given.created_at instanceof Date ? given.created_at : new Date(),
      updated_at: given.updated_at instanceof Date ? given.updated_at : new Date()
    } satisfies RunRecordRow
  })

  const claimThread = Effect.fn("CheckpointStorage.claimThread")(function*(thread_id: string, run?: RunRecord) {
    const id = yield* decodeThreadId("claimThread", thread_id)
    const row = run === undefined ? undefined : yield* rowOf("claimThread", run)
    if (row !== undefined && row.thread_id !== id) {
      return yield* new InvalidInput({
        operation: "claimThread",
        argument: "run.thread_id",
        detail: "is not the thread claimed"
      })
    }
    yield* Effect.annotateCurrentSpan({ thread_id: id, ...(row === undefined ? {} : { run_id: row.run_id }) })
    yield* enable
    return yield* driver.claimThread(id, row)
  })

  const putRun = Effect.fn("CheckpointStorage.putRun")(function*(run: RunRecord, thread?: ThreadState) {
    const row = yield* rowOf("putRun", run)
    const state = thread === undefined ? undefined : yield* stateOf("putRun", thread, "thread.")
    yield* Effect.annotateCurrentSpan({ thread_id: row.thread_id, run_id: row.run_id, status: row.status })
    yield* enable
    yield* driver.putRunRecord(row, state)
  })

  const getRun = Effect.fn("CheckpointStorage.getRun")(function*(thread_id: string, run_id: string) {
    const id = yield* decodeThreadId("getRun", thread_id)
    const run = yield* nameOf("getRun", "run_id", run_id)
    yield* Effect.annotateCurrentSpan({ thread_id: id, run_id: run })
    yield* enable
    return Option.map(yield* driver.runRecord(id, run), toRun)
  })

  const listRuns = Effect.fn("CheckpointStorage.listRuns")(function*(thread_id: string, query: RunQuery = {}) {
    const id = yield* decodeThreadId("listRuns", thread_id)
    const given: RunQuery = typeof query === "object" && query !== null ? query : {}
    const paging = yield* Schema.decodeUnknownEffect(Paging)({ limit: given.limit, offset: given.offset }).pipe(
      Effect.mapError(invalidInput("listRuns", "query"))
    )
    const status = given.status === undefined ? undefined : yield* runStatusOf("listRuns", given.status)
    yield* Effect.annotateCurrentSpan({ thread_id: id })
    yield* enable
    const rows = yield* driver.runRecords(id, { limit: paging.limit ?? 10, offset: paging.offset ?? 0, status })
    return rows.map(toRun)
  })

  const deleteRun = Effect.fn("CheckpointStorage.deleteRun")(function*(thread_id: string, run_id: string) {
    const id = yield* decodeThreadId("deleteRun", thread_id)
    const run = yield* nameOf("deleteRun", "run_id", run_id)
    yield* Effect.annotateCurrentSpan({ thread_id: id, run_id: run })
    yield* enable
    return yield* driver.deleteRunRecord(id, run)
  })

  return { claimThread, putRun, getRun, listRuns, deleteRun }
}
