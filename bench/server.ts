/**
 * `npm run bench:server`: the server under load, beside LangGraph's own.
 * 50 clients (`@langchain/langgraph-sdk`'s `Client`), each on a thread of
 * its own, loop chat turns (a run streamed with a new human message,
 * `values` and `messages-tuple`, read to its end) against this library's
 * server on PostgreSQL (a fresh database for the run, dropped after;
 * the saver's and the runs' defaults) and against LangGraph's embed server
 * over `MemorySaver` (`harness/referenceServer.ts`), in the same
 * process, interleaved in rounds (3 by default, the order alternating), so
 * both see the same machine. Each round starts its server anew, with new
 * threads, and ends with every thread's state checked: exactly two
 * messages per acknowledged turn, in order, each answer `echo: <text>`.
 * Heap after a full GC and RSS are sampled when a round's server has
 * started and when its load has ended (the server still open: what it
 * keeps). Writes bench/results/SERVER.md; `npm run bench:server` then runs
 * `bench/replicas.ts` (1, 2 and 3 replicas on one database:
 * bench/results/REPLICAS.md).
 *
 *   npm run bench:server                  # 60 s per server
 *   npm run bench:server -- --seconds 20 --rounds 2 --clients 50
 *
 * Uses DATABASE_URL, or starts a throwaway server.
 */
import type { Client } from "@langchain/langgraph-sdk"
import { cpus, loadavg, totalmem } from "node:os"
import { resolve } from "node:path"
import { parseArgs } from "node:util"
import { chatGraph, type Message, messagesOf, replyTo } from "../harness/chatGraph.ts"
import { admin } from "../harness/databases.ts"
import { loadClients } from "../harness/loadClients.ts"
import { ensureServer } from "../harness/postgresServer.ts"
import { referenceServer } from "../harness/referenceServer.ts"
import { serve } from "../src/server.ts"
import { scratchDatabases } from "./support/databases.ts"
import { percentile } from "./support/measure.ts"
import { commitOf, packageVersion, resultPath, runDate, writeResult } from "./support/report.ts"

const { values: args } = parseArgs({
  options: {
    seconds: { type: "string", default: "60" },
    rounds: { type: "string", default: "3" },
    clients: { type: "string", default: "50" },
    out: { type: "string", default: resultPath("SERVER.md") }
  }
})
/** Seconds of load per server, split over the rounds. */
const seconds = Number(args.seconds)
const rounds = Number(args.rounds)
const clients = Number(args.clients)
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error("run with node --expose-gc (npm run bench:server does)")

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(0)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Heap after a full GC, and RSS. */
const memory = async () => {
  // Twice, with a turn of the loop between, so what the first pass frees is gone too.
  gc()
  await sleep(50)
  gc()
  const { arrayBuffers, heapTotal, heapUsed, rss } = process.memoryUsage()
  return { heap: heapUsed, committed: heapTotal, buffers: arrayBuffers, rss }
}

type Memory = Awaited<ReturnType<typeof memory>>

interface Chunk {
  readonly event: string
  readonly data: unknown
}

/** One client's thread and its turns, in the order sent: `ok` when acknowledged (the stream ended with the answer). */
interface Thread {
  readonly client: Client
  readonly thread_id: string
  readonly turns: Array<{ readonly text: string; readonly ok: boolean }>
}

/**
 * A thread's state against its turns: a turn lost is one acknowledged
 * whose two messages are not there, in order; a failed turn's messages may
 * be there or not; anything else is unexpected. `exact`: every turn
 * acknowledged and the state exactly two messages per turn.
 */
const audit = (thread: Thread, messages: ReadonlyArray<Message>) => {
  const is = (i: number, type: string, content: string) =>
    messages[i]?.type === type && messages[i]?.content === content
  let at = 0
  let lost = 0
  for (const { ok, text } of thread.turns) {
    if (is(at, "human", text) && is(at + 1, "ai", replyTo(text))) at += 2
    else if (ok) lost++
    else if (is(at, "human", text)) at += 1
  }
  const unexpected = messages.length - at
  const acknowledged = thread.turns.filter((turn) => turn.ok).length
  const exact = lost === 0 && acknowledged === thread.turns.length && messages.length === 2 * acknowledged
  return { lost, unexpected, exact }
}

interface Round {
  readonly server: string
  readonly round: number
  readonly seconds: number
  readonly cpuMs: number
  readonly latencies: ReadonlyArray<number>
  readonly errors: ReadonlyArray<string>
  readonly reconnects: number
  readonly lost: number
  readonly unexpected: number
  /** Threads whose state held exactly two messages per acknowledged turn. */
  readonly exact: number
  readonly before: Memory
  readonly after: Memory
}

/**
 * `clients` clients on threads of their own at `url`, looping turns for
 * `ms`; then every thread's state audited.
 */
const load = async (url: string, ms: number) => {
  const errors: Array<string> = []
  const latencies: Array<number> = []
  const loaded = await loadClients(url, clients)
  const threads: Array<Thread> = loaded.clients.map((thread) => ({ ...thread, turns: [] }))
  const began = performance.now()
  const cpu = process.cpuUsage()
  const deadline = began + ms
  await Promise.all(threads.map(async (thread, i) => {
    for (let turn = 0; performance.now() < deadline; turn++) {
      const text = `client ${i}, turn ${turn}`
      const started = performance.now()
      try {
        let last: unknown
        let tokens = 0
        for await (
          const chunk of thread.client.runs.stream(thread.thread_id, "chat", {
            input: { messages: [{ type: "human", content: text }] },
            streamMode: ["values", "messages-tuple"]
          }) as AsyncIterable<Chunk>
        ) {
          if (chunk.event === "values") last = chunk.data
          else if (chunk.event === "messages") tokens++
          else if (chunk.event === "error") throw new Error(`error event: ${JSON.stringify(chunk.data)}`)
        }
        const final = messagesOf(last)
        if (final.at(-1)?.content !== replyTo(text) || final.at(-2)?.content !== text || tokens === 0) {
          throw new Error(`stream ended without the answer (${tokens} tokens, last ${JSON.stringify(final.at(-1))})`)
        }
        latencies.push(performance.now() - started)
        thread.turns.push({ text, ok: true })
      } catch (error) {
        errors.push(error instanceof Error ? error.message : String(error))
        thread.turns.push({ text, ok: false })
      }
    }
  }))
  // The turns going on at the deadline end after it: the rate is of the whole time.
  const took = (performance.now() - began) / 1000
  const used = process.cpuUsage(cpu)
  /** This process's CPU time (clients and server: PostgreSQL's is not counted), in ms. */
  const cpuMs = (used.user + used.system) / 1000
  let lost = 0
  let unexpected = 0
  let exact = 0
  for (const thread of threads) {
    const state = await thread.client.threads.getState(thread.thread_id)
    const audited = audit(thread, messagesOf(state.values))
    lost += audited.lost
    unexpected += audited.unexpected
    if (audited.exact) exact++
  }
  return { seconds: took, cpuMs, latencies, errors, reconnects: loaded.reconnects(), lost, unexpected, exact }
}

// ---------------------------------------------------------------- the run

const loadAtStart = loadavg()
const postgres = await ensureServer()
const databases = scratchDatabases(postgres.url)
const database = await databases.create("server")
const postgresVersion = await admin(
  async (client) => {
    const version = await client.query<{ v: string }>("SELECT current_setting('server_version') AS v")
    const sync = await client.query<{ v: string }>("SELECT current_setting('synchronous_commit') AS v")
    const fsync = await client.query<{ v: string }>("SELECT current_setting('fsync') AS v")
    return `PostgreSQL ${version.rows[0]!.v} (fsync ${fsync.rows[0]!.v}, synchronous_commit ${sync.rows[0]!.v})`
  },
  postgres.url
)

const OURS = "serve() on PostgreSQL"
const REFERENCE = "embed server on MemorySaver (reference)"

const subjects = {
  [OURS]: async () => {
    const server = await serve({ graphs: { chat: chatGraph() }, database: database.url, port: 0 })
    return { url: server.url, close: () => server.close() }
  },
  [REFERENCE]: async () => {
    const server = await referenceServer({ chat: chatGraph() })
    return { url: server.url, close: () => server.close() }
  }
} as const
type Name = keyof typeof subjects

const baseline = await memory()
// A warm-up of each, not counted: the modules loaded, the code compiled.
for (const name of [OURS, REFERENCE] as const) {
  const server = await subjects[name]()
  await load(server.url, 2_000)
  await server.close()
}

const results: Array<Round> = []
const perRound = (seconds * 1000) / rounds
for (let round = 1; round <= rounds; round++) {
  const order: ReadonlyArray<Name> = round % 2 === 1 ? [OURS, REFERENCE] : [REFERENCE, OURS]
  for (const name of order) {
    const server = await subjects[name]()
    const before = await memory()
    const outcome = await load(server.url, perRound)
    const after = await memory()
    await server.close()
    results.push({ server: name, round, ...outcome, before, after })
    console.log(
      `[bench:server] round ${round} ${name}: ${outcome.latencies.length} turns ` +
        `(${(outcome.latencies.length / outcome.seconds).toFixed(1)}/s), p50 ${
          percentile(outcome.latencies, 50).toFixed(0)
        } ms, errors ${outcome.errors.length}, lost ${outcome.lost}, heap ${mib(before.heap)} → ${
          mib(after.heap)
        } MiB, rss ${mib(before.rss)} → ${mib(after.rss)} MiB`
    )
  }
}
const loadAtEnd = loadavg()
await databases.dropAll()
postgres.stop()

// ---------------------------------------------------------------- the report

const summary = (name: Name) => {
  const mine = results.filter((result) => result.server === name)
  const latencies = mine.flatMap((result) => result.latencies)
  const secondsRun = mine.reduce((sum, result) => sum + result.seconds, 0)
  return {
    name,
    turns: latencies.length,
    rate: latencies.length / secondsRun,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors: mine.flatMap((result) => result.errors),
    reconnects: mine.reduce((sum, result) => sum + result.reconnects, 0),
    cpuPerTurn: mine.reduce((sum, result) => sum + result.cpuMs, 0) / latencies.length,
    lost: mine.reduce((sum, result) => sum + result.lost, 0),
    unexpected: mine.reduce((sum, result) => sum + result.unexpected, 0),
    exact: mine.reduce((sum, result) => sum + result.exact, 0),
    threads: mine.length * clients,
    rates: mine.map((result) => result.latencies.length / result.seconds)
  }
}
const ours = summary(OURS)
const reference = summary(REFERENCE)
const ratio = ours.rate / reference.rate
/** The spread of a server's rounds: (max − min) / mean of its turns/s. */
const spread = (rates: ReadonlyArray<number>) =>
  (Math.max(...rates) - Math.min(...rates)) / (rates.reduce((a, b) => a + b, 0) / rates.length)
const noisy = Math.max(spread(ours.rates), spread(reference.rates))

const command = process.argv.slice(2).length === 0
  ? "npm run bench:server"
  : `npm run bench:server -- ${process.argv.slice(2).join(" ")}`
const load3 = (values: ReadonlyArray<number>) => values.map((value) => value.toFixed(2)).join(", ")

const report = [
  "# The server under load (npm run bench:server)",
  "",
  `Produced by \`${command}\` at ${commitOf()} on ${runDate()}: ` +
  `${clients} clients (\`@langchain/langgraph-sdk\`'s \`Client\`, no retries), each on a thread of its own, ` +
  `looping chat turns (a run streamed with a new human message, \`values\` and \`messages-tuple\`, read to its end; ` +
  "the scripted `chatGraph` of harness/chatGraph.ts answers `echo: <text>` in 3-character tokens) " +
  `for ${seconds} s per server, in ${rounds} rounds of ${
    (perRound / 1000).toFixed(0)
  } s alternating which goes first, ` +
  "each round a fresh server and fresh threads, after a 2 s warm-up of each. Clients and server share one process.",
  "",
  `Machine: ${cpus()[0]?.model ?? "unknown CPU"}, ${cpus().length} cores, ${mib(totalmem())} MiB; ` +
  `load average ${load3(loadAtStart)} at the start, ${load3(loadAtEnd)} at the end (1, 5, 15 min). ` +
  `Node ${process.version}; ${postgresVersion}, on loopback; @langchain/langgraph ${
    packageVersion("@langchain/langgraph")
  }, ` +
  `@langchain/langgraph-api ${packageVersion("@langchain/langgraph-api")}, @langchain/langgraph-sdk ${
    packageVersion("@langchain/langgraph-sdk")
  }, @langchain/core ${packageVersion("@langchain/core")}, hono ${packageVersion("hono")}, @hono/node-server ${
    packageVersion("@hono/node-server")
  }.`,
  "",
  `Ours: \`serve({ graphs, database })\` on a fresh PostgreSQL database (the saver's defaults, runs with no durability given: LangGraph's default). ` +
  "Reference: LangGraph's `createEmbedServer` over `MemorySaver` and an in-memory thread store (harness/referenceServer.ts).",
  "",
  "| server | turns | turns/s | p50 turn ms | p99 turn ms | CPU ms per turn | errors | stream reconnects | lost turns | threads exact (2 × turns) |",
  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ...[ours, reference].map((s) =>
    `| ${s.name} | ${s.turns} | ${s.rate.toFixed(1)} | ${s.p50.toFixed(0)} | ${s.p99.toFixed(0)} | ${
      s.cpuPerTurn.toFixed(1)
    } | ${s.errors.length} | ${s.reconnects} | ${s.lost}${
      s.unexpected === 0 ? "" : ` (+${s.unexpected} unexpected messages)`
    } | ${s.exact} / ${s.threads} |`
  ),
  "",
  "| target | measured | goal | verdict |",
  "|---|---:|---:|---|",
  `| turns/s, ours / reference | ${ratio.toFixed(2)}x | ≥ 0.8x | ${ratio >= 0.8 ? "met" : "**missed**"} |`,
  `| turns lost, ours | ${ours.lost} | 0 | ${ours.lost === 0 && ours.unexpected === 0 ? "met" : "**missed**"} |`,
  `| errors, ours | ${ours.errors.length} | 0 | ${ours.errors.length === 0 ? "met" : "**missed**"} |`,
  "",
  "CPU ms per turn: this process's (clients and server together; PostgreSQL's own processes not counted) over the turns acknowledged.",
  "",
  "Each round: memory of the whole process, clients included, after a full GC, when the round's server had started → when its load ended (the server still open: what it keeps). " +
  "Heap used and committed; array buffers (outside the heap: `MemorySaver` keeps its checkpoints there, serialized); RSS.",
  "",
  "| round | server | turns/s | p50 ms | p99 ms | errors | lost | heap used MiB | heap committed MiB | array buffers MiB | RSS MiB |",
  "|---:|---|---:|---:|---:|---:|---:|---|---|---|---|",
  ...results.map((r) =>
    `| ${r.round} | ${r.server} | ${(r.latencies.length / r.seconds).toFixed(1)} | ${
      percentile(r.latencies, 50).toFixed(0)
    } | ${percentile(r.latencies, 99).toFixed(0)} | ${r.errors.length} | ${r.lost} | ${mib(r.before.heap)} → ${
      mib(r.after.heap)
    } | ${mib(r.before.committed)} → ${mib(r.after.committed)} | ${mib(r.before.buffers)} → ${mib(r.after.buffers)} | ${
      mib(r.before.rss)
    } → ${mib(r.after.rss)} |`
  ),
  "",
  `Process at the start (before any server): heap ${mib(baseline.heap)} MiB used, ${
    mib(baseline.committed)
  } MiB committed, array buffers ${mib(baseline.buffers)} MiB, RSS ${mib(baseline.rss)} MiB.`,
  "",
  noisy > 0.15
    ? `Noise: a server's rounds differ by up to ${(noisy * 100).toFixed(0)}% in turns/s (the machine was shared: ` +
      "other processes ran at the same time; see the load averages above). Read the ratio with that in mind."
    : `The rounds of each server agree within ${(noisy * 100).toFixed(0)}% in turns/s.`,
  "",
  ...[ours, reference].flatMap((s) =>
    s.errors.length === 0 ? [] : [
      `Errors of ${s.name} (first 5 of ${s.errors.length}):`,
      ...s.errors.slice(0, 5).map((error) => `- ${error.slice(0, 300)}`),
      ""
    ]
  )
].join("\n")
writeResult(resolve(args.out), report)
console.log(report)
