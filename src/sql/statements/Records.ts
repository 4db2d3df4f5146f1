/**
 * Thread records: the thread's row read as a record, set or merged, and
 * searched (one statement per order and filter, so indexes serve them).
 *
 * @since 0.2.0
 */
import { Option } from "effect"
import type { ThreadRecordQuery, ThreadRecordRow } from "../../StorageDriver.ts"
import * as Jsonb from "../Jsonb.ts"
import type { Tables } from "../Tables.ts"
import { ofThread } from "./Common.ts"
import { statement } from "./Statement.ts"

/** A thread record as read: `updated_at` is the thread's last activity. */
export interface RecordRow {
  readonly thread_id: string
  readonly metadata: string
  readonly created_at: Date | string
  readonly updated_at: Date | string
}

const recordColumns = (alias: string) =>
  `${alias}.thread_id, ${alias}.metadata::text AS metadata, ${alias}.created_at, ${alias}.last_activity AS updated_at`

const toRecord = (row: RecordRow): ThreadRecordRow => ({
  thread_id: row.thread_id,
  metadata: Jsonb.decode(row.metadata),
  created_at: new Date(row.created_at),
  updated_at: new Date(row.updated_at)
})

/** The columns a search sorts by, in the table (`updated_at` is `last_activity`). */
const sortColumns = { created_at: "created_at", updated_at: "last_activity", thread_id: "thread_id" } as const

/**
 * A search's variant: its order and whether it filters, each a statement of
 * its own so the planner can use the index of the order (step 102's, 1000's
 * or the primary key) and the metadata's inverted index.
 *
 * @since 0.2.0
 */
export type SearchVariant = `${ThreadRecordQuery["sort_by"]} ${ThreadRecordQuery["sort_order"]} ${"filtered" | "all"}`

/**
 * The variant of the statements' `searchThreadRecords` a query runs.
 *
 * @since 0.2.0
 */
export const searchVariant = (query: ThreadRecordQuery): SearchVariant =>
  `${query.sort_by} ${query.sort_order} ${query.metadata === undefined ? "all" : "filtered"}`

/**
 * Thread records' statements, over `t`.
 *
 * @since 0.2.0
 */
export const records = (t: Tables) => {
  // One page of records and the count of every match, in one statement: the
  // count stands alone, so a page past the end still says how many there are.
  const search = (
    sort_by: ThreadRecordQuery["sort_by"],
    sort_order: ThreadRecordQuery["sort_order"],
    filtered: boolean
  ) =>
    statement({
      params: (query: ThreadRecordQuery) => ({
        metadata: query.metadata === undefined ? null : Jsonb.encode(query.metadata),
        limit: query.limit,
        offset: query.offset
      }),
      text: (param) => {
        const where = filtered ? `\n  WHERE th.metadata @> ${param.metadata}::jsonb` : ""
        const direction = sort_order === "asc" ? "ASC" : "DESC"
        const order = (alias: string, column: string) =>
          sort_by === "thread_id"
            ? `${alias}.thread_id ${direction}`
            : `${alias}.${column} ${direction}, ${alias}.thread_id ${direction}`
        return `
SELECT total.n AS total, page.thread_id, page.metadata, page.created_at, page.updated_at
FROM (SELECT count(*) AS n FROM ${t.threads} th${where}) total
LEFT JOIN (
  SELECT ${recordColumns("th")} FROM ${t.threads} th${where}
  ORDER BY ${order("th", sortColumns[sort_by])}
  LIMIT ${param.limit}::int8 OFFSET ${param.offset}::int8
) page ON true
ORDER BY ${order("page", sort_by)}`
      },
      decode: (
        rows: ReadonlyArray<
          { readonly total: number | string | bigint } & ({ readonly [K in keyof RecordRow]: null } | RecordRow)
        >
      ) => ({
        total: Number(rows[0]?.total ?? 0),
        records: rows.flatMap((row) => row.thread_id === null ? [] : [toRecord(row as RecordRow)])
      })
    })
  const searches = Object.fromEntries(
    (["created_at", "updated_at", "thread_id"] as const).flatMap((sort_by) =>
      (["asc", "desc"] as const).flatMap((sort_order) =>
        ([true, false] as const).map((filtered) =>
          [
            searchVariant({ sort_by, sort_order, metadata: filtered ? "" : undefined, limit: 0, offset: 0 }),
            search(sort_by, sort_order, filtered)
          ] as const
        )
      )
    )
  ) as Readonly<Record<SearchVariant, ReturnType<typeof search>>>

  // The record is the thread's row: a put inserts it with no metadata (and
  // only touches its activity after), so what is set here stays.
  const setRecord = (merge: boolean) =>
    statement({
      params: (input: { readonly thread_id: string; readonly metadata: string }) => ({
        thread_id: input.thread_id,
        metadata: Jsonb.encode(input.metadata)
      }),
      text: (param) => `
INSERT INTO ${t.threads} (thread_id, last_activity, metadata) VALUES (${param.thread_id}, now(), ${param.metadata}::jsonb)
ON CONFLICT (thread_id) DO UPDATE SET last_activity = now(), metadata = ${
        merge
          ? `CASE WHEN jsonb_typeof(${t.threads}.metadata) = 'object' THEN ${t.threads}.metadata || EXCLUDED.metadata
    ELSE EXCLUDED.metadata END`
          : "EXCLUDED.metadata"
      }
RETURNING thread_id, metadata::text AS metadata, created_at, last_activity AS updated_at`,
      decode: (rows: ReadonlyArray<RecordRow>) => toRecord(rows[0]!)
    })

  // The thread's row only if there is none: of concurrent creators, one inserts it and the rest get no row.
  const createRecord = statement({
    params: (input: { readonly thread_id: string; readonly metadata: string }) => ({
      thread_id: input.thread_id,
      metadata: Jsonb.encode(input.metadata)
    }),
    text: (param) => `
INSERT INTO ${t.threads} (thread_id, last_activity, metadata) VALUES (${param.thread_id}, now(), ${param.metadata}::jsonb)
ON CONFLICT (thread_id) DO NOTHING
RETURNING thread_id, metadata::text AS metadata, created_at, last_activity AS updated_at`,
    decode: (rows: ReadonlyArray<RecordRow>) => Option.map(Option.fromUndefinedOr(rows[0]), toRecord)
  })

  return {
    threadRecord: statement({
      params: ofThread,
      text: (param) => `SELECT ${recordColumns("th")} FROM ${t.threads} th WHERE th.thread_id = ${param.thread_id}`,
      decode: (rows: ReadonlyArray<RecordRow>) => Option.map(Option.fromUndefinedOr(rows[0]), toRecord)
    }),

    setThreadRecord: setRecord(false),
    mergeThreadRecord: setRecord(true),
    createThreadRecord: createRecord,

    /** By {@link searchVariant}. */
    searchThreadRecords: searches
  }
}
