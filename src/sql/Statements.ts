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
 * @since 0.1.0
 */
import { Option } from "effect"
import type { Location } from "../Checkpoint.ts"
import * as StorageFormat from "../codec/StorageFormat.ts"
import type {
  Ancestors,
  BlobRow,
  CheckpointRow,
  IndexEntry,
  KnownToWalk,
  ListSelection,
  Piece,
  PutOutcome,
  ThreadRecordQuery,
  ThreadRecordRow,
  ThreadRows,
  WriteRow
} from "../StorageDriver.ts"
import type { PutCall, WritesCall } from "./GroupCommit.ts"
import * as Jsonb from "./Jsonb.ts"
import {
  hashesOf,
  listTypes,
  threadProjection,
  type ThreadRow,
  toStoredPage,
  toThreadRows,
  tupleProjection,
  type TupleRow
} from "./Projection.ts"
import type { Tables } from "./Tables.ts"

/**
 * A statement: its text, its parameters from a named input, and what the
 * rows it returns mean.
 *
 * @since 0.1.0
 */
export interface Statement<Input, Row extends object, Output> {
  readonly text: string
  /** The parameters for `input`, in the order the text numbers them. */
  readonly params: (input: Input) => ReadonlyArray<unknown>
  readonly decode: (rows: ReadonlyArray<Row>, input: Input) => Output
}

/**
 * A statement from its parts. `params` gives the values it takes, by name;
 * `text` refers to each as `${param.name}`, which gives a name its `$n` the
 * first time the text uses it. Without `decode`, the rows are ignored.
 */
export const statement = <Input, Params extends object, Row extends object = never, Output = void>(parts: {
  readonly params: (input: Input) => Params
  readonly text: (param: { readonly [K in keyof Params]: string }) => string
  readonly decode?: (rows: ReadonlyArray<Row>, input: Input) => Output
}): Statement<Input, Row, Output> => {
  const names: Array<keyof Params> = []
  const placeholders = new Proxy({}, {
    get: (_, name) => {
      if (typeof name !== "string") return undefined
      const at = names.indexOf(name as keyof Params)
      return `$${at === -1 ? names.push(name as keyof Params) : at + 1}`
    }
  }) as { readonly [K in keyof Params]: string }
  return {
    text: parts.text(placeholders),
    params: (input) => {
      const values = parts.params(input)
      return names.map((name) => values[name])
    },
    decode: parts.decode ?? (() => undefined as Output)
  }
}

/** A checkpoint, by its full address. */
type CheckpointAddress = Location & { readonly checkpoint_id: string }

const ofThread = (input: { readonly thread_id: string }) => input

const emptyBytes = new Uint8Array(0)

/** Blobs as the parallel arrays `unnest` takes ("" and -1 for no base: an array of only nulls has no type). */
const blobArrays = (blobs: ReadonlyArray<BlobRow>) => ({
  blob_channels: blobs.map((blob) => blob.channel),
  blob_versions: blobs.map((blob) => blob.version),
  blob_types: blobs.map((blob) => blob.type),
  blob_values: blobs.map((blob) => blob.bytes ?? emptyBytes),
  blob_bases: blobs.map((blob) => blob.base?.version ?? ""),
  blob_keeps: blobs.map((blob) => blob.base?.keep ?? -1)
})

/** Writes as the parallel arrays `unnest` takes. */
const writeArrays = (writes: ReadonlyArray<WriteRow>) => ({
  write_idxs: writes.map((write) => write.idx),
  write_channels: writes.map((write) => write.channel),
  write_types: writes.map((write) => write.type),
  write_values: writes.map((write) => write.bytes)
})

/** Pieces as the parallel arrays `unnest` takes. */
const pieceArrays = (pieces: ReadonlyArray<Piece>) => ({
  piece_hashes: pieces.map((piece) => piece.hash),
  piece_values: pieces.map((piece) => piece.bytes)
})

/** The metadata filter of a `list` as one `jsonb` object. */
const metadataFilter = (filter: ListSelection["filter"]) =>
  Jsonb.encode(`{${filter.map(([key, json]) => `${JSON.stringify(key)}:${json}`).join(",")}}`)

const columns = "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata"
const newestFirst = "page.checkpoint_id DESC, page.thread_id, page.checkpoint_ns"

/**
 * `remove`'s CTEs of the blobs it keeps, by depth: at 0 (`direct`) those the
 * remaining checkpoints reference, then at each depth the bases the level
 * above extends, down to `StorageFormat.BASE_DEPTH`.
 */
const keptAt = (depth: number) => depth === 0 ? "direct" : `bases_${depth}`
const keptDepths = Array.from({ length: StorageFormat.BASE_DEPTH + 1 }, (_, depth) => depth)

/** A thread record as read: `updated_at` is the thread's last activity. */
interface RecordRow {
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
 * Every statement the driver runs, built once per set of tables.
 *
 * @since 0.1.0
 */
export const statements = (t: Tables) => {
  /** One page of `list`: the rows after `after` (the previous page's last), at most `limit`. */
  const list = (everyThread: boolean) =>
    statement({
      params: ({ selection, after, limit }: {
        readonly selection: ListSelection
        readonly after: CheckpointRow | undefined
        readonly limit: number
      }) => ({
        thread_id: selection.thread_id ?? null,
        checkpoint_ns: selection.checkpoint_ns ?? null,
        checkpoint_id: selection.checkpoint_id ?? null,
        before: selection.before ?? null,
        filter: metadataFilter(selection.filter),
        limit,
        after_checkpoint_id: after?.checkpoint_id ?? null,
        after_thread_id: after?.thread_id ?? null,
        after_checkpoint_ns: after?.checkpoint_ns ?? null
      }),
      text: (param) => `
WITH page AS (
  SELECT ${columns} FROM ${t.checkpoints} cp
  WHERE ${everyThread ? `${param.thread_id}::text IS NULL` : `cp.thread_id = ${param.thread_id}`}
    AND (${param.checkpoint_ns}::text IS NULL OR cp.checkpoint_ns = ${param.checkpoint_ns})
    AND (${param.checkpoint_id}::text IS NULL OR cp.checkpoint_id = ${param.checkpoint_id})
    AND (${param.before}::text IS NULL OR cp.checkpoint_id < ${param.before})
    AND NOT EXISTS (
      SELECT 1 FROM jsonb_each(${param.filter}::jsonb) AS f
      WHERE (cp.metadata -> f.key) IS DISTINCT FROM f.value
    )
    AND (${param.after_checkpoint_id}::text IS NULL
      OR (cp.checkpoint_id, ${param.after_thread_id}::text, ${param.after_checkpoint_ns}::text)
        < (${param.after_checkpoint_id}, cp.thread_id, cp.checkpoint_ns))
  ORDER BY cp.checkpoint_id DESC, cp.thread_id, cp.checkpoint_ns
  LIMIT ${param.limit}
)${tupleProjection(t, newestFirst, { threads: everyThread })}`,
      decode: (rows: ReadonlyArray<TupleRow>) => toStoredPage(rows)
    })

  /**
   * A checkpoint, or (`latest`) the namespace's latest. `known`: the hashes
   * of the pieces the caller has, back to back.
   */
  const tuple = (latest: boolean) =>
    statement({
      params: (input: Location & { readonly known: Uint8Array }) => ({
        ...input,
        checkpoint_id: input.checkpoint_id ?? null
      }),
      text: (param) => `
WITH page AS (
  SELECT ${columns} FROM ${t.checkpoints}
  WHERE thread_id = ${param.thread_id} AND checkpoint_ns = ${param.checkpoint_ns}${
        latest ? "\n  ORDER BY checkpoint_id DESC LIMIT 1" : `\n    AND checkpoint_id = ${param.checkpoint_id}`
      }
)${tupleProjection(t, newestFirst, { known: `${param.known}::bytea` })}`,
      decode: (rows: ReadonlyArray<TupleRow>) => Option.fromUndefinedOr(toStoredPage(rows)[0])
    })

  // The parent chain of the target, nearest first. Each row carries the
  // channels still wanted there (`remaining`) and splits them by a probe of
  // its own blobs: those it stores a value for (`seeded`) and the rest
  // (`unseeded`), which its parent is wanted for; the walk stops once none
  // is left. Only a seeding row looks its blobs up again for the answer.
  // Parent links are not sealed and may loop, so the walk also carries an
  // `anchor` (Brent's cycle detection): the row at the last power of two of
  // steps from the target. A row whose checkpoint is the anchor of the row
  // before (or, first, the target itself) is where the walk came back: it
  // is marked `looped` and the walk stops, at most about twice the loop's
  // length past where the loop starts. Constant work per step, where
  // carrying every id passed would copy a growing array at each.
  const ancestors = (latest: boolean) =>
    statement({
      params: (
        input: Location & {
          readonly channels: ReadonlyArray<string>
          readonly known: KnownToWalk
        }
      ) => ({
        thread_id: input.thread_id,
        checkpoint_ns: input.checkpoint_ns,
        checkpoint_id: input.checkpoint_id ?? null,
        channels: input.channels,
        known_blobs: input.known.blobs,
        known_pieces: input.known.pieces
      }),
      text: (param) => {
        // One primary-key probe per channel: the LIMIT keeps the planner from scanning every blob of
        // the namespace at each step (an anti-join did, making a long thread's walk quadratic).
        const split = (row: string, channels: string) => `
  CROSS JOIN LATERAL (
    SELECT coalesce(array_agg(ch) FILTER (WHERE stored.hit IS NOT NULL), '{}') AS seeded,
      coalesce(array_agg(ch) FILTER (WHERE stored.hit IS NULL), '{}') AS unseeded
    FROM unnest(${channels}) AS ch
    LEFT JOIN LATERAL (
      SELECT 1 AS hit FROM ${t.blobs} bl
      WHERE bl.thread_id = ${row}.thread_id AND bl.checkpoint_ns = ${row}.checkpoint_ns AND bl.channel = ch
        AND bl.version = ${row}.checkpoint -> 'channel_versions' ->> ch AND bl.type <> 'empty'
      LIMIT 1
    ) stored ON true
  ) split`
        // A walk reads the header of a row that seeds a channel only, and no metadata: the other
        // rows send empty objects instead (most of a long walk's bytes), which nothing decodes.
        const headerIfSeeding =
          `CASE WHEN cardinality(split.seeded) > 0 THEN p.checkpoint ELSE '{}'::jsonb END AS checkpoint`
        const noMetadata = `'{}'::jsonb AS metadata`
        return `
WITH RECURSIVE target AS (
  SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id FROM ${t.checkpoints}
  WHERE thread_id = ${param.thread_id} AND checkpoint_ns = ${param.checkpoint_ns}
    AND ${latest ? `${param.checkpoint_id}::text IS NULL` : `checkpoint_id = ${param.checkpoint_id}`}
  ORDER BY checkpoint_id DESC LIMIT 1
),
page AS (
  SELECT p.thread_id, p.checkpoint_ns, p.checkpoint_id, p.parent_checkpoint_id, ${headerIfSeeding}, ${noMetadata},
    ${param.channels}::text[] AS remaining, split.seeded, split.unseeded, 0 AS depth, p.checkpoint_id AS anchor,
    p.checkpoint_id = target.checkpoint_id AS looped
  FROM target
  JOIN ${t.checkpoints} p ON p.thread_id = target.thread_id AND p.checkpoint_ns = target.checkpoint_ns
    AND p.checkpoint_id = target.parent_checkpoint_id${split("p", `${param.channels}::text[]`)}
  UNION ALL
  SELECT p.thread_id, p.checkpoint_ns, p.checkpoint_id, p.parent_checkpoint_id, ${headerIfSeeding}, ${noMetadata},
    c.unseeded, split.seeded, split.unseeded, c.depth + 1,
    CASE WHEN ((c.depth + 2) & (c.depth + 1)) = 0 THEN p.checkpoint_id ELSE c.anchor END,
    p.checkpoint_id = c.anchor
  FROM page c
  JOIN ${t.checkpoints} p ON p.thread_id = c.thread_id AND p.checkpoint_ns = c.checkpoint_ns
    AND p.checkpoint_id = c.parent_checkpoint_id${split("p", "c.unseeded")}
  WHERE cardinality(c.unseeded) > 0 AND NOT c.looped
)${
          tupleProjection(t, "page.depth", {
            channels: { blobs: "page.seeded", writes: "page.remaining" },
            looped: "page.looped",
            digests: `${param.known_blobs}::text[]`,
            known: `${param.known_pieces}::bytea`
          })
        }`
      },
      decode: (rows: ReadonlyArray<TupleRow>): Ancestors => {
        const last = rows.at(-1)
        return last?.looped === true
          ? { chain: toStoredPage(rows).slice(0, -1), loopsAt: last.checkpoint_id }
          : { chain: toStoredPage(rows), loopsAt: undefined }
      }
    })

  // Puts of distinct threads, in one statement (see `GroupCommit`), each
  // with its outcome, in order. A put whose parent is gone (its thread was
  // deleted or pruned meanwhile) writes nothing: a slow writer cannot bring
  // a deleted thread back half alive. The parent row is read with FOR
  // SHARE, so a delete running at the same time is waited for and seen.
  // The threads' rows are locked first (in one order, so two batches
  // cannot deadlock on them): operations that remove blobs and pieces hold
  // them, so what each put then finds (with locking reads, which see the
  // latest rows) stays until it commits. A put whose parent or required
  // blobs are gone writes nothing and says which; the others are stored.
  const put = (one: boolean) =>
    statement({
      params: (puts: ReadonlyArray<PutCall>) => {
        const blobs = puts.flatMap(({ blobs }, i) => blobs.map((blob) => ({ i, blob })))
        const required = puts.flatMap(({ shared }, i) => shared.requires.map((blob) => ({ i, blob })))
        const pieces = puts.flatMap(({ shared }, i) => shared.pieces.map((piece) => ({ i, piece })))
        return {
          thread_ids: puts.map(({ row }) => row.thread_id),
          checkpoint_nss: puts.map(({ row }) => row.checkpoint_ns),
          checkpoint_ids: puts.map(({ row }) => row.checkpoint_id),
          parents: puts.map(({ row }) => row.parent_checkpoint_id ?? ""),
          checkpoints: puts.map(({ row }) => JSON.stringify(row.checkpoint)),
          metadata: puts.map(({ row }) => Jsonb.encode(row.metadata)),
          required_counts: puts.map(({ shared }) => shared.requires.length),
          blob_puts: blobs.map(({ i }) => i + 1),
          ...blobArrays(blobs.map(({ blob }) => blob)),
          required_puts: required.map(({ i }) => i + 1),
          required_channels: required.map(({ blob }) => blob.channel),
          required_versions: required.map(({ blob }) => blob.version),
          piece_puts: pieces.map(({ i }) => i + 1),
          ...pieceArrays(pieces.map(({ piece }) => piece))
        }
      },
      text: (param) => `
WITH input AS (${
        one
          // One put: its fields, one row, which the planner knows (a generic plan of a set-returning
          // function guesses more rows, and then every execution is planned again).
          ? `
  SELECT (${param.thread_ids}::text[])[1] AS thread_id, (${param.checkpoint_nss}::text[])[1] AS checkpoint_ns,
    (${param.checkpoint_ids}::text[])[1] AS checkpoint_id, (${param.parents}::text[])[1] AS parent,
    (${param.checkpoints}::text[])[1] AS checkpoint, (${param.metadata}::text[])[1] AS metadata,
    (${param.required_counts}::int4[])[1] AS required, 1::int8 AS i`
          : `
  SELECT * FROM unnest(
    ${param.thread_ids}::text[], ${param.checkpoint_nss}::text[], ${param.checkpoint_ids}::text[],
    ${param.parents}::text[], ${param.checkpoints}::text[], ${param.metadata}::text[], ${param.required_counts}::int4[]
  ) WITH ORDINALITY AS p (thread_id, checkpoint_ns, checkpoint_id, parent, checkpoint, metadata, required, i)`
      }
),
locked AS (
  SELECT count(*) AS n FROM (
    SELECT 1 FROM ${t.threads} WHERE thread_id = ANY(${param.thread_ids}::text[]) ORDER BY thread_id FOR NO KEY UPDATE
  ) th
),
parents AS (
  SELECT p.i FROM input p, locked, ${t.checkpoints} cp
  WHERE p.parent <> '' AND cp.thread_id = p.thread_id AND cp.checkpoint_ns = p.checkpoint_ns
    AND cp.checkpoint_id = p.parent
  FOR SHARE OF cp
),
required AS (
  SELECT r.i FROM locked, unnest(
    ${param.required_puts}::int4[], ${param.required_channels}::text[], ${param.required_versions}::text[]
  ) AS r (i, channel, version)
  JOIN input p ON p.i = r.i
  CROSS JOIN LATERAL (
    SELECT 1 FROM ${t.blobs} bl
    WHERE bl.thread_id = p.thread_id AND bl.checkpoint_ns = p.checkpoint_ns
      AND bl.channel = r.channel AND bl.version = r.version
    FOR KEY SHARE
  ) bl
),
outcomes AS (
  SELECT p.i, CASE
    WHEN p.parent <> '' AND parents.i IS NULL THEN 'parent-missing'
    WHEN coalesce(found.n, 0) <> p.required THEN 'base-missing'
    ELSE 'stored'
  END AS outcome
  FROM input p
  LEFT JOIN parents ON parents.i = p.i
  LEFT JOIN (SELECT required.i, count(*) AS n FROM required GROUP BY required.i) found ON found.i = p.i
),
allowed AS (SELECT p.* FROM input p JOIN outcomes o ON o.i = p.i WHERE o.outcome = 'stored'),
pieces AS (
  INSERT INTO ${t.pieces} (thread_id, hash, blob)
  SELECT a.thread_id, x.hash, x.blob
  FROM unnest(${param.piece_puts}::int4[], ${param.piece_hashes}::bytea[], ${param.piece_values}::bytea[])
    AS x (i, hash, blob)
  JOIN allowed a ON a.i = x.i
  ON CONFLICT (thread_id, hash) DO NOTHING
),
blobs AS (
  INSERT INTO ${t.blobs} (thread_id, checkpoint_ns, channel, version, type, blob, base, keep)
  SELECT a.thread_id, a.checkpoint_ns, b.channel, b.version, b.type,
    CASE WHEN b.type = 'empty' THEN NULL ELSE b.blob END,
    NULLIF(b.base, ''), CASE WHEN b.base = '' THEN NULL ELSE b.keep END
  FROM unnest(
    ${param.blob_puts}::int4[], ${param.blob_channels}::text[], ${param.blob_versions}::text[],
    ${param.blob_types}::text[], ${param.blob_values}::bytea[], ${param.blob_bases}::text[], ${param.blob_keeps}::int4[]
  ) AS b (i, channel, version, type, blob, base, keep)
  JOIN allowed a ON a.i = b.i
  ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
),
-- A thread's activity moves on at most once a second: its column is indexed, so each change is a
-- new row version with new index entries (a busy thread's puts bloated the table and its index).
thread AS (
  INSERT INTO ${t.threads} (thread_id, last_activity) SELECT a.thread_id, now() FROM allowed a
  ON CONFLICT (thread_id) DO UPDATE SET last_activity = EXCLUDED.last_activity
  WHERE ${t.threads}.last_activity < EXCLUDED.last_activity - INTERVAL '1 second'
),
stored AS (
  INSERT INTO ${t.checkpoints} (${columns})
  SELECT a.thread_id, a.checkpoint_ns, a.checkpoint_id, NULLIF(a.parent, ''), a.checkpoint::jsonb, a.metadata::jsonb
  FROM allowed a
  ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
  DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata
)
SELECT outcome FROM outcomes ORDER BY i`,
      decode: (rows: ReadonlyArray<{ readonly outcome: PutOutcome }>) => rows.map((row) => row.outcome)
    })

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

  return {
    put: put(false),
    putOne: put(true),

    // Writes of distinct threads' tasks, in one statement; shares each
    // thread's lock with other writers (see put).
    putWrites: statement({
      params: (calls: ReadonlyArray<WritesCall>) => {
        const writes = calls.flatMap(({ checkpoint, writes }) => writes.map((write) => ({ checkpoint, write })))
        const pieces = calls.flatMap(({ checkpoint, pieces }) => pieces.map((piece) => ({ checkpoint, piece })))
        return {
          thread_ids: writes.map(({ checkpoint }) => checkpoint.thread_id),
          checkpoint_nss: writes.map(({ checkpoint }) => checkpoint.checkpoint_ns),
          checkpoint_ids: writes.map(({ checkpoint }) => checkpoint.checkpoint_id),
          task_ids: writes.map(({ write }) => write.task_id),
          task_paths: writes.map(({ write }) => write.task_path),
          ...writeArrays(writes.map(({ write }) => write)),
          piece_threads: pieces.map(({ checkpoint }) => checkpoint.thread_id),
          ...pieceArrays(pieces.map(({ piece }) => piece))
        }
      },
      text: (param) => `
WITH input AS (
  SELECT * FROM unnest(
    ${param.thread_ids}::text[], ${param.checkpoint_nss}::text[], ${param.checkpoint_ids}::text[],
    ${param.task_ids}::text[], ${param.task_paths}::text[], ${param.write_idxs}::int4[],
    ${param.write_channels}::text[], ${param.write_types}::text[], ${param.write_values}::bytea[]
  ) AS w (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
),
locked AS (
  SELECT count(*) AS n FROM (
    SELECT 1 FROM ${t.threads} WHERE thread_id = ANY(${param.thread_ids}::text[]) ORDER BY thread_id FOR SHARE
  ) th
),
pieces AS (
  INSERT INTO ${t.pieces} (thread_id, hash, blob)
  SELECT p.thread_id, p.hash, p.blob
  FROM unnest(${param.piece_threads}::text[], ${param.piece_hashes}::bytea[], ${param.piece_values}::bytea[])
    AS p (thread_id, hash, blob), locked
  ON CONFLICT (thread_id, hash) DO NOTHING
)
INSERT INTO ${t.writes} (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
SELECT w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.task_path, w.idx, w.channel, w.type, w.blob
FROM input w, locked
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
DO UPDATE SET task_path = EXCLUDED.task_path, channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob
WHERE EXCLUDED.idx < 0`
    }),

    getTuple: tuple(false),
    getLatest: tuple(true),

    listAll: list(true),
    listThread: list(false),

    channelWrites: statement({
      params: (input: CheckpointAddress & { readonly channel: string }) => input,
      text: (param) => `
SELECT task_id, task_path, idx, channel, type, blob FROM ${t.writes}
WHERE thread_id = ${param.thread_id} AND checkpoint_ns = ${param.checkpoint_ns}
  AND checkpoint_id = ${param.checkpoint_id} AND channel = ${param.channel}`,
      decode: (rows: ReadonlyArray<Omit<WriteRow, "bytes"> & { readonly blob: Uint8Array }>) =>
        rows.map(({ blob, ...write }): WriteRow => ({ ...write, bytes: blob }))
    }),

    ancestorsOf: ancestors(false),
    ancestorsOfLatest: ancestors(true),

    threadExists: statement({
      params: ofThread,
      text: (param) => `SELECT EXISTS (SELECT 1 FROM ${t.checkpoints} WHERE thread_id = ${param.thread_id}) AS present`,
      decode: (rows: ReadonlyArray<{ readonly present: boolean }>) => rows[0]?.present === true
    }),

    threadIndex: statement({
      params: ofThread,
      text: (param) => `
SELECT cp.checkpoint_ns, cp.checkpoint_id, cp.parent_checkpoint_id,
  ARRAY(SELECT jsonb_object_keys(cp.checkpoint -> 'channel_versions')) AS channels,
  -- One primary-key probe per channel (the LIMIT keeps the planner from hashing every blob of the
  -- namespace once per checkpoint, which made reading a long thread's index quadratic).
  ARRAY(
    SELECT v.key FROM jsonb_each_text(cp.checkpoint -> 'channel_versions') AS v
    CROSS JOIN LATERAL (
      SELECT 1 FROM ${t.blobs} bl
      WHERE bl.thread_id = cp.thread_id AND bl.checkpoint_ns = cp.checkpoint_ns
        AND bl.channel = v.key AND bl.version = v.value AND bl.type <> 'empty'
      LIMIT 1
    ) found
  ) AS stored,
  ARRAY(
    SELECT DISTINCT cw.channel FROM ${t.writes} cw
    WHERE cw.thread_id = cp.thread_id AND cw.checkpoint_ns = cp.checkpoint_ns AND cw.checkpoint_id = cp.checkpoint_id
  ) AS written,
  CASE WHEN jsonb_typeof(cp.metadata -> 'run_id') = 'string' THEN cp.metadata ->> 'run_id' END AS run_id
FROM ${t.checkpoints} cp WHERE cp.thread_id = ${param.thread_id}`,
      decode: (
        rows: ReadonlyArray<
          & Omit<IndexEntry, "parent_checkpoint_id" | "run_id">
          & { readonly parent_checkpoint_id: string | null; readonly run_id: string | null }
        >
      ) =>
        rows.map((row): IndexEntry => ({
          ...row,
          parent_checkpoint_id: row.parent_checkpoint_id ?? undefined,
          run_id: row.run_id === null ? undefined : Jsonb.decodeText(row.run_id)
        }))
    }),

    // "" for no parent: an array of only nulls has no type the client can infer.
    setParents: statement({
      params: ({ thread_id, checkpoints }: {
        readonly thread_id: string
        readonly checkpoints: ReadonlyArray<
          Pick<IndexEntry, "checkpoint_ns" | "checkpoint_id" | "parent_checkpoint_id">
        >
      }) => ({
        thread_id,
        checkpoint_namespaces: checkpoints.map((c) => c.checkpoint_ns),
        checkpoint_ids: checkpoints.map((c) => c.checkpoint_id),
        checkpoint_parents: checkpoints.map((c) => c.parent_checkpoint_id ?? "")
      }),
      text: (param) => `
UPDATE ${t.checkpoints} cp SET parent_checkpoint_id = NULLIF(u.parent, '')
FROM unnest(${param.checkpoint_namespaces}::text[], ${param.checkpoint_ids}::text[], ${param.checkpoint_parents}::text[])
  AS u (checkpoint_ns, checkpoint_id, parent)
WHERE cp.thread_id = ${param.thread_id} AND cp.checkpoint_ns = u.checkpoint_ns AND cp.checkpoint_id = u.checkpoint_id`
    }),

    threads: statement({
      params: () => ({}),
      text: () => `
SELECT th.thread_id, th.last_activity FROM ${t.threads} th
WHERE EXISTS (SELECT 1 FROM ${t.checkpoints} cp WHERE cp.thread_id = th.thread_id)`,
      decode: (rows: ReadonlyArray<{ readonly thread_id: string; readonly last_activity: Date }>) => rows
    }),

    // A scan of every checkpoint's metadata: a maintenance query.
    threadsOfRuns: statement({
      params: ({ run_ids }: { readonly run_ids: ReadonlyArray<string> }) => ({
        run_ids: run_ids.map(Jsonb.encodeText)
      }),
      text: (param) => `
SELECT DISTINCT thread_id FROM ${t.checkpoints}
WHERE jsonb_typeof(metadata -> 'run_id') = 'string' AND metadata ->> 'run_id' = ANY(${param.run_ids}::text[])`,
      decode: (rows: ReadonlyArray<{ readonly thread_id: string }>) => rows.map((row) => row.thread_id)
    }),

    // What stays referenced is worked out once, from the checkpoints that
    // stay: their blobs, the bases those extend (`StorageFormat.BASE_DEPTH` deep),
    // and the pieces of all of them and of the remaining writes. (Every part
    // reads the statement's one snapshot, so removed rows are excluded by name.)
    remove: statement({
      params: ({ thread_id, checkpoints }: {
        readonly thread_id: string
        readonly checkpoints: ReadonlyArray<{ readonly checkpoint_ns: string; readonly checkpoint_id: string }>
      }) => ({
        thread_id,
        checkpoint_namespaces: checkpoints.map((c) => c.checkpoint_ns),
        checkpoint_ids: checkpoints.map((c) => c.checkpoint_id)
      }),
      text: (param) => `
WITH gone (checkpoint_ns, checkpoint_id) AS (
    SELECT * FROM unnest(${param.checkpoint_namespaces}::text[], ${param.checkpoint_ids}::text[])
  ),
  removed_checkpoints AS (
    DELETE FROM ${t.checkpoints} cp USING gone
    WHERE cp.thread_id = ${param.thread_id}
      AND cp.checkpoint_ns = gone.checkpoint_ns AND cp.checkpoint_id = gone.checkpoint_id
  ),
  removed_writes AS (
    DELETE FROM ${t.writes} cw USING gone
    WHERE cw.thread_id = ${param.thread_id}
      AND cw.checkpoint_ns = gone.checkpoint_ns AND cw.checkpoint_id = gone.checkpoint_id
  ),
  referenced AS (
    SELECT DISTINCT cp.checkpoint_ns, v.key AS channel, v.value AS version
    FROM ${t.checkpoints} cp CROSS JOIN LATERAL jsonb_each_text(cp.checkpoint -> 'channel_versions') AS v
    WHERE cp.thread_id = ${param.thread_id} AND NOT EXISTS (
      SELECT 1 FROM gone WHERE gone.checkpoint_ns = cp.checkpoint_ns AND gone.checkpoint_id = cp.checkpoint_id
    )
  ),
  direct AS (
    SELECT bl.checkpoint_ns, bl.channel, bl.version, bl.base, bl.type, bl.blob
    FROM ${t.blobs} bl JOIN referenced r
      ON bl.checkpoint_ns = r.checkpoint_ns AND bl.channel = r.channel AND bl.version = r.version
    WHERE bl.thread_id = ${param.thread_id}
  ),${
        keptDepths.slice(1).map((depth) => `
  ${keptAt(depth)} AS (
    SELECT bb.checkpoint_ns, bb.channel, bb.version, bb.base, bb.type, bb.blob
    FROM ${keptAt(depth - 1)} d JOIN ${t.blobs} bb
      ON bb.thread_id = ${param.thread_id} AND bb.checkpoint_ns = d.checkpoint_ns AND bb.channel = d.channel
        AND bb.version = d.base
  ),`).join("")
      }
  kept AS (
    ${keptDepths.map((depth) => `SELECT * FROM ${keptAt(depth)}`).join("\n    UNION ")}
  ),
  removed_blobs AS (
    DELETE FROM ${t.blobs} bl
    WHERE bl.thread_id = ${param.thread_id} AND NOT EXISTS (
      SELECT 1 FROM kept k WHERE k.checkpoint_ns = bl.checkpoint_ns AND k.channel = bl.channel AND k.version = bl.version
    )
  ),
  lists AS (
    SELECT k.blob AS list FROM kept k WHERE k.type IN (${listTypes})
    UNION ALL
    SELECT cw.blob FROM ${t.writes} cw
    WHERE cw.thread_id = ${param.thread_id} AND cw.type IN (${listTypes}) AND NOT EXISTS (
      SELECT 1 FROM gone WHERE gone.checkpoint_ns = cw.checkpoint_ns AND gone.checkpoint_id = cw.checkpoint_id
    )
  ),
  live AS (SELECT DISTINCT l.hash FROM lists, LATERAL (${hashesOf("lists.list")}) l)
DELETE FROM ${t.pieces} p
WHERE p.thread_id = ${param.thread_id} AND NOT EXISTS (SELECT 1 FROM live WHERE live.hash = p.hash)`
    }),

    // One statement, so one snapshot: a put committing meanwhile is in it whole or not at all.
    threadRows: statement({
      params: ofThread,
      text: (param) => threadProjection(t, param.thread_id),
      decode: (rows: ReadonlyArray<ThreadRow>, { thread_id }) => toThreadRows(thread_id, rows[0]!)
    }),

    // Rows are updated in place, never deleted and inserted again: a put
    // waiting for the thread then finds its parent as before. Rows the new
    // set lacks (a replaced copy's, pieces given new addresses) go. The
    // arrays are those `threadRows` reads, "" and -1 for none.
    writeThread: statement({
      params: (rows: ThreadRows) => ({
        thread_id: rows.thread_id,
        last_activity: rows.last_activity,
        checkpoint_namespaces: rows.checkpoints.map((c) => c.checkpoint_ns),
        checkpoint_ids: rows.checkpoints.map((c) => c.checkpoint_id),
        checkpoint_parents: rows.checkpoints.map((c) => c.parent_checkpoint_id ?? ""),
        checkpoint_headers: rows.checkpoints.map((c) => JSON.stringify(c.checkpoint)),
        checkpoint_metadata: rows.checkpoints.map((c) => Jsonb.encode(c.metadata)),
        blob_namespaces: rows.blobs.map((b) => b.checkpoint_ns),
        ...blobArrays(rows.blobs),
        write_namespaces: rows.writes.map((w) => w.checkpoint_ns),
        write_checkpoint_ids: rows.writes.map((w) => w.checkpoint_id),
        write_task_ids: rows.writes.map((w) => w.task_id),
        write_task_paths: rows.writes.map((w) => w.task_path),
        ...writeArrays(rows.writes),
        ...pieceArrays(rows.pieces)
      }),
      text: (param) => `
WITH c (checkpoint_ns, checkpoint_id, parent, checkpoint, metadata) AS (
    SELECT * FROM unnest(
      ${param.checkpoint_namespaces}::text[], ${param.checkpoint_ids}::text[], ${param.checkpoint_parents}::text[],
      ${param.checkpoint_headers}::text[], ${param.checkpoint_metadata}::text[]
    )
  ),
  b (checkpoint_ns, channel, version, type, blob, base, keep) AS (
    SELECT * FROM unnest(
      ${param.blob_namespaces}::text[], ${param.blob_channels}::text[], ${param.blob_versions}::text[],
      ${param.blob_types}::text[], ${param.blob_values}::bytea[], ${param.blob_bases}::text[],
      ${param.blob_keeps}::int4[]
    )
  ),
  w (checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) AS (
    SELECT * FROM unnest(
      ${param.write_namespaces}::text[], ${param.write_checkpoint_ids}::text[], ${param.write_task_ids}::text[],
      ${param.write_task_paths}::text[], ${param.write_idxs}::int4[], ${param.write_channels}::text[],
      ${param.write_types}::text[], ${param.write_values}::bytea[]
    )
  ),
  p (hash, blob) AS (SELECT * FROM unnest(${param.piece_hashes}::bytea[], ${param.piece_values}::bytea[])),
  checkpoints AS (
    INSERT INTO ${t.checkpoints} (${columns})
    SELECT ${param.thread_id}, c.checkpoint_ns, c.checkpoint_id, NULLIF(c.parent, ''), c.checkpoint::jsonb,
      c.metadata::jsonb
    FROM c
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET parent_checkpoint_id = EXCLUDED.parent_checkpoint_id,
      checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata
  ),
  blobs AS (
    INSERT INTO ${t.blobs} (thread_id, checkpoint_ns, channel, version, type, blob, base, keep)
    SELECT ${param.thread_id}, b.checkpoint_ns, b.channel, b.version, b.type,
      CASE WHEN b.type = 'empty' THEN NULL ELSE b.blob END,
      NULLIF(b.base, ''), CASE WHEN b.base = '' THEN NULL ELSE b.keep END
    FROM b
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE SET type = EXCLUDED.type, blob = EXCLUDED.blob,
      base = EXCLUDED.base, keep = EXCLUDED.keep
  ),
  writes AS (
    INSERT INTO ${t.writes} (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
    SELECT ${param.thread_id}, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.task_path, w.idx, w.channel, w.type,
      w.blob
    FROM w
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET task_path = EXCLUDED.task_path,
      channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob
  ),
  pieces AS (
    INSERT INTO ${t.pieces} (thread_id, hash, blob) SELECT ${param.thread_id}, p.hash, p.blob FROM p
    ON CONFLICT (thread_id, hash) DO UPDATE SET blob = EXCLUDED.blob
  ),
  stale_checkpoints AS (
    DELETE FROM ${t.checkpoints} x WHERE x.thread_id = ${param.thread_id} AND NOT EXISTS (
      SELECT 1 FROM c WHERE c.checkpoint_ns = x.checkpoint_ns AND c.checkpoint_id = x.checkpoint_id
    )
  ),
  stale_blobs AS (
    DELETE FROM ${t.blobs} x WHERE x.thread_id = ${param.thread_id} AND NOT EXISTS (
      SELECT 1 FROM b WHERE b.checkpoint_ns = x.checkpoint_ns AND b.channel = x.channel AND b.version = x.version
    )
  ),
  stale_writes AS (
    DELETE FROM ${t.writes} x WHERE x.thread_id = ${param.thread_id} AND NOT EXISTS (
      SELECT 1 FROM w WHERE w.checkpoint_ns = x.checkpoint_ns AND w.checkpoint_id = x.checkpoint_id
        AND w.task_id = x.task_id AND w.idx = x.idx
    )
  ),
  stale_pieces AS (
    DELETE FROM ${t.pieces} x WHERE x.thread_id = ${param.thread_id} AND NOT EXISTS (SELECT 1 FROM p WHERE p.hash = x.hash)
  )
INSERT INTO ${t.threads} (thread_id, last_activity) VALUES (${param.thread_id}, ${param.last_activity})
ON CONFLICT (thread_id) DO UPDATE SET last_activity = EXCLUDED.last_activity`
    }),

    // Writers of the thread touch this row in every put, so they wait while it is locked.
    lockThread: statement({
      params: ofThread,
      text: (param) => `
INSERT INTO ${t.threads} (thread_id, last_activity) VALUES (${param.thread_id}, now())
ON CONFLICT (thread_id) DO UPDATE SET last_activity = ${t.threads}.last_activity`
    }),

    threadRecord: statement({
      params: ofThread,
      text: (param) => `SELECT ${recordColumns("th")} FROM ${t.threads} th WHERE th.thread_id = ${param.thread_id}`,
      decode: (rows: ReadonlyArray<RecordRow>) => Option.map(Option.fromUndefinedOr(rows[0]), toRecord)
    }),

    setThreadRecord: setRecord(false),
    mergeThreadRecord: setRecord(true),

    /** By {@link searchVariant}. */
    searchThreadRecords: searches,

    deleteThread: statement({
      params: ofThread,
      text: (param) => `
WITH writes AS (DELETE FROM ${t.writes} WHERE thread_id = ${param.thread_id}),
  blobs AS (DELETE FROM ${t.blobs} WHERE thread_id = ${param.thread_id}),
  pieces AS (DELETE FROM ${t.pieces} WHERE thread_id = ${param.thread_id}),
  checkpoints AS (DELETE FROM ${t.checkpoints} WHERE thread_id = ${param.thread_id})
DELETE FROM ${t.threads} WHERE thread_id = ${param.thread_id}`
    })
  }
}

/**
 * The statements of one set of tables.
 *
 * @since 0.1.0
 */
export type Statements = ReturnType<typeof statements>
