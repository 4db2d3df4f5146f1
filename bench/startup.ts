/**
 * `npm run bench:startup`: how long `langgraph-checkpoints` takes from
 * start to exit, as a user runs it: the package built with its own build
 * (`tsc`), each command run in a fresh `node` process, the median of
 * `STARTUP_RUNS` (default 7) runs after one first run. Commands:
 * `--version`, `--help`, `threads` and `show` on PostgreSQL (`DATABASE_URL`,
 * default the local server; a database of its own, dropped afterwards) and
 * `threads` on a PGlite directory, both written by a LangGraph graph
 * through this library's saver; `node -e 0` is the floor. With GNU time
 * (`/usr/bin/time`), each process's CPU time too: on a busy machine the
 * wall time grows with the load, the CPU time hardly.
 *
 * `-- --before <git ref>` also builds that commit and measures it,
 * interleaved run by run with the working tree, and checks that both print
 * the same. Node's compile cache (which the CLI turns on) goes to a fresh
 * directory, so the first run is a cold start. Writes
 * bench/results/STARTUP.md.
 */
import { execFile, execFileSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { mkdir, mkdtemp, rm, symlink } from "node:fs/promises"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { createDatabase } from "../harness/databases.ts"
import { writeInspected } from "../harness/inspectedGraph.ts"
import { buildPackage } from "../harness/package.ts"
import { EffectCheckpointSaver } from "../src/index.ts"
import { root, runDate, writeResult } from "./support/report.ts"

const runs = Number(process.env.STARTUP_RUNS ?? "7")
const before = process.argv.indexOf("--before") > 0 ? process.argv[process.argv.indexOf("--before") + 1] : undefined
const serverUrl = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres"
const log = (line: string) => process.stderr.write(`${line}\n`)

const work = await mkdtemp(join(tmpdir(), "lce-startup-"))

// ---------------------------------------------------------------- builds

interface Subject {
  readonly name: string
  readonly main: string
  /** Added to a run's environment. */
  readonly env: Readonly<Record<string, string>>
}

/** The sources of commit `ref`, extracted beside a link to this repository's node_modules. */
const checkout = async (ref: string): Promise<string> => {
  const dir = join(work, `source-${ref}`)
  await mkdir(dir)
  const archive = execFileSync("git", [
    "archive",
    ref,
    "src",
    "package.json",
    "tsconfig.json",
    "tsconfig.build.json",
    "tsconfig.page.json"
  ], {
    cwd: root,
    maxBuffer: 256 * 1024 * 1024
  })
  execFileSync("tar", ["-x", "-C", dir], { input: archive })
  await symlink(join(root, "node_modules"), join(dir, "node_modules"), "dir")
  return dir
}

const subjects: Array<Subject> = []
if (before !== undefined) {
  log(`building ${before}…`)
  const main = await buildPackage(join(work, "before"), await checkout(before))
  subjects.push({ name: `before (${before})`, main, env: {} })
}
log("building the working tree…")
subjects.push({
  name: "after (working tree)",
  main: await buildPackage(join(work, "after")),
  env: { NODE_COMPILE_CACHE: join(work, "compile-cache") }
})

// ---------------------------------------------------------------- databases

const database = await createDatabase("bench_startup", serverUrl)
const postgresUrl = database.url
const pgliteUrl = `pglite:${join(work, "pglite")}`

const writeThreads = async (url: string) => {
  const saver = await EffectCheckpointSaver.fromConnString(url)
  try {
    await writeInspected(saver)
  } finally {
    await saver.close()
  }
}

log("writing the threads…")
await writeThreads(postgresUrl)
await writeThreads(pgliteUrl)

// ---------------------------------------------------------------- runs

interface Case {
  readonly label: string
  readonly args: ReadonlyArray<string>
  /** The target, in seconds. */
  readonly target?: number
}

const cases: ReadonlyArray<Case> = [
  { label: "`--version`", args: ["--version"], target: 0.25 },
  { label: "`--help`", args: ["--help"] },
  { label: "`threads` on PostgreSQL", args: ["threads", postgresUrl], target: 0.6 },
  { label: "`show chat` on PostgreSQL", args: ["show", postgresUrl, "chat"] },
  { label: "`threads` on PGlite", args: ["threads", pgliteUrl], target: 2 },
  { label: "`show chat` on PGlite", args: ["show", pgliteUrl, "chat"] }
]

interface Run {
  /** From spawn to exit. */
  readonly seconds: number
  /** The process's user and system CPU time, when GNU time is there to say (it does not grow with the machine's load). */
  readonly cpu: number | undefined
  readonly stdout: string
}

const gnuTime = existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined
const cpuFile = join(work, "cpu")

/** One process: `node <args>`, timed from spawn to exit; a failure ends the benchmark. */
const once = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>>): Promise<Run> =>
  new Promise((resolve, reject) => {
    const environment: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", ...env }
    delete environment.DATABASE_URL
    if (env.NODE_COMPILE_CACHE === undefined) delete environment.NODE_COMPILE_CACHE
    const [command, commandArgs] = gnuTime === undefined
      ? [process.execPath, args]
      : [gnuTime, ["-f", "%U %S", "-o", cpuFile, process.execPath, ...args]]
    const started = performance.now()
    execFile(command, commandArgs, { env: environment, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const seconds = (performance.now() - started) / 1000
      if (error !== null) return reject(new Error(`node ${args.join(" ")} failed: ${stderr}`, { cause: error }))
      const cpu = gnuTime === undefined
        ? undefined
        : readFileSync(cpuFile, "utf8").trim().split(/\s+/).map(Number).reduce((a, b) => a + b, 0)
      resolve({ seconds, cpu, stdout })
    })
  })

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

interface Measured {
  readonly first: number
  readonly median: number
  readonly min: number
  readonly max: number
  readonly cpu: number | undefined
}

const measure = async (
  argsOf: (subject: Subject) => ReadonlyArray<string>,
  check: boolean
): Promise<ReadonlyArray<Measured>> => {
  const measured = subjects.map((): Array<Run> => [])
  const firsts: Array<Run> = []
  for (let round = 0; round <= runs; round++) {
    // Interleaved: each subject sees the machine as the other does.
    for (const [index, subject] of subjects.entries()) {
      const run = await once(argsOf(subject), subject.env)
      if (round === 0) firsts[index] = run
      else measured[index]!.push(run)
    }
  }
  if (check && firsts.some((run) => run.stdout !== firsts[0]!.stdout)) {
    throw new Error(`the builds print different output for ${argsOf(subjects[0]!).join(" ")}`)
  }
  return measured.map((all, index) => {
    const seconds = all.map((run) => run.seconds)
    const cpu = all.flatMap((run) => run.cpu === undefined ? [] : [run.cpu])
    return {
      first: firsts[index]!.seconds,
      median: median(seconds),
      min: Math.min(...seconds),
      max: Math.max(...seconds),
      cpu: cpu.length === 0 ? undefined : median(cpu)
    }
  })
}

const load = loadavg()
const floor = (await measure(() => ["-e", "0"], false))[0]!
const results: Array<readonly [Case, ReadonlyArray<Measured>]> = []
for (const entry of cases) {
  log(
    `measuring ${entry.args.slice(0, 1).join(" ")}${
      entry.args.length > 1 ? ` on ${entry.args[1]!.split(":")[0]}` : ""
    }…`
  )
  results.push([entry, await measure((subject) => [subject.main, ...entry.args], true)])
}

await database.drop()
await rm(work, { recursive: true, force: true })

// ---------------------------------------------------------------- report

const s = (seconds: number) => `${seconds.toFixed(2)} s`
const header = `| command | ${
  subjects.map((subject) => `${subject.name}: median (min–max); CPU; first run`).join(" | ")
} | target |`
const rows = results.map(([entry, measured]) => {
  const last = measured[measured.length - 1]!
  const verdict = entry.target === undefined
    ? ""
    : `≤ ${s(entry.target)}: ${last.median <= entry.target ? "met" : "**missed**"}`
  return `| ${entry.label} | ${
    measured.map((m) =>
      `${s(m.median)} (${s(m.min)}–${s(m.max)}); ${m.cpu === undefined ? "–" : s(m.cpu)}; ${s(m.first)}`
    ).join(" | ")
  } | ${verdict} |`
})

const report = `# Start-up times of \`langgraph-checkpoints\`

Produced by \`npm run bench:startup${
  before === undefined ? "" : ` -- --before ${before}`
}\` (bench/startup.ts) on ${runDate()}: ${cpus().length} cores (${
  cpus()[0]?.model.trim()
}), Node ${process.version}, load average ${
  load.map((value) => value.toFixed(2)).join(" ")
} at the start. Each command is a fresh \`node <the package's bin> …\` process, timed from spawn to exit (and its CPU time, user
and system, which does not grow with the machine's load); the median of ${runs} runs after a first run (whose time is given too: for the working tree it fills Node's compile cache,
which starts empty). \`node -e 0\` takes ${s(floor.median)}.

${header}
|---|${subjects.map(() => "---:|").join("")}---|
${rows.join("\n")}
`
const written = writeResult("STARTUP.md", report)
process.stdout.write(report)
log(`wrote ${written}`)
