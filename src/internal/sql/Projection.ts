/**
 * The SQL driver's two wide reads and their decoders, each row shape spelled
 * once: a table of columns gives the `SELECT` list, the row's type and the
 * names its decoder reads.
 *
 * - A checkpoint as a tuple (`getTuple`, `list`, `ancestors`): its row, its
 *   blobs and writes as parallel one-dimensional arrays (CockroachDB has no
 *   others), each shared list's bases down to `StorageFormat.BASE_DEPTH`, and the
 *   pieces all of them refer to, once per page.
 * - A thread as its rows (`threadRows`): every table's rows of the thread,
 *   as parallel arrays.
 *
 * @since 0.1.0
 */
import type { BlobRow, CheckpointRow, SharedBase, StoredCheckpoint, ThreadRows, WriteRow } from "../../StorageDriver.ts"
import * as StorageFormat from "../StorageFormat.ts"
import * as Jsonb from "./Jsonb.ts"
import type { Tables } from "./Tables.ts"

/** A column of a projected row: the SQL selecting it, and (as a type only) what the client returns for it. */
interface Column<A> {
  readonly sql: string
  readonly _A?: A
}

const column = <A>(sql: string): Column<A> => ({ sql })

type Columns = Readonly<Record<string, Column<unknown>>>

/** The row a table of columns selects. */
type RowOf<C extends Columns> = { readonly [K in keyof C]: C[K] extends Column<infer A> ? A : never }

/** A table of columns as a `SELECT` list: each column's SQL under its name. */
const selectList = (columns: Columns) =>
  Object.entries(columns).map(([name, { sql }]) => `${sql} AS ${name}`).join(", ")

/** The columns of a table, as `source` holds them. */
const namesIn = (source: string, columns: Columns) => Object.keys(columns).map((name) => `${source}.${name}`).join(", ")

const zip = <A>(length: number, f: (i: number) => A): Array<A> => Array.from({ length }, (_, i) => f(i))

/**
 * The stored types of shared lists, as an SQL list.
 *
 * @since 0.1.0
 */
export const listTypes = StorageFormat.LIST_TYPES.map((type) => `'${type}'`).join(", ")

/**
 * The hashes a list (a `bytea` of back-to-back hashes) holds, as rows `hash`.
 *
 * @since 0.1.0
 */
export const hashesOf = (list: string) =>
  `SELECT DISTINCT substring(${list} FROM 1 + ${StorageFormat.HASH_BYTES} * i FOR ${StorageFormat.HASH_BYTES}) AS hash
   FROM generate_series(0, length(${list}) / ${StorageFormat.HASH_BYTES} - 1) AS i`

/**
 * The hash of the piece a piece's bytes (`blob`) are derived from, or null
 * for a piece that is not derived (see `StorageFormat.DERIVED`).
 *
 * @since 0.3.0
 */
export const derivedBaseOf = (blob: string) =>
  `CASE WHEN substring(${blob} FROM 1 FOR 1) = '\\x${
    StorageFormat.DERIVED_MARK.toString(16).padStart(2, "0")
  }'::bytea THEN substring(${blob} FROM 2 FOR ${StorageFormat.HASH_BYTES}) END`

/** The checkpoint's own columns, from `page`. */
const checkpointColumns = {
  thread_id: column<string>("page.thread_id"),
  checkpoint_ns: column<string>("page.checkpoint_ns"),
  checkpoint_id: column<string>("page.checkpoint_id"),
  parent_checkpoint_id: column<string | null>("page.parent_checkpoint_id"),
  checkpoint: column<CheckpointRow["checkpoint"]>("page.checkpoint"),
  metadata: column<string>("page.metadata::text")
}

/** Its blobs (`bl`, one per channel with a stored value), as parallel arrays; none: null. */
const blobColumns = {
  blob_channels: column<ReadonlyArray<string> | null>("array_agg(bl.channel)"),
  blob_versions: column<ReadonlyArray<string> | null>("array_agg(bl.version)"),
  blob_types: column<ReadonlyArray<string> | null>("array_agg(bl.type)"),
  blob_values: column<ReadonlyArray<Uint8Array | null> | null>("array_agg(bl.blob)")
}

/** The alias of the blob `depth` bases below a checkpoint's own blob `bl`. */
const blobAt = (depth: number) => depth === 0 ? "bl" : `base${depth}`

/** The depths of the bases a read fetches: 1 (the list a blob extends) to `StorageFormat.BASE_DEPTH`. */
const baseDepths = Array.from({ length: StorageFormat.BASE_DEPTH }, (_, i) => i + 1)

/** The names of the columns of each blob's base at a depth. */
const baseColumn = {
  version: (depth: number) => `base${depth}_versions` as const,
  keep: (depth: number) => `base${depth}_keeps` as const,
  list: (depth: number) => `base${depth}_lists` as const
}

/** The columns {@link baseColumns} adds to a {@link TupleRow}. */
interface BaseRow {
  readonly [version: `base${number}_versions`]: ReadonlyArray<string | null> | null
  readonly [keep: `base${number}_keeps`]: ReadonlyArray<number | null> | null
  readonly [list: `base${number}_lists`]: ReadonlyArray<Uint8Array | null> | null
}

/**
 * Each blob's bases, by depth: the version and `keep` the level above names,
 * and that base's list. One past the deepest, only the version: a base named
 * there is deeper than this library writes, and reads as such.
 */
const baseColumns: Columns = Object.fromEntries([
  ...baseDepths.flatMap((depth) => [
    [baseColumn.version(depth), column(`array_agg(${blobAt(depth - 1)}.base)`)],
    [baseColumn.keep(depth), column(`array_agg(${blobAt(depth - 1)}.keep)`)],
    [baseColumn.list(depth), column(`array_agg(${blobAt(depth)}.blob)`)]
  ]),
  [baseColumn.version(StorageFormat.BASE_DEPTH + 1), column(`array_agg(${blobAt(StorageFormat.BASE_DEPTH)}.base)`)]
])

/** Each base's row: one primary-key probe, by the version the level above names. */
const baseJoin = (t: Tables, depth: number) => {
  const base = blobAt(depth)
  return `
    LEFT JOIN LATERAL (
      SELECT ${base}.blob, ${base}.base, ${base}.keep FROM ${t.blobs} ${base}
      WHERE ${base}.thread_id = page.thread_id AND ${base}.checkpoint_ns = page.checkpoint_ns
        AND ${base}.channel = bl.channel AND ${base}.version = ${blobAt(depth - 1)}.base
      LIMIT 1
    ) ${base} ON true`
}

/**
 * Every piece a blob's list may need: its own, its bases' (a base's own
 * entries past what is kept too: a few), but of the deepest base, a full list
 * and long, only the entries the level above keeps.
 */
const listReferences = [
  "bl.blob",
  ...baseDepths.map((depth) => {
    const base = blobAt(depth)
    return depth < StorageFormat.BASE_DEPTH
      ? `coalesce(${base}.blob, ''::bytea)`
      : `coalesce(substring(${base}.blob FROM 1 FOR ${StorageFormat.HASH_BYTES} * ${
        blobAt(depth - 1)
      }.keep), ''::bytea)`
  })
].join("\n            || ")

/** Its pending writes (`cw`), as parallel arrays; none: null. */
const writeColumns = {
  write_task_ids: column<ReadonlyArray<string> | null>("array_agg(cw.task_id)"),
  write_task_paths: column<ReadonlyArray<string> | null>("array_agg(cw.task_path)"),
  write_idxs: column<ReadonlyArray<number> | null>("array_agg(cw.idx)"),
  write_channels: column<ReadonlyArray<string> | null>("array_agg(cw.channel)"),
  write_types: column<ReadonlyArray<string> | null>("array_agg(cw.type)"),
  write_values: column<ReadonlyArray<Uint8Array> | null>("array_agg(cw.blob)")
}

/**
 * The pieces the whole page refers to, on its first row; with each one's
 * thread when the page holds several threads (a `list` of every thread),
 * whose pieces are kept apart: one thread's row never answers another's.
 */
const pieceColumns = {
  piece_hashes: column<ReadonlyArray<Uint8Array> | null>("CASE WHEN tuples.position = 1 THEN pieces.hashes END"),
  piece_values: column<ReadonlyArray<Uint8Array> | null>("CASE WHEN tuples.position = 1 THEN pieces.blobs END"),
  piece_threads: column<ReadonlyArray<string> | null>("CASE WHEN tuples.position = 1 THEN pieces.threads END")
}

/**
 * A checkpoint row as the tuple projection returns it; `looped` with that
 * option only.
 *
 * @since 0.1.0
 */
export type TupleRow =
  & RowOf<typeof checkpointColumns>
  & RowOf<typeof blobColumns>
  & BaseRow
  & RowOf<typeof writeColumns>
  & RowOf<typeof pieceColumns>
  & { readonly looped?: boolean; readonly blob_digests?: ReadonlyArray<string | null> | null }

/**
 * Continues a `WITH` whose CTE `page` holds checkpoint rows: selects them as
 * full tuples, in `order`. With `channels`, only blobs of the channels in
 * its `blobs` array expression and writes of those in `writes` (a walk reads
 * every write of its channels, but only the blobs that seed them, so most of
 * its rows look no blob up), and only the rows that have either, the first
 * and a looped one; with `known`, a `bytea` expression of back-to-back
 * hashes, not the pieces the caller already has. Shared lists
 * come with their bases' lists; the pieces any of them refers to come once
 * for the whole page, on its first row, so a page of a long thread sends
 * each message once. With `looped`, a boolean expression over `page`, each
 * row says whether it is where a walk came back (see `ancestors`). With
 * `digests`, a `text[]` expression of MD5s the caller knows, each blob comes
 * with its digest and without the bytes when the caller knows them: a walk
 * ends at the same snapshot turn after turn, and need not send it each time.
 * With `threads`, the page may hold several threads: each piece comes with
 * its thread's id when it does.
 *
 * @since 0.1.0
 */
export const tupleProjection = (
  t: Tables,
  order: string,
  { channels, digests, known, looped, threads }: {
    readonly channels?: { readonly blobs: string; readonly writes: string }
    readonly digests?: string
    readonly known?: string
    readonly looped?: string
    readonly threads?: boolean
  } = {}
) =>
  `,
tuples AS (
  SELECT ${selectList(checkpointColumns)},${looped === undefined ? "" : ` ${looped} AS looped,`}${
    digests === undefined ? "" : " b.blob_digests,"
  }
    ${namesIn("b", blobColumns)}, ${namesIn("b", baseColumns)},
    ${namesIn("w", writeColumns)},
    coalesce(b.refs, ''::bytea) || coalesce(w.refs, ''::bytea) AS refs,
    row_number() OVER (ORDER BY ${order}) AS position
  FROM page
  LEFT JOIN LATERAL (
    SELECT ${
    selectList(
      digests === undefined ? blobColumns : {
        ...blobColumns,
        blob_values: column(`array_agg(CASE WHEN bl.digest = ANY(${digests}) THEN NULL ELSE bl.blob END)`),
        blob_digests: column("array_agg(bl.digest)")
      }
    )
  },
      ${selectList(baseColumns)},
      string_agg(
        CASE WHEN bl.type IN (${listTypes})
          THEN ${listReferences} END,
        ''::bytea
      ) AS refs
    FROM jsonb_each_text(page.checkpoint -> 'channel_versions') AS v (channel, version)
    -- One primary-key probe per channel, whatever the table's size (the LIMIT
    -- keeps the planner from turning the probes into a scan of every blob).
    CROSS JOIN LATERAL (
      SELECT bl.channel, bl.version, bl.type, bl.blob, bl.base, bl.keep${
    digests === undefined ? "" : ", md5(bl.blob) AS digest"
  } FROM ${t.blobs} bl
      WHERE bl.thread_id = page.thread_id AND bl.checkpoint_ns = page.checkpoint_ns
        AND bl.channel = v.channel AND bl.version = v.version AND bl.type <> 'empty'
      LIMIT 1
    ) bl${baseDepths.map((depth) => baseJoin(t, depth)).join("")}${
    channels === undefined ? "" : `
    WHERE v.channel = ANY(${channels.blobs})`
  }
  ) b ON true
  LEFT JOIN LATERAL (
    SELECT ${selectList(writeColumns)},
      string_agg(CASE WHEN cw.type IN (${listTypes}) THEN cw.blob END, ''::bytea) AS refs
    FROM ${t.writes} cw
    WHERE cw.thread_id = page.thread_id AND cw.checkpoint_ns = page.checkpoint_ns
      AND cw.checkpoint_id = page.checkpoint_id${
    channels === undefined ? "" : ` AND cw.channel = ANY(${channels.writes})`
  }
  ) w ON true
),
hashes AS (
  SELECT DISTINCT tuples.thread_id, h.hash FROM tuples, LATERAL (${hashesOf("tuples.refs")}) h${
    known === undefined ? "" : `
  -- Pieces the caller has already are not sent again.
  WHERE NOT EXISTS (SELECT 1 FROM (${hashesOf(known)}) AS known WHERE known.hash = h.hash)`
  }
),
found AS (
  SELECT hashes.thread_id, p.hash, p.blob, ${derivedBaseOf("p.blob")} AS base
  FROM hashes
  CROSS JOIN LATERAL (
    SELECT p.hash, p.blob FROM ${t.pieces} p WHERE p.thread_id = hashes.thread_id AND p.hash = hashes.hash LIMIT 1
  ) p
),
-- The plain pieces that derived ones found are written against, unless the page (or the caller) has them.
bases AS (
  SELECT b.thread_id, b.hash FROM (
    SELECT f.thread_id, f.base AS hash FROM found f WHERE f.base IS NOT NULL
    EXCEPT SELECT h.thread_id, h.hash FROM hashes h
  ) b${
    known === undefined ? "" : `
  WHERE NOT EXISTS (SELECT 1 FROM (${hashesOf(known)}) AS known WHERE known.hash = b.hash)`
  }
),
pieces AS (
  SELECT array_agg(p.hash) AS hashes, array_agg(p.blob) AS blobs, ${
    threads === true
      ? "CASE WHEN count(DISTINCT p.thread_id) > 1 THEN array_agg(p.thread_id) END"
      : "NULL::text[]"
  } AS threads
  FROM (
    SELECT found.thread_id, found.hash, found.blob FROM found
    UNION ALL
    SELECT bases.thread_id, b.hash, b.blob
    FROM bases
    CROSS JOIN LATERAL (
      SELECT b.hash, b.blob FROM ${t.pieces} b WHERE b.thread_id = bases.thread_id AND b.hash = bases.hash LIMIT 1
    ) b
  ) p
)
SELECT ${namesIn("tuples", checkpointColumns)},${looped === undefined ? "" : " tuples.looped,"}${
    digests === undefined ? "" : " tuples.blob_digests,"
  }
  ${namesIn("tuples", blobColumns)}, ${namesIn("tuples", baseColumns)},
  ${namesIn("tuples", writeColumns)},
  ${selectList(pieceColumns)}
FROM tuples CROSS JOIN pieces${
    channels === undefined ? "" : `
-- A walk's rows with neither a blob nor a write of its channels tell the caller nothing: left out,
-- but for the first (it carries the pieces) and one where the walk came back.
WHERE tuples.position = 1 OR tuples.blob_channels IS NOT NULL OR tuples.write_task_ids IS NOT NULL${
      looped === undefined ? "" : " OR tuples.looped"
    }`
  }
ORDER BY tuples.position`

/** Blob `i`'s base at `depth`, with the bases below it; one past the deepest, named without its list. */
const baseAt = (row: TupleRow, i: number, depth: number): SharedBase | undefined => {
  const version = row[baseColumn.version(depth)]?.[i]
  if (version === null || version === undefined) return undefined
  return depth > StorageFormat.BASE_DEPTH
    // Named, without its list: `Sharing` reads it as deeper than this library writes.
    ? { version, keep: 0, list: undefined, base: undefined }
    : {
      version,
      keep: row[baseColumn.keep(depth)]![i]!,
      list: row[baseColumn.list(depth)]![i] ?? undefined,
      base: baseAt(row, i, depth + 1)
    }
}

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
    blobs: zip(blobChannels.length, (i): BlobRow => ({
      channel: blobChannels[i]!,
      version: row.blob_versions![i]!,
      type: row.blob_types![i]!,
      bytes: row.blob_values![i] ?? undefined,
      base: baseAt(row, i, 1),
      ...(row.blob_digests?.[i] == null ? {} : { digest: row.blob_digests[i]! })
    })),
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

/**
 * The rows of one tuple query as stored checkpoints, sharing the page's pieces (each thread's own).
 *
 * @since 0.1.0
 */
export const toStoredPage = (rows: ReadonlyArray<TupleRow>): Array<StoredCheckpoint> => {
  const first = rows[0]
  const hashes = first?.piece_hashes ?? []
  const threads = first?.piece_threads
  if (threads == null) {
    const pieces = new Map(zip(hashes.length, (i) => [StorageFormat.pieceKey(hashes[i]!), first!.piece_values![i]!]))
    return rows.map((row) => toStored(row, pieces))
  }
  const byThread = new Map<string, Map<string, Uint8Array>>()
  hashes.forEach((hash, i) => {
    const pieces = byThread.get(threads[i]!) ?? byThread.set(threads[i]!, new Map()).get(threads[i]!)!
    pieces.set(StorageFormat.pieceKey(hash), first!.piece_values![i]!)
  })
  const none = new Map<string, Uint8Array>()
  return rows.map((row) => toStored(row, byThread.get(row.thread_id) ?? none))
}

/**
 * Each table's rows of the thread, as parallel arrays: null when the table
 * has none, "" and -1 for a missing value.
 */
const threadColumns = {
  thread: {
    last_activity: column<Date | null>("max(last_activity)")
  },
  checkpoints: {
    checkpoint_namespaces: column<ReadonlyArray<string> | null>("array_agg(checkpoint_ns)"),
    checkpoint_ids: column<ReadonlyArray<string>>("array_agg(checkpoint_id)"),
    checkpoint_parents: column<ReadonlyArray<string>>("array_agg(coalesce(parent_checkpoint_id, ''))"),
    checkpoint_headers: column<ReadonlyArray<string>>("array_agg(checkpoint::text)"),
    checkpoint_metadata: column<ReadonlyArray<string>>("array_agg(metadata::text)")
  },
  blobs: {
    blob_namespaces: column<ReadonlyArray<string> | null>("array_agg(checkpoint_ns)"),
    blob_channels: column<ReadonlyArray<string>>("array_agg(channel)"),
    blob_versions: column<ReadonlyArray<string>>("array_agg(version)"),
    blob_types: column<ReadonlyArray<string>>("array_agg(type)"),
    blob_values: column<ReadonlyArray<Uint8Array | null>>("array_agg(blob)"),
    blob_bases: column<ReadonlyArray<string>>("array_agg(coalesce(base, ''))"),
    blob_keeps: column<ReadonlyArray<number>>("array_agg(coalesce(keep, -1))")
  },
  writes: {
    write_namespaces: column<ReadonlyArray<string> | null>("array_agg(checkpoint_ns)"),
    write_checkpoint_ids: column<ReadonlyArray<string>>("array_agg(checkpoint_id)"),
    write_task_ids: column<ReadonlyArray<string>>("array_agg(task_id)"),
    write_task_paths: column<ReadonlyArray<string>>("array_agg(coalesce(task_path, ''))"),
    write_idxs: column<ReadonlyArray<number>>("array_agg(idx)"),
    write_channels: column<ReadonlyArray<string>>("array_agg(channel)"),
    write_types: column<ReadonlyArray<string>>("array_agg(type)"),
    write_values: column<ReadonlyArray<Uint8Array>>("array_agg(blob)")
  },
  pieces: {
    piece_hashes: column<ReadonlyArray<Uint8Array> | null>("array_agg(hash)"),
    piece_values: column<ReadonlyArray<Uint8Array>>("array_agg(blob)")
  }
}

/**
 * A thread's rows as {@link threadProjection} returns them: one row.
 *
 * @since 0.1.0
 */
export type ThreadRow =
  & RowOf<typeof threadColumns.thread>
  & RowOf<typeof threadColumns.checkpoints>
  & RowOf<typeof threadColumns.blobs>
  & RowOf<typeof threadColumns.writes>
  & RowOf<typeof threadColumns.pieces>

/**
 * Every row of the thread `thread` (an SQL expression), each table's as
 * parallel arrays, in one row.
 *
 * @since 0.1.0
 */
export const threadProjection = (t: Tables, thread: string) => {
  const tables = [
    [threadColumns.thread, t.threads, "th"],
    [threadColumns.checkpoints, t.checkpoints, "cp"],
    [threadColumns.blobs, t.blobs, "bl"],
    [threadColumns.writes, t.writes, "cw"],
    [threadColumns.pieces, t.pieces, "p"]
  ] as const
  return `
SELECT ${tables.map(([columns, , alias]) => namesIn(alias, columns)).join(",\n  ")}
FROM ${
    tables.map(([columns, table, alias]) =>
      `(SELECT ${selectList(columns)} FROM ${table} WHERE thread_id = ${thread}) ${alias}`
    )
      .join("\nCROSS JOIN ")
  }`
}

/**
 * The row of {@link threadProjection} as the thread's rows.
 *
 * @since 0.1.0
 */
export const toThreadRows = (thread_id: string, row: ThreadRow): ThreadRows => ({
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
