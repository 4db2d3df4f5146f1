/**
 * The one SQL driver: a {@link StorageDriver} over `effect/sql`'s `SqlClient`,
 * serving PostgreSQL, PGlite and CockroachDB. Every operation is a single
 * statement, so each is atomic on its own and costs one round trip:
 *
 * - `put`: a data-modifying CTE locks the thread's row, checks the parent
 *   and the blobs its shared lists rely on, inserts the new pieces and the
 *   changed channels' blobs (from `unnest` over parallel arrays), touches
 *   the thread's last activity and upserts the checkpoint row.
 * - `putWrites`: one upsert whose `WHERE` applies LangGraph's rule: special
 *   channels replace, ordinary writes keep the first.
 * - `getTuple` and each `list` page: one query; blobs and writes come back as
 *   parallel one-dimensional arrays (`bytea[]` in the binary protocol), and
 *   the pieces their shared lists refer to once per page.
 * - `ancestors`: one recursive query that stops once every channel is seeded.
 * - `deleteThread`: one statement deleting from every table, run holding
 *   the thread's row.
 *
 * @since 0.1.0
 */
import { Context, Effect, Option, Stream } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import type { Location } from "../Checkpoint.ts"
import { StorageFailure } from "../CheckpointError.ts"
import * as Retry from "../Retry.ts"
import * as Sharing from "../Sharing.ts"
import type {
  BlobRow,
  CheckpointRow,
  ListSelection,
  PutOutcome,
  SharedBase,
  StorageDriver,
  StoredCheckpoint,
  ThreadRows,
  WriteRow
} from "../StorageDriver.ts"
import * as Jsonb from "./Jsonb.ts"
import type { Tables } from "./Tables.ts"

/**
 * @since 0.1.0
 */
export interface SqlDriverOptions {
  /** Checkpoints fetched per `list` query (default 100). */
  readonly pageSize?: number | undefined
}

/** A checkpoint row as the tuple projection returns it. */
interface TupleRow {
  readonly thread_id: string
  readonly checkpoint_ns: string
  readonly checkpoint_id: string
  readonly parent_checkpoint_id: string | null
  readonly checkpoint: CheckpointRow["checkpoint"]
  readonly metadata: string
  readonly blob_channels: ReadonlyArray<string> | null
  readonly blob_versions: ReadonlyArray<string> | null
  readonly blob_types: ReadonlyArray<string> | null
  readonly blob_values: ReadonlyArray<Uint8Array | null> | null
  readonly blob_bases: ReadonlyArray<string | null> | null
  readonly blob_keeps: ReadonlyArray<number | null> | null
  readonly blob_base_lists: ReadonlyArray<Uint8Array | null> | null
  readonly blob_base_bases: ReadonlyArray<string | null> | null
  readonly blob_base_keeps: ReadonlyArray<number | null> | null
  readonly blob_base_base_lists: ReadonlyArray<Uint8Array | null> | null
  readonly blob_base_base_bases: ReadonlyArray<string | null> | null
  readonly write_task_ids: ReadonlyArray<string> | null
  readonly write_task_paths: ReadonlyArray<string> | null
  readonly write_idxs: ReadonlyArray<number> | null
  readonly write_channels: ReadonlyArray<string> | null
  readonly write_types: ReadonlyArray<string> | null
  readonly write_values: ReadonlyArray<Uint8Array> | null
  readonly piece_hashes: ReadonlyArray<Uint8Array> | null
  readonly piece_values: ReadonlyArray<Uint8Array> | null
}

/** The columns of {@link TupleRow} a `tuples` CTE holds (besides the page's pieces). */
const tupleColumns = [
  "thread_id",
  "checkpoint_ns",
  "checkpoint_id",
  "parent_checkpoint_id",
  "checkpoint",
  "metadata",
  "blob_channels",
  "blob_versions",
  "blob_types",
  "blob_values",
  "blob_bases",
  "blob_keeps",
  "blob_base_lists",
  "blob_base_bases",
  "blob_base_keeps",
  "blob_base_base_lists",
  "blob_base_base_bases",
  "write_task_ids",
  "write_task_paths",
  "write_idxs",
  "write_channels",
  "write_types",
  "write_values"
] as const satisfies ReadonlyArray<keyof TupleRow>

/** The stored types of shared lists, as an SQL list. */
const listTypes = Sharing.LIST_TYPES.map((type) => `'${type}'`).join(", ")

/** The hashes a list (a `bytea` of back-to-back hashes) holds, as rows `hash`. */
const hashesOf = (list: string) =>
  `SELECT DISTINCT substring(${list} FROM 1 + ${Sharing.HASH_BYTES} * i FOR ${Sharing.HASH_BYTES}) AS hash
   FROM generate_series(0, length(${list}) / ${Sharing.HASH_BYTES} - 1) AS i`

/**
 * Continues a `WITH` whose CTE `page` holds checkpoint rows: selects them as
 * full tuples, in `order`. With `channels`, only blobs and writes of the
 * channels in that array expression. Shared lists come with their bases'
 * lists (two deep); the pieces any of them refers to come once for the whole page, on
 * its first row, so a page of a long thread sends each message once.
 */
const tupleProjection = (t: Tables, order: string, channels?: string, known?: string) =>
  `,
tuples AS (
  SELECT page.thread_id, page.checkpoint_ns, page.checkpoint_id, page.parent_checkpoint_id, page.checkpoint,
    page.metadata::text AS metadata,
    b.channels AS blob_channels, b.versions AS blob_versions, b.types AS blob_types, b.blobs AS blob_values,
    b.bases AS blob_bases, b.keeps AS blob_keeps, b.base_lists AS blob_base_lists,
    b.base_bases AS blob_base_bases, b.base_keeps AS blob_base_keeps,
    b.base_base_lists AS blob_base_base_lists, b.base_base_bases AS blob_base_base_bases,
    w.task_ids AS write_task_ids, w.task_paths AS write_task_paths, w.idxs AS write_idxs,
    w.channels AS write_channels, w.types AS write_types, w.blobs AS write_values,
    coalesce(b.refs, ''::bytea) || coalesce(w.refs, ''::bytea) AS refs,
    row_number() OVER (ORDER BY ${order}) AS position
  FROM page
  LEFT JOIN LATERAL (
    SELECT array_agg(bl.channel) AS channels, array_agg(bl.version) AS versions,
      array_agg(bl.type) AS types, array_agg(bl.blob) AS blobs,
      array_agg(bl.base) AS bases, array_agg(bl.keep) AS keeps, array_agg(bb.blob) AS base_lists,
      array_agg(bb.base) AS base_bases, array_agg(bb.keep) AS base_keeps,
      array_agg(bbb.blob) AS base_base_lists, array_agg(bbb.base) AS base_base_bases,
      -- Every piece the lists may need (a base's own entries past what is kept too: a few).
      string_agg(
        CASE WHEN bl.type IN (${listTypes})
          THEN bl.blob || coalesce(bb.blob, ''::bytea)
            || coalesce(substring(bbb.blob FROM 1 FOR ${Sharing.HASH_BYTES} * bb.keep), ''::bytea) END,
        ''::bytea
      ) AS refs
    FROM jsonb_each_text(page.checkpoint -> 'channel_versions') AS v (channel, version)
    -- One primary-key probe per channel, whatever the table's size (the LIMIT
    -- keeps the planner from turning the probes into a scan of every blob).
    CROSS JOIN LATERAL (
      SELECT bl.channel, bl.version, bl.type, bl.blob, bl.base, bl.keep FROM ${t.blobs} bl
      WHERE bl.thread_id = page.thread_id AND bl.checkpoint_ns = page.checkpoint_ns
        AND bl.channel = v.channel AND bl.version = v.version AND bl.type <> 'empty'
      LIMIT 1
    ) bl
    LEFT JOIN LATERAL (
      SELECT bb.blob, bb.base, bb.keep FROM ${t.blobs} bb
      WHERE bb.thread_id = page.thread_id AND bb.checkpoint_ns = page.checkpoint_ns
        AND bb.channel = bl.channel AND bb.version = bl.base
      LIMIT 1
    ) bb ON true
    LEFT JOIN LATERAL (
      SELECT bbb.blob, bbb.base FROM ${t.blobs} bbb
      WHERE bbb.thread_id = page.thread_id AND bbb.checkpoint_ns = page.checkpoint_ns
        AND bbb.channel = bl.channel AND bbb.version = bb.base
      LIMIT 1
    ) bbb ON true${
    channels === undefined ? "" : `
    WHERE v.channel = ANY(${channels})`
  }
  ) b ON true
  LEFT JOIN LATERAL (
    SELECT array_agg(cw.task_id) AS task_ids, array_agg(cw.task_path) AS task_paths, array_agg(cw.idx) AS idxs,
      array_agg(cw.channel) AS channels, array_agg(cw.type) AS types, array_agg(cw.blob) AS blobs,
      string_agg(CASE WHEN cw.type IN (${listTypes}) THEN cw.blob END, ''::bytea) AS refs
    FROM ${t.writes} cw
    WHERE cw.thread_id = page.thread_id AND cw.checkpoint_ns = page.checkpoint_ns
      AND cw.checkpoint_id = page.checkpoint_id${channels === undefined ? "" : ` AND cw.channel = ANY(${channels})`}
  ) w ON true
),
hashes AS (
  SELECT DISTINCT tuples.thread_id, h.hash FROM tuples, LATERAL (${hashesOf("tuples.refs")}) h${
    known === undefined ? "" : `
  -- Pieces the caller has already are not sent again.
  WHERE NOT EXISTS (SELECT 1 FROM (${hashesOf(known)}) AS known WHERE known.hash = h.hash)`
  }
),
pieces AS (
  SELECT array_agg(p.hash) AS hashes, array_agg(p.blob) AS blobs
  FROM hashes
  CROSS JOIN LATERAL (
    SELECT p.hash, p.blob FROM ${t.pieces} p WHERE p.thread_id = hashes.thread_id AND p.hash = hashes.hash LIMIT 1
  ) p
)
SELECT ${tupleColumns.map((column) => `tuples.${column}`).join(", ")},
  CASE WHEN tuples.position = 1 THEN pieces.hashes END AS piece_hashes,
  CASE WHEN tuples.position = 1 THEN pieces.blobs END AS piece_values
FROM tuples CROSS JOIN pieces
ORDER BY tuples.position`

const columns = "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata"
const newestFirst = "page.checkpoint_id DESC, page.thread_id, page.checkpoint_ns"

/** Every statement the driver runs, built once per set of tables. */
const statements = (t: Tables) => ({
  // A put whose parent is gone (its thread was deleted or pruned meanwhile)
  // writes nothing and returns no row: a slow writer cannot bring a deleted
  // thread back half alive. The parent row is read with FOR SHARE, so a
  // delete running at the same time is waited for and seen.
  // The thread's row is locked first: operations that remove blobs and
  // pieces hold it, so what this put then finds (with locking reads, which
  // see the latest rows) stays until it commits. A put whose parent or
  // required blobs are gone writes nothing and says which.
  put: `
WITH locked AS (
  SELECT count(*) AS n FROM (SELECT 1 FROM ${t.threads} WHERE thread_id = $1 FOR NO KEY UPDATE) th
),
parent AS (
  SELECT 1 FROM ${t.checkpoints} cp, locked
  WHERE $4::text IS NOT NULL AND cp.thread_id = $1 AND cp.checkpoint_ns = $2 AND cp.checkpoint_id = $4
  FOR SHARE OF cp
),
required AS (
  SELECT 1 FROM locked, unnest($13::text[], $14::text[]) AS r (channel, version)
  CROSS JOIN LATERAL (
    SELECT 1 FROM ${t.blobs} bl
    WHERE bl.thread_id = $1 AND bl.checkpoint_ns = $2 AND bl.channel = r.channel AND bl.version = r.version
    FOR KEY SHARE
  ) bl
),
allowed AS (
  SELECT 1 AS ok FROM locked
  WHERE ($4::text IS NULL OR EXISTS (SELECT 1 FROM parent))
    AND (SELECT count(*) FROM required) = cardinality($13::text[])
),
pieces AS (
  INSERT INTO ${t.pieces} (thread_id, hash, blob)
  SELECT $1, p.hash, p.blob FROM unnest($15::bytea[], $16::bytea[]) AS p (hash, blob), allowed
  ON CONFLICT (thread_id, hash) DO NOTHING
),
blobs AS (
  INSERT INTO ${t.blobs} (thread_id, checkpoint_ns, channel, version, type, blob, base, keep)
  SELECT $1, $2, b.channel, b.version, b.type, CASE WHEN b.type = 'empty' THEN NULL ELSE b.blob END,
    NULLIF(b.base, ''), CASE WHEN b.base = '' THEN NULL ELSE b.keep END
  FROM unnest($7::text[], $8::text[], $9::text[], $10::bytea[], $11::text[], $12::int4[])
    AS b (channel, version, type, blob, base, keep), allowed
  ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
),
thread AS (
  INSERT INTO ${t.threads} (thread_id, last_activity) SELECT $1, now() FROM allowed
  ON CONFLICT (thread_id) DO UPDATE SET last_activity = EXCLUDED.last_activity
),
stored AS (
  INSERT INTO ${t.checkpoints} (${columns})
  SELECT $1, $2, $3, $4, $5::jsonb, $6::jsonb FROM allowed
  ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
  DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata
  RETURNING 1
)
SELECT CASE
  WHEN EXISTS (SELECT 1 FROM stored) THEN 'stored'
  WHEN $4::text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM parent) THEN 'parent-missing'
  ELSE 'base-missing'
END AS outcome`,

  // Shares the thread's lock with other writers (see put).
  putWrites: `
WITH locked AS (
  SELECT count(*) AS n FROM (SELECT 1 FROM ${t.threads} WHERE thread_id = $1 FOR SHARE) th
),
pieces AS (
  INSERT INTO ${t.pieces} (thread_id, hash, blob)
  SELECT $1, p.hash, p.blob FROM unnest($10::bytea[], $11::bytea[]) AS p (hash, blob), locked
  ON CONFLICT (thread_id, hash) DO NOTHING
)
INSERT INTO ${t.writes} (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
SELECT $1, $2, $3, $4, $5, w.idx, w.channel, w.type, w.blob
FROM unnest($6::int4[], $7::text[], $8::text[], $9::bytea[]) AS w (idx, channel, type, blob), locked
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
DO UPDATE SET task_path = EXCLUDED.task_path, channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob
WHERE EXCLUDED.idx < 0`,

  // $1 thread, $2 namespace, $3 the hashes of the pieces the caller has (back to back), $4 checkpoint id.
  getTuple: `
WITH page AS (
  SELECT ${columns} FROM ${t.checkpoints}
  WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $4
)${tupleProjection(t, newestFirst, undefined, "$3::bytea")}`,

  getLatest: `
WITH page AS (
  SELECT ${columns} FROM ${t.checkpoints}
  WHERE thread_id = $1 AND checkpoint_ns = $2
  ORDER BY checkpoint_id DESC LIMIT 1
)${tupleProjection(t, newestFirst, undefined, "$3::bytea")}`,

  // $1 thread (or null: every thread), $2 namespace, $3 checkpoint id, $4 before,
  // $5 metadata filter, $6 page size, then the position after the previous page.
  list: (everyThread: boolean) => `
WITH page AS (
  SELECT ${columns} FROM ${t.checkpoints} cp
  WHERE ${everyThread ? "$1::text IS NULL" : "cp.thread_id = $1"}
    AND ($2::text IS NULL OR cp.checkpoint_ns = $2)
    AND ($3::text IS NULL OR cp.checkpoint_id = $3)
    AND ($4::text IS NULL OR cp.checkpoint_id < $4)
    AND NOT EXISTS (
      SELECT 1 FROM jsonb_each($5::jsonb) AS f
      WHERE (cp.metadata -> f.key) IS DISTINCT FROM f.value
    )
    AND ($7::text IS NULL OR (cp.checkpoint_id, $8::text, $9::text) < ($7, cp.thread_id, cp.checkpoint_ns))
  ORDER BY cp.checkpoint_id DESC, cp.thread_id, cp.checkpoint_ns
  LIMIT $6
)${tupleProjection(t, newestFirst)}`,

  channelWrites: `
SELECT task_id, task_path, idx, channel, type, blob FROM ${t.writes}
WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3 AND channel = $4`,

  // The parent chain of the target, nearest first. `remaining` holds the
  // channels not yet seeded above a row; the walk stops once it is empty.
  ancestors: (latest: boolean) => `
WITH RECURSIVE target AS (
  SELECT thread_id, checkpoint_ns, parent_checkpoint_id FROM ${t.checkpoints}
  WHERE thread_id = $1 AND checkpoint_ns = $2 AND ${latest ? "$3::text IS NULL" : "checkpoint_id = $3"}
  ORDER BY checkpoint_id DESC LIMIT 1
),
page AS (
  SELECT p.thread_id, p.checkpoint_ns, p.checkpoint_id, p.parent_checkpoint_id, p.checkpoint, p.metadata,
    $4::text[] AS remaining, 0 AS depth
  FROM target
  JOIN ${t.checkpoints} p ON p.thread_id = target.thread_id AND p.checkpoint_ns = target.checkpoint_ns
    AND p.checkpoint_id = target.parent_checkpoint_id
  UNION ALL
  SELECT p.thread_id, p.checkpoint_ns, p.checkpoint_id, p.parent_checkpoint_id, p.checkpoint, p.metadata,
    unseeded.channels, c.depth + 1
  FROM page c
  CROSS JOIN LATERAL (
    SELECT ARRAY(
      SELECT ch FROM unnest(c.remaining) AS ch
      WHERE NOT EXISTS (
        SELECT 1 FROM ${t.blobs} bl
        WHERE bl.thread_id = c.thread_id AND bl.checkpoint_ns = c.checkpoint_ns AND bl.channel = ch
          AND bl.version = c.checkpoint -> 'channel_versions' ->> ch AND bl.type <> 'empty'
      )
    ) AS channels
  ) unseeded
  JOIN ${t.checkpoints} p ON p.thread_id = c.thread_id AND p.checkpoint_ns = c.checkpoint_ns
    AND p.checkpoint_id = c.parent_checkpoint_id
  WHERE cardinality(unseeded.channels) > 0
)${tupleProjection(t, "page.depth", "page.remaining")}`,

  threadExists: `SELECT EXISTS (SELECT 1 FROM ${t.checkpoints} WHERE thread_id = $1) AS present`,

  threadIndex: `
SELECT cp.checkpoint_ns, cp.checkpoint_id, cp.parent_checkpoint_id,
  ARRAY(SELECT jsonb_object_keys(cp.checkpoint -> 'channel_versions')) AS channels,
  ARRAY(
    SELECT v.key FROM jsonb_each_text(cp.checkpoint -> 'channel_versions') AS v
    WHERE EXISTS (
      SELECT 1 FROM ${t.blobs} bl
      WHERE bl.thread_id = cp.thread_id AND bl.checkpoint_ns = cp.checkpoint_ns
        AND bl.channel = v.key AND bl.version = v.value AND bl.type <> 'empty'
    )
  ) AS stored,
  ARRAY(
    SELECT DISTINCT cw.channel FROM ${t.writes} cw
    WHERE cw.thread_id = cp.thread_id AND cw.checkpoint_ns = cp.checkpoint_ns AND cw.checkpoint_id = cp.checkpoint_id
  ) AS written,
  CASE WHEN jsonb_typeof(cp.metadata -> 'run_id') = 'string' THEN cp.metadata ->> 'run_id' END AS run_id
FROM ${t.checkpoints} cp WHERE cp.thread_id = $1`,

  setParents: `
UPDATE ${t.checkpoints} cp SET parent_checkpoint_id = NULLIF(u.parent, '')
FROM unnest($2::text[], $3::text[], $4::text[]) AS u (checkpoint_ns, checkpoint_id, parent)
WHERE cp.thread_id = $1 AND cp.checkpoint_ns = u.checkpoint_ns AND cp.checkpoint_id = u.checkpoint_id`,

  threads: `
SELECT th.thread_id, th.last_activity FROM ${t.threads} th
WHERE EXISTS (SELECT 1 FROM ${t.checkpoints} cp WHERE cp.thread_id = th.thread_id)`,

  // A scan of every checkpoint's metadata: a maintenance query.
  threadsOfRuns: `
SELECT DISTINCT thread_id FROM ${t.checkpoints}
WHERE jsonb_typeof(metadata -> 'run_id') = 'string' AND metadata ->> 'run_id' = ANY($1::text[])`,

  // What stays referenced is worked out once, from the checkpoints that
  // stay: their blobs, the bases those extend (two deep), and the pieces of
  // all of them and of the remaining writes. (Every part reads the statement's one snapshot, so
  // removed rows are excluded by name.)
  remove: `
WITH gone (checkpoint_ns, checkpoint_id) AS (SELECT * FROM unnest($2::text[], $3::text[])),
  removed_checkpoints AS (
    DELETE FROM ${t.checkpoints} cp USING gone
    WHERE cp.thread_id = $1 AND cp.checkpoint_ns = gone.checkpoint_ns AND cp.checkpoint_id = gone.checkpoint_id
  ),
  removed_writes AS (
    DELETE FROM ${t.writes} cw USING gone
    WHERE cw.thread_id = $1 AND cw.checkpoint_ns = gone.checkpoint_ns AND cw.checkpoint_id = gone.checkpoint_id
  ),
  referenced AS (
    SELECT DISTINCT cp.checkpoint_ns, v.key AS channel, v.value AS version
    FROM ${t.checkpoints} cp CROSS JOIN LATERAL jsonb_each_text(cp.checkpoint -> 'channel_versions') AS v
    WHERE cp.thread_id = $1 AND NOT EXISTS (
      SELECT 1 FROM gone WHERE gone.checkpoint_ns = cp.checkpoint_ns AND gone.checkpoint_id = cp.checkpoint_id
    )
  ),
  direct AS (
    SELECT bl.checkpoint_ns, bl.channel, bl.version, bl.base, bl.type, bl.blob
    FROM ${t.blobs} bl JOIN referenced r
      ON bl.checkpoint_ns = r.checkpoint_ns AND bl.channel = r.channel AND bl.version = r.version
    WHERE bl.thread_id = $1
  ),
  bases AS (
    SELECT bb.checkpoint_ns, bb.channel, bb.version, bb.base, bb.type, bb.blob
    FROM direct d JOIN ${t.blobs} bb
      ON bb.thread_id = $1 AND bb.checkpoint_ns = d.checkpoint_ns AND bb.channel = d.channel AND bb.version = d.base
  ),
  kept AS (
    SELECT * FROM direct
    UNION SELECT * FROM bases
    UNION
    SELECT bbb.checkpoint_ns, bbb.channel, bbb.version, bbb.base, bbb.type, bbb.blob
    FROM bases b JOIN ${t.blobs} bbb
      ON bbb.thread_id = $1 AND bbb.checkpoint_ns = b.checkpoint_ns AND bbb.channel = b.channel AND bbb.version = b.base
  ),
  removed_blobs AS (
    DELETE FROM ${t.blobs} bl
    WHERE bl.thread_id = $1 AND NOT EXISTS (
      SELECT 1 FROM kept k WHERE k.checkpoint_ns = bl.checkpoint_ns AND k.channel = bl.channel AND k.version = bl.version
    )
  ),
  lists AS (
    SELECT k.blob AS list FROM kept k WHERE k.type IN (${listTypes})
    UNION ALL
    SELECT cw.blob FROM ${t.writes} cw
    WHERE cw.thread_id = $1 AND cw.type IN (${listTypes}) AND NOT EXISTS (
      SELECT 1 FROM gone WHERE gone.checkpoint_ns = cw.checkpoint_ns AND gone.checkpoint_id = cw.checkpoint_id
    )
  ),
  live AS (SELECT DISTINCT l.hash FROM lists, LATERAL (${hashesOf("lists.list")}) l)
DELETE FROM ${t.pieces} p
WHERE p.thread_id = $1 AND NOT EXISTS (SELECT 1 FROM live WHERE live.hash = p.hash)`,

  // One statement, so one snapshot: a put committing meanwhile is in it whole or not at all.
  threadRows: `
SELECT th.last_activity,
  cp.namespaces AS checkpoint_namespaces, cp.ids AS checkpoint_ids, cp.parents AS checkpoint_parents,
  cp.checkpoints AS checkpoint_headers, cp.metadata AS checkpoint_metadata,
  bl.namespaces AS blob_namespaces, bl.channels AS blob_channels, bl.versions AS blob_versions,
  bl.types AS blob_types, bl.blobs AS blob_values, bl.bases AS blob_bases, bl.keeps AS blob_keeps,
  cw.namespaces AS write_namespaces, cw.checkpoint_ids AS write_checkpoint_ids, cw.task_ids AS write_task_ids,
  cw.task_paths AS write_task_paths, cw.idxs AS write_idxs, cw.channels AS write_channels,
  cw.types AS write_types, cw.blobs AS write_values,
  p.hashes AS piece_hashes, p.blobs AS piece_values
FROM (SELECT max(last_activity) AS last_activity FROM ${t.threads} WHERE thread_id = $1) th
CROSS JOIN (
  SELECT array_agg(checkpoint_ns) AS namespaces, array_agg(checkpoint_id) AS ids,
    array_agg(coalesce(parent_checkpoint_id, '')) AS parents, array_agg(checkpoint::text) AS checkpoints,
    array_agg(metadata::text) AS metadata
  FROM ${t.checkpoints} WHERE thread_id = $1
) cp
CROSS JOIN (
  SELECT array_agg(checkpoint_ns) AS namespaces, array_agg(channel) AS channels, array_agg(version) AS versions,
    array_agg(type) AS types, array_agg(blob) AS blobs, array_agg(coalesce(base, '')) AS bases,
    array_agg(coalesce(keep, -1)) AS keeps
  FROM ${t.blobs} WHERE thread_id = $1
) bl
CROSS JOIN (
  SELECT array_agg(checkpoint_ns) AS namespaces, array_agg(checkpoint_id) AS checkpoint_ids,
    array_agg(task_id) AS task_ids, array_agg(coalesce(task_path, '')) AS task_paths, array_agg(idx) AS idxs,
    array_agg(channel) AS channels, array_agg(type) AS types, array_agg(blob) AS blobs
  FROM ${t.writes} WHERE thread_id = $1
) cw
CROSS JOIN (SELECT array_agg(hash) AS hashes, array_agg(blob) AS blobs FROM ${t.pieces} WHERE thread_id = $1) p`,

  // Rows are updated in place, never deleted and inserted again: a put
  // waiting for the thread then finds its parent as before. Rows the new
  // set lacks (a replaced copy's, pieces given new addresses) go.
  writeThread: `
WITH c (checkpoint_ns, checkpoint_id, parent, checkpoint, metadata) AS (
    SELECT * FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
  ),
  b (checkpoint_ns, channel, version, type, blob, base, keep) AS (
    SELECT * FROM unnest($8::text[], $9::text[], $10::text[], $11::text[], $12::bytea[], $13::text[], $14::int4[])
  ),
  w (checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) AS (
    SELECT * FROM unnest($15::text[], $16::text[], $17::text[], $18::text[], $19::int4[], $20::text[], $21::text[], $22::bytea[])
  ),
  p (hash, blob) AS (SELECT * FROM unnest($23::bytea[], $24::bytea[])),
  checkpoints AS (
    INSERT INTO ${t.checkpoints} (${columns})
    SELECT $1, c.checkpoint_ns, c.checkpoint_id, NULLIF(c.parent, ''), c.checkpoint::jsonb, c.metadata::jsonb FROM c
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET parent_checkpoint_id = EXCLUDED.parent_checkpoint_id,
      checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata
  ),
  blobs AS (
    INSERT INTO ${t.blobs} (thread_id, checkpoint_ns, channel, version, type, blob, base, keep)
    SELECT $1, b.checkpoint_ns, b.channel, b.version, b.type, CASE WHEN b.type = 'empty' THEN NULL ELSE b.blob END,
      NULLIF(b.base, ''), CASE WHEN b.base = '' THEN NULL ELSE b.keep END
    FROM b
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE SET type = EXCLUDED.type, blob = EXCLUDED.blob,
      base = EXCLUDED.base, keep = EXCLUDED.keep
  ),
  writes AS (
    INSERT INTO ${t.writes} (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
    SELECT $1, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.task_path, w.idx, w.channel, w.type, w.blob FROM w
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET task_path = EXCLUDED.task_path,
      channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob
  ),
  pieces AS (
    INSERT INTO ${t.pieces} (thread_id, hash, blob) SELECT $1, p.hash, p.blob FROM p
    ON CONFLICT (thread_id, hash) DO UPDATE SET blob = EXCLUDED.blob
  ),
  stale_checkpoints AS (
    DELETE FROM ${t.checkpoints} x WHERE x.thread_id = $1 AND NOT EXISTS (
      SELECT 1 FROM c WHERE c.checkpoint_ns = x.checkpoint_ns AND c.checkpoint_id = x.checkpoint_id
    )
  ),
  stale_blobs AS (
    DELETE FROM ${t.blobs} x WHERE x.thread_id = $1 AND NOT EXISTS (
      SELECT 1 FROM b WHERE b.checkpoint_ns = x.checkpoint_ns AND b.channel = x.channel AND b.version = x.version
    )
  ),
  stale_writes AS (
    DELETE FROM ${t.writes} x WHERE x.thread_id = $1 AND NOT EXISTS (
      SELECT 1 FROM w WHERE w.checkpoint_ns = x.checkpoint_ns AND w.checkpoint_id = x.checkpoint_id
        AND w.task_id = x.task_id AND w.idx = x.idx
    )
  ),
  stale_pieces AS (
    DELETE FROM ${t.pieces} x WHERE x.thread_id = $1 AND NOT EXISTS (SELECT 1 FROM p WHERE p.hash = x.hash)
  )
INSERT INTO ${t.threads} (thread_id, last_activity) VALUES ($1, $2)
ON CONFLICT (thread_id) DO UPDATE SET last_activity = EXCLUDED.last_activity`,

  // Writers of the thread touch this row in every put, so they wait while it is locked.
  lockThread: `
INSERT INTO ${t.threads} (thread_id, last_activity) VALUES ($1, now())
ON CONFLICT (thread_id) DO UPDATE SET last_activity = ${t.threads}.last_activity`,

  deleteThread: `
WITH writes AS (DELETE FROM ${t.writes} WHERE thread_id = $1),
  blobs AS (DELETE FROM ${t.blobs} WHERE thread_id = $1),
  pieces AS (DELETE FROM ${t.pieces} WHERE thread_id = $1),
  checkpoints AS (DELETE FROM ${t.checkpoints} WHERE thread_id = $1)
DELETE FROM ${t.threads} WHERE thread_id = $1`
})

const zip = <A>(length: number, f: (i: number) => A): Array<A> => Array.from({ length }, (_, i) => f(i))

const toStored = (row: TupleRow, pieces: StoredCheckpoint["pieces"]): StoredCheckpoint => {
  const blobChannels = row.blob_channels ?? []
  const writeTaskIds = row.write_task_ids ?? []
  return {
    row: {
      thread_id: row.thread_id,
      checkpoint_ns: row.checkpoint_ns,
      checkpoint_id: row.checkpoint_id,
      parent_checkpoint_id: row.parent_checkpoint_id ?? undefined,
      checkpoint: row.checkpoint,
      metadata: Jsonb.decode(row.metadata)
    },
    blobs: zip(blobChannels.length, (i): BlobRow => {
      // Three levels as columns; a deeper base is named without its list, which reads as missing.
      const level = (
        version: string | null | undefined,
        keep: number,
        list: Uint8Array | null | undefined,
        base?: SharedBase
      ) => version === null || version === undefined ? undefined : { version, keep, list: list ?? undefined, base }
      return {
        channel: blobChannels[i]!,
        version: row.blob_versions![i]!,
        type: row.blob_types![i]!,
        bytes: row.blob_values![i] ?? undefined,
        base: level(
          row.blob_bases![i],
          row.blob_keeps![i]!,
          row.blob_base_lists![i],
          level(
            row.blob_base_bases![i],
            row.blob_base_keeps![i]!,
            row.blob_base_base_lists![i],
            level(row.blob_base_base_bases![i], 0, undefined)
          )
        )
      }
    }),
    writes: zip(writeTaskIds.length, (i): WriteRow => ({
      task_id: writeTaskIds[i]!,
      task_path: row.write_task_paths![i]!,
      idx: row.write_idxs![i]!,
      channel: row.write_channels![i]!,
      type: row.write_types![i]!,
      bytes: row.write_values![i]!
    })),
    pieces
  }
}

/** The rows of one query as stored checkpoints, sharing the page's pieces. */
const toStoredPage = (rows: ReadonlyArray<TupleRow>): Array<StoredCheckpoint> => {
  const first = rows[0]
  const pieces = new Map(
    zip(first?.piece_hashes?.length ?? 0, (i) => [Sharing.pieceKey(first!.piece_hashes![i]!), first!.piece_values![i]!])
  )
  return rows.map((row) => toStored(row, pieces))
}

const emptyBytes = new Uint8Array(0)

/** A thread's rows as `threadRows` returns them: parallel arrays per table ("" and -1 for none). */
interface ThreadRowsRow {
  readonly last_activity: Date | null
  readonly checkpoint_namespaces: ReadonlyArray<string> | null
  readonly checkpoint_ids: ReadonlyArray<string>
  readonly checkpoint_parents: ReadonlyArray<string>
  readonly checkpoint_headers: ReadonlyArray<string>
  readonly checkpoint_metadata: ReadonlyArray<string>
  readonly blob_namespaces: ReadonlyArray<string> | null
  readonly blob_channels: ReadonlyArray<string>
  readonly blob_versions: ReadonlyArray<string>
  readonly blob_types: ReadonlyArray<string>
  readonly blob_values: ReadonlyArray<Uint8Array | null>
  readonly blob_bases: ReadonlyArray<string>
  readonly blob_keeps: ReadonlyArray<number>
  readonly write_namespaces: ReadonlyArray<string> | null
  readonly write_checkpoint_ids: ReadonlyArray<string>
  readonly write_task_ids: ReadonlyArray<string>
  readonly write_task_paths: ReadonlyArray<string>
  readonly write_idxs: ReadonlyArray<number>
  readonly write_channels: ReadonlyArray<string>
  readonly write_types: ReadonlyArray<string>
  readonly write_values: ReadonlyArray<Uint8Array>
  readonly piece_hashes: ReadonlyArray<Uint8Array> | null
  readonly piece_values: ReadonlyArray<Uint8Array>
}

const toThreadRows = (thread_id: string, row: ThreadRowsRow): ThreadRows => ({
  thread_id,
  last_activity: row.last_activity ?? new Date(),
  checkpoints: zip(row.checkpoint_namespaces?.length ?? 0, (i): CheckpointRow => ({
    thread_id,
    checkpoint_ns: row.checkpoint_namespaces![i]!,
    checkpoint_id: row.checkpoint_ids[i]!,
    parent_checkpoint_id: row.checkpoint_parents[i] || undefined,
    checkpoint: JSON.parse(row.checkpoint_headers[i]!) as CheckpointRow["checkpoint"],
    metadata: Jsonb.decode(row.checkpoint_metadata[i]!)
  })),
  blobs: zip(row.blob_namespaces?.length ?? 0, (i) => ({
    checkpoint_ns: row.blob_namespaces![i]!,
    channel: row.blob_channels[i]!,
    version: row.blob_versions[i]!,
    type: row.blob_types[i]!,
    bytes: row.blob_values[i] ?? undefined,
    base: row.blob_bases[i] ? { version: row.blob_bases[i]!, keep: row.blob_keeps[i]! } : undefined
  })),
  writes: zip(row.write_namespaces?.length ?? 0, (i) => ({
    checkpoint_ns: row.write_namespaces![i]!,
    checkpoint_id: row.write_checkpoint_ids[i]!,
    task_id: row.write_task_ids[i]!,
    task_path: row.write_task_paths[i]!,
    idx: row.write_idxs[i]!,
    channel: row.write_channels[i]!,
    type: row.write_types[i]!,
    bytes: row.write_values[i]!
  })),
  pieces: zip(row.piece_hashes?.length ?? 0, (i) => ({ hash: row.piece_hashes![i]!, bytes: row.piece_values[i]! }))
})

/**
 * Set inside a transaction the driver opened itself (`exclusive`): its
 * statements need no savepoint of their own there.
 */
const OwnTransaction = Context.Reference<boolean>("langgraph-checkpoint-effect/sql/OwnTransaction", {
  defaultValue: () => false
})

/**
 * Builds the driver over the `SqlClient` in context.
 *
 * @since 0.1.0
 */
export const make = Effect.fnUntraced(function*(tables: Tables, options: SqlDriverOptions = {}) {
  const sql = yield* SqlClient.SqlClient
  const q = statements(tables)
  const listAll = q.list(true)
  const listThread = q.list(false)
  const ancestorsOf = q.ancestors(false)
  const ancestorsOfLatest = q.ancestors(true)
  const pageSize = options.pageSize ?? 100

  const policy = yield* Retry.RetryPolicy

  /**
   * One statement. On its own it is retried by the policy. Inside a
   * transaction the caller opened it joins that transaction (in a savepoint,
   * so a failure leaves the transaction usable) and fails at once: the caller
   * decides, and its own retry restarts its whole transaction.
   */
  const run = <A extends object>(operation: string, text: string, params: ReadonlyArray<unknown>) => {
    const statement = sql.unsafe<A>(text, params)
    return Effect.all([Effect.serviceOption(sql.transactionService), OwnTransaction]).pipe(
      Effect.flatMap(([transaction, own]) =>
        Option.isNone(transaction)
          ? statement.pipe(Retry.retrying(operation, policy))
          : own
          ? statement.pipe(Effect.mapError((cause) => Retry.failure(operation, cause)))
          : sql.withTransaction(statement).pipe(Effect.mapError((cause) => Retry.failure(operation, cause)))
      )
    )
  }

  const tuples = (operation: string, text: string, params: ReadonlyArray<unknown>) =>
    run<TupleRow>(operation, text, params).pipe(Effect.map(toStoredPage))

  const listPage = (
    selection: ListSelection,
    filter: string,
    after: StoredCheckpoint["row"] | undefined,
    limit: number
  ) =>
    tuples("list", selection.thread_id === undefined ? listAll : listThread, [
      selection.thread_id ?? null,
      selection.checkpoint_ns ?? null,
      selection.checkpoint_id ?? null,
      selection.before ?? null,
      filter,
      limit,
      after?.checkpoint_id ?? null,
      after?.thread_id ?? null,
      after?.checkpoint_ns ?? null
    ])

  const driver: StorageDriver = {
    put: (row, blobs, shared) =>
      run<{ readonly outcome: PutOutcome }>("put", q.put, [
        row.thread_id,
        row.checkpoint_ns,
        row.checkpoint_id,
        row.parent_checkpoint_id ?? null,
        JSON.stringify(row.checkpoint),
        Jsonb.encode(row.metadata),
        blobs.map((blob) => blob.channel),
        blobs.map((blob) => blob.version),
        blobs.map((blob) => blob.type),
        blobs.map((blob) => blob.bytes ?? emptyBytes),
        // "" and -1 for none: an array of only nulls has no type the client can infer.
        blobs.map((blob) => blob.base?.version ?? ""),
        blobs.map((blob) => blob.base?.keep ?? -1),
        shared.requires.map((blob) => blob.channel),
        shared.requires.map((blob) => blob.version),
        shared.pieces.map((piece) => piece.hash),
        shared.pieces.map((piece) => piece.bytes)
      ]).pipe(Effect.map((rows) => rows[0]?.outcome ?? "base-missing")),

    putWrites: (checkpoint, writes, pieces) =>
      writes.length === 0 ? Effect.void : run("putWrites", q.putWrites, [
        checkpoint.thread_id,
        checkpoint.checkpoint_ns,
        checkpoint.checkpoint_id,
        writes[0]!.task_id,
        writes[0]!.task_path,
        writes.map((write) => write.idx),
        writes.map((write) => write.channel),
        writes.map((write) => write.type),
        writes.map((write) => write.bytes),
        pieces.map((piece) => piece.hash),
        pieces.map((piece) => piece.bytes)
      ]).pipe(Effect.asVoid),

    getTuple: (location, known) =>
      (location.checkpoint_id === undefined
        ? tuples("getTuple", q.getLatest, [location.thread_id, location.checkpoint_ns, known])
        : tuples("getTuple", q.getTuple, [location.thread_id, location.checkpoint_ns, known, location.checkpoint_id]))
        .pipe(Effect.map((rows) => Option.fromUndefinedOr(rows[0]))),

    list: (selection) => {
      const filter = Jsonb.encode(
        `{${selection.filter.map(([key, json]) => `${JSON.stringify(key)}:${json}`).join(",")}}`
      )
      // Keyset pages: each page resumes after the last row of the previous one.
      return Stream.paginate(
        { after: undefined as StoredCheckpoint["row"] | undefined, left: selection.limit ?? Infinity },
        ({ after, left }) =>
          listPage(selection, filter, after, Math.min(pageSize, left)).pipe(Effect.map((page) => {
            const last = page.at(-1)?.row
            const more = page.length === Math.min(pageSize, left) && left - page.length > 0 && last !== undefined
            return [page, more ? Option.some({ after: last, left: left - page.length }) : Option.none()] as const
          }))
      )
    },

    channelWrites: (checkpoint, channel) =>
      run<Omit<WriteRow, "bytes"> & { readonly blob: Uint8Array }>("getTuple", q.channelWrites, [
        checkpoint.thread_id,
        checkpoint.checkpoint_ns,
        checkpoint.checkpoint_id,
        channel
      ]).pipe(Effect.map((rows) => rows.map(({ blob, ...write }) => ({ ...write, bytes: blob })))),

    ancestors: (location: Location, channels) =>
      location.checkpoint_id === undefined
        ? tuples("getDeltaChannelHistory", ancestorsOfLatest, [
          location.thread_id,
          location.checkpoint_ns,
          null,
          channels
        ])
        : tuples("getDeltaChannelHistory", ancestorsOf, [
          location.thread_id,
          location.checkpoint_ns,
          location.checkpoint_id,
          channels
        ]),

    // Holding the thread, so that no put is between its checks and its commit.
    deleteThread: (thread_id) =>
      driver.exclusive(thread_id, run("deleteThread", q.deleteThread, [thread_id])).pipe(Effect.asVoid),

    threadExists: (thread_id) =>
      run<{ readonly present: boolean }>("threadExists", q.threadExists, [thread_id]).pipe(
        Effect.map((rows) => rows[0]?.present === true)
      ),

    threadIndex: (thread_id) =>
      run<{
        readonly checkpoint_ns: string
        readonly checkpoint_id: string
        readonly parent_checkpoint_id: string | null
        readonly channels: ReadonlyArray<string>
        readonly stored: ReadonlyArray<string>
        readonly written: ReadonlyArray<string>
        readonly run_id: string | null
      }>("threadIndex", q.threadIndex, [thread_id]).pipe(
        Effect.map((rows) =>
          rows.map((row) => ({
            ...row,
            parent_checkpoint_id: row.parent_checkpoint_id ?? undefined,
            run_id: row.run_id === null ? undefined : Jsonb.decodeText(row.run_id)
          }))
        )
      ),

    setParents: (thread_id, checkpoints) =>
      checkpoints.length === 0 ? Effect.void : run("setParents", q.setParents, [
        thread_id,
        checkpoints.map((c) => c.checkpoint_ns),
        checkpoints.map((c) => c.checkpoint_id),
        // "" for none: an array of only nulls has no type the client can infer.
        checkpoints.map((c) => c.parent_checkpoint_id ?? "")
      ]).pipe(Effect.asVoid),

    threads: run<{ readonly thread_id: string; readonly last_activity: Date }>("threads", q.threads, []),

    threadsOfRuns: (run_ids) =>
      run<{ readonly thread_id: string }>("deleteForRuns", q.threadsOfRuns, [run_ids.map(Jsonb.encodeText)]).pipe(
        Effect.map((rows) => rows.map((row) => row.thread_id))
      ),

    remove: (thread_id, checkpoints) =>
      run("remove", q.remove, [
        thread_id,
        checkpoints.map((c) => c.checkpoint_ns),
        checkpoints.map((c) => c.checkpoint_id)
      ]).pipe(Effect.asVoid),

    threadRows: (thread_id) =>
      run<ThreadRowsRow>("threadRows", q.threadRows, [thread_id]).pipe(
        Effect.map(([row]) => toThreadRows(thread_id, row!))
      ),

    writeThread: (rows) =>
      run("writeThread", q.writeThread, [
        rows.thread_id,
        rows.last_activity,
        rows.checkpoints.map((c) => c.checkpoint_ns),
        rows.checkpoints.map((c) => c.checkpoint_id),
        rows.checkpoints.map((c) => c.parent_checkpoint_id ?? ""),
        rows.checkpoints.map((c) => JSON.stringify(c.checkpoint)),
        rows.checkpoints.map((c) => Jsonb.encode(c.metadata)),
        rows.blobs.map((b) => b.checkpoint_ns),
        rows.blobs.map((b) => b.channel),
        rows.blobs.map((b) => b.version),
        rows.blobs.map((b) => b.type),
        rows.blobs.map((b) => b.bytes ?? emptyBytes),
        rows.blobs.map((b) => b.base?.version ?? ""),
        rows.blobs.map((b) => b.base?.keep ?? -1),
        rows.writes.map((w) => w.checkpoint_ns),
        rows.writes.map((w) => w.checkpoint_id),
        rows.writes.map((w) => w.task_id),
        rows.writes.map((w) => w.task_path),
        rows.writes.map((w) => w.idx),
        rows.writes.map((w) => w.channel),
        rows.writes.map((w) => w.type),
        rows.writes.map((w) => w.bytes),
        rows.pieces.map((p) => p.hash),
        rows.pieces.map((p) => p.bytes)
      ]).pipe(Effect.asVoid),

    exclusive: (thread_id, effect) => {
      const transaction = sql.withTransaction(
        run("lockThread", q.lockThread, [thread_id]).pipe(
          Effect.andThen(effect),
          Effect.provideService(OwnTransaction, true)
        )
      )
      // Run again whole on a retryable failure (a 40001 of one of its
      // statements or of COMMIT), unless it joins a transaction already open:
      // then the outer one decides. Its work reads before it writes, so a
      // second run redoes it from what is stored then.
      const retried = transaction.pipe(
        Effect.map((value) => ({ ok: true as const, value })),
        Effect.catch((error) => {
          if (SqlError.isSqlError(error)) return Effect.fail(error)
          return error instanceof StorageFailure && error.retryable && SqlError.isSqlError(error.cause)
            ? Effect.fail(error.cause)
            : Effect.succeed({ ok: false as const, error })
        }),
        Retry.retrying("exclusive", policy),
        Effect.flatMap((outcome) => outcome.ok ? Effect.succeed(outcome.value) : Effect.fail(outcome.error))
      )
      return Effect.flatMap(
        Effect.serviceOption(sql.transactionService),
        (open) =>
          Option.isSome(open)
            ? transaction.pipe(
              Effect.mapError((error) => SqlError.isSqlError(error) ? Retry.failure("exclusive", error) : error)
            )
            : retried
      )
    }
  }
  return driver
})
