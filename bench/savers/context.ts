/**
 * What the cases of `npm run bench` share: the subjects (this library in
 * three configurations, the official PostgreSQL saver, MemorySaver) on one
 * server, and what the cases report into — the scenario sections, the
 * targets' rows, the goals' verdicts and the figures the last goals read.
 */
import { type BaseCheckpointSaver, MemorySaver } from "@langchain/langgraph-checkpoint"
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres"
import { Pool } from "pg"
import { ensureServer } from "../../harness/postgresServer.ts"
import { EffectCheckpointSaver } from "../../src/index.ts"
import { type ScratchDatabases, scratchDatabases, tableBytes } from "../support/databases.ts"
import type { GoalLine, StorageName, WorkloadName } from "../support/goals.ts"
import { p50, renderTable, type Row, type Verdict } from "../support/measure.ts"

export interface Subject {
  readonly name: string
  readonly saver: BaseCheckpointSaver
  readonly storageBytes: () => Promise<number>
  readonly close: () => Promise<void>
}

/** A fixed AES-256 key for the encrypted subject (a benchmark needs no secret one). */
export const benchKey = Buffer.alloc(32, 7).toString("base64")

/**
 * This library; `plain`: every value in the plain encoding (structural
 * sharing off); `encrypted`: the defaults with encryption at rest.
 */
const ours = async (
  databases: ScratchDatabases,
  variant: "default" | "plain" | "encrypted" = "default"
): Promise<Subject> => {
  const { url } = await databases.create(variant === "default" ? "effect" : `effect_${variant}`)
  const saver = await EffectCheckpointSaver.fromConnString(
    url,
    variant === "plain"
      ? { sharing: false }
      : variant === "encrypted"
      ? { encryption: { keys: { k1: benchKey }, primary: "k1" } }
      : {}
  )
  return {
    name: variant === "plain"
      ? "EffectCheckpointSaver, plain encoding"
      : variant === "encrypted"
      ? "EffectCheckpointSaver, encrypted"
      : "EffectCheckpointSaver",
    saver,
    storageBytes: () => tableBytes(url),
    close: () => saver.close()
  }
}

const official = async (databases: ScratchDatabases): Promise<Subject> => {
  const { url } = await databases.create("official")
  const pool = new Pool({ connectionString: url, max: 10 })
  const saver = new PostgresSaver(pool)
  await saver.setup()
  return { name: "PostgresSaver (official)", saver, storageBytes: () => tableBytes(url), close: () => saver.end() }
}

/** MemorySaver keeps serialized bytes; its storage is the sum of them. */
const memory = async (): Promise<Subject> => {
  const saver = new MemorySaver()
  const bytes = (value: unknown): number =>
    value instanceof Uint8Array ? value.length : Array.isArray(value) || (typeof value === "object" && value !== null)
      ? Object.values(value).reduce((sum: number, v) => sum + bytes(v), 0)
      : 0
  return {
    name: "MemorySaver",
    saver,
    storageBytes: async () => bytes(saver.storage) + bytes(saver.writes),
    close: async () => undefined
  }
}

/**
 * The server (DATABASE_URL, or a throwaway one), the subjects on it, and
 * what the cases report into. `BENCH_SCALE=0.1` runs a smaller version of
 * every case.
 */
export const makeRun = async () => {
  const scale = Number(process.env.BENCH_SCALE ?? "1")
  const n = (count: number) => Math.max(2, Math.round(count * scale))
  const server = await ensureServer()
  const databases = scratchDatabases(server.url)

  const subjects = [
    await ours(databases),
    await official(databases),
    await memory(),
    await ours(databases, "plain"),
    await ours(databases, "encrypted")
  ]
  const [effect, officialSubject, memorySubject, plainSubject, encryptedSubject] = subjects as [
    Subject,
    Subject,
    Subject,
    Subject,
    Subject
  ]
  const sections: Array<string> = []
  const verdicts: Array<string> = []
  /** The goals' verdicts, in their order (see bench/support/goals.ts). */
  const goals: Partial<Record<GoalLine, Verdict>> = {}
  /** This library's figures for the "no worse than today" goal: speed-ups over the official saver, storage in bytes. */
  const measuredSpeedUps: Partial<Record<WorkloadName, number>> = {}
  const measuredStorage: Partial<Record<StorageName, number>> = {}
  /** `put`'s CPU (p50, ms) at a thread length: this library's, MemorySaver's on the same state, a commit's. */
  const putCpu: Array<
    { readonly steps: number; readonly ours: number; readonly memory: number; readonly floor: number }
  > = []

  const table = (title: string, rows: ReadonlyArray<Row>, unit = "op") =>
    sections.push(renderTable(title, rows, unit, officialSubject.name))

  const target = (what: string, ratio: number, goal: number) =>
    verdicts.push(`| ${what} | ${ratio.toFixed(1)}x | ≥ ${goal}x | ${ratio >= goal ? "met" : "**missed**"} |`)

  /** The p50 of the subject named `name` in `rows`. */
  const p50Of = (rows: ReadonlyArray<Row>, name: string) => p50(rows.find((row) => row.name === name)!.samples)

  /** How many times faster this library's p50 is than `base`'s. */
  const ratioOf = (rows: ReadonlyArray<Row>, base = officialSubject) =>
    p50Of(rows, base.name) / p50Of(rows, effect.name)

  /** "No slower than the plain encoding": the p50 ratio, with 5% allowed for noise. */
  const notSlower = (what: string, rows: ReadonlyArray<Row>) => {
    const ratio = ratioOf(rows, plainSubject)
    verdicts.push(
      `| ${what} vs the plain encoding | ${ratio.toFixed(2)}x | ≥ 1x | ${ratio >= 0.95 ? "met" : "**missed**"} |`
    )
  }

  /**
   * Against MemorySaver, the in-process reference: `time` compares this
   * library's p50 latency with MemorySaver's (at most `goal` times it), `speed`
   * MemorySaver's p50 with this library's (at least `goal`).
   */
  const versusMemory = (what: string, rows: ReadonlyArray<Row>, measure: "time" | "speed", goal: number) => {
    const speed = ratioOf(rows, memorySubject)
    const [ratio, met, bound] = measure === "time" ? [1 / speed, 1 / speed <= goal, "≤"] : [speed, speed >= goal, "≥"]
    verdicts.push(
      `| ${what}, ${measure} vs MemorySaver | ${ratio.toFixed(2)}x | ${bound} ${goal}x | ${
        met ? "met" : "**missed**"
      } |`
    )
  }

  /**
   * The cost of encryption at rest: `ratio` is the encrypted figure over the
   * unencrypted one (time or bytes), at most `goal`.
   */
  const encryptedVs = (what: string, ratio: number, goal: number) =>
    verdicts.push(
      `| ${what}, encrypted vs unencrypted | ${ratio.toFixed(2)}x | ≤ ${goal}x | ${
        ratio <= goal ? "met" : "**missed**"
      } |`
    )

  const log = (line: string) => console.log(`[bench] ${line}`)

  return {
    scale,
    n,
    server,
    databases,
    benchKey,
    subjects,
    effect,
    officialSubject,
    memorySubject,
    plainSubject,
    encryptedSubject,
    encryptedIndex: subjects.indexOf(encryptedSubject),
    sections,
    verdicts,
    goals,
    measuredSpeedUps,
    measuredStorage,
    putCpu,
    table,
    target,
    p50Of,
    ratioOf,
    notSlower,
    versusMemory,
    encryptedVs,
    log
  }
}

export type Run = Awaited<ReturnType<typeof makeRun>>
