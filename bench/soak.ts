/**
 * `npm run soak`: a long run under load and faults, for what a short test
 * cannot show — turns lost or refused, and a process that grows. Writers
 * (32 by default) run chat turns through PgBouncer (transaction mode) in
 * front of a primary with a synchronous standby, for 10 minutes, each
 * starting a new conversation (thread) after 100 turns; every 8 to
 * 15 seconds a fault: the pooler's connections killed, the database paused,
 * the server's sessions terminated, the database read-only for 2 seconds;
 * once, at 60%, the primary stopped and the standby promoted. Every 30
 * seconds the heap after a full GC and the RSS are sampled. At the end:
 * turns acknowledged, lost (fewer messages stored than acknowledged turns
 * wrote), refused, the longest turn, and memory at minute 2 against the end.
 * Writes bench/results/SOAK.md, and its verdict to bench/results/soak.json
 * (`SoakVerdict`), which `npm run bench` reports.
 *
 *   npm run soak                      # 10 minutes, 32 writers, faults
 *   SOAK_MINUTES=3 SOAK_FAULTS=0 npm run soak
 */
import { resolve } from "node:path"
import { Client } from "pg"
import { startPgBouncer } from "../harness/pgbouncer.ts"
import { startReplicated } from "../harness/replication.ts"
import { chatWriters, lostTurns } from "../harness/writers.ts"
import { EffectCheckpointSaver } from "../src/index.ts"
import type { SoakVerdict } from "./support/goals.ts"
import { runDate, writeResult } from "./support/report.ts"

const minutes = Number(process.env.SOAK_MINUTES ?? 10)
const writers = Number(process.env.SOAK_WRITERS ?? 32)
const faults = process.env.SOAK_FAULTS !== "0"
/** A conversation's length: each writer then starts a new thread, as chats end (their rows stay). */
const turnsPerThread = Number(process.env.SOAK_TURNS_PER_THREAD ?? 100)
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error("run with node --expose-gc (npm run soak does)")

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(0)

const cluster = await startReplicated()
const database = "soak"
const urlOn = (server: { readonly url: string }) => {
  const url = new URL(server.url)
  url.pathname = `/${database}`
  return url.toString()
}
const sql = async (server: { readonly url: string }, text: string, values: Array<unknown> = []) => {
  const client = new Client({ connectionString: server.url })
  await client.connect()
  try {
    return await client.query(text, values)
  } finally {
    await client.end()
  }
}
await sql(cluster.primary, `CREATE DATABASE ${database}`)
const pooler = await startPgBouncer(cluster.primary.url, { settings: { server_login_retry: 1 }, databases: [database] })
let primary = cluster.primary

const terminate = () =>
  sql(
    primary,
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
     WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
    [database]
  )

/** The faults, taken in turn. */
const kinds: ReadonlyArray<readonly [string, () => Promise<void>]> = [
  ["pooler connections killed", async () => {
    await pooler.console(`KILL ${database}`)
    await pooler.console(`RESUME ${database}`)
  }],
  ["database paused 2 s", async () => {
    await pooler.console(`PAUSE ${database}`)
    await sleep(2_000)
    await pooler.console(`RESUME ${database}`)
  }],
  ["server sessions terminated", async () => {
    await terminate()
  }],
  ["read-only for 2 s", async () => {
    await sql(primary, `ALTER DATABASE ${database} SET default_transaction_read_only = on`)
    await terminate()
    await sleep(2_000)
    await sql(primary, `ALTER DATABASE ${database} RESET default_transaction_read_only`)
    await terminate()
  }]
]

const saver = await EffectCheckpointSaver.fromConnString(pooler.through(urlOn(primary)))
const run = chatWriters(saver, writers, "soak", turnsPerThread)
const started = Date.now()
const end = started + minutes * 60_000
const samples: Array<
  {
    readonly minute: number
    readonly heap: number
    readonly rss: number
    readonly buffers: number
    readonly committed: number
    readonly turns: number
  }
> = []
const injected: Array<string> = []
let failedOver = false

const sampler = (async () => {
  while (Date.now() < end) {
    await sleep(Math.min(30_000, Math.max(0, end - Date.now())))
    gc()
    const memory = process.memoryUsage()
    samples.push({
      minute: (Date.now() - started) / 60_000,
      heap: memory.heapUsed,
      rss: memory.rss,
      buffers: memory.arrayBuffers,
      committed: memory.heapTotal,
      turns: run.turns()
    })
    console.log(
      `[soak] ${samples.at(-1)!.minute.toFixed(1)} min: ${run.turns()} turns, heap ${mib(memory.heapUsed)} MiB ` +
        `(committed ${mib(memory.heapTotal)}), buffers ${mib(memory.arrayBuffers)} MiB, external ${
          mib(memory.external)
        } MiB, rss ${mib(memory.rss)} MiB`
    )
  }
})()

if (faults) {
  let next = 0
  while (Date.now() < end - 10_000) {
    await sleep(8_000 + Math.random() * 7_000)
    if (Date.now() >= end - 10_000) break
    if (!failedOver && Date.now() - started > 0.6 * minutes * 60_000) {
      failedOver = true
      cluster.stopPrimary()
      cluster.promote()
      primary = cluster.standby
      await pooler.repoint({ host: "127.0.0.1", port: cluster.standby.port })
      injected.push("failover: primary stopped, standby promoted")
      continue
    }
    const [name, inject] = kinds[next++ % kinds.length]!
    await inject()
    injected.push(name)
  }
}
await sampler
const outcome = await run.stop()
const direct = await EffectCheckpointSaver.fromConnString(urlOn(primary))
const lost = await lostTurns(direct, outcome)
await Promise.all([saver.close(), direct.close()])
await pooler.stop()
cluster.stop()

const at2 = samples.find((sample) => sample.minute >= 2) ?? samples[0]!
const last = samples.at(-1)!
const longest = outcome.longestTurn
const ratio = (a: number, b: number) => (a / b).toFixed(2)
const report = [
  "# Soak (npm run soak)",
  "",
  `Run on ${runDate()}, Node ${process.version}: ${writers} writers of chat turns ` +
  `(a new thread every ${turnsPerThread} turns) for ${minutes} minutes through PgBouncer (transaction mode) in front of a primary with a synchronous standby; ` +
  (faults ? `a fault every 8–15 s (${injected.length} in all: ${summarise(injected)}).` : "no faults."),
  "",
  `| turns acknowledged | lost | refused | longest turn | heap after GC, minute ${
    at2.minute.toFixed(1)
  } → end | RSS, minute ${at2.minute.toFixed(1)} → end |`,
  "|---:|---:|---:|---:|---|---|",
  `| ${outcome.acknowledgedAt.length} | ${lost.length} | ${outcome.rejected.length} | ${
    (longest / 1000).toFixed(1)
  } s | ${mib(at2.heap)} → ${mib(last.heap)} MiB (${ratio(last.heap, at2.heap)}x) | ${mib(at2.rss)} → ${
    mib(last.rss)
  } MiB (${ratio(last.rss, at2.rss)}x) |`,
  "",
  "| minute | turns | heap after GC MiB | heap committed MiB | array buffers MiB | RSS MiB |",
  "|---:|---:|---:|---:|---:|---:|",
  ...samples.map((sample) =>
    `| ${sample.minute.toFixed(1)} | ${sample.turns} | ${mib(sample.heap)} | ${mib(sample.committed)} | ${
      mib(sample.buffers)
    } | ${mib(sample.rss)} |`
  ),
  "",
  ...(lost.length === 0 ? [] : ["Lost:", ...lost.map((line) => `- ${line}`), ""]),
  ...(outcome.rejected.length === 0
    ? []
    : ["Refused (first 5):", ...outcome.rejected.slice(0, 5).map((error) => `- ${String(error)}`), ""])
].join("\n")
writeResult(process.env.SOAK_OUT === undefined ? "SOAK.md" : resolve(process.env.SOAK_OUT), report)
// What `npm run bench` reads for its soak goal (only a run of 10 minutes, 32 writers and faults counts there).
const verdict: SoakVerdict = {
  date: runDate(),
  minutes,
  writers,
  faults: injected.length,
  acknowledged: outcome.acknowledgedAt.length,
  lost: lost.length,
  refused: outcome.rejected.length,
  heap: last.heap / at2.heap,
  rss: last.rss / at2.rss
}
if (process.env.SOAK_OUT === undefined) {
  writeResult("soak.json", JSON.stringify(verdict, null, 2) + "\n")
}
console.log(report)

function summarise(names: ReadonlyArray<string>) {
  const counts = new Map<string, number>()
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1)
  return [...counts].map(([name, count]) => `${count} × ${name}`).join(", ")
}
