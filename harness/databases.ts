/**
 * Fresh databases on the test server, one per suite, so suites running in
 * parallel never see each other's tables.
 */
import { Effect } from "effect"
import { Client } from "pg"
import { inject } from "vitest"
import { EffectCheckpointSaver, type SaverOptions } from "../src/index.ts"

export const serverUrl = () => inject("databaseUrl")

const urlOf = (url: string, database: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

/** Runs statements on the server's own database. */
export const admin = async <A>(f: (client: Client) => Promise<A>, url = serverUrl()): Promise<A> => {
  const client = new Client({ connectionString: url })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

/**
 * Makes every statement on the database at `url` run SERIALIZABLE by the
 * server's own default (which any pooler passes through), for sessions that
 * start from now on.
 */
export const serializableByDefault = (url: string) =>
  admin(
    (client) =>
      client.query(
        `DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET default_transaction_isolation = %L', current_database(), 'serializable'); END $$`
      ),
    url
  )

/**
 * Creates an empty database on `server` (default: the test server) and
 * returns its URL and a function that drops it.
 */
export const createDatabase = async (prefix: string, server = serverUrl()) => {
  const name = `lce_${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  await admin((client) => client.query(`CREATE DATABASE "${name}"`), server)
  return {
    url: urlOf(server, name),
    drop: () => admin((client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`), server)
  }
}

/** Runs `f` against a fresh database, dropped afterwards. */
export const withDatabase = <A, E, R>(prefix: string, f: (url: string) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.promise(() => createDatabase(prefix)),
    (database) => f(database.url),
    (database) => Effect.promise(() => database.drop())
  )

/** Runs `f` with this library's saver on the database at `url` (any connection string), closed afterwards. */
export const withSaverOn = async <A>(
  url: string,
  f: (saver: EffectCheckpointSaver) => Promise<A>,
  options: SaverOptions = {}
): Promise<A> => {
  const saver = await EffectCheckpointSaver.fromConnString(url, options)
  try {
    return await f(saver)
  } finally {
    await saver.close()
  }
}
