/**
 * PgBouncer in transaction mode in front of a PostgreSQL server, started by
 * the tests themselves from Debian's `pgbouncer` (`apt-get install -y
 * pgbouncer`, which `.ci/run` does when it is missing): its ini and user
 * list in a temporary directory readable by the `postgres` user (PgBouncer
 * refuses to run as root), a free loopback port, no Unix socket. Without
 * PgBouncer the tests fail saying how to install it; they never skip.
 *
 * Stopped and removed by `stop`, and when this process ends without
 * calling it (a failure, a signal, a crash): a shell between the test and
 * PgBouncer waits on a pipe from this process and cleans up when it closes.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Client } from "pg"
import { freePort, own, serverUser } from "./postgresServer.ts"

const candidates = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer", "/usr/local/bin/pgbouncer"]

/** The PgBouncer executable, or an error saying how to get one. */
export const pgbouncerBinary = (): string => {
  const found = candidates.find((path) => existsSync(path))
  if (found === undefined) {
    throw new Error(
      "The topology tests run PgBouncer in front of PostgreSQL and need the pgbouncer executable " +
        `(looked in ${candidates.join(", ")}): install it with \`apt-get install -y pgbouncer\` ` +
        "(.ci/run installs it when it is missing)."
    )
  }
  return found
}

/** A server PgBouncer forwards to. */
export interface Upstream {
  readonly host: string
  readonly port: number
}

export interface Bouncer {
  readonly port: number
  /** `url` (a database on the upstream server) as reached through the pooler: same user and database. */
  readonly through: (url: string) => string
  /** Forwards new server connections to `upstream` from now on (rewrites the ini, then RELOAD). */
  readonly repoint: (upstream: Upstream) => Promise<void>
  /** Runs a command on PgBouncer's admin console (`SHOW POOLS`, `KILL db`, …). */
  readonly console: (command: string) => Promise<ReadonlyArray<Record<string, unknown>>>
  /** The pooler's log so far. */
  readonly log: () => string
  readonly stop: () => Promise<void>
}

export interface BouncerOptions {
  /** Added to the `[pgbouncer]` section. */
  readonly settings?: Readonly<Record<string, string | number>>
  /**
   * Databases declared by name (the rest reach the server through `*`).
   * Only these follow `repoint` at once: PgBouncer keeps the databases it
   * made from `*` as they were until they idle out.
   */
  readonly databases?: ReadonlyArray<string>
}

const ini = (dir: string, port: number, upstream: Upstream, options: BouncerOptions) =>
  [
    "[databases]",
    ...(options.databases ?? []).map((name) => `${name} = host=${upstream.host} port=${upstream.port} dbname=${name}`),
    `* = host=${upstream.host} port=${upstream.port}`,
    "",
    "[pgbouncer]",
    "listen_addr = 127.0.0.1",
    `listen_port = ${port}`,
    "unix_socket_dir =",
    "auth_type = trust",
    `auth_file = ${join(dir, "userlist.txt")}`,
    "admin_users = postgres",
    "pool_mode = transaction",
    "default_pool_size = 20",
    "max_client_conn = 1000",
    `logfile = ${join(dir, "pgbouncer.log")}`,
    ...Object.entries(options.settings ?? {}).map(([name, value]) => `${name} = ${value}`),
    ""
  ].join("\n")

const accepting = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: "127.0.0.1", port })
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

/**
 * PgBouncer in front of the server `serverUrl` names (its user and password
 * go to the user list, for servers that ask for one).
 */
export const startPgBouncer = async (serverUrl: string, options: BouncerOptions = {}): Promise<Bouncer> => {
  const binary = pgbouncerBinary()
  const server = new URL(serverUrl)
  const dir = mkdtempSync(join(tmpdir(), "lce-pgbouncer-"))
  own(dir)
  const port = await freePort()
  const users = new Set([decodeURIComponent(server.username) || "postgres", "postgres", "lce_cockroach"])
  const password = decodeURIComponent(server.password)
  writeFileSync(join(dir, "userlist.txt"), [...users].map((user) => `"${user}" "${password}"\n`).join(""))
  own(join(dir, "userlist.txt"))
  const write = (upstream: Upstream) => {
    writeFileSync(join(dir, "pgbouncer.ini"), ini(dir, port, upstream, options))
    own(join(dir, "pgbouncer.ini"))
  }
  write({ host: server.hostname, port: Number(server.port || 5432) })

  const owner = serverUser()
  // A shell between: it stops PgBouncer and removes the directory once its standard input closes,
  // which happens when `stop` ends it and when this process dies, however it dies.
  const child: ChildProcess = spawn(
    "sh",
    [
      "-c",
      `"$0" "$1" & pid=$!; read -r _; kill -TERM $pid; wait $pid; rm -rf "$2"`,
      binary,
      join(dir, "pgbouncer.ini"),
      dir
    ],
    { ...(owner === undefined ? {} : { uid: owner.uid, gid: owner.gid }), stdio: ["pipe", "ignore", "pipe"] }
  )
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => void (stderr += chunk.toString()))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const cleanup = () => {
    child.stdin?.end()
    rmSync(dir, { recursive: true, force: true })
  }
  process.once("exit", cleanup)
  const log = () => {
    try {
      return readFileSync(join(dir, "pgbouncer.log"), "utf8")
    } catch {
      return ""
    }
  }

  const deadline = Date.now() + 10_000
  while (!(await accepting(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      cleanup()
      throw new Error(`PgBouncer did not start (exit ${child.exitCode}): ${stderr}${log()}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 25))
  }

  const adminConsole = async (command: string) => {
    const client = new Client({ host: "127.0.0.1", port, user: "postgres", database: "pgbouncer" })
    await client.connect()
    try {
      return (await client.query(command)).rows as ReadonlyArray<Record<string, unknown>>
    } finally {
      await client.end()
    }
  }

  return {
    port,
    through: (url) => {
      const parsed = new URL(url)
      parsed.hostname = "127.0.0.1"
      parsed.port = String(port)
      return parsed.toString()
    },
    repoint: async (upstream) => {
      write(upstream)
      await adminConsole("RELOAD")
    },
    console: adminConsole,
    log,
    stop: async () => {
      process.removeListener("exit", cleanup)
      child.stdin?.end()
      await exited
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
