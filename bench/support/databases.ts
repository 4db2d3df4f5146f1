/**
 * The bench's databases: each scenario's own, on the bench's server, made
 * by the tests' `createDatabase` and all dropped at the end; and what they
 * take on disk.
 */
import { admin, createDatabase } from "../../harness/databases.ts"

/** Databases made on the server at `serverUrl`, remembered so that `dropAll` removes every one. */
export const scratchDatabases = (serverUrl: string) => {
  const made: Array<{ readonly url: string; readonly drop: () => Promise<unknown> }> = []
  return {
    create: async (name: string) => {
      const { url, drop } = await createDatabase(`bench_${name}`, serverUrl)
      const database = {
        url,
        drop: () => {
          const at = made.indexOf(database)
          if (at >= 0) made.splice(at, 1)
          return drop()
        }
      }
      made.push(database)
      return database
    },
    /**
     * Does now the server's background work that the writes so far left
     * due (autovacuum and autoanalyze of every database, a checkpoint), so
     * that it does not land in the middle of a read scenario: on two cores
     * it slows whichever saver it overlaps, which is noise in a comparison.
     */
    settle: async () => {
      for (const { url } of made) await admin((client) => client.query("VACUUM ANALYZE"), url)
      // CHECKPOINT needs a superuser or pg_checkpoint: without either, the vacuums alone.
      await admin((client) => client.query("CHECKPOINT").catch(() => undefined), serverUrl)
    },
    dropAll: async () => {
      while (made.length > 0) await made.at(-1)!.drop()
    }
  }
}

export type ScratchDatabases = ReturnType<typeof scratchDatabases>

/** The bytes of the tables `which` selects (a condition on `pg_class c`), indexes and TOAST included, after a VACUUM. */
const relationBytes = (url: string, which: string) =>
  admin(async (client) => {
    await client.query("VACUUM ANALYZE")
    const result = await client.query<{ bytes: string }>(`
      SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes
      FROM pg_class c
      WHERE ${which} AND c.relnamespace = 'public'::regnamespace`)
    return Number(result.rows[0]!.bytes)
  }, url)

/** The savers' four tables in the database at `url`. */
export const tableBytes = (url: string) =>
  relationBytes(
    url,
    "c.relname IN ('checkpoints', 'checkpoint_blobs', 'checkpoint_writes', 'checkpoint_pieces')"
  )

/** A table as stored: its rows, its own bytes (heap, TOAST, free-space and visibility maps) and its indexes'. */
export interface TableSize {
  readonly name: string
  readonly rows: number
  readonly tableBytes: number
  readonly indexBytes: number
}

/**
 * Every table in the database at `url` (a saver's own database: whatever
 * it created, thread and migration tables too), after a VACUUM ANALYZE
 * (which counts a small table's rows exactly).
 */
export const tableSizes = (url: string): Promise<Array<TableSize>> =>
  admin(async (client) => {
    await client.query("VACUUM ANALYZE")
    const result = await client.query<{ name: string; rows: string; table_bytes: string; index_bytes: string }>(`
      SELECT c.relname AS name, greatest(c.reltuples, 0)::bigint AS rows,
        pg_table_size(c.oid) AS table_bytes, pg_indexes_size(c.oid) AS index_bytes
      FROM pg_class c
      WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace
      ORDER BY c.relname`)
    return result.rows.map((row) => ({
      name: row.name,
      rows: Number(row.rows),
      tableBytes: Number(row.table_bytes),
      indexBytes: Number(row.index_bytes)
    }))
  }, url)

/** The bytes of live data: checkpoint documents, blobs and writes (what deleting rows frees). */
export const liveBytes = (url: string) =>
  admin(async (client) => {
    const result = await client.query<{ bytes: string }>(`
      SELECT (SELECT coalesce(sum(pg_column_size(checkpoint) + pg_column_size(metadata)), 0) FROM checkpoints)
           + (SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_blobs)
           + (SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_writes)
           + (SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_pieces) AS bytes`)
    return Number(result.rows[0]!.bytes)
  }, url)
