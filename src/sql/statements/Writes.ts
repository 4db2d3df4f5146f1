/**
 * The writes of a graph's run: puts of distinct threads in one statement
 * (and of one, planned as one row), and their tasks' writes (see
 * `GroupCommit`).
 *
 * @since 0.1.0
 */
import type { PutOutcome } from "../../StorageDriver.ts"
import type { PutCall, WritesCall } from "../GroupCommit.ts"
import * as Jsonb from "../Jsonb.ts"
import type { Tables } from "../Tables.ts"
import { blobArrays, columns, pieceArrays, writeArrays } from "./Common.ts"
import { statement } from "./Statement.ts"

/**
 * The writes of a graph's run, over `t`; `locks`: whether they lock the
 * rows they rely on (see `Dialect.locksRows`).
 *
 * @since 0.1.0
 */
export const writes = (t: Tables, locks = true) => {
  /** The threads' rows, locked in one order (so two batches cannot deadlock on them); without locks, nothing. */
  const lockThreads = (ids: string, mode: string) =>
    locks
      ? `SELECT count(*) AS n FROM (
    SELECT 1 FROM ${t.threads} WHERE thread_id = ANY(${ids}::text[]) ORDER BY thread_id FOR ${mode}
  ) th`
      : "SELECT 1 AS n"
  const lock = (clause: string) => locks ? clause : ""
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
  ${lockThreads(param.thread_ids, "NO KEY UPDATE")}
),
parents AS (
  SELECT p.i FROM input p, locked, ${t.checkpoints} cp
  WHERE p.parent <> '' AND cp.thread_id = p.thread_id AND cp.checkpoint_ns = p.checkpoint_ns
    AND cp.checkpoint_id = p.parent
  ${lock("FOR SHARE OF cp")}
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
    ${lock("FOR KEY SHARE")}
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
  ${lockThreads(param.thread_ids, "SHARE")}
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
    })
  }
}
