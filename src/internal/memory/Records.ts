/**
 * The memory driver's thread records: each thread's record lives in its
 * state (`ThreadState.record`, made by its first put), `updated_at` is its
 * last activity, and a search filters with {@link contains}, the `@>` of
 * `jsonb` the SQL driver's search uses, so both find the same records.
 *
 * @since 0.2.0
 */
import { Effect, Option } from "effect"
import type { ThreadRecordState, ThreadState } from "../../MemoryState.ts"
import type { RunRecordRow, StorageDriver, ThreadRecordQuery, ThreadRecordRow } from "../../StorageDriver.ts"
import { holdThread, newRecord, type Threads } from "./ThreadState.ts"
import type { Writing } from "./Writes.ts"

/**
 * The driver operations on thread records.
 *
 * @since 0.2.0
 */
export type Records = Pick<
  StorageDriver,
  | "threadRecord"
  | "setThreadRecord"
  | "createThreadRecord"
  | "searchThreadRecords"
  | "enableThreadRecords"
  | "claimThread"
  | "setThreadState"
  | "putRunRecord"
  | "runRecord"
  | "runRecords"
  | "deleteRunRecord"
>

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Whether JSON value `haystack` contains `needle`, as `jsonb`'s `@>` says
 * below the top level: an object contains an object whose every key it has
 * with a value containing the needle's; an array contains an array whose
 * every element some element of it contains; scalars contain equal scalars.
 * Nothing else contains anything (an array does not contain an object).
 * Both are values `JSON.parse` made (keys are own properties).
 *
 * @since 0.2.0
 */
export const contains = (haystack: unknown, needle: unknown): boolean => {
  if (Array.isArray(needle)) {
    return Array.isArray(haystack) && needle.every((wanted) => haystack.some((element) => contains(element, wanted)))
  }
  if (isObject(needle)) {
    return isObject(haystack) &&
      Object.keys(needle).every((key) => Object.hasOwn(haystack, key) && contains(haystack[key], needle[key]))
  }
  return !(typeof haystack === "object" && haystack !== null) && haystack === needle
}

/** The stored JSON text as a value, undefined when it is not JSON. */
const parsed = (json: string): unknown => {
  try {
    return JSON.parse(json)
  } catch {
    return undefined
  }
}

/** A thread's record as read (dates copied: they are the driver's own). */
const recordOf = (thread_id: string, thread: ThreadState | undefined): ThreadRecordRow | undefined => {
  const record = thread?.record
  if (record === undefined) return undefined
  return {
    thread_id,
    metadata: record.metadata,
    created_at: new Date(record.created_at),
    updated_at: new Date(thread?.lastActivity ?? record.created_at),
    status: record.status,
    values: record.values
  }
}

/** The thread's record, made (with no metadata) if it has none, changed by `change`; its activity now. */
const changeRecord = (
  threads: Threads,
  thread_id: string,
  change: (record: ThreadRecordState) => ThreadRecordState
) => {
  const thread = holdThread(threads, thread_id)
  const now = new Date()
  thread.record = change(thread.record ?? newRecord("{}", now))
  thread.lastActivity = now
  return thread.record
}

/** `runs` with `row` stored: a new run, or a change of one (its `created_at` stays). */
const withRun = (runs: ReadonlyMap<string, RunRecordRow>, row: RunRecordRow) => {
  const changed = new Map(runs)
  changed.set(row.run_id, { ...row, created_at: runs.get(row.run_id)?.created_at ?? row.created_at })
  return changed
}

/** Runs newest first, ties by id the same way. */
const newestFirst = (a: RunRecordRow, b: RunRecordRow) =>
  compare(b.created_at.getTime(), a.created_at.getTime()) || compare(b.run_id, a.run_id)

const sortKey = (record: ThreadRecordRow, by: ThreadRecordQuery["sort_by"]): number | string =>
  by === "thread_id" ? record.thread_id : record[by].getTime()

const compare = (a: number | string, b: number | string) => a < b ? -1 : a > b ? 1 : 0

/**
 * The record operations over a state; `writing` runs the changes after any
 * thread-wide operation holding the driver.
 *
 * @since 0.2.0
 */
export const records = (threads: Threads, writing: Writing): Records => ({
  threadRecord: (thread_id) => Effect.sync(() => Option.fromUndefinedOr(recordOf(thread_id, threads.get(thread_id)))),

  setThreadRecord: (thread_id, metadata, merge) =>
    writing(() => {
      const thread = holdThread(threads, thread_id)
      const now = new Date()
      const stored = thread.record === undefined ? undefined : parsed(thread.record.metadata)
      const given = parsed(metadata)
      thread.record = {
        ...(thread.record ?? newRecord(metadata, now)),
        metadata: merge && isObject(stored) && isObject(given) ? JSON.stringify({ ...stored, ...given }) : metadata
      }
      thread.lastActivity = now
      return recordOf(thread_id, thread)!
    }),

  createThreadRecord: (thread_id, metadata) =>
    writing(() => {
      if (threads.get(thread_id)?.record !== undefined) return Option.none()
      const thread = holdThread(threads, thread_id)
      const now = new Date()
      thread.record = newRecord(metadata, now)
      thread.lastActivity = now
      return Option.some(recordOf(thread_id, thread)!)
    }),

  searchThreadRecords: (query) =>
    Effect.sync(() => {
      const needle = query.metadata === undefined ? undefined : parsed(query.metadata)
      const direction = query.sort_order === "asc" ? 1 : -1
      const matches = Array.from(threads).flatMap(([thread_id, thread]) => {
        const record = recordOf(thread_id, thread)
        if (record === undefined) return []
        if (query.metadata !== undefined && !contains(parsed(record.metadata), needle)) return []
        if (query.status !== undefined && record.status !== query.status) return []
        if (query.ids !== undefined && !query.ids.includes(thread_id)) return []
        if (
          query.values !== undefined &&
          (record.values === undefined || !contains(parsed(record.values), parsed(query.values)))
        ) return []
        return [record]
      }).sort((a, b) =>
        direction * (compare(sortKey(a, query.sort_by), sortKey(b, query.sort_by)) ||
          compare(a.thread_id, b.thread_id))
      )
      return { records: matches.slice(query.offset, query.offset + query.limit), total: matches.length }
    }),

  enableThreadRecords: Effect.void,

  claimThread: (thread_id, row) =>
    writing(() =>
      changeRecord(threads, thread_id, (record) =>
        row === undefined
          ? { ...record, epoch: record.epoch + 1 }
          : { ...record, epoch: record.epoch + 1, status: "busy", runs: withRun(record.runs, row) }).epoch
    ),

  setThreadState: (thread_id, status, values) =>
    writing(() => {
      changeRecord(threads, thread_id, (record) => ({ ...record, status, values: values ?? record.values }))
    }),

  putRunRecord: (row, thread) =>
    writing(() => {
      changeRecord(threads, row.thread_id, (record) => {
        const runs = withRun(record.runs, row)
        return thread === undefined
          ? { ...record, runs }
          : { ...record, runs, status: thread.status, values: thread.values ?? record.values }
      })
    }),

  runRecord: (thread_id, run_id) =>
    Effect.sync(() => Option.fromUndefinedOr(threads.get(thread_id)?.record?.runs.get(run_id))),

  runRecords: (thread_id, query) =>
    Effect.sync(() =>
      [...(threads.get(thread_id)?.record?.runs.values() ?? [])]
        .filter((run) => query.status === undefined || run.status === query.status)
        .sort(newestFirst)
        .slice(query.offset, query.offset + query.limit)
    ),

  deleteRunRecord: (thread_id, run_id) =>
    writing(() => {
      const record = threads.get(thread_id)?.record
      if (record?.runs.has(run_id) !== true) return false
      const runs = new Map(record.runs)
      runs.delete(run_id)
      threads.get(thread_id)!.record = { ...record, runs }
      return true
    })
})
