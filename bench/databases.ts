/**
 * The bench's databases: each scenario's own, on the bench's server, made
 * by the tests' `createDatabase` and all dropped at the end; and what they
 * take on disk.
 */
import { admin, createDatabase } from "../test/support/databases.ts"

/** Databases made on the server at `serverUrl`, remembered so that `dropAll` removes every one. */
export const scratchDatabases = (serverUrl: string) => {
  const drops: Array<() => Promise<unknown>> = []
  return {
    create: async (name: string) => {
      const database = await createDatabase(`bench_${name}`, serverUrl)
      drops.push(database.drop)
      return database
    },
    dropAll: async () => {
      for (const drop of drops.splice(0)) await drop()
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

/**
 * Every table in the database at `url` (a saver's own database: whatever
 * it created, thread and migration tables too).
 */
export const allTableBytes = (url: string) => relationBytes(url, "c.relkind = 'r'")

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
