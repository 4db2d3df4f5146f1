/**
 * Cron records: stored whole, read by id, searched (a page and the count
 * of every match, in one statement), deleted, and moved to their next tick
 * only from the tick a caller saw (compare-and-set).
 *
 * @since 0.4.0
 */
import { Option } from "effect"
import type { CronRecordQuery, CronRecordRow } from "../../../StorageDriver.ts"
import * as Jsonb from "../Jsonb.ts"
import type { Tables } from "../Tables.ts"
import { statement } from "./Statement.ts"

/**
 * A cron record as read.
 *
 * @since 0.4.0
 */
export interface CronRow {
  readonly cron_id: string
  readonly thread_id: string | null
  readonly assistant_id: string
  readonly schedule: string
  readonly timezone: string | null
  readonly end_time: Date | string | null
  readonly enabled: boolean
  readonly on_run_completed: string
  readonly payload: string
  readonly metadata: string
  readonly next_run_date: Date | string | null
  readonly created_at: Date | string
  readonly updated_at: Date | string
}

const columns = "cron_id, thread_id, assistant_id, schedule, timezone, end_time, enabled, on_run_completed, " +
  "payload::text AS payload, metadata::text AS metadata, next_run_date, created_at, updated_at"

const dateOf = (value: Date | string | null) => value === null ? undefined : new Date(value)

const toCron = (row: CronRow): CronRecordRow => ({
  cron_id: row.cron_id,
  thread_id: row.thread_id ?? undefined,
  assistant_id: row.assistant_id,
  schedule: row.schedule,
  timezone: row.timezone ?? undefined,
  end_time: dateOf(row.end_time),
  enabled: row.enabled,
  on_run_completed: row.on_run_completed,
  payload: Jsonb.decode(row.payload),
  metadata: Jsonb.decode(row.metadata),
  next_run_date: dateOf(row.next_run_date),
  created_at: new Date(row.created_at),
  updated_at: new Date(row.updated_at)
})

/**
 * Cron records' statements, over `t`.
 *
 * @since 0.4.0
 */
export const crons = (t: Tables) => ({
  // Only with its thread's row when it names a thread (the foreign key stands behind that, for a race).
  putCronRecord: statement({
    params: (row: CronRecordRow) => ({
      ...row,
      thread_id: row.thread_id ?? null,
      timezone: row.timezone ?? null,
      end_time: row.end_time ?? null,
      payload: Jsonb.encode(row.payload),
      metadata: Jsonb.encode(row.metadata),
      next_run_date: row.next_run_date ?? null
    }),
    text: (param) => `
INSERT INTO ${t.crons} (cron_id, thread_id, assistant_id, schedule, timezone, end_time, enabled, on_run_completed,
  payload, metadata, next_run_date, created_at, updated_at)
SELECT ${param.cron_id}, ${param.thread_id}::text, ${param.assistant_id}, ${param.schedule}, ${param.timezone}::text,
  ${param.end_time}::timestamptz, ${param.enabled}::bool, ${param.on_run_completed}, ${param.payload}::jsonb,
  ${param.metadata}::jsonb, ${param.next_run_date}::timestamptz, ${param.created_at}::timestamptz,
  ${param.updated_at}::timestamptz
WHERE ${param.thread_id}::text IS NULL OR EXISTS (SELECT 1 FROM ${t.threads} WHERE thread_id = ${param.thread_id}::text)
ON CONFLICT (cron_id) DO UPDATE SET thread_id = EXCLUDED.thread_id, assistant_id = EXCLUDED.assistant_id,
  schedule = EXCLUDED.schedule, timezone = EXCLUDED.timezone, end_time = EXCLUDED.end_time,
  enabled = EXCLUDED.enabled, on_run_completed = EXCLUDED.on_run_completed, payload = EXCLUDED.payload,
  metadata = EXCLUDED.metadata, next_run_date = EXCLUDED.next_run_date, updated_at = EXCLUDED.updated_at
RETURNING cron_id`,
    decode: (rows: ReadonlyArray<{ readonly cron_id: string }>) => rows.length > 0
  }),

  cronRecord: statement({
    params: (input: { readonly cron_id: string }) => input,
    text: (param) => `SELECT ${columns} FROM ${t.crons} WHERE cron_id = ${param.cron_id}`,
    decode: (rows: ReadonlyArray<CronRow>) => Option.map(Option.fromUndefinedOr(rows[0]), toCron)
  }),

  // Crons are few: one statement, its filters off when their parameter is null.
  cronRecords: statement({
    params: (query: CronRecordQuery) => ({
      metadata: query.metadata === undefined ? null : Jsonb.encode(query.metadata),
      thread_id: query.thread_id ?? null,
      assistant_id: query.assistant_id ?? null,
      enabled: query.enabled ?? null,
      limit: query.limit,
      offset: query.offset
    }),
    text: (param) => {
      const where = `WHERE (${param.metadata}::jsonb IS NULL OR metadata @> ${param.metadata}::jsonb)
    AND (${param.thread_id}::text IS NULL OR thread_id = ${param.thread_id}::text)
    AND (${param.assistant_id}::text IS NULL OR assistant_id = ${param.assistant_id}::text)
    AND (${param.enabled}::bool IS NULL OR enabled = ${param.enabled}::bool)`
      return `
SELECT total.n AS total, page.* FROM (SELECT count(*) AS n FROM ${t.crons} ${where}) total
LEFT JOIN (
  SELECT ${columns} FROM ${t.crons} ${where}
  ORDER BY created_at, cron_id LIMIT ${param.limit}::int8 OFFSET ${param.offset}::int8
) page ON true
ORDER BY page.created_at, page.cron_id`
    },
    decode: (
      rows: ReadonlyArray<
        { readonly total: number | string | bigint } & ({ readonly [K in keyof CronRow]: null } | CronRow)
      >
    ) => ({
      total: Number(rows[0]?.total ?? 0),
      crons: rows.flatMap((row) => row.cron_id === null ? [] : [toCron(row as CronRow)])
    })
  }),

  deleteCronRecord: statement({
    params: (input: { readonly cron_id: string }) => input,
    text: (param) => `DELETE FROM ${t.crons} WHERE cron_id = ${param.cron_id} RETURNING cron_id`,
    decode: (rows: ReadonlyArray<{ readonly cron_id: string }>) => rows.length > 0
  }),

  advanceCronRecord: statement({
    params: (input: { readonly cron_id: string; readonly from: Date; readonly to: Date | undefined }) => ({
      ...input,
      to: input.to ?? null
    }),
    text: (param) => `
UPDATE ${t.crons} SET next_run_date = ${param.to}::timestamptz, updated_at = now()
WHERE cron_id = ${param.cron_id} AND next_run_date = ${param.from}::timestamptz
RETURNING cron_id`,
    decode: (rows: ReadonlyArray<{ readonly cron_id: string }>) => rows.length > 0
  })
})
