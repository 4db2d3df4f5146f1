/**
 * The memory driver's cron records: one `Map` by cron id beside the
 * threads; a thread's crons go with it (`forget`, run by `deleteThread`),
 * as the SQL table's rows go with their thread's row.
 *
 * @since 0.4.0
 */
import { Effect, Option } from "effect"
import type { CronRecordRow, StorageDriver } from "../../StorageDriver.ts"
import { contains } from "./Records.ts"
import type { Threads } from "./ThreadState.ts"
import type { Writing } from "./Writes.ts"

/**
 * The driver operations on cron records.
 *
 * @since 0.4.0
 */
export type Crons = Pick<
  StorageDriver,
  "putCronRecord" | "cronRecord" | "cronRecords" | "deleteCronRecord" | "advanceCronRecord"
>

const oldestFirst = (a: CronRecordRow, b: CronRecordRow) =>
  a.created_at.getTime() - b.created_at.getTime() || (a.cron_id < b.cron_id ? -1 : a.cron_id > b.cron_id ? 1 : 0)

/**
 * The cron operations, and `forget`, which removes a thread's crons.
 *
 * @since 0.4.0
 */
export const crons = (threads: Threads, writing: Writing) => {
  const stored = new Map<string, CronRecordRow>()
  const operations: Crons = {
    putCronRecord: (row) =>
      writing(() => {
        // As the SQL table's foreign key: a thread's cron needs the thread's record.
        if (row.thread_id !== undefined && threads.get(row.thread_id)?.record === undefined) return false
        stored.set(row.cron_id, { ...row, created_at: stored.get(row.cron_id)?.created_at ?? row.created_at })
        return true
      }),

    cronRecord: (cron_id) => Effect.sync(() => Option.fromUndefinedOr(stored.get(cron_id))),

    cronRecords: (query) =>
      Effect.sync(() => {
        const needle = query.metadata === undefined ? undefined : JSON.parse(query.metadata) as unknown
        const matches = [...stored.values()].filter((cron) =>
          (needle === undefined || contains(JSON.parse(cron.metadata), needle)) &&
          (query.thread_id === undefined || cron.thread_id === query.thread_id) &&
          (query.assistant_id === undefined || cron.assistant_id === query.assistant_id) &&
          (query.enabled === undefined || cron.enabled === query.enabled)
        ).sort(oldestFirst)
        return { crons: matches.slice(query.offset, query.offset + query.limit), total: matches.length }
      }),

    deleteCronRecord: (cron_id) => writing(() => stored.delete(cron_id)),

    advanceCronRecord: (cron_id, from, to) =>
      writing(() => {
        const cron = stored.get(cron_id)
        if (cron?.next_run_date?.getTime() !== from.getTime()) return false
        stored.set(cron_id, { ...cron, next_run_date: to, updated_at: new Date() })
        return true
      })
  }
  const forget = (thread_id: string) =>
    Effect.sync(() => {
      for (const [cron_id, cron] of stored) if (cron.thread_id === thread_id) stored.delete(cron_id)
    })
  return { operations, forget }
}
