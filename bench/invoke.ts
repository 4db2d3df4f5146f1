/**
 * `npm run bench:invoke`: the invoke loop as a user feels it. A StateGraph
 * (bench/support/agentGraph.ts) invoked 100 times on one thread, the savers taking
 * turns, one invoke each: MemorySaver, this library on PostgreSQL and on
 * PGlite (a fresh temporary directory), the official PostgresSaver. First
 * in this fresh process; then after other work in the same process, as a
 * server or any long-lived application has done (32 threads of 50
 * super-steps written at once, a thread of 300 steps written and read:
 * full caches, an old heap). Per-invoke latencies (p50, p90, p99, max,
 * mean), invokes per second, and each against MemorySaver's in the same
 * phase. Writes bench/results/INVOKE.md.
 *
 * Uses DATABASE_URL (default the local server); its databases are dropped
 * afterwards.
 */
import { MemorySaver } from "@langchain/langgraph-checkpoint"
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Pool } from "pg"
import { EffectCheckpointSaver } from "../src/index.ts"
import { agentGraph, agentInput, agentTurn } from "./support/agentGraph.ts"
import { scratchDatabases } from "./support/databases.ts"
import { ms, percentile } from "./support/measure.ts"
import { ranBy, writeResult } from "./support/report.ts"
import { ChatThread, message, rotated, time } from "./support/workload.mjs"

const TURNS = 100
const serverUrl = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres"
const log = (line: string) => console.log(line)

const databases = scratchDatabases(serverUrl)
const scratch = await mkdtemp(join(tmpdir(), "lce-bench-invoke-"))
const pool = new Pool({ connectionString: (await databases.create("invoke_official")).url, max: 10 })
const official = new PostgresSaver(pool)
await official.setup()
const subjects = [
  { name: "MemorySaver", saver: new MemorySaver() },
  {
    name: "this library, PostgreSQL",
    saver: await EffectCheckpointSaver.fromConnString((await databases.create("invoke_effect")).url)
  },
  { name: "this library, PGlite", saver: await EffectCheckpointSaver.fromConnString(`pglite:${scratch}/pglite`) },
  { name: "PostgresSaver (official)", saver: official }
]

const rows: Array<string> = []

/** `TURNS` invokes on `thread_id`, the savers taking turns; one table row per saver. */
const loop = async (phase: string, thread_id: string) => {
  const apps = subjects.map(({ saver }) => agentGraph(saver))
  const samples = subjects.map(() => [] as Array<number>)
  for (let turn = 0; turn < TURNS; turn++) {
    for (const [i, app] of rotated(apps, turn)) {
      const input = agentInput()
      samples[i]!.push(await time(() => agentTurn(app, thread_id, input)))
    }
  }
  const mean = (values: ReadonlyArray<number>) => values.reduce((sum, value) => sum + value, 0) / values.length
  const memory = mean(samples[0]!)
  subjects.forEach(({ name }, i) => {
    const s = samples[i]!
    rows.push(
      `| ${phase} | ${name} | ${(1000 / mean(s)).toFixed(1)} | ${(memory / mean(s)).toFixed(2)}x | ${
        [50, 90, 99].map((p) => ms(percentile(s, p))).join(" | ")
      } | ${ms(Math.max(...s))} | ${ms(mean(s))} |`
    )
    log(rows.at(-1)!)
  })
}

await loop("fresh process", "fresh")

log("other work: 32 threads x 50 super-steps at once, a thread of 300 steps written and read, on every saver")
for (const { saver } of subjects) {
  await Promise.all(Array.from({ length: 32 }, async (_, t) => {
    const chat = await new ChatThread(saver, `other-${t}`).start()
    for (let step = 0; step < 50; step++) await chat.superStep(message(step))
  }))
  const long = await new ChatThread(saver, "long").start()
  for (let step = 0; step < 300; step++) await long.superStep(message(step))
  for (let read = 0; read < 20; read++) await saver.getTuple({ configurable: { thread_id: "long" } })
}

await loop("after other work", "after")

for (const { saver } of subjects) {
  if (saver instanceof EffectCheckpointSaver) await saver.close()
}
await official.end()
await databases.dropAll()
await rm(scratch, { recursive: true, force: true })

const report = [
  "# The invoke loop",
  "",
  `${
    ranBy("npm run bench:invoke", "bench/invoke.ts")
  }, PostgreSQL at DATABASE_URL. A StateGraph (one agent node answering each human ` +
  `message, bench/support/agentGraph.ts) invoked ${TURNS} times on one thread, the savers taking turns, one invoke each: ` +
  "first in a fresh process, then in the same process after other work (32 threads of 50 super-steps at " +
  "once, a thread of 300 steps written and read, on every saver). Latencies per invoke in ms; speed is " +
  "invokes per second against MemorySaver's in the same phase (higher is faster).",
  "",
  "| phase | saver | invokes/s | speed vs MemorySaver | p50 | p90 | p99 | max | mean |",
  "|---|---|---:|---:|---:|---:|---:|---:|---:|",
  ...rows,
  ""
].join("\n")
log(`wrote ${writeResult("INVOKE.md", report)}`)
