/**
 * Every statement the SQL driver runs, built once per set of tables, each
 * with the parameters it takes and what its rows mean. A statement's text
 * names its parameters and numbers them itself, so nobody counts `$1…$24`;
 * values are encoded for the database here (JSON as text, `jsonb` through
 * `Jsonb`, "" and -1 for none inside arrays).
 *
 * Every statement is written in the subset PostgreSQL, PGlite and
 * CockroachDB all accept (see `Dialect`). The wide reads' `SELECT` lists and
 * decoders are in `Projection`.
 *
 * The catalogue is declared here ({@link Statements}: what each statement
 * takes and answers) and assembled from its parts, one per concern, in
 * `statements/`: the writes of a run (`Writes`), the reads of checkpoints
 * (`Reads`), the statements on whole threads (`Lifecycle`), thread
 * records (`Records`) and crons (`Crons`); the builder is
 * `statements/Statement`, the stored rows' columns `statements/Columns`.
 *
 * @since 0.1.0
 */
import type { Option } from "effect"
import type { Location } from "../../Checkpoint.ts"
import type { Dialect } from "../../SqlOptions.ts"
import type {
  Ancestors,
  CheckpointRow,
  CronRecordQuery,
  CronRecordRow,
  IndexEntry,
  KnownToWalk,
  ListSelection,
  PutOutcome,
  RunRecordRow,
  StoredCheckpoint,
  ThreadRecordQuery,
  ThreadRecordRow,
  ThreadRows,
  WriteRow
} from "../../StorageDriver.ts"
import type { PutCall, WritesCall, WritesOutcome } from "./Calls.ts"
import { locksRows } from "./Dialect.ts"
import type { ThreadRow, TupleRow } from "./Projection.ts"
import type { CheckpointAddress } from "./statements/Columns.ts"
import { crons } from "./statements/Crons.ts"
import { lifecycle } from "./statements/Lifecycle.ts"
import { reads } from "./statements/Reads.ts"
import { records } from "./statements/Records.ts"
import type { StatementOf } from "./statements/Statement.ts"
import { writes } from "./statements/Writes.ts"
import type { Tables } from "./Tables.ts"

export { type SearchVariant, searchVariant } from "./statements/Records.ts"
export { type Statement, statement, type StatementOf } from "./statements/Statement.ts"

/** A thread, as a statement's input. */
interface OfThread {
  readonly thread_id: string
}

/** A page of `list`: the rows after `after` (the previous page's last), at most `limit`. */
interface ListPage {
  readonly selection: ListSelection
  readonly after: CheckpointRow | undefined
  readonly limit: number
}

/** A thread record's metadata, as JSON text. */
interface RecordMetadata {
  readonly thread_id: string
  readonly metadata: string
}

/**
 * Every statement the driver runs: what each takes and what it answers
 * (and, for the wide reads, the rows `Projection` shapes; see
 * `StatementOf`). A write's statement depends on its calls (a batch's, or a
 * lone call's of its shape), a search's and a run listing's on their
 * variant.
 *
 * @since 0.1.0
 */
export interface Statements {
  // The writes of a run (`statements/Writes`).
  /** Puts of several threads (a batch): every row as arrays. */
  readonly put: (calls: ReadonlyArray<PutCall>) => StatementOf<ReadonlyArray<PutCall>, Array<PutOutcome>>
  /** The statement of one put, its rows spelled out where they are few (see `Rows`). */
  readonly putOne: (call: PutCall) => StatementOf<ReadonlyArray<PutCall>, Array<PutOutcome>>
  /** Writes of several tasks (a batch): every row as arrays. */
  readonly putWrites: (
    calls: ReadonlyArray<WritesCall>
  ) => StatementOf<ReadonlyArray<WritesCall>, Array<WritesOutcome>>
  /** The statement of one task's writes, spelled out where they are few. */
  readonly putWritesOne: (call: WritesCall) => StatementOf<ReadonlyArray<WritesCall>, Array<WritesOutcome>>

  // The reads of checkpoints (`statements/Reads`).
  readonly getTuple: StatementOf<Location & { readonly known: Uint8Array }, Option.Option<StoredCheckpoint>, TupleRow>
  readonly getLatest: StatementOf<Location & { readonly known: Uint8Array }, Option.Option<StoredCheckpoint>, TupleRow>
  readonly listAll: StatementOf<ListPage, Array<StoredCheckpoint>, TupleRow>
  readonly listThread: StatementOf<ListPage, Array<StoredCheckpoint>, TupleRow>
  readonly channelWrites: StatementOf<CheckpointAddress & { readonly channel: string }, Array<WriteRow>>
  readonly ancestorsOf: StatementOf<
    Location & { readonly channels: ReadonlyArray<string>; readonly known: KnownToWalk },
    Ancestors,
    TupleRow
  >
  readonly ancestorsOfLatest: StatementOf<
    Location & { readonly channels: ReadonlyArray<string>; readonly known: KnownToWalk },
    Ancestors,
    TupleRow
  >
  readonly threadExists: StatementOf<OfThread, boolean>
  readonly threadIndex: StatementOf<OfThread, Array<IndexEntry>>

  // The statements on whole threads (`statements/Lifecycle`).
  readonly setParents: StatementOf<{
    readonly thread_id: string
    readonly checkpoints: ReadonlyArray<Pick<IndexEntry, "checkpoint_ns" | "checkpoint_id" | "parent_checkpoint_id">>
  }, void>
  readonly threads: StatementOf<unknown, ReadonlyArray<{ readonly thread_id: string; readonly last_activity: Date }>>
  readonly threadsOfRuns: StatementOf<{ readonly run_ids: ReadonlyArray<string> }, Array<string>>
  readonly remove: StatementOf<{
    readonly thread_id: string
    readonly checkpoints: ReadonlyArray<{ readonly checkpoint_ns: string; readonly checkpoint_id: string }>
  }, void>
  readonly threadRows: StatementOf<OfThread, ThreadRows, ThreadRow>
  readonly writeThread: StatementOf<ThreadRows, undefined>
  readonly lockThread: StatementOf<OfThread, void>
  readonly deleteThread: StatementOf<OfThread, void>

  // Thread and run records (`statements/Records`).
  readonly threadRecord: StatementOf<OfThread, Option.Option<ThreadRecordRow>>
  readonly setThreadRecord: StatementOf<RecordMetadata, ThreadRecordRow>
  readonly mergeThreadRecord: StatementOf<RecordMetadata, ThreadRecordRow>
  readonly createThreadRecord: StatementOf<RecordMetadata, Option.Option<ThreadRecordRow>>
  /** By `searchVariant`, built on first use. */
  readonly searchThreadRecords: (
    query: ThreadRecordQuery
  ) => StatementOf<ThreadRecordQuery, { total: number; records: Array<ThreadRecordRow> }>
  readonly claimThread: StatementOf<OfThread, number>
  readonly claimThreadForRun: StatementOf<{ readonly row: RunRecordRow }, number>
  readonly setThreadState: StatementOf<{
    readonly thread_id: string
    readonly status: string
    readonly values: string | undefined
  }, void>
  readonly putRunRecord: StatementOf<{
    readonly row: RunRecordRow
    readonly thread: { readonly status: string; readonly values: string | undefined } | undefined
  }, void>
  readonly runRecord: StatementOf<{ readonly thread_id: string; readonly run_id: string }, Option.Option<RunRecordRow>>
  /** One page of a thread's runs, with or without a status to match. */
  readonly runRecords: (status: string | undefined) => StatementOf<{
    readonly thread_id: string
    readonly limit: number
    readonly offset: number
    readonly status: string | undefined
  }, Array<RunRecordRow>>
  readonly deleteRunRecord: StatementOf<{ readonly thread_id: string; readonly run_id: string }, boolean>

  // Crons (`statements/Crons`).
  readonly putCronRecord: StatementOf<CronRecordRow, boolean>
  readonly cronRecord: StatementOf<{ readonly cron_id: string }, Option.Option<CronRecordRow>>
  readonly cronRecords: StatementOf<CronRecordQuery, { total: number; crons: Array<CronRecordRow> }>
  readonly deleteCronRecord: StatementOf<{ readonly cron_id: string }, boolean>
  readonly advanceCronRecord: StatementOf<
    { readonly cron_id: string; readonly from: Date; readonly to: Date | undefined },
    boolean
  >
}

/**
 * Every statement the driver runs, built once per set of tables.
 *
 * @since 0.1.0
 */
export const statements = (t: Tables, dialect: Dialect = "postgres"): Statements => ({
  ...writes(t, locksRows(dialect)),
  ...reads(t),
  ...lifecycle(t),
  ...records(t),
  ...crons(t)
})
