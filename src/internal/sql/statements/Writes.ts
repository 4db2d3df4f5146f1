/**
 * The writes of a graph's run: puts of distinct threads in one statement
 * (and of one, planned as one row), and their tasks' writes (see
 * `GroupCommit`).
 *
 * @since 0.1.0
 */
import type { BlobRow, Piece, PutOutcome, WriteRow } from "../../../StorageDriver.ts"
import type { PutCall, WritesCall, WritesOutcome } from "../Calls.ts"
import type { Tables } from "../Tables.ts"
import {
  blobColumns,
  type CheckpointAddress,
  checkpointColumns,
  columns,
  pieceColumns,
  writeColumns
} from "./Columns.ts"
import { byShape, type Count, countOf, type Kind, over, rowStatement } from "./Rows.ts"

/** Rows tagged with the put they belong to (1-based, as `input.i`). */
interface OfPut<Row> {
  readonly i: number
  readonly row: Row
}

/** A put's own fields. */
const putKind: Kind<OfPut<PutCall>> = {
  thread_id: ["text", ({ row }) => row.row.thread_id],
  ...over(checkpointColumns, ({ row }: OfPut<PutCall>) => row.row),
  required: ["int4", ({ row }) => row.shared.requires.length],
  i: ["int4", ({ i }) => i]
}

/** A put's blobs. */
const blobKind: Kind<OfPut<BlobRow>> = { i: ["int4", ({ i }) => i], ...over(blobColumns, ({ row }) => row) }

/** The blobs a put's lists extend, which must still be stored. */
const requiredKind: Kind<OfPut<{ readonly channel: string; readonly version: string }>> = {
  i: ["int4", ({ i }) => i],
  channel: ["text", ({ row }) => row.channel],
  version: ["text", ({ row }) => row.version]
}

/** The pieces a put's lists add. */
const putPieceKind: Kind<OfPut<Piece>> = { i: ["int4", ({ i }) => i], ...over(pieceColumns, ({ row }) => row) }

/** A task's write, with its checkpoint. */
const writeKind: Kind<{ readonly checkpoint: CheckpointAddress; readonly write: WriteRow }> = {
  thread_id: ["text", ({ checkpoint }) => checkpoint.thread_id],
  checkpoint_ns: ["text", ({ checkpoint }) => checkpoint.checkpoint_ns],
  checkpoint_id: ["text", ({ checkpoint }) => checkpoint.checkpoint_id],
  ...over(writeColumns, ({ write }) => write)
}

/** A piece the writes refer to, with its thread. */
const writePieceKind: Kind<{ readonly thread_id: string; readonly piece: Piece }> = {
  thread_id: ["text", ({ thread_id }) => thread_id],
  ...over(pieceColumns, ({ piece }) => piece)
}

/** A writer's epoch as a column: -1 for a writer that claimed nothing (see `StorageDriver.claimThread`). */
const epochOf = (epoch: number | undefined) => epoch ?? -1

/** A fenced put's fields: its writer's epoch too. */
const fencedPutKind: Kind<OfPut<PutCall>> = { ...putKind, epoch: ["int8", ({ row }) => epochOf(row.epoch)] }

/** A task's write, with its checkpoint and its writer's epoch. */
interface FencedWrite {
  readonly checkpoint: CheckpointAddress
  readonly write: WriteRow
  readonly epoch: number | undefined
}

/** A fenced write: the call it belongs to (1-based) and its writer's epoch too. */
const fencedWriteKind: Kind<OfPut<FencedWrite>> = {
  ...over(writeKind, ({ row }: OfPut<FencedWrite>) => row),
  i: ["int4", ({ i }) => i],
  epoch: ["int8", ({ row }) => epochOf(row.epoch)]
}

/** A fenced write's piece: the call it belongs to too. */
const fencedWritePieceKind: Kind<OfPut<{ readonly thread_id: string; readonly piece: Piece }>> = {
  ...over(writePieceKind, ({ row }: OfPut<{ readonly thread_id: string; readonly piece: Piece }>) => row),
  i: ["int4", ({ i }) => i]
}

/** Whether any of the calls was made by a writer holding a claim. */
const anyFenced = (calls: ReadonlyArray<{ readonly epoch?: number | undefined }>) =>
  calls.some((call) => call.epoch !== undefined)

/** Each put's rows of one kind, tagged with the put. */
const ofPuts = <Row>(puts: ReadonlyArray<PutCall>, rows: (put: PutCall) => ReadonlyArray<Row>) =>
  puts.flatMap((put, i) => rows(put).map((row): OfPut<Row> => ({ i: i + 1, row })))

/**
 * The writes of a graph's run, over `t`; `locks`: whether they lock the
 * rows they rely on (see `Dialect.locksRows`).
 *
 * A put or write made with a writer epoch (see `StorageDriver.claimThread`)
 * goes in a fenced statement: the threads' rows are locked (as always)
 * reading their epochs, and a call whose epoch is older than its thread's
 * writes nothing (`conflict`). A claim updates the same row, so it waits
 * for the fenced statements before it and those after it see it.
 *
 * @since 0.1.0
 */
export const writes = (t: Tables, locks = true) => {
  /** The threads' rows `input` names, locked in one order (so two batches cannot deadlock on them), with their epochs. */
  const fence = (mode: string) =>
    `SELECT th.thread_id, th.writer_epoch FROM ${t.threads} th
    WHERE th.thread_id IN (SELECT thread_id FROM input) ORDER BY th.thread_id${locks ? ` FOR ${mode}` : ""}`
  /** The same rows locked, without their epochs; without locks, nothing. */
  const lockThreads = (mode: string) =>
    locks
      ? `SELECT count(*) AS n FROM (
    SELECT 1 FROM ${t.threads} WHERE thread_id IN (SELECT thread_id FROM input) ORDER BY thread_id FOR ${mode}
  ) th`
      : "SELECT 1 AS n"
  /** The CTEs that lock the threads' rows (and, fenced, find the calls of stale writers: `stale (i)`). */
  const locking = (mode: string, fenced: boolean) =>
    fenced
      ? `fence AS (
  ${fence(mode)}
),
locked AS (SELECT count(*) AS n FROM fence),
stale AS (
  SELECT DISTINCT p.i FROM input p JOIN fence f ON f.thread_id = p.thread_id
  WHERE p.epoch >= 0 AND f.writer_epoch > p.epoch
)`
      : `locked AS (
  ${lockThreads(mode)}
)`
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
  // blobs are gone, or whose writer's claim is stale, writes nothing and
  // says which; the others are stored.
  const put = (puts: Count, blobs: Count, required: Count, pieces: Count, fenced: boolean) =>
    rowStatement({
      kinds: { put: fenced ? fencedPutKind : putKind, blob: blobKind, required: requiredKind, piece: putPieceKind },
      counts: { put: puts, blob: blobs, required, piece: pieces },
      rows: (calls: ReadonlyArray<PutCall>) => ({
        put: calls.map((row, i) => ({ i: i + 1, row })),
        blob: ofPuts(calls, (call) => call.blobs),
        required: ofPuts(calls, (call) => call.shared.requires),
        piece: ofPuts(calls, (call) => call.shared.pieces)
      }),
      text: (source) => `
WITH input AS (SELECT * FROM ${source("put", "p")}),
${locking("NO KEY UPDATE", fenced)},
parents AS (
  SELECT p.i FROM input p, locked, ${t.checkpoints} cp
  WHERE p.parent <> '' AND cp.thread_id = p.thread_id AND cp.checkpoint_ns = p.checkpoint_ns
    AND cp.checkpoint_id = p.parent
  ${lock("FOR SHARE OF cp")}
),
-- One primary-key probe per required blob: the LIMIT keeps the planner from joining on the thread
-- alone and filtering every blob of the namespace (what PGlite, whose tables have no statistics, did).
required AS (
  SELECT r.i FROM locked, ${source("required", "r")}
  JOIN input p ON p.i = r.i
  CROSS JOIN LATERAL (
    SELECT 1 FROM ${t.blobs} bl
    WHERE bl.thread_id = p.thread_id AND bl.checkpoint_ns = p.checkpoint_ns
      AND bl.channel = r.channel AND bl.version = r.version
    LIMIT 1
    ${lock("FOR KEY SHARE")}
  ) bl
),
outcomes AS (
  SELECT p.i, CASE${fenced ? "\n    WHEN p.i IN (SELECT i FROM stale) THEN 'conflict'" : ""}
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
  FROM ${source("piece", "x")}
  JOIN allowed a ON a.i = x.i
  ON CONFLICT (thread_id, hash) DO NOTHING
),
blobs AS (
  INSERT INTO ${t.blobs} (thread_id, checkpoint_ns, channel, version, type, blob, base, keep)
  SELECT a.thread_id, a.checkpoint_ns, b.channel, b.version, b.type,
    CASE WHEN b.type = 'empty' THEN NULL ELSE b.blob END,
    NULLIF(b.base, ''), CASE WHEN b.base = '' THEN NULL ELSE b.keep END
  FROM ${source("blob", "b")}
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

  // Writes of distinct threads' tasks, in one statement; shares each
  // thread's lock with other writers (see put). Fenced, a call of a stale
  // writer writes nothing and each call says how it went.
  const putWrites = (writes: Count, pieces: Count, fenced: boolean) =>
    fenced
      ? rowStatement({
        kinds: { write: fencedWriteKind, piece: fencedWritePieceKind },
        counts: { write: writes, piece: pieces },
        rows: (calls: ReadonlyArray<WritesCall>) => ({
          write: calls.flatMap(({ checkpoint, epoch, writes }, i) =>
            writes.map((write) => ({ i: i + 1, row: { checkpoint, write, epoch } }))
          ),
          piece: calls.flatMap(({ checkpoint, pieces }, i) =>
            pieces.map((piece) => ({ i: i + 1, row: { thread_id: checkpoint.thread_id, piece } }))
          )
        }),
        text: (source) => `
WITH input AS (SELECT * FROM ${source("write", "w")}),
${locking("SHARE", true)},
pieces AS (
  INSERT INTO ${t.pieces} (thread_id, hash, blob)
  SELECT p.thread_id, p.hash, p.blob
  FROM ${source("piece", "p")}, locked
  WHERE p.i NOT IN (SELECT i FROM stale)
  ON CONFLICT (thread_id, hash) DO NOTHING
),
stored AS (
  INSERT INTO ${t.writes} (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
  SELECT w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.task_path, w.idx, w.channel, w.type, w.blob
  FROM input w, locked
  WHERE w.i NOT IN (SELECT i FROM stale)
  ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
  DO UPDATE SET task_path = EXCLUDED.task_path, channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob
  WHERE EXCLUDED.idx < 0
)
SELECT i FROM stale`,
        decode: (rows: ReadonlyArray<{ readonly i: number }>, calls) => {
          const stale = new Set(rows.map((row) => Number(row.i)))
          return calls.map((_, i): WritesOutcome => stale.has(i + 1) ? "conflict" : "stored")
        }
      })
      : rowStatement({
        kinds: { write: writeKind, piece: writePieceKind },
        counts: { write: writes, piece: pieces },
        rows: (calls: ReadonlyArray<WritesCall>) => ({
          write: calls.flatMap(({ checkpoint, writes }) => writes.map((write) => ({ checkpoint, write }))),
          piece: calls.flatMap(({ checkpoint, pieces }) =>
            pieces.map((piece) => ({ thread_id: checkpoint.thread_id, piece }))
          )
        }),
        text: (source) => `
WITH input AS (SELECT * FROM ${source("write", "w")}),
${locking("SHARE", false)},
pieces AS (
  INSERT INTO ${t.pieces} (thread_id, hash, blob)
  SELECT p.thread_id, p.hash, p.blob
  FROM ${source("piece", "p")}, locked
  ON CONFLICT (thread_id, hash) DO NOTHING
)
INSERT INTO ${t.writes} (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
SELECT w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.task_path, w.idx, w.channel, w.type, w.blob
FROM input w, locked
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
DO UPDATE SET task_path = EXCLUDED.task_path, channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob
WHERE EXCLUDED.idx < 0`,
        decode: (_, calls) => calls.map((): WritesOutcome => "stored")
      })

  const putOne = byShape((puts, blobs, required, pieces, fenced) => put(puts, blobs, required, pieces, fenced === 1))
  const putWritesOne = byShape((writes, pieces, fenced) => putWrites(writes, pieces, fenced === 1))
  const putMany = [
    put("arrays", "arrays", "arrays", "arrays", false),
    put("arrays", "arrays", "arrays", "arrays", true)
  ]
  const putWritesMany = [putWrites("arrays", "arrays", false), putWrites("arrays", "arrays", true)]
  return {
    /** Puts of several threads (a batch): every row as arrays. */
    put: (calls: ReadonlyArray<PutCall>) => putMany[anyFenced(calls) ? 1 : 0]!,
    /** The statement of one put, its rows spelled out where they are few (see `Rows`). */
    putOne: ({ blobs, epoch, shared }: PutCall) =>
      putOne(
        1,
        countOf(blobs.length),
        countOf(shared.requires.length),
        countOf(shared.pieces.length),
        epoch === undefined ? 0 : 1
      ),
    /** Writes of several tasks (a batch): every row as arrays. */
    putWrites: (calls: ReadonlyArray<WritesCall>) => putWritesMany[anyFenced(calls) ? 1 : 0]!,
    /** The statement of one task's writes, spelled out where they are few. */
    putWritesOne: ({ epoch, pieces, writes }: WritesCall) =>
      putWritesOne(countOf(writes.length), countOf(pieces.length), epoch === undefined ? 0 : 1)
  }
}
