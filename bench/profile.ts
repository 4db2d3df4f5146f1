/**
 * `npm run bench:profile`: CPU profiles of the write paths and the invoke
 * loop, each case in a child process under `node --cpu-prof` (cases in
 * bench/support/profiling/cases.ts), written to
 * bench/results/profiles/<case>.cpuprofile (stable names: a new run
 * replaces them), then a summary per case printed and written to
 * bench/results/profiles/SUMMARY.md: busy time by part (the Effect
 * runtime, the codec, hashing, statements, the SQL client, …), by package
 * or file, and the functions with the most self time, over the workload
 * alone.
 *
 * Uses DATABASE_URL, or starts a throwaway server. `BENCH_SCALE` shortens
 * the cases as it does the bench.
 */
import { execFileSync } from "node:child_process"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { admin } from "../harness/databases.ts"
import { ensureServer } from "../harness/postgresServer.ts"
import { scratchDatabases } from "./support/databases.ts"
import { type CaseName, cases } from "./support/profiling/cases.ts"
import { renderSummary, summarise, type Window } from "./support/profiling/cpuProfile.ts"
import { resultPath, root, runDate, writeResult } from "./support/report.ts"

const directory = resultPath("profiles")
mkdirSync(directory, { recursive: true })

const titles: Record<CaseName, string> = {
  "superstep-postgres": "Chat-thread super-steps (putWrites + put), 5 threads x 300 steps, PostgreSQL",
  "superstep-pglite": "Chat-thread super-steps (putWrites + put), 5 threads x 300 steps, PGlite",
  "invoke-postgres": "StateGraph.invoke loop, 100 turns, PostgreSQL",
  "putwrites-postgres-fast-commit": "putWrites of one message, 3,000 calls, PostgreSQL with synchronous_commit = off",
  "put-postgres-fast-commit": "put of a chat thread, 5 threads x 300 steps, PostgreSQL with synchronous_commit = off",
  "concurrent-postgres-fast-commit":
    "32 threads x 50 super-steps at once, 5 rounds, PostgreSQL with synchronous_commit = off"
}

const server = await ensureServer()
const databases = scratchDatabases(server.url)
const summaries: Array<string> = []
try {
  for (const name of Object.keys(cases) as Array<CaseName>) {
    console.log(`[profile] ${name}`)
    const url = cases[name].store === "postgres" ? (await databases.create(`profile_${name}`)).url : ""
    if (cases[name].fastCommit) {
      await admin(
        (client) => client.query(`ALTER DATABASE "${new URL(url).pathname.slice(1)}" SET synchronous_commit = off`),
        url
      )
    }
    const output = execFileSync(
      process.execPath,
      [
        "--cpu-prof",
        "--cpu-prof-dir",
        directory,
        "--cpu-prof-name",
        `${name}.cpuprofile`,
        join(import.meta.dirname, "support", "profiling", "cases.ts"),
        name,
        url
      ],
      { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }
    )
    const window = JSON.parse(output.trim().split("\n").at(-1)!) as Window
    const summary = renderSummary(
      `${titles[name]} (bench/results/profiles/${name}.cpuprofile)`,
      summarise(join(directory, `${name}.cpuprofile`), window, root)
    )
    console.log(`\n${summary}\n`)
    summaries.push(summary)
  }
} finally {
  await databases.dropAll()
  server.stop()
}

const written = writeResult(
  "profiles/SUMMARY.md",
  [
    "# CPU profiles (npm run bench:profile)",
    "",
    `Run on ${runDate()}, Node ${process.version}` +
    (process.env.BENCH_SCALE === undefined ? "" : `, BENCH_SCALE=${process.env.BENCH_SCALE}`) +
    ". Self time over each case's workload only (start-up, module loading and idle left out); open a " +
    ".cpuprofile in Chrome DevTools or speedscope for the call trees.",
    "",
    summaries.join("\n\n"),
    ""
  ]
)
console.log(`[profile] wrote ${written}`)
