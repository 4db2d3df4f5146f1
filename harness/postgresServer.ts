/**
 * Vitest global setup: a PostgreSQL server for the tests that need one.
 *
 * With `DATABASE_URL` set, that server is used. Otherwise a throwaway server
 * is initialised in a temporary directory from the PostgreSQL binaries on
 * this machine, started on a free port, and removed afterwards. Without
 * either, the run fails with a message saying what to do: it never skips.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir, userInfo } from "node:os"
import { join } from "node:path"
import { Client } from "pg"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string
  }
}

/** The newest PostgreSQL server binaries on this machine (initdb, pg_ctl, pg_basebackup). */
export const binaries = (): string => {
  const root = "/usr/lib/postgresql"
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : []
  const found = versions.map((version) => join(root, version, "bin")).find((bin) => existsSync(join(bin, "initdb")))
  if (found === undefined) {
    throw new Error(
      "The PostgreSQL tests need a server: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres) " +
        "or install the PostgreSQL server binaries (initdb, pg_ctl) so a throwaway server can be started."
    )
  }
  return found
}

/** A loopback port nobody listens on now. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() =>
        typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))
      )
    })
  })

/** PostgreSQL refuses to run as root: run its tools as the `postgres` user then. */
export const asServerUser = (command: string, args: Array<string>) =>
  userInfo().uid === 0 ? ["runuser", ["-u", "postgres", "--", command, ...args]] as const : [command, args] as const

/** The `postgres` user, when this process runs as root (PostgreSQL and PgBouncer refuse root). */
export const serverUser = (): { readonly uid: number; readonly gid: number } | undefined =>
  userInfo().uid === 0
    ? {
      uid: Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim()),
      gid: Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim())
    }
    : undefined

/** Gives `path` to the server's user (when running as root). */
export const own = (path: string) => {
  const owner = serverUser()
  if (owner !== undefined) chownSync(path, owner.uid, owner.gid)
}

/**
 * A server of its own. `files` are written next to its data, owned by the
 * server's user and readable by it alone (e.g. a TLS key); `settings` are
 * added to its command line; `hba` replaces its pg_hba.conf.
 */
export const startThrowaway = async (
  extra: {
    readonly files?: Readonly<Record<string, string>>
    readonly settings?: (dir: string) => string
    readonly hba?: string
  } = {}
) => {
  const bin = binaries()
  const dir = mkdtempSync(join(tmpdir(), "lce-postgres-"))
  own(dir)
  for (const [name, content] of Object.entries(extra.files ?? {})) {
    writeFileSync(join(dir, name), content, { mode: 0o600 })
    own(join(dir, name))
  }
  const data = join(dir, "data")
  const port = await freePort()
  const run = (tool: string, args: Array<string>) => {
    const [command, argv] = asServerUser(join(bin, tool), args)
    const result = spawnSync(command, argv, { encoding: "utf8" })
    if (result.status !== 0) throw new Error(`${tool} failed: ${result.stderr || result.stdout}`)
  }
  run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"])
  if (extra.hba !== undefined) writeFileSync(join(data, "pg_hba.conf"), extra.hba)
  run("pg_ctl", [
    "-D",
    data,
    "-l",
    join(dir, "server.log"),
    "-w",
    "-o",
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 ${
      extra.settings?.(dir) ?? ""
    }`,
    "start"
  ])
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: () => {
      run("pg_ctl", ["-D", data, "-m", "immediate", "stop"])
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** `DATABASE_URL`, or a throwaway server. */
export const ensureServer = async (): Promise<{ readonly url: string; readonly stop: () => void }> => {
  const url = process.env.DATABASE_URL
  return url !== undefined && url !== "" ? { url, stop: () => undefined } : startThrowaway()
}

/**
 * The role the CockroachDB stand-in connects as (see `support/cockroach.ts`):
 * on PostgreSQL, every statement of its sessions runs SERIALIZABLE, as on
 * CockroachDB, by the role's own default, which the server applies at
 * connect and any pooler passes through. Created once per server, with the
 * password of the server's URL, and left there: runs of the tests at once
 * share it.
 */
export const cockroachRole = "lce_cockroach"

const createCockroachRole = async (url: string) => {
  const client = new Client({ connectionString: url })
  await client.connect()
  try {
    const password = decodeURIComponent(new URL(url).password)
    const exists = await client.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [cockroachRole])
    if (exists.rowCount === 0) {
      await client.query(`CREATE ROLE ${cockroachRole} LOGIN SUPERUSER`).catch((error: { code?: string }) => {
        // Another run created it in between.
        if (error.code !== "42710" && error.code !== "23505") throw error
      })
    }
    await client.query(`ALTER ROLE ${cockroachRole} SET default_transaction_isolation = 'serializable'`)
    if (password !== "") await client.query(`ALTER ROLE ${cockroachRole} PASSWORD '${password.replaceAll("'", "''")}'`)
  } finally {
    await client.end()
  }
}

/**
 * The server every project that names this setup shares: started by the
 * first, stopped after the last (each project may load this module anew).
 */
const shared = globalThis as { lceServer?: { users: number; server: Promise<{ url: string; stop: () => void }> } }

export default async function setup(project: TestProject) {
  const entry = shared.lceServer ??= {
    users: 0,
    server: ensureServer().then(async (server) => {
      await createCockroachRole(server.url)
      return server
    })
  }
  entry.users++
  const server = await entry.server
  project.provide("databaseUrl", server.url)
  return () => {
    if (--entry.users > 0) return
    delete shared.lceServer
    server.stop()
  }
}
