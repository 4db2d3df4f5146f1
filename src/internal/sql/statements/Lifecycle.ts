/**
 * The statements that work on threads as wholes: listing them (all, or
 * those of some runs), mending parent links, removing checkpoints with what
 * only they referenced, reading and writing every row of a thread in one
 * statement, locking one, and deleting one.
 *
 * @since 0.1.0
 */
import type { IndexEntry, ThreadRows } from "../../../StorageDriver.ts"
import * as StorageFormat from "../../StorageFormat.ts"
import * as Jsonb from "../Jsonb.ts"
import { derivedBaseOf, hashesOf, listTypes, threadProjection, type ThreadRow, toThreadRows } from "../Projection.ts"
import type { Tables } from "../Tables.ts"
import { blobColumns, checkpointColumns, columns, ofThread, pieceColumns, writeColumns } from "./Columns.ts"
import { rowStatement } from "./Rows.ts"
import { statement } from "./Statement.ts"

/**
 * `remove`'s CTEs of the blobs it keeps, by depth: at 0 (`direct`) those the
 * remaining checkpoints reference, then at each depth the bases the level
 * above extends, down to `StorageFormat.BASE_DEPTH`.
 */
const keptAt = (depth: number) => depth === 0 ? "direct" : `bases_${depth}`
const keptDepths = Array.from({ length: StorageFormat.BASE_DEPTH + 1 }, (_, depth) => depth)

/**
 * The statements on whole threads, over `t`.
 *
 * @since 0.1.0
 */
export const lifecycle = (t: Tables) => {
  return {
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
    // and the pieces of all of them and of the remaining writes, with the
    // pieces derived ones are written against. (Every part reads the
    // statement's one snapshot, so removed rows are excluded by name.)
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
  listed AS (SELECT DISTINCT l.hash FROM lists, LATERAL (${hashesOf("lists.list")}) l),
  -- With the plain pieces that derived ones among them are written against.
  live AS (
    SELECT hash FROM listed
    UNION
    SELECT ${derivedBaseOf("p.blob")} FROM listed JOIN ${t.pieces} p
      ON p.thread_id = ${param.thread_id} AND p.hash = listed.hash
    WHERE ${derivedBaseOf("p.blob")} IS NOT NULL
  )
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
    writeThread: rowStatement({
      kinds: {
        checkpoint: checkpointColumns,
        blob: { checkpoint_ns: ["text", (blob) => blob.checkpoint_ns], ...blobColumns },
        write: {
          checkpoint_ns: ["text", (write) => write.checkpoint_ns],
          checkpoint_id: ["text", (write) => write.checkpoint_id],
          ...writeColumns
        },
        piece: pieceColumns
      },
      counts: { checkpoint: "arrays", blob: "arrays", write: "arrays", piece: "arrays" },
      rows: (rows: ThreadRows) => ({
        checkpoint: rows.checkpoints,
        blob: rows.blobs,
        write: rows.writes,
        piece: rows.pieces
      }),
      text: (source, value) => {
        const param = {
          thread_id: value("text", (rows) => rows.thread_id),
          last_activity: value("timestamptz", (rows) => rows.last_activity)
        }
        return `
WITH c AS (SELECT * FROM ${source("checkpoint", "c")}),
  b AS (SELECT * FROM ${source("blob", "b")}),
  w AS (SELECT * FROM ${source("write", "w")}),
  p AS (SELECT * FROM ${source("piece", "p")}),
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
      },
      decode: () => undefined
    }),

    // Writers of the thread touch this row in every put, so they wait while it is locked.
    lockThread: statement({
      params: ofThread,
      text: (param) => `
INSERT INTO ${t.threads} (thread_id, last_activity) VALUES (${param.thread_id}, now())
ON CONFLICT (thread_id) DO UPDATE SET last_activity = ${t.threads}.last_activity`
    }),

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
