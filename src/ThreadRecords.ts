/**
 * Thread records, as LangGraph's thread API shows them: a thread's own
 * metadata (a JSON object apart from any checkpoint's), when it was created
 * and when it last changed, found by metadata containment and paged. The
 * service's `getThread`, `setThread` and `searchThreads`, over the driver's
 * records (see `StorageDriver.threadRecord`).
 *
 * A store holds records once they are enabled (SQL: migration 1000, which
 * the normal migration does not run, see `Migrations.enableThreadRecords`):
 * the first of these calls on a service enables them, once. Every thread a
 * graph wrote has one, with no metadata until set; `deleteThread` removes it
 * with the thread.
 *
 * Metadata going in is checked (a plain JSON object, bounded by
 * `JSON_OBJECT_BOUNDS`); coming out it is untrusted stored data, parsed by
 * `JSON.parse` alone, and a record whose metadata is not an object reads as
 * `{}` rather than failing the thread.
 *
 * @since 0.2.0
 */
import { Effect, Option, Schema, Semaphore } from "effect"
import { type IncompatibleSchema, InvalidInput, type StorageFailure } from "./CheckpointError.ts"
import { decodeThreadId, encodeJsonObject, invalidInput, JSON_VALUES_BOUNDS, readJsonObject } from "./internal/Input.ts"
import type { StorageDriver, ThreadRecordQuery, ThreadRecordRow } from "./StorageDriver.ts"

/**
 * A thread's record: its metadata, when it was created (its first put, or
 * its record set before any), when it last changed (a put, or its record set).
 *
 * @since 0.2.0
 */
export interface ThreadRecord {
  readonly thread_id: string
  readonly metadata: Record<string, unknown>
  readonly created_at: Date
  readonly updated_at: Date
  /** Its status, as its runs left it (see {@link ThreadState}): `idle` until set. */
  readonly status: ThreadStatus
  /** Its values, as last set (see {@link ThreadState}); undefined until then. */
  readonly values: Record<string, unknown> | undefined
}

/**
 * A thread's status, as LangGraph's thread API shows it: `busy` while a run
 * goes on, `interrupted` when one paused at an `interrupt()`, `error` when
 * the last one failed, else `idle`.
 *
 * @since 0.4.0
 */
export type ThreadStatus = "idle" | "busy" | "interrupted" | "error"

const STATUSES: ReadonlySet<string> = new Set<ThreadStatus>(["idle", "busy", "interrupted", "error"])

/**
 * What a thread's runs leave in its record: its status, and (when given)
 * its values, a JSON object (the state's values as LangGraph's API shows
 * them), which `searchThreads` can match by containment.
 *
 * @since 0.4.0
 */
export interface ThreadState {
  readonly status: ThreadStatus
  readonly values?: Record<string, unknown> | undefined
}

/**
 * A change to a thread's record: `put` replaces its metadata with
 * `metadata`, `patch` merges `metadata` into it at the top level (a key
 * given replaces the stored one's value). Without `metadata`, `{}`.
 *
 * @since 0.2.0
 */
export interface ThreadUpdate {
  readonly kind: "put" | "patch"
  readonly metadata?: Record<string, unknown> | undefined
}

/**
 * What `searchThreads` selects: records whose metadata contains `metadata`
 * (`jsonb`'s `@>`: nested objects by their keys, arrays by their elements;
 * none or `{}` for all), sorted by `sort_by` (default `created_at`) in
 * `sort_order` (default `desc`, ties by `thread_id` the same way), `limit`
 * of them (0 to 1000, default 10) after the first `offset` (default 0).
 *
 * @since 0.2.0
 */
export interface ThreadQuery {
  readonly metadata?: Record<string, unknown> | undefined
  /** Records whose values contain these (as `metadata`). */
  readonly values?: Record<string, unknown> | undefined
  /** Records of this status only. */
  readonly status?: ThreadStatus | undefined
  /** Records of these threads only. */
  readonly ids?: ReadonlyArray<string> | undefined
  readonly limit?: number | undefined
  readonly offset?: number | undefined
  readonly sort_by?: ThreadRecordQuery["sort_by"] | undefined
  readonly sort_order?: ThreadRecordQuery["sort_order"] | undefined
}

/**
 * A page of records, and how many match in all.
 *
 * @since 0.2.0
 */
export interface ThreadPage {
  readonly threads: ReadonlyArray<ThreadRecord>
  readonly total: number
}

/** The paging and order of a query (its metadata is checked as a JSON object). */
const Paging = Schema.Struct({
  limit: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 1000 }))),
  offset: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  sort_by: Schema.optional(Schema.Literals(["created_at", "updated_at", "thread_id"])),
  sort_order: Schema.optional(Schema.Literals(["asc", "desc"]))
})

const toRecord = (row: ThreadRecordRow): ThreadRecord => ({
  thread_id: row.thread_id,
  metadata: readJsonObject(row.metadata),
  created_at: row.created_at,
  updated_at: row.updated_at,
  // Stored data is untrusted: a status this release does not know reads as idle.
  status: STATUSES.has(row.status) ? row.status as ThreadStatus : "idle",
  values: row.values === undefined ? undefined : readJsonObject(row.values)
})

/** A status a caller gives, checked. */
const statusOf = (operation: string, status: unknown, argument = "status") =>
  typeof status === "string" && STATUSES.has(status)
    ? Effect.succeed(status as ThreadStatus)
    : Effect.fail(
      new InvalidInput({
        operation,
        argument,
        detail: `expected one of ${[...STATUSES].join(", ")}, got ${JSON.stringify(status) ?? typeof status}`
      })
    )

/**
 * A thread's state as the driver stores it: its status checked, its values
 * JSON text (`prefix`: where the caller's argument holds them); run records
 * (`ThreadRuns`) carry one too.
 *
 * @internal
 */
export const stateOf = Effect.fnUntraced(function*(operation: string, state: unknown, prefix = "") {
  const given: Partial<ThreadState> = typeof state === "object" && state !== null ? state : {}
  const status = yield* statusOf(operation, given.status, `${prefix}status`)
  const values = given.values === undefined
    ? undefined
    : yield* encodeJsonObject(operation, `${prefix}values`, given.values, JSON_VALUES_BOUNDS)
  return { status, values }
})

/**
 * What makes the driver's store hold records (`enableThreadRecords`), run
 * once per service: calls wait for the first, and one that failed is tried
 * again by the next.
 *
 * @since 0.4.0
 */
export const enabler = (driver: StorageDriver): Effect.Effect<void, IncompatibleSchema | StorageFailure> => {
  const lock = Semaphore.makeUnsafe(1)
  let enabled = false
  return Effect.suspend(() =>
    enabled ?
      Effect.void :
      lock.withPermits(1)(Effect.suspend(() =>
        enabled ? Effect.void : Effect.tap(driver.enableThreadRecords, () =>
          Effect.sync(() => {
            enabled = true
          }))
      ))
  )
}

/**
 * The service's record operations over a driver (`enable`: see {@link enabler}).
 *
 * @since 0.2.0
 */
export const make = (driver: StorageDriver, enable: Effect.Effect<void, IncompatibleSchema | StorageFailure>) => {
  const getThread = Effect.fn("CheckpointStorage.getThread")(function*(thread_id: string) {
    const id = yield* decodeThreadId("getThread", thread_id)
    yield* Effect.annotateCurrentSpan({ thread_id: id })
    yield* enable
    return Option.map(yield* driver.threadRecord(id), toRecord)
  })

  const setThread = Effect.fn("CheckpointStorage.setThread")(function*(thread_id: string, update: ThreadUpdate) {
    const id = yield* decodeThreadId("setThread", thread_id)
    const kind: unknown = typeof update === "object" && update !== null ? update.kind : undefined
    if (kind !== "put" && kind !== "patch") {
      return yield* new InvalidInput({
        operation: "setThread",
        argument: "update",
        detail: `expected kind "put" or "patch", got ${typeof kind === "string" ? JSON.stringify(kind) : typeof kind}`
      })
    }
    const metadata = yield* encodeJsonObject(
      "setThread",
      "metadata",
      update.metadata === undefined ? {} : update.metadata
    )
    yield* Effect.annotateCurrentSpan({ thread_id: id, kind })
    yield* enable
    return toRecord(yield* driver.setThreadRecord(id, metadata, kind === "patch"))
  })

  const createThread = Effect.fn("CheckpointStorage.createThread")(
    function*(thread_id: string, metadata: Record<string, unknown> = {}) {
      const id = yield* decodeThreadId("createThread", thread_id)
      const json = yield* encodeJsonObject("createThread", "metadata", metadata)
      yield* Effect.annotateCurrentSpan({ thread_id: id })
      yield* enable
      return Option.map(yield* driver.createThreadRecord(id, json), toRecord)
    }
  )

  const searchThreads = Effect.fn("CheckpointStorage.searchThreads")(function*(query: ThreadQuery) {
    const given: ThreadQuery = typeof query === "object" && query !== null ? query : {}
    const paging = yield* Schema.decodeUnknownEffect(Paging)({
      limit: given.limit,
      offset: given.offset,
      sort_by: given.sort_by,
      sort_order: given.sort_order
    }).pipe(Effect.mapError(invalidInput("searchThreads", "query")))
    const metadata = given.metadata === undefined
      ? undefined
      : yield* encodeJsonObject("searchThreads", "metadata", given.metadata)
    const values = given.values === undefined
      ? undefined
      : yield* encodeJsonObject("searchThreads", "values", given.values)
    const status = given.status === undefined ? undefined : yield* statusOf("searchThreads", given.status)
    const ids = given.ids === undefined
      ? undefined
      : yield* Effect.forEach(given.ids, (id) => decodeThreadId("searchThreads", id, "ids"))
    const resolved: ThreadRecordQuery = {
      // An empty object is contained in every record's metadata: no filter to send.
      metadata: metadata === "{}" ? undefined : metadata,
      values,
      status,
      ids,
      limit: paging.limit ?? 10,
      offset: paging.offset ?? 0,
      sort_by: paging.sort_by ?? "created_at",
      sort_order: paging.sort_order ?? "desc"
    }
    yield* Effect.annotateCurrentSpan({
      limit: resolved.limit,
      offset: resolved.offset,
      sort_by: resolved.sort_by,
      sort_order: resolved.sort_order,
      filtered: resolved.metadata !== undefined
    })
    yield* enable
    const page = yield* driver.searchThreadRecords(resolved)
    return { threads: page.records.map(toRecord), total: page.total } satisfies ThreadPage
  })

  const setThreadState = Effect.fn("CheckpointStorage.setThreadState")(
    function*(thread_id: string, state: ThreadState) {
      const id = yield* decodeThreadId("setThreadState", thread_id)
      const { status, values } = yield* stateOf("setThreadState", state)
      yield* Effect.annotateCurrentSpan({ thread_id: id, status })
      yield* enable
      yield* driver.setThreadState(id, status, values)
    }
  )

  return {
    getThread,
    setThread,
    createThread,
    searchThreads,
    setThreadState
  }
}
