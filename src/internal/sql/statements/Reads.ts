/**
 * The reads of checkpoints: a page of `list`, one tuple (or the latest), a
 * channel's writes, the ancestor walk, and a thread's presence and index.
 * The wide reads' `SELECT` lists and decoders are in `Projection`.
 *
 * @since 0.1.0
 */
import { Option } from "effect"
import type { Location } from "../../../Checkpoint.ts"
import type {
  Ancestors,
  CheckpointRow,
  IndexEntry,
  KnownToWalk,
  ListSelection,
  WriteRow
} from "../../../StorageDriver.ts"
import * as Jsonb from "../Jsonb.ts"
import { toStoredPage, tupleProjection, type TupleRow } from "../Projection.ts"
import type { Tables } from "../Tables.ts"
import { type CheckpointAddress, columns, ofThread } from "./Columns.ts"
import { statement } from "./Statement.ts"

/** The metadata filter of a `list` as one `jsonb` object. */
const metadataFilter = (filter: ListSelection["filter"]) =>
  Jsonb.encode(`{${filter.map(([key, json]) => `${JSON.stringify(key)}:${json}`).join(",")}}`)

const newestFirst = "page.checkpoint_id DESC, page.thread_id, page.checkpoint_ns"

/**
 * The reads of checkpoints, over `t`.
 *
 * @since 0.1.0
 */
export const reads = (t: Tables) => {
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

  return {
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
    })
  }
}
