/**
 * A primary with a synchronous streaming standby, built by the tests from
 * the PostgreSQL binaries (`initdb`, `pg_basebackup -R -X stream`,
 * `pg_ctl promote`), as the `postgres` user, on loopback ports, in a
 * temporary directory: `synchronous_standby_names = '*'` makes every
 * acknowledged commit reach the standby before the primary answers, so a
 * failover may lose nothing that was acknowledged.
 *
 * Both servers are stopped and their directory removed by `stop`, and when
 * this process ends without calling it (a failure, a signal, a crash): a
 * watchdog shell waits on a pipe from this process and cleans up when it
 * closes.
 */
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Client } from "pg"
import { asServerUser, binaries, freePort, own } from "./postgresServer.ts"

export interface Server {
  readonly port: number
  readonly url: string
}

export interface Replicated {
  readonly primary: Server
  readonly standby: Server
  /** Stops the primary at once, as a crash would (`pg_ctl stop -m immediate`). */
  readonly stopPrimary: () => void
  /** Promotes the standby and waits until it accepts writes (`pg_ctl promote -w`). */
  readonly promote: () => void
  readonly stop: () => void
}

/**
 * A server's settings. Only the primary names synchronous standbys: the
 * standby, once promoted, has none, and would wait for one forever.
 */
const settings = (dir: string, port: number, primary: boolean) =>
  `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off ` +
  `-c max_connections=200 -c synchronous_commit=on -c wal_level=replica` +
  (primary ? ` -c synchronous_standby_names='*'` : "")

export const startReplicated = async (): Promise<Replicated> => {
  const bin = binaries()
  const dir = mkdtempSync(join(tmpdir(), "lce-replicated-"))
  own(dir)
  const run = (tool: string, args: Array<string>) => {
    const [command, argv] = asServerUser(join(bin, tool), args)
    const result = spawnSync(command, argv, { encoding: "utf8", timeout: 60_000 })
    if (result.status !== 0) throw new Error(`${tool} ${args.join(" ")} failed: ${result.stderr || result.stdout}`)
  }
  const data = { primary: join(dir, "primary"), standby: join(dir, "standby") }
  const running = new Set<string>()
  const stopServer = (which: string) => {
    if (!running.delete(which)) return
    const [command, argv] = asServerUser(join(bin, "pg_ctl"), ["-D", which, "-m", "immediate", "stop"])
    spawnSync(command, argv, { encoding: "utf8", timeout: 60_000 })
  }
  // Stops both servers and removes the directory once its standard input closes: when this
  // process dies without calling `stop` (a signal, a crash), the pipe closes with it.
  const pgCtl = (target: string) => asServerUser(join(bin, "pg_ctl"), ["-D", target, "-m", "immediate", "stop"])
  const quoted = (argv: ReadonlyArray<string>) => argv.map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(" ")
  const watchdog = spawn(
    "sh",
    [
      "-c",
      `read -r _; ${
        [pgCtl(data.primary), pgCtl(data.standby)].map(([command, argv]) =>
          `${quoted([command, ...argv])} >/dev/null 2>&1`
        ).join("; ")
      }; rm -rf ${quoted([dir])}`
    ],
    { stdio: ["pipe", "ignore", "ignore"] }
  )
  const stop = () => {
    process.removeListener("exit", stop)
    stopServer(data.primary)
    stopServer(data.standby)
    rmSync(dir, { recursive: true, force: true })
    watchdog.stdin?.end()
  }
  process.once("exit", stop)
  try {
    const ports = { primary: await freePort(), standby: await freePort() }
    run("initdb", ["-D", data.primary, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"])
    run("pg_ctl", [
      "-D",
      data.primary,
      "-l",
      join(dir, "primary.log"),
      "-w",
      "-o",
      settings(dir, ports.primary, true),
      "start"
    ])
    running.add(data.primary)
    run("pg_basebackup", [
      "-h",
      "127.0.0.1",
      "-p",
      String(ports.primary),
      "-U",
      "postgres",
      "-D",
      data.standby,
      "-R",
      "-X",
      "stream",
      "--no-sync"
    ])
    run("pg_ctl", [
      "-D",
      data.standby,
      "-l",
      join(dir, "standby.log"),
      "-w",
      "-o",
      settings(dir, ports.standby, false),
      "start"
    ])
    running.add(data.standby)
    const server = (port: number): Server => ({ port, url: `postgres://postgres@127.0.0.1:${port}/postgres` })
    const primary = server(ports.primary)
    // Synchronous from here on: the standby streams and acknowledges.
    const deadline = Date.now() + 30_000
    for (;;) {
      const client = new Client({ connectionString: primary.url })
      await client.connect()
      const state = await client.query<{ sync_state: string }>(
        "SELECT sync_state FROM pg_stat_replication WHERE state = 'streaming'"
      ).finally(() => client.end())
      if (state.rows.some((row) => row.sync_state === "sync")) break
      if (Date.now() > deadline) throw new Error("the standby did not become synchronous within 30 s")
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    return {
      primary,
      standby: server(ports.standby),
      stopPrimary: () => stopServer(data.primary),
      promote: () => run("pg_ctl", ["-D", data.standby, "-w", "promote"]),
      stop
    }
  } catch (cause) {
    stop()
    throw cause
  }
}
