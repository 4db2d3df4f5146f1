/**
 * A summary of a V8 `.cpuprofile` (what `node --cpu-prof` writes): busy time
 * by package or file, and the functions with the most self time. Only the
 * samples inside the workload's window count, so start-up and module
 * loading are left out; idle samples never count.
 */
import { readFileSync } from "node:fs"
import { relative } from "node:path"
import { fileURLToPath } from "node:url"

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
}

interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
}

/** The parts of the format read here (Chrome DevTools Protocol `Profiler.Profile`). */
interface CpuProfile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly startTime: number
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

/** The workload's start and end, in microseconds of the monotonic clock the profile's timestamps use. */
export interface Window {
  readonly start: number
  readonly end: number
}

/** Now, in the profile's clock (`process.hrtime` is the same monotonic clock). */
export const profileClock = () => Number(process.hrtime.bigint() / 1000n)

export interface Share {
  readonly name: string
  readonly ms: number
  readonly share: number
}

export interface Summary {
  /** Milliseconds of samples in the window that were not idle. */
  readonly busyMs: number
  readonly windowMs: number
  readonly byPart: ReadonlyArray<Share>
  readonly byModule: ReadonlyArray<Share>
  readonly topFunctions: ReadonlyArray<Share>
}

/** A frame's file: inside a package as `package/path`, in this repository relative to it, else as given. */
const fileOf = (url: string, root: string) => {
  const path = url.startsWith("file:") ? fileURLToPath(url) : url
  const inPackage = /.*node_modules\/(.+)$/.exec(path)
  if (inPackage !== null) return inPackage[1]!
  return path.startsWith(root) ? relative(root, path) : path
}

/** Where a frame's code lives: a package by name, a file of this repository by path, else V8's or Node's. */
const moduleOf = (frame: CallFrame, root: string) => {
  const { url, functionName } = frame
  if (url === "") return functionName.startsWith("(") ? functionName : "(native)"
  if (url.startsWith("node:")) return "(node internals)"
  if (url.startsWith("wasm:")) return "(WebAssembly: PGlite)"
  const file = fileOf(url, root)
  const packageMatch = /^((?:@[^/]+\/)?[^/]+)\//.exec(file)
  return url.includes("node_modules") && packageMatch !== null ? packageMatch[1]! : file
}

/**
 * What a frame's code does for a call, by part: the
 * Effect runtime, input decoding, the codec, hashing, building statements,
 * the SQL client, the socket, and the rest.
 */
const parts: ReadonlyArray<readonly [part: string, test: (frame: CallFrame, file: string) => boolean]> = [
  [
    "hashing (SHA-256)",
    (frame) => frame.url.startsWith("node:internal/crypto/hash") || frame.functionName === "oneShotDigest"
  ],
  ["garbage collection", (frame) => frame.functionName === "(garbage collector)"],
  ["input decoding (Schema)", (_, file) => /^effect\/dist\/(Schema|internal\/schema)/.test(file)],
  ["SQL client (effect/sql, @effect/sql-pg)", (_, file) => /^(effect\/dist\/sql|@effect\/sql-pg)\//.test(file)],
  ["Effect runtime (fibers, spans, context)", (_, file) => file.startsWith("effect/")],
  ["statements (text and parameters)", (_, file) => /^src\/sql\/(statements\/|Statements\.ts|Jsonb\.ts)/.test(file)],
  ["SQL driver, group commit, retries", (_, file) => file.startsWith("src/internal/sql/")],
  ["codec (serializing, sharing, layout)", (_, file) => file.startsWith("src/internal/codec/")],
  ["LangChain (messages' toJSON)", (_, file) => file.startsWith("@langchain/")],
  [
    "PGlite (WebAssembly and its JS)",
    (frame, file) => frame.url.startsWith("wasm:") || file.startsWith("@electric-sql/")
  ],
  ["this library, other", (_, file) => file.startsWith("src/")],
  ["the workload (bench/)", (_, file) => file.startsWith("bench/")],
  ["Node: the socket, other built-ins and native calls", (frame) => frame.url.startsWith("node:") || frame.url === ""]
]

const partOf = (frame: CallFrame, root: string) => {
  const file = frame.url === "" ? "" : fileOf(frame.url, root)
  return parts.find(([, test]) => test(frame, file))?.[0] ?? "other"
}

const frameName = (frame: CallFrame, root: string) => {
  const name = frame.functionName === "" ? "(anonymous)" : frame.functionName
  if (frame.url === "") return name
  return `${name} ${frame.url.startsWith("wasm:") ? "(wasm)" : fileOf(frame.url, root)}:${frame.lineNumber + 1}`
}

const ranked = (totals: Map<string, number>, busy: number, count: number): Array<Share> =>
  [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, micros]) => ({ name, ms: micros / 1000, share: micros / busy }))

/**
 * Summarises the profile at `file`: each sample stands for the time until
 * the next one, charged to the function it caught (self time).
 */
export const summarise = (file: string, window: Window, root: string, top = 15): Summary => {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
  const byPart = new Map<string, number>()
  const byModule = new Map<string, number>()
  const byFunction = new Map<string, number>()
  let busy = 0
  let at = profile.startTime
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i]!
    if (at < window.start || at > window.end) continue
    const span = Math.min(profile.timeDeltas[i + 1] ?? 0, window.end - at)
    const frame = nodes.get(profile.samples[i]!)!.callFrame
    if (frame.functionName === "(idle)") continue
    busy += span
    const part = partOf(frame, root)
    byPart.set(part, (byPart.get(part) ?? 0) + span)
    const module = moduleOf(frame, root)
    byModule.set(module, (byModule.get(module) ?? 0) + span)
    const name = frameName(frame, root)
    byFunction.set(name, (byFunction.get(name) ?? 0) + span)
  }
  return {
    busyMs: busy / 1000,
    windowMs: (window.end - window.start) / 1000,
    byPart: ranked(byPart, busy, parts.length + 1),
    byModule: ranked(byModule, busy, top),
    topFunctions: ranked(byFunction, busy, top)
  }
}

const percent = (share: number) => `${(share * 100).toFixed(1)}%`

/** The summary as Markdown: two tables, modules then functions. */
export const renderSummary = (title: string, summary: Summary) =>
  [
    `### ${title}`,
    "",
    `Busy ${summary.busyMs.toFixed(0)} ms of a ${summary.windowMs.toFixed(0)} ms workload ` +
    `(${percent(summary.busyMs / summary.windowMs)}; the rest is idle, waiting for I/O).`,
    "",
    "| part (self time) | busy ms | share |",
    "|---|---:|---:|",
    ...summary.byPart.map((s) => `| ${s.name} | ${s.ms.toFixed(0)} | ${percent(s.share)} |`),
    "",
    "| module or file | busy ms | share |",
    "|---|---:|---:|",
    ...summary.byModule.map((s) => `| ${s.name} | ${s.ms.toFixed(0)} | ${percent(s.share)} |`),
    "",
    "| function (self time) | ms | share |",
    "|---|---:|---:|",
    ...summary.topFunctions.map((s) => `| \`${s.name}\` | ${s.ms.toFixed(0)} | ${percent(s.share)} |`)
  ].join("\n")
