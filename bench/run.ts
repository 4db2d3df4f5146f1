/**
 * `npm run bench`: EffectCheckpointSaver against the official
 * @langchain/langgraph-checkpoint-postgres saver on the same PostgreSQL, in
 * the same process, interleaved, with LangGraph's MemorySaver as the
 * in-process reference and plain INSERTs of the same bytes as the floors
 * (taking their turns among the savers); and this library on PGlite
 * against SqliteSaver (bench/scenarios/embedded.ts). Each write's CPU (this
 * process's, apart from the database's) is measured beside its latency.
 * Writes bench/RESULTS.md, whose first table reads issue 38's "Done when"
 * lines (bench/doneWhen.ts; the soak's from bench/soak.json, which
 * `npm run soak` writes); prints that table too.
 *
 * Scenarios of their own live in bench/scenarios/; the workload (messages,
 * a chat thread's calls) in bench/workload.mjs, shared with the SQLite child.
 *
 * Uses DATABASE_URL, or starts a throwaway server. `BENCH_SCALE=0.1` runs a
 * smaller version of every scenario.
 */
import { PgClient } from "@effect/sql-pg"
import { type BaseCheckpointSaver, MemorySaver } from "@langchain/langgraph-checkpoint"
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres"
import { Layer, Redacted } from "effect"
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { cpus } from "node:os"
import { join } from "node:path"
import { Pool } from "pg"
import { makeCountingSocket } from "../harness/countingSocket.ts"
import { admin } from "../harness/databases.ts"
import { ensureServer } from "../harness/postgresServer.ts"
import { EffectCheckpointSaver } from "../src/index.ts"
import * as Postgres from "../src/postgres.ts"
import { agentGraph, agentInput, agentTurn } from "./agentGraph.ts"
import { liveBytes, scratchDatabases, tableBytes } from "./databases.ts"
import {
  type DoneWhenLine,
  noise,
  renderDoneWhen,
  type SoakVerdict,
  type StorageName,
  today,
  type WorkloadName
} from "./doneWhen.ts"
import { makeDeltaFloor, TwoCommitFloor } from "./floors.ts"
import { kib, mib, ms, p50, percentile, renderTable, type Row, type Sample, sample, type Verdict } from "./measure.ts"
import { runDeltaChannelGraph, type SaverName, type SchemaName } from "./scenarios/deltaChannel.ts"
import { runEmbedded } from "./scenarios/embedded.ts"
import { ChatThread, jsonBytes, message, random, rotated, serializedSize, time } from "./workload.mjs"

const scale = Number(process.env.BENCH_SCALE ?? "1")
const n = (count: number) => Math.max(2, Math.round(count * scale))

// ---------------------------------------------------------------- subjects

const server = await ensureServer()
const databases = scratchDatabases(server.url)

interface Subject {
  readonly name: string
  readonly saver: BaseCheckpointSaver
  readonly storageBytes: () => Promise<number>
  readonly close: () => Promise<void>
}

/** A fixed AES-256 key for the encrypted subject (a benchmark needs no secret one). */
const benchKey = Buffer.alloc(32, 7).toString("base64")

/**
 * This library; `plain`: every value in the plain encoding (structural
 * sharing off); `encrypted`: the defaults with encryption at rest.
 */
const ours = async (variant: "default" | "plain" | "encrypted" = "default"): Promise<Subject> => {
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

const official = async (): Promise<Subject> => {
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

// ---------------------------------------------------------------- measuring

const subjects = [await ours(), await official(), await memory(), await ours("plain"), await ours("encrypted")]
const [effect, officialSubject, memorySubject, plainSubject, encryptedSubject] = subjects as [
  Subject,
  Subject,
  Subject,
  Subject,
  Subject
]
const encryptedIndex = subjects.indexOf(encryptedSubject)
const sections: Array<string> = []
const verdicts: Array<string> = []
/** Issue 38's "Done when" lines, in its order (see bench/doneWhen.ts). */
const doneWhen: Partial<Record<DoneWhenLine, Verdict>> = {}
/** This library's figures for the "no worse than today" line: speed-ups over the official saver, storage in bytes. */
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
const ratioOf = (rows: ReadonlyArray<Row>, base = officialSubject) => p50Of(rows, base.name) / p50Of(rows, effect.name)

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
    `| ${what}, ${measure} vs MemorySaver | ${ratio.toFixed(2)}x | ${bound} ${goal}x | ${met ? "met" : "**missed**"} |`
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

const packageVersion = (name: string) =>
  (JSON.parse(execFileSync("npm", ["ls", name, "--json", "--depth=0"], { encoding: "utf8" })) as {
    dependencies?: Record<string, { version: string }>
  }).dependencies?.[name]?.version ?? "?"

const log = (line: string) => console.log(`[bench] ${line}`)

// ---------------------------------------------------------------- scenarios

{
  // First of all, while this process's heap is nearly empty (as the SQLite child's is): the MemorySaver
  // each side is normalised by allocates the most, and would pay for every scenario's garbage later.
  const parameters = { steps: n(300), readSizes: [10, 1000].map(n), reads: n(100) }
  log(
    `embedded: PGlite vs SqliteSaver (child process), each beside a MemorySaver: ${parameters.steps} super-steps, ` +
      `getTuple latest of threads of ${parameters.readSizes.join(" and ")} steps`
  )
  const { pglite, sqlite } = await runEmbedded(parameters)
  // Time over MemorySaver's time in the same process: lower is better; speed is SQLite's over ours.
  const normalised = (samples: { saver: Array<number>; memory: Array<number> }) =>
    p50(samples.saver) / p50(samples.memory)
  const measures = [
    {
      what: `super-step (putWrites + put), chat thread of ${parameters.steps} steps`,
      ours: pglite.superStep,
      theirs: sqlite.superStep
    },
    ...parameters.readSizes.map((size, k) => ({
      what: `getTuple latest, thread of ${size} steps`,
      ours: pglite.getTupleLatest[k]!,
      theirs: sqlite.getTupleLatest[k]!
    }))
  ]
  const rows = measures.map(({ ours, theirs, what }) => {
    const [a, b] = [normalised(ours), normalised(theirs)]
    return { what, ours, theirs, normalisedOurs: a, normalisedTheirs: b, speed: b / a }
  })
  sections.push([
    `### Embedded: this library on PGlite vs SqliteSaver, each normalised by MemorySaver in its own process`,
    "",
    "| measure | PGlite p50 ms | its MemorySaver p50 ms | normalised | SqliteSaver p50 ms | its MemorySaver p50 ms " +
    "| normalised | PGlite vs SQLite (speed) |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map((row) =>
      `| ${row.what} | ${ms(p50(row.ours.saver))} | ${ms(p50(row.ours.memory))} | ${row.normalisedOurs.toFixed(2)} | ${
        ms(p50(row.theirs.saver))
      } | ${ms(p50(row.theirs.memory))} | ${row.normalisedTheirs.toFixed(2)} | ${row.speed.toFixed(2)}x |`
    ),
    "",
    `This library: \`pglite:<fresh temporary directory>\`, in this process (Node ${process.version}). SqliteSaver ` +
    `${packageVersion("@langchain/langgraph-checkpoint-sqlite")} (SQLite ${sqlite.sqlite}) on a file in a fresh ` +
    `temporary directory, in a child process on Node ${sqlite.node} (better-sqlite3 is built for the Node that ran ` +
    "`npm ci`). Each side interleaves its saver with its own MemorySaver step by step, on the same messages " +
    "(bench/workload.mjs); normalised is the saver's p50 over its MemorySaver's."
  ].join("\n"))
  const [superStep, shortRead] = rows as [(typeof rows)[number], (typeof rows)[number]]
  doneWhen.embedded = {
    value: `super-step ${superStep.speed.toFixed(2)}x SqliteSaver's speed (${superStep.normalisedOurs.toFixed(2)} vs ` +
      `${superStep.normalisedTheirs.toFixed(2)} MemorySaver); getTuple latest @${parameters.readSizes[0]} ` +
      `${(1 / shortRead.speed).toFixed(2)}x its time (${shortRead.normalisedOurs.toFixed(2)} vs ` +
      `${shortRead.normalisedTheirs.toFixed(2)} MemorySaver)`,
    target: "≥ 1x; ≤ 5x",
    met: superStep.speed >= 1 && 1 / shortRead.speed <= 5
  }
}

{
  // Early, while the process holds little: with all five subjects in one
  // heap (MemorySaver's 33 MB of state, the plain encoding's garbage), every
  // allocation pays for collections the others caused, and the subject
  // writing 40x more bytes per step leaves the server flushing as the next
  // one runs. Two savers, on databases of their own, alternating.
  const steps = n(300)
  const rounds = 5
  log(`encryption overhead: ${rounds} x ${steps} super-steps, with and without encryption, alternating`)
  const pair = await Promise.all(
    (["effect_pair", "effect_pair_encrypted"] as const).map(async (name, i) => {
      const { url } = await databases.create(name)
      return EffectCheckpointSaver.fromConnString(
        url,
        i === 0 ? {} : { encryption: { keys: { k1: benchKey }, primary: "k1" } }
      )
    })
  )
  const rows = pair.map((_, i) => ({ name: i === 0 ? "unencrypted" : "encrypted", samples: [] as Array<number> }))
  const totals = [0, 0]
  for (let round = 0; round < rounds; round++) {
    const threads = await Promise.all(pair.map((saver) => new ChatThread(saver, `pair-${round}`).start()))
    for (let step = 0; step < steps; step++) {
      for (const [i, thread] of rotated(threads, step)) {
        const next = thread.nextMessage()
        const elapsed = await time(() => thread.superStep(next))
        rows[i]!.samples.push(elapsed)
        totals[i]! += elapsed
      }
    }
  }
  await Promise.all(pair.map((saver) => saver.close()))
  table(`Encryption overhead: ${rounds} chat threads of ${steps} super-steps, alternating`, rows, "super-step")
  encryptedVs("super-step, chat thread (total time, paired)", totals[1]! / totals[0]!, 1.15)
}

{
  const steps = n(300)
  log(`chat thread: ${steps} super-steps, interleaved with the two-commit floors`)
  const delta = await makeDeltaFloor(databases)
  // The floors take their turns among the savers, as two more threads: each of their calls then
  // finds the machine as the savers' do (a connection idle while the others ran).
  const floors = [
    { name: "two-commit floor (node-postgres)", saver: await TwoCommitFloor.make(databases, "node-postgres") },
    { name: "two-commit floor (effect's PgClient)", saver: await TwoCommitFloor.make(databases, "effect") }
  ]
  const rotation = [...subjects, ...floors]
  const threads = await Promise.all(rotation.map((subject) => new ChatThread(subject.saver, "chat-300").start()))
  const calls = rotation.map(() => ({
    putWrites: [] as Array<Sample>,
    put: [] as Array<Sample>,
    steps: [] as Array<number>
  }))
  const totals = rotation.map(() => 0)
  let information = 0
  for (let step = 0; step < steps; step++) {
    for (const [i, thread] of rotated(threads, step)) {
      const next = thread.nextMessage()
      const write = await sample(() => thread.putWrites(next))
      const put = await sample(() => thread.put(next))
      calls[i]!.putWrites.push(write)
      calls[i]!.put.push(put)
      calls[i]!.steps.push(write.ms + put.ms)
      totals[i]! += write.ms + put.ms
    }
    const added = threads[0]!.messages.at(-1)
    information += serializedSize(added)
    await delta.insert(jsonBytes(added))
  }
  await Promise.all(floors.map(({ saver }) => saver.close()))
  const deltaFloor = await delta.bytes()
  await delta.close()
  table(
    `Chat thread: ${steps} super-steps (putWrites + put), messages growing ~800 bytes a step`,
    rotation.map((subject, i) => ({ name: subject.name, samples: calls[i]!.steps, total: totals[i]! })),
    "super-step"
  )
  const indexOf = (name: string) => rotation.findIndex((subject) => subject.name === name)
  const [nodeFloor, effectFloor] = floors.map(({ name }) => calls[indexOf(name)]!)
  const ours = calls[0]!
  const memoryCalls = calls[indexOf(memorySubject.name)]!
  const ms50 = (samples: ReadonlyArray<Sample>) => p50(samples.map((s) => s.ms))
  const cpu50 = (samples: ReadonlyArray<Sample>) => p50(samples.map((s) => s.cpu))
  /** The last 100 steps (at full scale): the put of a 200- to 300-message state. */
  const last = <A>(samples: ReadonlyArray<A>) => samples.slice(-Math.max(2, Math.round(steps / 3)))
  sections.push([
    "Each call's latency beside the CPU this process spent on it (user and system: serializing, hashing,",
    "building and sending the statement, reading the answer; the database's work runs in its own process).",
    "The floors' calls are one INSERT each, of the bytes the call must make durable.",
    "",
    "| saver | putWrites p50 ms | its CPU p50 ms | put p50 ms | its CPU p50 ms | put CPU p50 ms, last " +
    `${last(ours.put).length} steps |`,
    "|---|---:|---:|---:|---:|---:|",
    ...rotation.map((subject, i) => {
      const c = calls[i]!
      return `| ${subject.name} | ${ms(ms50(c.putWrites))} | ${ms(cpu50(c.putWrites))} | ${ms(ms50(c.put))} | ${
        ms(cpu50(c.put))
      } | ${ms(cpu50(last(c.put)))} |`
    })
  ].join("\n"))
  const storage = await Promise.all(subjects.map((subject) => subject.storageBytes()))
  sections.push(
    `Storage after the thread: ${subjects.map((s, i) => `${s.name} ${mib(storage[i]!)} MiB`).join(", ")}. ` +
      `The steps added ${mib(information)} MiB of messages; stored one INSERT a step in a plain table (the ` +
      `delta floor) they take ${mib(deltaFloor)} MiB. Against that floor: ` +
      subjects.map((s, i) => `${s.name} ${(storage[i]! / deltaFloor).toFixed(1)}x`).join(", ") + "."
  )
  const commit = ms50(nodeFloor!.putWrites)
  const floorStep = p50(nodeFloor!.steps)
  const ourStep = p50(ours.steps)
  doneWhen.superStep = {
    value: `${(ourStep / floorStep).toFixed(2)}x (${ms(ourStep)} ms vs ${ms(floorStep)} ms; a commit here: ` +
      `${ms(commit)} ms)`,
    target: "≤ 2x, where a commit ≤ 0.3 ms",
    met: ourStep <= 2 * floorStep
  }
  const writes = ms50(ours.putWrites)
  doneWhen.putWrites = {
    value: `${(writes / ms50(effectFloor!.putWrites)).toFixed(2)}x (${ms(writes)} ms vs ${
      ms(ms50(effectFloor!.putWrites))
    } ms through the same client; ${(writes / commit).toFixed(2)}x node-postgres's ${ms(commit)} ms)`,
    target: "≤ 1.5x",
    met: writes <= 1.5 * ms50(effectFloor!.putWrites)
  }
  putCpu.push({
    steps,
    ours: cpu50(last(ours.put)),
    memory: cpu50(last(memoryCalls.put)),
    floor: cpu50(last(nodeFloor!.put))
  })
  measuredStorage["chat thread, 300 steps"] = storage[0]!
  measuredSpeedUps["chat thread super-step"] = p50(calls[1]!.steps) / ourStep
  verdicts.push(
    `| storage of the chat thread, vs the delta floor | ${(storage[0]! / deltaFloor).toFixed(1)}x ` +
      `(official ${(storage[1]! / deltaFloor).toFixed(1)}x) | ≤ 2x | ${
        storage[0]! <= 2 * deltaFloor ? "met" : "**missed**"
      } |`
  )
  encryptedVs("storage of the chat thread", storage[encryptedIndex]! / storage[0]!, 1.3)

  // Reads of the same thread, once the server has caught up with its writes.
  await databases.settle()
  const reads = n(60)
  const listRows = subjects.map((subject) => ({ name: subject.name, samples: [] as Array<number> }))
  const listAllRows = subjects.map((subject) => ({ name: subject.name, samples: [] as Array<number> }))
  const drain = async (saver: BaseCheckpointSaver, limit?: number) => {
    let count = 0
    for await (
      const _ of saver.list({ configurable: { thread_id: "chat-300" } }, limit === undefined ? {} : { limit })
    ) {
      count++
    }
    return count
  }
  for (let round = 0; round < reads; round++) {
    for (const [i, subject] of rotated(subjects, round)) {
      listRows[i]!.samples.push(await time(() => drain(subject.saver, 10)))
    }
  }
  for (let round = 0; round < Math.max(2, Math.round(reads / 20)); round++) {
    for (const [i, subject] of rotated(subjects, round)) {
      listAllRows[i]!.samples.push(await time(() => drain(subject.saver)))
    }
  }
  table(`list, limit 10 (thread of ${steps} checkpoints)`, listRows, "list")
  table(`list, full (${steps} checkpoints)`, listAllRows, "list")
  target("full list", ratioOf(listAllRows), 20)
  measuredSpeedUps["list, limit 10 (300 checkpoints)"] = ratioOf(listRows)
  measuredSpeedUps["list, full (300 checkpoints)"] = ratioOf(listAllRows)
  notSlower("list, limit 10", listRows)
  notSlower("full list", listAllRows)
}

{
  log("getTuple latest at 10 / 100 / 1000 steps, and by id")
  const sizes = [10, 100, 1000].map(n)
  const byIdRows = subjects.map((subject) => ({ name: subject.name, samples: [] as Array<number> }))
  for (const size of sizes) {
    const threads = await Promise.all(subjects.map((subject) => new ChatThread(subject.saver, `read-${size}`).start()))
    const ids: Array<Array<string>> = subjects.map(() => [])
    for (let step = 0; step < size; step++) {
      for (const [i, thread] of threads.entries()) {
        await thread.superStep()
        ids[i]!.push(String(thread.config.configurable?.checkpoint_id))
      }
    }
    const rows = subjects.map((subject) => ({ name: subject.name, samples: [] as Array<number> }))
    // Enough reads that a p50 holds still from run to run: "no read slower than today" compares ratios of them.
    const reads = n(size >= 1000 ? 40 : 150)
    await databases.settle()
    for (let round = 0; round < reads; round++) {
      for (const [i, subject] of rotated(subjects, round)) {
        rows[i]!.samples.push(await time(() => subject.saver.getTuple({ configurable: { thread_id: `read-${size}` } })))
      }
    }
    table(`getTuple latest, thread of ${size} steps`, rows, "read")
    measuredSpeedUps[`getTuple latest at ${([10, 100, 1000] as const)[sizes.indexOf(size)]!} steps`] = ratioOf(rows)
    if (size === sizes[2]) {
      target(`getTuple latest at ${size} steps`, ratioOf(rows), 20)
      versusMemory(`getTuple latest at ${size} steps`, rows, "time", 1.5)
      notSlower(`getTuple latest at ${size} steps`, rows)
      encryptedVs(`getTuple latest at ${size} steps (p50)`, ratioOf(rows, encryptedSubject), 1.3)
      for (let round = 0; round < reads; round++) {
        const pick = Math.floor(random() * size)
        for (const [i, subject] of rotated(subjects, round)) {
          const config = {
            configurable: { thread_id: `read-${size}`, checkpoint_ns: "", checkpoint_id: ids[i]![pick]! }
          }
          byIdRows[i]!.samples.push(await time(() => subject.saver.getTuple(config)))
        }
      }
      table(`getTuple by id, random checkpoints of the ${size}-step thread`, byIdRows, "read")
      target(`getTuple by id at ${size} steps`, ratioOf(byIdRows), 10)
      measuredSpeedUps["getTuple by id at 1000 steps"] = ratioOf(byIdRows)
    }
  }
}

{
  const size = n(1000)
  log(`copy and prune of a ${size}-step thread (this library; the official saver has neither)`)
  const { url, drop } = await databases.create("lifecycle")
  const socket = makeCountingSocket(url)
  const saver = EffectCheckpointSaver.fromLayer(
    Postgres.layerClient().pipe(
      Layer.provide(
        PgClient.layerFrom(
          PgClient.makeClient({ url: Redacted.make(url), stream: socket.open, maxMessageSize: 1 << 30 })
        )
      )
    )
  )
  const thread = await new ChatThread(saver, "long").start()
  for (let step = 0; step < size; step++) await thread.superStep()
  const measure = async (f: () => Promise<unknown>) => {
    const trips = socket.roundTrips()
    const elapsed = await time(f)
    return { elapsed, trips: socket.roundTrips() - trips, bytes: await liveBytes(url) }
  }
  const stored = await liveBytes(url)
  const copied = await measure(() => saver.copyThread("long", "copy"))
  const pruned = await measure(() => saver.prune(["copy"], { strategy: "keep_latest" }))
  const retained = await measure(() => saver.applyRetention({ keepLast: 10 }))
  await saver.close()
  await drop()
  sections.push([
    `### Thread lifecycle: a ${size}-step chat thread (this library only)`,
    "",
    "| operation | time ms | round trips | live data after, MiB |",
    "|---|---:|---:|---:|",
    `| the thread as written | | | ${mib(stored)} |`,
    `| copyThread to a new thread | ${ms(copied.elapsed)} | ${copied.trips} | ${mib(copied.bytes)} |`,
    `| prune the copy, keep_latest | ${ms(pruned.elapsed)} | ${pruned.trips} | ${mib(pruned.bytes)} |`,
    `| applyRetention({ keepLast: 10 }) over both threads | ${ms(retained.elapsed)} | ${retained.trips} | ${
      mib(retained.bytes)
    } |`,
    "",
    "Live data is the checkpoint documents, blobs and writes as stored (compressed where PostgreSQL",
    "compresses them). Operations run in one transaction holding the thread; each statement is one",
    "round trip, BEGIN and COMMIT included."
  ].join("\n"))
}

{
  const size = n(3000)
  log(`a ${size}-step chat thread (this library; the official saver would store ~${mib(size * size * 400)} MiB)`)
  const { url, drop } = await databases.create("long")
  const saver = await EffectCheckpointSaver.fromConnString(url)
  const delta = await makeDeltaFloor(databases)
  const thread = await new ChatThread(saver, "long").start()
  // 100 steps at full scale, as issue 27 reads it; over the last of them, MemorySaver puts the same
  // state (each on its own, dropped after: it would keep every step's whole array).
  const window = Math.max(2, Math.round(size / 30))
  const memory: BaseCheckpointSaver = new MemorySaver()
  const puts: Array<Sample> = []
  const writes: Array<Sample> = []
  const memoryPuts: Array<Sample> = []
  let information = 0
  for (let step = 0; step < size; step++) {
    const next = thread.nextMessage()
    writes.push(await sample(() => thread.putWrites(next)))
    puts.push(await sample(() => thread.put(next)))
    information += serializedSize(next)
    await delta.insert(jsonBytes(next))
    if (step >= size - window) {
      const { checkpoint, metadata, newVersions } = thread.last!
      memoryPuts.push(
        await sample(() => memory.put({ configurable: { thread_id: "long" } }, checkpoint, metadata, newVersions))
      )
      await memory.deleteThread("long")
    }
  }
  const reads: Array<number> = []
  for (let round = 0; round < 10; round++) {
    reads.push(await time(() => saver.getTuple({ configurable: { thread_id: "long" } })))
  }
  const stored = await tableBytes(url)
  const deltaFloor = await delta.bytes()
  await delta.close()
  await saver.close()
  await drop()
  const at = (samples: ReadonlyArray<Sample>, key: "ms" | "cpu") => p50(samples.map((s) => s[key]))
  sections.push([
    `### A ${size}-step chat thread (this library)`,
    "",
    "| measure | first " + window + " steps | last " + window + " steps |",
    "|---|---:|---:|",
    `| put p50 ms | ${ms(at(puts.slice(0, window), "ms"))} | ${ms(at(puts.slice(-window), "ms"))} |`,
    `| put CPU p50 ms | ${ms(at(puts.slice(0, window), "cpu"))} | ${ms(at(puts.slice(-window), "cpu"))} |`,
    `| MemorySaver.put of the same state, CPU p50 ms | | ${ms(at(memoryPuts, "cpu"))} |`,
    `| putWrites p50 ms | ${ms(at(writes.slice(0, window), "ms"))} | ${ms(at(writes.slice(-window), "ms"))} |`,
    `| putWrites CPU p50 ms | ${ms(at(writes.slice(0, window), "cpu"))} | ${ms(at(writes.slice(-window), "cpu"))} |`,
    "",
    `Storage: ${mib(stored)} MiB for ${mib(information)} MiB of messages added ` +
    `(${(stored / deltaFloor).toFixed(1)}x the delta floor of ${mib(deltaFloor)} MiB). ` +
    `getTuple latest at the end: p50 ${ms(p50(reads))} ms. A put checks that the elements it already stored ` +
    "were not changed in place (an O(n) walk, cheaper per element than serializing it); MemorySaver's " +
    "serializes the whole state. The official saver is not run here: it stores the whole array at every " +
    `step, about ${mib(size * size * 400)} MiB before compression.`
  ].join("\n"))
  putCpu.push({ steps: size, ours: at(puts.slice(-window), "cpu"), memory: at(memoryPuts, "cpu"), floor: NaN })
  measuredStorage["chat thread, 3000 steps"] = stored
}

{
  const threadCount = 32
  const steps = n(50)
  const rounds = 5
  log(`${threadCount} threads x ${steps} steps concurrently, ${rounds} rounds taking turns`)
  // For comparison: every call its own statement (the behaviour before group commit); and batches
  // of every waiting call, two in flight (the first group commit's defaults).
  const alone = EffectCheckpointSaver.fromLayer(
    Postgres.layer({ url: (await databases.create("effect_alone")).url, groupCommit: false })
  )
  const unbounded = EffectCheckpointSaver.fromLayer(
    Postgres.layer({
      url: (await databases.create("effect_unbounded")).url,
      groupCommit: { concurrency: 2, maxBatch: 256 }
    })
  )
  const concurrent: Array<Subject> = [
    ...subjects,
    {
      name: "EffectCheckpointSaver, group commit off",
      saver: alone,
      storageBytes: async () => 0,
      close: () => alone.close()
    },
    {
      name: "EffectCheckpointSaver, batches of every waiting call, 2 in flight",
      saver: unbounded,
      storageBytes: async () => 0,
      close: () => unbounded.close()
    }
  ]
  const rows: Array<{ name: string; samples: Array<number>; total: number; count: number }> = concurrent.map((
    subject
  ) => ({
    name: subject.name,
    samples: [],
    total: 0,
    count: 0
  }))
  for (let round = 0; round < rounds; round++) {
    for (const [i, subject] of rotated(concurrent, round)) {
      const row = rows[i]!
      // The models' answers, made before the round is timed.
      const answers = Array.from(
        { length: threadCount },
        () => Array.from({ length: steps }, (_, step) => message(step))
      )
      row.total += await time(() =>
        Promise.all(answers.map(async (messages, t) => {
          const thread = await new ChatThread(subject.saver, `concurrent-${round}-${t}`).start()
          for (const next of messages) row.samples.push(await time(() => thread.superStep(next)))
        }))
      )
      row.count += threadCount * steps
    }
  }
  await alone.close()
  await unbounded.close()
  table(`${threadCount} threads x ${steps} super-steps, concurrently (${rounds} rounds)`, rows, "super-step")
  const [a, b] = rows
  target(`${threadCount} concurrent threads (throughput)`, b!.total / a!.total, 4)
  const p99 = (row: Row) => percentile(row.samples, 99)
  const [off, unboundedRow] = rows.slice(-2) as [Row & { total: number }, Row & { total: number }]
  verdicts.push(
    `| ${threadCount} concurrent threads, p99 with group commit vs without | ${
      (p99(a!) / p99(off)).toFixed(2)
    }x | ≤ 1x | ${p99(a!) <= p99(off) ? "met" : "**missed**"} |`
  )
  verdicts.push(
    `| ${threadCount} concurrent threads, throughput vs batches of every waiting call | ${
      (unboundedRow.total / a!.total).toFixed(2)
    }x | ≥ 1x | ${unboundedRow.total >= a!.total ? "met" : "**missed**"} |`
  )
  const speedUp = b!.total / a!.total
  // The p99 against the official saver's in the same run: absolute latencies follow the machine's load.
  const p99VsOfficial = p99(a!) / p99(b!)
  doneWhen.concurrent = {
    value:
      `${speedUp.toFixed(2)}x the official saver's throughput; p99 ${ms(p99(a!))} ms, ${
        p99VsOfficial.toFixed(2)
      }x the official saver's (today ${today.concurrentP99VsOfficial.toFixed(2)}x)` +
      (scale === 1 ? "" : "; a scaled run: today's p99 is of 50 steps a thread"),
    target: `≥ 4x, p99 ≤ today's share of the official saver's`,
    met: speedUp >= 4 && p99VsOfficial <= today.concurrentP99VsOfficial
  }
  measuredSpeedUps["32 concurrent threads (throughput)"] = speedUp
}

{
  const turns = n(100)
  log(`StateGraph invoke loop: ${turns} turns`)
  const apps = subjects.map((subject) => agentGraph(subject.saver))
  const rows = subjects.map((subject) => ({ name: subject.name, samples: [] as Array<number> }))
  for (let turn = 0; turn < turns; turn++) {
    for (const [i, app] of rotated(apps, turn)) {
      const input = agentInput()
      rows[i]!.samples.push(await time(() => agentTurn(app, "graph", input)))
    }
  }
  table(`StateGraph.invoke, one thread, ${turns} turns (each: getTuple, 2 puts, writes)`, rows, "invoke")
  const speed = ratioOf(rows, memorySubject)
  doneWhen.invoke = {
    value: `${speed.toFixed(2)}x MemorySaver's speed (p50 per invoke, ${turns} turns)`,
    target: "≥ 1.0x",
    met: speed >= 1
  }
  measuredSpeedUps["StateGraph.invoke loop"] = ratioOf(rows)
}

{
  const turns = n(300)
  log(`DeltaChannel chat graph: ${turns} turns, MessagesValue and MessagesDeltaValue, both PostgreSQL savers`)
  const { messageBytes, runs } = await runDeltaChannelGraph(turns, databases)
  const run = (saver: SaverName, schema: SchemaName) => runs.find((r) => r.saver === saver && r.schema === schema)!
  sections.push([
    `### A chat graph of ${turns} turns: \`MessagesValue\` vs \`MessagesDeltaValue\` (\`DeltaChannel\`)`,
    "",
    "| saver | state schema | turns/s | p50 ms | p99 ms | storage MiB | KiB per turn |",
    "|---|---|---:|---:|---:|---:|---:|",
    ...runs.map((r) =>
      `| ${r.saver} | \`${r.schema}\` | ${r.turnsPerSecond.toFixed(1)} | ${ms(p50(r.samples))} | ${
        ms(percentile(r.samples, 99))
      } | ${mib(r.storageBytes)} | ${kib(r.storageBytes / turns)} |`
    ),
    "",
    `A StateGraph (\`StateSchema\` with \`messages\`, one agent node) invoked ${turns} times on one thread, ` +
    `each turn one human message in and one AI message out (${kib(messageBytes)} KiB of messages in all, ` +
    `${(messageBytes / turns).toFixed(0)} B a turn as JSON). The four runs take turns, one invoke each; each ` +
    "has a database of its own, and storage is every table in it after a VACUUM (indexes, TOAST, the thread " +
    "and migration tables included).",
    "",
    "Table by table (issue 27's per-turn overhead), bytes per turn with the table's indexes, and its rows:",
    "",
    `| table | ${
      runs.map((r) => `${r.saver === "EffectCheckpointSaver" ? "this library" : "official"}, \`${r.schema}\``).join(
        " | "
      )
    } |`,
    `|---|${runs.map(() => "---:").join("|")}|`,
    ...[...new Set(runs.flatMap((r) => r.tables.map((table) => table.name)))].sort().map((name) =>
      `| ${name} | ${
        runs.map((r) => {
          const table = r.tables.find((t) => t.name === name)
          return table === undefined
            ? ""
            : `${((table.tableBytes + table.indexBytes) / turns).toFixed(0)} B (${table.rows} rows)`
        }).join(" | ")
      } |`
    )
  ].join("\n"))
  const ours = (schema: SchemaName) => run("EffectCheckpointSaver", schema).storageBytes
  const theirs = run("PostgresSaver (official)", "MessagesDeltaValue").storageBytes
  doneWhen.storage = {
    value: `stored ${mib(ours("MessagesValue"))} MiB (\`MessagesValue\`) and ${mib(ours("MessagesDeltaValue"))} MiB ` +
      `(\`MessagesDeltaValue\`) vs the official saver's ${mib(theirs)} MiB (\`MessagesDeltaValue\`)`,
    target: "both < official's",
    met: ours("MessagesValue") < theirs && ours("MessagesDeltaValue") < theirs
  }
  measuredStorage["chat graph, MessagesValue"] = ours("MessagesValue")
  measuredStorage["chat graph, MessagesDeltaValue"] = ours("MessagesDeltaValue")
}

{
  // put's CPU against MemorySaver's on the same state (its whole serialization), at each length.
  doneWhen.putCpu = {
    value: putCpu.map(({ floor, memory, ours, steps }) =>
      `${ms(ours)} ms vs ${ms(memory)} ms at ${steps} steps (${(ours / memory).toFixed(2)}x` +
      (Number.isNaN(floor) ? ")" : `; a commit's CPU: ${ms(floor)} ms)`)
    ).join("; "),
    target: "< 1x at each",
    met: putCpu.length === 2 && putCpu.every(({ memory, ours }) => ours < memory)
  }
}

{
  // bench/soak.json, as `npm run soak` left it: only a run of 10 minutes, 32 writers and faults counts.
  const file = join(import.meta.dirname, "soak.json")
  const soak = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) as SoakVerdict : undefined
  const complete = soak !== undefined && soak.minutes >= 10 && soak.writers >= 32 && soak.faults > 0
  doneWhen.soak = soak === undefined
    ? { value: "not run (`npm run soak` writes bench/soak.json)", target: "", met: false }
    : {
      value: `${soak.date}, ${soak.minutes} min, ${soak.writers} writers, ${soak.faults} faults: ` +
        `${soak.acknowledged} turns, ${soak.lost} lost, ${soak.refused} refused; heap ${soak.heap.toFixed(2)}x, ` +
        `RSS ${soak.rss.toFixed(2)}x from minute 2 to the end (bench/SOAK.md)`,
      target: "0 lost, 0 refused, ≤ 1.15x each",
      met: complete && soak.lost === 0 && soak.refused === 0 && soak.heap <= 1.15 && soak.rss <= 1.15
    }
}

{
  // Against this library before issue 38 (bench/doneWhen.ts `today`): speed-ups over the official
  // saver in the same run (absolute latencies follow the machine's load), and storage; a ratio above 1:
  // slower, or larger, than today.
  const slower = (Object.keys(today.speedUps) as Array<WorkloadName>).map((name) => ({
    name,
    ratio: today.speedUps[name] / (measuredSpeedUps[name] ?? NaN)
  }))
  const larger = (Object.keys(today.storage) as Array<StorageName>).map((name) => ({
    name,
    ratio: (measuredStorage[name] ?? NaN) / (today.storage[name] * 1024 * 1024)
  }))
  const worst = (ratios: ReadonlyArray<{ name: string; ratio: number }>) =>
    ratios.reduce((a, b) => (b.ratio > a.ratio || Number.isNaN(b.ratio) ? b : a))
  const slowest = worst(slower)
  const largest = worst(larger)
  doneWhen.noRegression = {
    value: `slowest vs today: ${slowest.name} ${slowest.ratio.toFixed(2)}x; largest storage vs today: ` +
      `${largest.name} ${largest.ratio.toFixed(2)}x` + (scale === 1 ? "" : " (a scaled run: not comparable)") +
      "; suites: not run by the bench",
    target: `speed-ups over the official saver ≥ today's / ${noise} (noise), storage ≤ today's; \`npm test\` green`,
    // Today's storage is in MiB to two decimals: the same rounding of ours is compared.
    met: slower.every(({ ratio }) => ratio <= noise) &&
      larger.every(({ name }) => Number(mib(measuredStorage[name] ?? NaN)) <= today.storage[name])
  }
}

// ---------------------------------------------------------------- report

const serverVersion = await admin(
  (client) => client.query<{ server_version: string }>("SHOW server_version"),
  server.url
)

/** Written by hand from a profiling session; the report includes it as it is. */
const profileFile = join(import.meta.dirname, "profile.md")

const doneWhenTable = renderDoneWhen(doneWhen)

const report = [
  "# Benchmark results",
  "",
  `Produced by \`npm run bench\` (bench/run.ts) on ${new Date().toISOString().slice(0, 10)}: ` +
  `${cpus().length} cores (${cpus()[0]?.model.trim()}), Node ${process.version}, ` +
  `PostgreSQL ${serverVersion.rows[0]!.server_version}, ` +
  `@langchain/langgraph-checkpoint-postgres ${packageVersion("@langchain/langgraph-checkpoint-postgres")}` +
  (scale === 1 ? "." : `, BENCH_SCALE=${scale}.`),
  "",
  "All savers run in one process against one server; scenarios interleave the savers step by step, so",
  "both see the same machine. Latencies are per call as a LangGraph user makes them (through the",
  "`BaseCheckpointSaver` API, serialization included). MemorySaver is the in-process reference.",
  "",
  "## Done when (issue 38)",
  "",
  doneWhenTable,
  "",
  "## Reading these numbers",
  "",
  "- **Structural sharing** (on by default; the \"plain encoding\" rows turn it off): a step stores and",
  "  sends its new message and a few hashes, not the whole `messages` array, so storage grows with what",
  "  the steps add (the delta floor: each step's new message INSERTed into a plain table) instead of with",
  "  its square, and a `list` page sends each message once.",
  "- **Writes** of this library are bound by two commits per super-step (putWrites, then put) plus an",
  "  O(n) check that the elements it already stored were not changed in place; the official saver",
  "  serializes and sends the whole array at every step. **CPU** is this process's, per call (user and",
  "  system time): what the library itself costs, apart from the database, which runs elsewhere.",
  "- **Reads** of the official saver spend most of their time parsing `bytea` arrays returned as hex text.",
  "  This library revives messages directly (no generic `load`) and a `getTuple` fetches only the pieces",
  "  its process does not hold yet: what is left is parsing the array's JSON and building its messages,",
  "  which MemorySaver pays as well (see the read path profile at the end).",
  "- **Concurrent threads**: with two cores, every saver saturates the CPU.",
  "- **Floors**: the two-commit floors take their turns among the savers, each on a connection of its",
  "  own: a putWrites is one INSERT of the writes' JSON (one commit of the same bytes), a put one INSERT of",
  "  the checkpoint with only the step's new message; through node-postgres's `Client`, and through",
  "  effect's `PgClient` (the client stack this library runs on). The workload's messages are made before",
  "  each call is timed: a call's time is the saver's.",
  "- **Embedded**: PGlite (this process) and SqliteSaver (a child on the Node that built better-sqlite3) are",
  "  each divided by a MemorySaver run beside them in the same process, so the two Nodes need not match.",
  "",
  "## Targets",
  "",
  "| measure | this library vs official | target | |",
  "|---|---:|---:|---|",
  ...verdicts,
  "",
  "## Scenarios",
  "",
  sections.join("\n\n"),
  "",
  "## Read path profile",
  "",
  ...(existsSync(profileFile)
    ? [readFileSync(profileFile, "utf8").trim()]
    : ["Not recorded: bench/profile.md, when present, is included here (where a getTuple spends its time)."]),
  ""
].join("\n")

writeFileSync(join(import.meta.dirname, "RESULTS.md"), report)
log("wrote bench/RESULTS.md")
console.log(`\nDone when (issue 38)\n\n${doneWhenTable}\n`)
for (const subject of subjects) await subject.close()
await databases.dropAll()
server.stop()
