/**
 * `npm run bench:history`: a thread's history at scale: how the CLI, the
 * web server and the page hold up on long and wide histories. Writes,
 * through the saver's `put` (the ids made here, so the puts go side by
 * side), a thread of `HISTORY_FORKS` (default
 * 20,000) forks of one checkpoint — what edit/regenerate in a chat UI make —
 * and a linear thread of `HISTORY_CHAIN` (default 40,000) checkpoints. Then
 * measures, running the CLI as installed (the package built as `npm run build`
 * builds it) as a child process:
 *
 * - `history` on the forks (text and `--json`): wall time and peak memory
 *   (GNU time's maximum resident set);
 * - how fast `history --json` dies on SIGTERM and on SIGINT mid-run;
 * - the `web` server: the history route's first page, a poll `since` its
 *   cursor, and the server's peak memory (`VmHWM`);
 * - the page in Chromium: from navigation to the first page of rows drawn;
 * - the 40,000-checkpoint thread open in the page for `HISTORY_OPEN_S`
 *   (default 60) seconds: history requests in flight at most, and polls.
 *
 * Uses DATABASE_URL (default the local server), in a database of its own,
 * dropped afterwards. Writes bench/results/HISTORY.md.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { launch } from "../harness/browser.ts"
import { createDatabase } from "../harness/databases.ts"
import { putChain, putForks } from "../harness/forks.ts"
import { buildPackage } from "../harness/package.ts"
import { EffectCheckpointSaver } from "../src/index.ts"
import { runDate, writeResult } from "./support/report.ts"

const FORKS = Number(process.env.HISTORY_FORKS ?? "20000")
const CHAIN = Number(process.env.HISTORY_CHAIN ?? "40000")
const OPEN_S = Number(process.env.HISTORY_OPEN_S ?? "60")
const serverUrl = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres"
const log = (line: string) => process.stderr.write(`${line}\n`)

// The executable as installed: the package built as `npm run build` builds it.
const work = await mkdtemp(join(tmpdir(), "lce-history-"))
log("building the package…")
const main = await buildPackage(work)

const database = await createDatabase("bench_history", serverUrl)
const url = database.url

// ---------------------------------------------------------------- measuring

interface Timed {
  readonly ms: number
  readonly maxRssMb: number
  readonly code: number
  readonly stdout: string
}

/** A CLI command under GNU time: wall time and peak resident memory. */
const timed = async (args: ReadonlyArray<string>): Promise<Timed> => {
  const started = performance.now()
  const result = await promisify(execFile)("/usr/bin/time", ["-v", process.execPath, main, ...args], {
    maxBuffer: 512 * 1024 * 1024,
    env: { ...process.env, NO_COLOR: "1" }
  }).then(
    (done) => ({ ...done, code: 0 }),
    (failed: { stdout: string; stderr: string; code: number }) => failed
  )
  const ms = performance.now() - started
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(result.stderr)
  return { ms, maxRssMb: rss === null ? Number.NaN : Number(rss[1]) / 1024, code: result.code, stdout: result.stdout }
}

/** Starts `history` and sends it `signal` after `afterMs`: how long it took to exit after the signal. */
const killed = (args: ReadonlyArray<string>, signal: NodeJS.Signals, afterMs: number) =>
  new Promise<{ readonly ms: number; readonly how: string }>((resolve) => {
    const child = spawn(process.execPath, [main, ...args], { stdio: ["ignore", "ignore", "ignore"] })
    let sent = 0
    const timer = setTimeout(() => {
      sent = performance.now()
      child.kill(signal)
    }, afterMs)
    child.on("exit", (code, by) => {
      clearTimeout(timer)
      resolve({
        ms: sent === 0 ? Number.NaN : performance.now() - sent,
        how: sent === 0 ? `finished before the signal (exit ${code})` : by !== null ? `killed by ${by}` : `exit ${code}`
      })
    })
  })

/** A child's peak resident memory so far, from /proc. */
const peakMb = (child: ChildProcess) => {
  const status = readFileSync(`/proc/${child.pid}/status`, "utf8")
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) / 1024
}

/** `web`, until `stop`: its printed URL (with the token). */
const startWeb = async () => {
  const child = spawn(process.execPath, [main, "web", url], { stdio: ["ignore", "pipe", "inherit"] })
  const printed = await new Promise<string>((resolve, reject) => {
    let out = ""
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
      const line = out.split("\n").find((text) => text.startsWith("http://"))
      if (line !== undefined) resolve(line.trim())
    })
    child.on("exit", (code) => reject(new Error(`web exited with ${code}`)))
  })
  const token = new URL(printed).searchParams.get("token") ?? ""
  const get = async (path: string) => {
    const started = performance.now()
    const response = await fetch(new URL(path, printed), { headers: { "x-inspector-token": token } })
    const body = await response.json() as Record<string, unknown>
    return { ms: performance.now() - started, status: response.status, body }
  }
  return {
    url: printed,
    get,
    peakMb: () => peakMb(child),
    stop: () =>
      new Promise<void>((resolve) => {
        child.on("exit", () => resolve())
        child.kill("SIGTERM")
      })
  }
}

// ---------------------------------------------------------------- run

const lines: Array<string> = []
const row = (what: string, value: string) => {
  lines.push(`| ${what} | ${value} |`)
  log(`${what}: ${value}`)
}
try {
  const saver = await EffectCheckpointSaver.fromConnString(url)
  let started = performance.now()
  await putForks(saver, "forks", FORKS)
  log(`wrote ${FORKS} forks in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  started = performance.now()
  await putChain(saver, "long", CHAIN)
  log(`wrote a ${CHAIN}-checkpoint chain in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  await saver.close()

  const text = await timed(["history", url, "forks"])
  row(
    `\`history\` of ${FORKS} forks (text)`,
    `${(text.ms / 1000).toFixed(2)} s, peak ${text.maxRssMb.toFixed(0)} MB, ${
      text.stdout.split("\n").length
    } lines, exit ${text.code}`
  )
  const asJson = await timed(["history", url, "forks", "--json"])
  row(
    `\`history --json\` of ${FORKS} forks`,
    `${(asJson.ms / 1000).toFixed(2)} s, peak ${asJson.maxRssMb.toFixed(0)} MB, exit ${asJson.code}`
  )
  const chain = await timed(["history", url, "long"])
  row(
    `\`history\` of a ${CHAIN}-checkpoint chain`,
    `${(chain.ms / 1000).toFixed(2)} s, peak ${chain.maxRssMb.toFixed(0)} MB, exit ${chain.code}`
  )
  // Mid-work: `--json` of the chain reads every checkpoint, for several seconds after the process started.
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    const stop = await killed(["history", url, "long", "--json"], signal, 3000)
    row(
      `\`history --json\` of the chain, ${signal} 3 s in`,
      `${stop.how} ${stop.ms.toFixed(0)} ms after the signal`
    )
  }

  const web = await startWeb()
  await web.get("/api/threads")
  const idle = web.peakMb()
  const first = await web.get("/api/threads/forks/history")
  const again = await web.get("/api/threads/forks/history")
  const poll = await web.get(`/api/threads/forks/history?since=${String(first.body.cursor)}`)
  const rows = (first.body.namespaces as Array<{ rows: Array<unknown> }>)[0]!.rows.length
  row(
    `API history of ${FORKS} forks, first page`,
    `${first.ms.toFixed(0)} ms (again ${again.ms.toFixed(0)} ms), ${rows} of ${
      String(first.body.total)
    } rows, status ${first.status}`
  )
  row(`API poll \`since\` its cursor, nothing new`, `${poll.ms.toFixed(0)} ms, changed: ${String(poll.body.changed)}`)

  const browser = await launch()
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } })
    await page.goto(web.url)
    await page.locator(".thread-row").first().waitFor()
    started = performance.now()
    await page.goto(`${web.url}#/thread/forks`)
    await page.locator("svg.history g.node").nth(rows - 1).waitFor({ timeout: 60_000 })
    row(`page: ${FORKS} forks, navigation to ${rows} rows drawn`, `${(performance.now() - started).toFixed(0)} ms`)
    const folded = await page.locator("svg.history .tag.folded").first().textContent()
    row(`page: the overflow column's count`, `"${folded}"`)
    await page.close()

    const open = await browser.newPage({ viewport: { width: 1400, height: 900 } })
    let inFlight = 0
    let most = 0
    let polls = 0
    let withSince = 0
    const history = (request: { url: () => string }) => new URL(request.url()).pathname.endsWith("/history")
    open.on("request", (request) => {
      if (!history(request)) return
      inFlight++
      polls++
      if (new URL(request.url()).searchParams.has("since")) withSince++
      most = Math.max(most, inFlight)
    })
    const done = (request: { url: () => string }) => {
      if (history(request)) inFlight--
    }
    open.on("requestfinished", done)
    open.on("requestfailed", done)
    started = performance.now()
    await open.goto(`${web.url}#/thread/long`)
    await open.locator("svg.history g.node").first().waitFor({ timeout: 60_000 })
    row(
      `page: ${CHAIN}-checkpoint chain, navigation to first rows drawn`,
      `${(performance.now() - started).toFixed(0)} ms`
    )
    await new Promise((resolve) => setTimeout(resolve, OPEN_S * 1000))
    row(
      `page: the chain open ${OPEN_S} s`,
      `${polls} history requests (${withSince} polls with \`since\`), at most ${most} in flight`
    )
    await open.close()
  } finally {
    await browser.close()
  }
  row(
    `\`web\` server's peak memory over all of the above`,
    `${web.peakMb().toFixed(0)} MB (${idle.toFixed(0)} MB started, before any history)`
  )
  await web.stop()
} finally {
  await database.drop()
  await rm(work, { recursive: true, force: true })
}

const written = writeResult(
  "HISTORY.md",
  `# History at scale

\`npm run bench:history\` (\`bench/history.ts\`), ${runDate()}, ${cpus().length} cores,
load ${loadavg()[0]!.toFixed(1)} at the end, PostgreSQL on localhost. The CLI runs
as installed (\`node dist/internal/bin/langgraph-checkpoints.js\`, the package built as \`npm run build\` builds it), one process per command; memory is the peak resident set.

| what | result |
| --- | --- |
${lines.join("\n")}
`
)
log(`wrote ${written}`)
