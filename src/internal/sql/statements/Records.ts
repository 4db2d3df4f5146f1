/**
 * Thread records and runs: the thread's row read as a record, set or
 * merged, searched (one statement per order and set of filters, so indexes
 * serve them), its status and values set, its writer epoch claimed; its
 * runs' records stored, read and listed.
 *
 * @since 0.2.0
 */
import { Option } from "effect"
import type { RunRecordRow, ThreadRecordQuery, ThreadRecordRow } from "../../../StorageDriver.ts"
import * as Jsonb from "../Jsonb.ts"
import type { Tables } from "../Tables.ts"
import { ofThread } from "./Columns.ts"
import { byShape } from "./Rows.ts"
import { statement } from "./Statement.ts"

/** A thread record as read: `updated_at` is the thread's last activity. */
export interface RecordRow {
  readonly thread_id: string
  readonly metadata: string
  readonly created_at: Date | string
  readonly updated_at: Date | string
  readonly status: string
  readonly state_values: string | null
}

const recordColumns = (alias: string) =>
  `${alias}.thread_id, ${alias}.metadata::text AS metadata, ${alias}.created_at, ${alias}.last_activity AS updated_at, ` +
  `${alias}.status, ${alias}.state_values::text AS state_values`

const toRecord = (row: RecordRow): ThreadRecordRow => ({
  thread_id: row.thread_id,
  metadata: Jsonb.decode(row.metadata),
  created_at: new Date(row.created_at),
  updated_at: new Date(row.updated_at),
  status: row.status,
  values: row.state_values === null ? undefined : Jsonb.decode(row.state_values)
})

/** A run record as read.
 *
 * @since 0.4.0
 */
export interface RunRow {
  readonly thread_id: string
  readonly run_id: string
  readonly assistant_id: string
  readonly status: string
  readonly metadata: string
  readonly multitask_strategy: string
  readonly created_at: Date | string
  readonly updated_at: Date | string
}

const runColumns = "thread_id, run_id, assistant_id, status, metadata::text AS metadata, multitask_strategy, " +
  "created_at, updated_at"

const toRun = (row: RunRow): RunRecordRow => ({
  ...row,
  metadata: Jsonb.decode(row.metadata),
  created_at: new Date(row.created_at),
  updated_at: new Date(row.updated_at)
})

/** The columns a search sorts by, in the table (`updated_at` is `last_activity`). */
const sortColumns = { created_at: "created_at", updated_at: "last_activity", thread_id: "thread_id" } as const

/** The filters of a search, in the order a variant names them. */
const FILTERS = ["metadata", "values", "status", "ids"] as const

/**
 * A search's variant: its order and the filters it has, each a statement of
 * its own so the planner can use the index of the order (step 102's, 1000's
 * or the primary key) and the metadata's inverted index.
 *
 * @since 0.2.0
 */
export type SearchVariant = string

/**
 * The variant of the statements' `searchThreadRecords` a query runs.
 *
 * @since 0.2.0
 */
export const searchVariant = (query: ThreadRecordQuery): SearchVariant =>
  [query.sort_by, query.sort_order, ...FILTERS.filter((filter) => query[filter] !== undefined)].join(" ")

/** A run record's parameters, as `insertRun` names them. */
const runParams = (row: RunRecordRow) => ({
  thread_id: row.thread_id,
  run_id: row.run_id,
  assistant_id: row.assistant_id,
  status: row.status,
  metadata: Jsonb.encode(row.metadata),
  multitask_strategy: row.multitask_strategy,
  created_at: row.created_at,
  updated_at: row.updated_at
})

/**
 * Thread records' statements, over `t`.
 *
 * @since 0.2.0
 */
export const records = (t: Tables) => {
  /** Stores a run's record: a new one, or its status, metadata and `updated_at` (`created_at` stays). */
  const insertRun = (param: { readonly [K in keyof ReturnType<typeof runParams>]: string }) =>
    `INSERT INTO ${t.runs} (thread_id, run_id, assistant_id, status, metadata, multitask_strategy, created_at, updated_at)
VALUES (${param.thread_id}, ${param.run_id}, ${param.assistant_id}, ${param.status}, ${param.metadata}::jsonb,
  ${param.multitask_strategy}, ${param.created_at}::timestamptz, ${param.updated_at}::timestamptz)
ON CONFLICT (thread_id, run_id) DO UPDATE SET status = EXCLUDED.status, metadata = EXCLUDED.metadata,
  updated_at = EXCLUDED.updated_at`

  // One page of records and the count of every match, in one statement: the
  // count stands alone, so a page past the end still says how many there are.
  const search = (
    sort_by: ThreadRecordQuery["sort_by"],
    sort_order: ThreadRecordQuery["sort_order"],
    filters: ReadonlySet<string>
  ) =>
    statement({
      params: (query: ThreadRecordQuery) => ({
        metadata: query.metadata === undefined ? null : Jsonb.encode(query.metadata),
        values: query.values === undefined ? null : Jsonb.encode(query.values),
        status: query.status ?? null,
        ids: query.ids ?? null,
        limit: query.limit,
        offset: query.offset
      }),
      text: (param) => {
        const conditions = [
          ...(filters.has("metadata") ? [`th.metadata @> ${param.metadata}::jsonb`] : []),
          ...(filters.has("values") ? [`th.state_values @> ${param.values}::jsonb`] : []),
          ...(filters.has("status") ? [`th.status = ${param.status}::text`] : []),
          ...(filters.has("ids") ? [`th.thread_id = ANY(${param.ids}::text[])`] : [])
        ]
        const where = conditions.length === 0 ? "" : `\n  WHERE ${conditions.join(" AND ")}`
        const direction = sort_order === "asc" ? "ASC" : "DESC"
        const order = (alias: string, column: string) =>
          sort_by === "thread_id"
            ? `${alias}.thread_id ${direction}`
            : `${alias}.${column} ${direction}, ${alias}.thread_id ${direction}`
        return `
SELECT total.n AS total, page.thread_id, page.metadata, page.created_at, page.updated_at, page.status,
  page.state_values
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
  const searches = new Map<SearchVariant, ReturnType<typeof search>>()
  /** The statement of a query's variant, built on first use. */
  const searchFor = (query: ThreadRecordQuery) => {
    const variant = searchVariant(query)
    let found = searches.get(variant)
    if (found === undefined) {
      const filters = new Set(FILTERS.filter((filter) => query[filter] !== undefined))
      searches.set(variant, found = search(query.sort_by, query.sort_order, filters))
    }
    return found
  }

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
RETURNING ${recordColumns(t.threads)}`,
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
RETURNING ${recordColumns(t.threads)}`,
    decode: (rows: ReadonlyArray<RecordRow>) => Option.map(Option.fromUndefinedOr(rows[0]), toRecord)
  })

  /** A thread's runs, newest first, of one status or any. */
  const runPage = (byStatus: boolean) =>
    statement({
      params: (
        input: {
          readonly thread_id: string
          readonly limit: number
          readonly offset: number
          readonly status: string | undefined
        }
      ) => ({ ...input, status: input.status ?? null }),
      text: (param) => `
SELECT ${runColumns} FROM ${t.runs}
WHERE thread_id = ${param.thread_id}${byStatus ? ` AND status = ${param.status}::text` : ""}
ORDER BY created_at DESC, run_id DESC
LIMIT ${param.limit}::int8 OFFSET ${param.offset}::int8`,
      decode: (rows: ReadonlyArray<RunRow>) => rows.map(toRun)
    })
  const runPages = byShape((byStatus) => runPage(byStatus === 1))

  return {
    threadRecord: statement({
      params: ofThread,
      text: (param) => `SELECT ${recordColumns("th")} FROM ${t.threads} th WHERE th.thread_id = ${param.thread_id}`,
      decode: (rows: ReadonlyArray<RecordRow>) => Option.map(Option.fromUndefinedOr(rows[0]), toRecord)
    }),

    setThreadRecord: setRecord(false),
    mergeThreadRecord: setRecord(true),
    createThreadRecord: createRecord,

    /** By {@link searchVariant}, built on first use. */
    searchThreadRecords: searchFor,

    // The next epoch, the row made if there is none: its lock orders claims and puts (see `Writes`).
    claimThread: statement({
      params: ofThread,
      text: (param) => `
INSERT INTO ${t.threads} (thread_id, last_activity, writer_epoch) VALUES (${param.thread_id}, now(), 1)
ON CONFLICT (thread_id) DO UPDATE SET writer_epoch = ${t.threads}.writer_epoch + 1
RETURNING writer_epoch`,
      decode: (rows: ReadonlyArray<{ readonly writer_epoch: number | string | bigint }>) =>
        Number(rows[0]!.writer_epoch)
    }),

    // A run's claim: the next epoch with the thread busy, and the run's record, in one statement.
    claimThreadForRun: statement({
      params: (input: { readonly row: RunRecordRow }) => runParams(input.row),
      text: (param) => `
WITH thread AS (
  INSERT INTO ${t.threads} (thread_id, last_activity, writer_epoch, status) VALUES (${param.thread_id}, now(), 1, 'busy')
  ON CONFLICT (thread_id) DO UPDATE SET writer_epoch = ${t.threads}.writer_epoch + 1, last_activity = now(),
    status = 'busy'
  RETURNING writer_epoch
), run AS (
${insertRun(param)}
)
SELECT writer_epoch FROM thread`,
      decode: (rows: ReadonlyArray<{ readonly writer_epoch: number | string | bigint }>) =>
        Number(rows[0]!.writer_epoch)
    }),

    setThreadState: statement({
      params: (
        input: { readonly thread_id: string; readonly status: string; readonly values: string | undefined }
      ) => ({
        thread_id: input.thread_id,
        status: input.status,
        values: input.values === undefined ? null : Jsonb.encode(input.values)
      }),
      text: (param) => `
INSERT INTO ${t.threads} (thread_id, last_activity, status, state_values)
VALUES (${param.thread_id}, now(), ${param.status}, ${param.values}::jsonb)
ON CONFLICT (thread_id) DO UPDATE SET last_activity = now(), status = EXCLUDED.status,
  state_values = coalesce(EXCLUDED.state_values, ${t.threads}.state_values)`
    }),

    // A run and the thread's row it belongs to (made if missing: the run's foreign key needs it), the
    // thread's state set in the same statement when given.
    putRunRecord: statement({
      params: (
        input: {
          readonly row: RunRecordRow
          readonly thread: { readonly status: string; readonly values: string | undefined } | undefined
        }
      ) => ({
        ...runParams(input.row),
        thread_status: input.thread?.status ?? null,
        thread_values: input.thread?.values === undefined ? null : Jsonb.encode(input.thread.values)
      }),
      text: (param) => `
WITH thread AS (
  INSERT INTO ${t.threads} (thread_id, last_activity, status, state_values)
  VALUES (${param.thread_id}, now(), coalesce(${param.thread_status}::text, 'idle'), ${param.thread_values}::jsonb)
  ON CONFLICT (thread_id) DO UPDATE SET last_activity = now(), status = EXCLUDED.status,
    state_values = coalesce(EXCLUDED.state_values, ${t.threads}.state_values)
  WHERE ${param.thread_status}::text IS NOT NULL
)
${insertRun(param)}`
    }),

    runRecord: statement({
      params: (input: { readonly thread_id: string; readonly run_id: string }) => input,
      text: (param) =>
        `SELECT ${runColumns} FROM ${t.runs} WHERE thread_id = ${param.thread_id} AND run_id = ${param.run_id}`,
      decode: (rows: ReadonlyArray<RunRow>) => Option.map(Option.fromUndefinedOr(rows[0]), toRun)
    }),

    /** A page of a thread's runs (of one status when the input names one). */
    runRecords: (status: string | undefined) => runPages(status === undefined ? 0 : 1),

    deleteRunRecord: statement({
      params: (input: { readonly thread_id: string; readonly run_id: string }) => input,
      text: (param) =>
        `DELETE FROM ${t.runs} WHERE thread_id = ${param.thread_id} AND run_id = ${param.run_id} RETURNING run_id`,
      decode: (rows: ReadonlyArray<{ readonly run_id: string }>) => rows.length > 0
    })
  }
}
