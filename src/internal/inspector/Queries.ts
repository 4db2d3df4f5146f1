/**
 * The inspector's own SQL: what the storage's operations do not answer —
 * threads a page at a time with their summary, checkpoint ids by prefix or
 * suffix, what a lifecycle command would remove, and the database's sizes.
 * Read-only, in the subset every dialect accepts, over the tables
 * `TableOwner.resolve` found (this library's, or LangGraph's own read through
 * views of them).
 *
 * @since 0.1.0
 */
import * as Jsonb from "../sql/Jsonb.ts"
import { listTypes } from "../sql/Projection.ts"
import { statement } from "../sql/Statements.ts"
import type { Tables } from "../sql/Tables.ts"
import * as StorageFormat from "../StorageFormat.ts"

/**
 * One thread, summed up.
 *
 * @since 0.1.0
 */
export interface ThreadSummary {
  readonly thread_id: string
  readonly last_activity: Date
  /** Its namespaces, the root (`""`) first. */
  readonly namespaces: ReadonlyArray<string>
  readonly checkpoints: number
  /** The `step` of the root namespace's latest checkpoint. */
  readonly latest_step: number | undefined
  /** Interrupts waiting on the root namespace's latest checkpoint. */
  readonly interrupts: number
  /** Where the page after this thread starts. */
  readonly cursor: ThreadCursor
}

/**
 * Where a page of threads starts: after this thread in the order (newest
 * activity first). `activity` is the database's exact text of its last
 * activity: a `Date` keeps milliseconds, and threads touched within one
 * (every thread a migration adopted) would be skipped.
 *
 * @since 0.1.0
 */
export interface ThreadCursor {
  readonly activity: string
  readonly thread_id: string
}

interface ThreadSummaryRow {
  readonly thread_id: string
  readonly last_activity: Date | string
  readonly activity: string
  readonly namespaces: ReadonlyArray<string> | null
  readonly checkpoints: number | string | bigint
  readonly latest_step: string | null
  readonly interrupts: number | string | bigint
}

const toSummary = (row: ThreadSummaryRow): ThreadSummary => {
  const step = row.latest_step === null ? Number.NaN : Number(row.latest_step)
  return {
    thread_id: row.thread_id,
    last_activity: new Date(row.last_activity),
    namespaces: [...(row.namespaces ?? [])].sort(),
    checkpoints: Number(row.checkpoints),
    latest_step: Number.isFinite(step) ? step : undefined,
    interrupts: Number(row.interrupts),
    cursor: { activity: row.activity, thread_id: row.thread_id }
  }
}

/**
 * Sizes of what is stored.
 *
 * @since 0.1.0
 */
export interface Stats {
  readonly threads: number
  readonly checkpoints: number
  readonly blobs: number
  readonly writes: number
  readonly pieces: number
  /** Bytes of the stored values and rows, per table (what the rows hold, without the database's overhead). */
  readonly stored: {
    readonly checkpoints: number
    readonly blobs: number
    readonly writes: number
    readonly pieces: number
  }
  /** The tables' size on disk with indexes, where the backend says (PostgreSQL, PGlite). */
  readonly onDisk: Readonly<Record<string, number>> | undefined
  /**
   * What the shared lists' values would take stored whole at every step
   * (estimated from their entries and the average piece), against what
   * they take: the blobs' lists and the pieces.
   */
  readonly sharing: { readonly whole: number; readonly stored: number } | undefined
}

const count = (value: number | string | bigint | null) => value === null ? 0 : Number(value)

/**
 * The statements, for a set of tables.
 *
 * @since 0.1.0
 */
export const queries = (t: Tables) => ({
  /** A page of threads, newest activity first, after `cursor`; only ids starting with `prefix`. */
  threads: statement({
    params: (input: { readonly limit: number; readonly prefix: string; readonly after: ThreadCursor | undefined }) => ({
      limit: input.limit,
      prefix: input.prefix,
      after_activity: input.after?.activity ?? null,
      after_thread: input.after?.thread_id ?? ""
    }),
    text: (param) => `
SELECT th.thread_id, th.last_activity, th.last_activity::text AS activity, s.namespaces, s.checkpoints, latest.step AS latest_step,
  (SELECT count(*) FROM ${t.writes} w
   WHERE w.thread_id = th.thread_id AND w.checkpoint_ns = '' AND w.checkpoint_id = latest.checkpoint_id
     AND w.channel = '__interrupt__') AS interrupts
FROM (
  SELECT th.thread_id, th.last_activity FROM ${t.threads} th
  WHERE left(th.thread_id, length(${param.prefix}::text)) = ${param.prefix}::text
    AND (${param.after_activity}::timestamptz IS NULL
      OR (th.last_activity, th.thread_id) < (${param.after_activity}::timestamptz, ${param.after_thread}::text))
    AND EXISTS (SELECT 1 FROM ${t.checkpoints} cp WHERE cp.thread_id = th.thread_id)
  ORDER BY th.last_activity DESC, th.thread_id DESC
  LIMIT ${param.limit}::int8
) th
CROSS JOIN LATERAL (
  SELECT array_agg(DISTINCT cp.checkpoint_ns) AS namespaces, count(*) AS checkpoints
  FROM ${t.checkpoints} cp WHERE cp.thread_id = th.thread_id
) s
LEFT JOIN LATERAL (
  SELECT cp.checkpoint_id, cp.metadata ->> 'step' AS step FROM ${t.checkpoints} cp
  WHERE cp.thread_id = th.thread_id AND cp.checkpoint_ns = ''
  ORDER BY cp.checkpoint_id DESC LIMIT 1
) latest ON true
ORDER BY th.last_activity DESC, th.thread_id DESC`,
    decode: (rows: ReadonlyArray<ThreadSummaryRow>) => rows.map(toSummary)
  }),

  /** The checkpoints of a thread whose id is `ref`, starts with it or ends with it. */
  checkpointIds: statement({
    params: (
      input: { readonly thread_id: string; readonly ref: string; readonly checkpoint_ns: string | undefined }
    ) => ({
      thread_id: input.thread_id,
      ref: input.ref,
      ns: input.checkpoint_ns ?? null
    }),
    text: (param) => `
SELECT cp.checkpoint_ns, cp.checkpoint_id FROM ${t.checkpoints} cp
WHERE cp.thread_id = ${param.thread_id}
  AND (${param.ns}::text IS NULL OR cp.checkpoint_ns = ${param.ns}::text)
  AND (left(cp.checkpoint_id, length(${param.ref}::text)) = ${param.ref}::text
    OR right(cp.checkpoint_id, length(${param.ref}::text)) = ${param.ref}::text)
ORDER BY cp.checkpoint_id DESC LIMIT 10`,
    decode: (rows: ReadonlyArray<{ readonly checkpoint_ns: string; readonly checkpoint_id: string }>) => rows
  }),

  /**
   * A thread's checkpoints as ids and parents' ids alone, newest first: what
   * a history's layout needs, without reading any value.
   */
  historyIndex: statement({
    params: (input: { readonly thread_id: string; readonly checkpoint_ns: string | undefined }) => ({
      thread_id: input.thread_id,
      ns: input.checkpoint_ns ?? null
    }),
    text: (param) => `
SELECT cp.checkpoint_ns, cp.checkpoint_id, cp.parent_checkpoint_id FROM ${t.checkpoints} cp
WHERE cp.thread_id = ${param.thread_id} AND (${param.ns}::text IS NULL OR cp.checkpoint_ns = ${param.ns}::text)
ORDER BY cp.checkpoint_id DESC`,
    decode: (
      rows: ReadonlyArray<
        { readonly checkpoint_ns: string; readonly checkpoint_id: string; readonly parent_checkpoint_id: string | null }
      >
    ) =>
      rows.map((row) => ({
        checkpoint_ns: row.checkpoint_ns,
        checkpoint_id: row.checkpoint_id,
        parent_checkpoint_id: row.parent_checkpoint_id ?? undefined
      }))
  }),

  /** Per thread: its checkpoints and the bytes its rows hold (what a lifecycle command frees). */
  threadSizes: statement({
    params: (input: { readonly thread_ids: ReadonlyArray<string> }) => input,
    text: (param) => `
SELECT th.thread_id,
  (SELECT count(*) FROM ${t.checkpoints} cp WHERE cp.thread_id = th.thread_id) AS checkpoints,
  (SELECT coalesce(sum(octet_length(cp.checkpoint::text) + octet_length(cp.metadata::text)), 0)
   FROM ${t.checkpoints} cp WHERE cp.thread_id = th.thread_id)
  + (SELECT coalesce(sum(octet_length(bl.blob)), 0) FROM ${t.blobs} bl WHERE bl.thread_id = th.thread_id)
  + (SELECT coalesce(sum(octet_length(w.blob)), 0) FROM ${t.writes} w WHERE w.thread_id = th.thread_id)
  + (SELECT coalesce(sum(octet_length(p.blob)), 0) FROM ${t.pieces} p WHERE p.thread_id = th.thread_id) AS bytes
FROM unnest(${param.thread_ids}::text[]) AS th (thread_id)`,
    decode: (
      rows: ReadonlyArray<
        { readonly thread_id: string; readonly checkpoints: number | string; readonly bytes: number | string }
      >
    ) => new Map(rows.map((row) => [row.thread_id, { checkpoints: count(row.checkpoints), bytes: count(row.bytes) }]))
  }),

  /** The checkpoints, per thread, whose metadata `run_id` is one of `run_ids`. */
  runCheckpoints: statement({
    params: (input: { readonly run_ids: ReadonlyArray<string> }) => ({ run_ids: input.run_ids.map(Jsonb.encodeText) }),
    text: (param) => `
SELECT thread_id, count(*) AS checkpoints FROM ${t.checkpoints}
WHERE jsonb_typeof(metadata -> 'run_id') = 'string' AND metadata ->> 'run_id' = ANY(${param.run_ids}::text[])
GROUP BY thread_id ORDER BY thread_id`,
    decode: (rows: ReadonlyArray<{ readonly thread_id: string; readonly checkpoints: number | string }>) =>
      rows.map((row) => ({ thread_id: row.thread_id, checkpoints: count(row.checkpoints) }))
  }),

  stats: statement({
    params: () => ({}),
    text: () => `
SELECT
  (SELECT count(*) FROM ${t.threads} th
   WHERE EXISTS (SELECT 1 FROM ${t.checkpoints} cp WHERE cp.thread_id = th.thread_id)) AS threads,
  (SELECT count(*) FROM ${t.checkpoints}) AS checkpoints,
  (SELECT count(*) FROM ${t.blobs}) AS blobs,
  (SELECT count(*) FROM ${t.writes}) AS writes,
  (SELECT count(*) FROM ${t.pieces}) AS pieces,
  (SELECT coalesce(sum(octet_length(checkpoint::text) + octet_length(metadata::text)), 0) FROM ${t.checkpoints})
    AS checkpoint_bytes,
  (SELECT coalesce(sum(octet_length(blob)), 0) FROM ${t.blobs}) AS blob_bytes,
  (SELECT coalesce(sum(octet_length(blob)), 0) FROM ${t.writes}) AS write_bytes,
  (SELECT coalesce(sum(octet_length(blob)), 0) FROM ${t.pieces}) AS piece_bytes,
  (SELECT coalesce(sum(octet_length(blob)), 0) FROM ${t.blobs} WHERE type IN (${listTypes})) AS list_bytes,
  (SELECT coalesce(sum(l.entries * p.bytes / p.n), 0) FROM (
     SELECT thread_id, sum(coalesce(keep, 0) + octet_length(blob) / ${StorageFormat.HASH_BYTES}) AS entries
     FROM ${t.blobs} WHERE type IN (${listTypes}) GROUP BY thread_id
   ) l JOIN (
     SELECT thread_id, count(*) AS n, sum(octet_length(blob)) AS bytes FROM ${t.pieces} GROUP BY thread_id
   ) p ON p.thread_id = l.thread_id) AS whole_list_bytes`,
    decode: (rows: ReadonlyArray<Record<string, number | string | bigint | null>>) => rows[0]!
  }),

  /** The tables' size with their indexes (PostgreSQL and PGlite). */
  tableSizes: statement({
    params: () => ({ schema: t.schemaName }),
    text: (param) => `
SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = ${param.schema} AND c.relkind = 'r'
  AND c.relname IN ('checkpoints', 'checkpoint_blobs', 'checkpoint_writes', 'checkpoint_pieces', 'checkpoint_threads')
ORDER BY c.relname`,
    decode: (rows: ReadonlyArray<{ readonly name: string; readonly bytes: number | string | bigint }>) =>
      Object.fromEntries(rows.map((row) => [row.name, Number(row.bytes)]))
  })
})

/**
 * The stats row as {@link Stats}.
 *
 * @since 0.1.0
 */
export const toStats = (
  row: Record<string, number | string | bigint | null>,
  onDisk: Readonly<Record<string, number>> | undefined
): Stats => {
  const n = (key: string) => count(row[key] ?? null)
  const whole = n("whole_list_bytes")
  return {
    threads: n("threads"),
    checkpoints: n("checkpoints"),
    blobs: n("blobs"),
    writes: n("writes"),
    pieces: n("pieces"),
    stored: {
      checkpoints: n("checkpoint_bytes"),
      blobs: n("blob_bytes"),
      writes: n("write_bytes"),
      pieces: n("piece_bytes")
    },
    onDisk,
    sharing: whole === 0 ? undefined : { whole, stored: n("list_bytes") + n("piece_bytes") }
  }
}
