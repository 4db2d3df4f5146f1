/**
 * `npm run bench:replicas`: the server scaled out. 50 clients of
 * LangGraph's SDK, each on a thread of its own, loop chat turns (a run
 * streamed with a new human message, `values` and `messages-tuple`, read to
 * its end and checked) against 1, 2 and 3 `serve` processes on one
 * PostgreSQL database, each client sending every call to the replica of its
 * own number (as a load balancer spreads connections), measured after a
 * warm-up (10 s: the JIT warm, the shards settled). Reported: turns/s,
 * p50 and p99 per turn, and the CPU the `serve` processes spent per turn
 * (what adding replicas scales: these machines have two cores, shared with
 * the clients and PostgreSQL). With `--against <checkout>` (a checkout of
 * an earlier release, its node_modules in place), one replica of that
 * release too, in the same run: the cost of runs as cluster work against
 * runs kept in the process, in `--pairs` (default 3) pairs, the order
 * alternating. Writes bench/results/REPLICAS.md.
 *
 *   git worktree add --detach /tmp/before <commit> && ln -s "$PWD/node_modules" /tmp/before/node_modules
 *   npm run bench:replicas -- --against /tmp/before --seconds 30
 *
 * `--replicas 1` measures one replica of this release only (default `1,2,3`).
 *
 * Uses DATABASE_URL, or starts a throwaway server.
 */
import { Client } from "@langchain/langgraph-sdk"
import { readFileSync } from "node:fs"
import { cpus, loadavg } from "node:os"
import { resolve } from "node:path"
import { parseArgs } from "node:util"
import { messagesOf, replyTo } from "../harness/chatGraph.ts"
import { ensureServer } from "../harness/postgresServer.ts"
import { replicas } from "../harness/replicas.ts"
import { scratchDatabases } from "./support/databases.ts"
import { percentile } from "./support/measure.ts"
import { commitOf, resultPath, runDate, writeResult } from "./support/report.ts"

const { values: args } = parseArgs({
  options: {
    seconds: { type: "string", default: "30" },
    warmup: { type: "string", default: "10" },
    clients: { type: "string", default: "50" },
    against: { type: "string" },
    replicas: { type: "string", default: "1,2,3" },
    pairs: { type: "string", default: "3" },
    out: { type: "string", default: resultPath("REPLICAS.md") }
  }
})
const seconds = Number(args.seconds)
const warmup = Number(args.warmup)
const clients = Number(args.clients)

/** The CPU time (user + system) a process has spent, in ms (Linux: /proc). */
const cpuOf = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}

interface Result {
  readonly subject: string
  readonly turns: number
  readonly rate: number
  readonly p50: number
  readonly p99: number
  readonly cpuPerTurn: number
  readonly errors: number
}

const postgres = await ensureServer()
const databases = scratchDatabases(postgres.url)

/** `count` replicas of `checkout` on a fresh database, loaded for `seconds`. */
const measure = async (subject: string, count: number, checkout?: string): Promise<Result> => {
  const database = await databases.create("replicas")
  const cluster = replicas(database.url, checkout)
  try {
    await Promise.all(Array.from({ length: count }, () => cluster.start()))
    const sdk = cluster.running.map((replica) => new Client({ apiUrl: replica.url, callerOptions: { maxRetries: 0 } }))
    const threads = await Promise.all(Array.from({ length: clients }, async (_, i) => {
      const client = sdk[i % sdk.length]!
      return { client, thread_id: (await client.threads.create()).thread_id }
    }))
    const pids = cluster.running.map((replica) => replica.child.pid!)
    const latencies: Array<number> = []
    let errors = 0
    // The warm-up's turns are not counted: the JIT warms, and the replicas' shards settle where they stay.
    const began = performance.now() + warmup * 1000
    const deadline = began + seconds * 1000
    let cpuBefore = 0
    const measuring = setTimeout(() => void (cpuBefore = pids.reduce((sum, pid) => sum + cpuOf(pid), 0)), warmup * 1000)
    await Promise.all(threads.map(async ({ client, thread_id }, i) => {
      for (let turn = 0; performance.now() < deadline; turn++) {
        const text = `client ${i}, turn ${turn}`
        const started = performance.now()
        try {
          let last: unknown
          for await (
            const chunk of client.runs.stream(thread_id, "chat", {
              input: { messages: [{ type: "human", content: text }] },
              streamMode: ["values", "messages-tuple"]
            })
          ) if (chunk.event === "values") last = chunk.data
          if (messagesOf(last).at(-1)?.content !== replyTo(text)) throw new Error("no answer")
          if (started >= began) latencies.push(performance.now() - started)
        } catch {
          if (started >= began) errors++
        }
      }
    }))
    clearTimeout(measuring)
    const took = (performance.now() - began) / 1000
    const cpu = pids.reduce((sum, pid) => sum + cpuOf(pid), 0) - cpuBefore
    const result = {
      subject,
      turns: latencies.length,
      rate: latencies.length / took,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      cpuPerTurn: cpu / latencies.length,
      errors
    }
    console.log(`[bench:replicas] ${JSON.stringify(result)}`)
    return result
  } finally {
    await cluster.stopAll()
    await database.drop()
  }
}

const loadAtStart = loadavg()
const results: Array<Result> = []
const before = args.against === undefined ? undefined : resolve(args.against)
// One replica of each release first, in pairs (the order alternating: the machine drifts), then this release's
// 2 and 3: the comparison side by side, in one run.
const ratios: Array<number> = []
if (before !== undefined) {
  const earlier = `1 replica of ${commitOf(before)} (runs in the process)`
  for (let pair = 1; pair <= Number(args.pairs); pair++) {
    const sides = [
      () => measure(`${earlier}, pair ${pair}`, 1, before),
      () => measure(`1 replica of this release, pair ${pair}`, 1)
    ] as const
    const [first, second] = pair % 2 === 1 ? [await sides[0](), await sides[1]()] : [await sides[1](), await sides[0]()]
    const [old, now] = pair % 2 === 1 ? [first, second] : [second, first]
    results.push(old, now)
    ratios.push(now.cpuPerTurn / old.cpuPerTurn)
  }
}
for (const count of args.replicas.split(",").map(Number)) {
  if (before === undefined || count !== 1) {
    results.push(await measure(`${count} replica${count > 1 ? "s" : ""} of this release`, count))
  }
}
const loadAtEnd = loadavg()
await databases.dropAll()
postgres.stop()

const fixed = (value: number, digits = 1) => value.toFixed(digits)
const report = [
  "# The server scaled out (npm run bench:replicas)",
  "",
  `Produced by \`npm run bench:replicas${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}\` ` +
  `at ${commitOf()} on ${runDate()}: ${clients} SDK clients, each on a thread of its ` +
  `own, looping chat turns (streamed, \`values\` and \`messages-tuple\`, checked) for ${seconds} s after a ` +
  `${warmup} s warm-up against each ` +
  "set of `serve` processes on a fresh PostgreSQL database; client i sends every call to replica i mod N.",
  "",
  `Machine: ${cpus()[0]?.model ?? "unknown CPU"}, ${cpus().length} cores (the clients, the replicas and PostgreSQL ` +
  `share them); load average ${loadAtStart.map((v) => v.toFixed(2)).join(", ")} at the start, ` +
  `${loadAtEnd.map((v) => v.toFixed(2)).join(", ")} at the end.`,
  "",
  "| serve processes | turns | turns/s | p50 turn ms | p99 turn ms | serve CPU ms per turn | errors |",
  "|---|---:|---:|---:|---:|---:|---:|",
  ...results.map((r) =>
    `| ${r.subject} | ${r.turns} | ${fixed(r.rate)} | ${fixed(r.p50, 0)} | ${fixed(r.p99, 0)} | ${
      fixed(r.cpuPerTurn)
    } | ${r.errors} |`
  ),
  "",
  "Serve CPU is the user and system time of the `serve` processes alone (from /proc), over the turns they answered: " +
  "on two shared cores, turns/s cannot grow with replicas; CPU per turn says what one more machine would carry.",
  ...(before === undefined ? [] : [
    "",
    `The cluster's cost on one replica: ${
      fixed((percentile(ratios, 50) - 1) * 100)
    }% CPU per turn against runs kept in the process, the median of ${ratios.length} pairs (${
      ratios.map((ratio) => `${fixed(ratio, 2)}×`).join(", ")
    }).`
  ]),
  ""
].join("\n")
writeResult(resolve(args.out), report)
console.log(report)
