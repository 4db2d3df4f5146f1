/**
 * Crons, as LangGraph's cron API shows them: a run started at each tick of
 * a schedule, on a thread, or (stateless) on a new thread each time. The
 * store keeps each cron's record and its next tick; what fires the ticks
 * is the server's (see `server/Crons`). The service's `putCron`,
 * `getCron`, `searchCrons`, `deleteCron` and `advanceCron`.
 *
 * A thread's crons go with it (`deleteThread`, and a prune that deletes
 * it). A cron's payload and metadata are stored data, read back by
 * `JSON.parse` alone.
 *
 * Held once thread records are enabled (SQL: migration 1002), which their
 * first call does.
 *
 * @since 0.4.0
 */
import { Cron, DateTime, Effect, Option, Result, Schema } from "effect"
import { InvalidInput } from "./CheckpointError.ts"
import {
  decodeThreadId,
  encodeJsonObject,
  invalidInput,
  JSON_VALUES_BOUNDS,
  nameOf,
  readJsonObject
} from "./internal/Input.ts"
import type { CronRecordRow, StorageDriver } from "./StorageDriver.ts"

/**
 * A cron's record: the run it starts at each tick of `schedule` (a cron
 * expression of 5 fields, or 6 with seconds first) in `timezone` (IANA;
 * default UTC) until `end_time`: with `payload` (the run's body, a JSON
 * object) of assistant `assistant_id`, on `thread_id`, or without one on a
 * new thread each tick, deleted after its run unless `on_run_completed` is
 * `keep`. `next_run_date` is its next tick (none once past its end).
 *
 * @since 0.4.0
 */
export interface CronRecord {
  readonly cron_id: string
  readonly thread_id?: string | undefined
  readonly assistant_id: string
  readonly schedule: string
  readonly timezone?: string | undefined
  readonly end_time?: Date | undefined
  readonly enabled: boolean
  readonly on_run_completed: "delete" | "keep"
  readonly payload: Record<string, unknown>
  readonly metadata: Record<string, unknown>
  readonly next_run_date?: Date | undefined
  readonly created_at: Date
  readonly updated_at: Date
}

/**
 * What `searchCrons` selects: crons whose metadata holds `metadata`, of a
 * thread, of an assistant, enabled or not; oldest first, `limit` (0 to 1000, default 10) after the first
 * `offset` (default 0).
 *
 * @since 0.4.0
 */
export interface CronQuery {
  /** An object the crons' metadata must contain (`jsonb`'s `@>`). */
  readonly metadata?: Record<string, unknown> | undefined
  readonly thread_id?: string | undefined
  readonly assistant_id?: string | undefined
  readonly enabled?: boolean | undefined
  readonly limit?: number | undefined
  readonly offset?: number | undefined
}

/**
 * A page of crons and how many match in all.
 *
 * @since 0.4.0
 */
export interface CronPage {
  readonly crons: ReadonlyArray<CronRecord>
  readonly total: number
}

const Paging = Schema.Struct({
  limit: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 1000 }))),
  offset: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)))
})

const toCron = (row: CronRecordRow): CronRecord => ({
  ...row,
  // Stored data is untrusted: anything but `keep` deletes, the default.
  on_run_completed: row.on_run_completed === "keep" ? "keep" : "delete",
  payload: readJsonObject(row.payload),
  metadata: readJsonObject(row.metadata)
})

const dateOf = (operation: string, argument: string, value: unknown) =>
  value === undefined
    ? Effect.succeed(undefined)
    : value instanceof Date && !Number.isNaN(value.getTime())
    ? Effect.succeed(value)
    : Effect.fail(new InvalidInput({ operation, argument, detail: "expected a valid Date" }))

/**
 * A schedule and time zone that parse, or `InvalidInput` saying why.
 *
 * @since 0.4.0
 */
export const scheduleOf = (operation: string, schedule: unknown, timezone: unknown) =>
  Effect.gen(function*() {
    const expression = yield* nameOf(operation, "cron.schedule", schedule)
    const zone = timezone === undefined ? undefined : yield* nameOf(operation, "cron.timezone", timezone)
    const named = zone === undefined ? undefined : DateTime.zoneMakeNamed(zone)
    if (named !== undefined && Option.isNone(named)) {
      return yield* new InvalidInput({ operation, argument: "cron.timezone", detail: "is not an IANA time zone" })
    }
    const parsed = Cron.parse(expression, Option.getOrUndefined(named ?? Option.none()))
    if (Result.isFailure(parsed)) {
      return yield* new InvalidInput({ operation, argument: "cron.schedule", detail: parsed.failure.message })
    }
    return { schedule: expression, timezone: zone, cron: parsed.success }
  })

/**
 * The service's cron records over a driver, once `enable` made the store
 * hold them.
 *
 * @since 0.4.0
 */
export const make = <E>(driver: StorageDriver, enable: Effect.Effect<void, E>) => {
  const putCron = Effect.fn("CheckpointStorage.putCron")(function*(cron: CronRecord) {
    const given: Partial<CronRecord> = typeof cron === "object" && cron !== null ? cron : {}
    const cron_id = yield* nameOf("putCron", "cron.cron_id", given.cron_id)
    const thread_id = given.thread_id === undefined
      ? undefined
      : yield* decodeThreadId("putCron", String(given.thread_id), "cron.thread_id")
    const { schedule, timezone } = yield* scheduleOf("putCron", given.schedule, given.timezone)
    if (typeof given.enabled !== "boolean") {
      return yield* new InvalidInput({ operation: "putCron", argument: "cron.enabled", detail: "expected a boolean" })
    }
    if (given.on_run_completed !== "delete" && given.on_run_completed !== "keep") {
      return yield* new InvalidInput({
        operation: "putCron",
        argument: "cron.on_run_completed",
        detail: "expected \"delete\" or \"keep\""
      })
    }
    const row: CronRecordRow = {
      cron_id,
      thread_id,
      assistant_id: yield* nameOf("putCron", "cron.assistant_id", given.assistant_id),
      schedule,
      timezone,
      end_time: yield* dateOf("putCron", "cron.end_time", given.end_time),
      enabled: given.enabled,
      on_run_completed: given.on_run_completed,
      payload: yield* encodeJsonObject("putCron", "cron.payload", given.payload, JSON_VALUES_BOUNDS),
      metadata: yield* encodeJsonObject("putCron", "cron.metadata", given.metadata ?? {}),
      next_run_date: yield* dateOf("putCron", "cron.next_run_date", given.next_run_date),
      created_at: given.created_at instanceof Date ? given.created_at : new Date(),
      updated_at: given.updated_at instanceof Date ? given.updated_at : new Date()
    }
    yield* Effect.annotateCurrentSpan({ cron_id, ...(thread_id === undefined ? {} : { thread_id }) })
    yield* enable
    if (!(yield* driver.putCronRecord(row))) {
      return yield* new InvalidInput({
        operation: "putCron",
        argument: "cron.thread_id",
        detail: "names no thread (create it first)"
      })
    }
  })

  const getCron = Effect.fn("CheckpointStorage.getCron")(function*(cron_id: string) {
    const id = yield* nameOf("getCron", "cron_id", cron_id)
    yield* Effect.annotateCurrentSpan({ cron_id: id })
    yield* enable
    return Option.map(yield* driver.cronRecord(id), toCron)
  })

  const searchCrons = Effect.fn("CheckpointStorage.searchCrons")(function*(query: CronQuery = {}) {
    const given: CronQuery = typeof query === "object" && query !== null ? query : {}
    const paging = yield* Schema.decodeUnknownEffect(Paging)({ limit: given.limit, offset: given.offset }).pipe(
      Effect.mapError(invalidInput("searchCrons", "query"))
    )
    const thread_id = given.thread_id === undefined
      ? undefined
      : yield* decodeThreadId("searchCrons", String(given.thread_id), "query.thread_id")
    const assistant_id = given.assistant_id === undefined
      ? undefined
      : yield* nameOf("searchCrons", "query.assistant_id", given.assistant_id)
    if (given.enabled !== undefined && typeof given.enabled !== "boolean") {
      return yield* new InvalidInput({
        operation: "searchCrons",
        argument: "query.enabled",
        detail: "expected a boolean"
      })
    }
    const metadata = given.metadata === undefined
      ? undefined
      : yield* encodeJsonObject("searchCrons", "query.metadata", given.metadata)
    yield* enable
    const page = yield* driver.cronRecords({
      metadata,
      thread_id,
      assistant_id,
      enabled: given.enabled,
      limit: paging.limit ?? 10,
      offset: paging.offset ?? 0
    })
    return { crons: page.crons.map(toCron), total: page.total } satisfies CronPage
  })

  const deleteCron = Effect.fn("CheckpointStorage.deleteCron")(function*(cron_id: string) {
    const id = yield* nameOf("deleteCron", "cron_id", cron_id)
    yield* Effect.annotateCurrentSpan({ cron_id: id })
    yield* enable
    return yield* driver.deleteCronRecord(id)
  })

  const advanceCron = Effect.fn("CheckpointStorage.advanceCron")(
    function*(cron_id: string, from: Date, to: Date | undefined) {
      const id = yield* nameOf("advanceCron", "cron_id", cron_id)
      const at = yield* dateOf("advanceCron", "from", from)
      const next = yield* dateOf("advanceCron", "to", to)
      if (at === undefined) {
        return yield* new InvalidInput({ operation: "advanceCron", argument: "from", detail: "expected a valid Date" })
      }
      yield* Effect.annotateCurrentSpan({ cron_id: id })
      yield* enable
      return yield* driver.advanceCronRecord(id, at, next)
    }
  )

  return { putCron, getCron, searchCrons, deleteCron, advanceCron }
}
