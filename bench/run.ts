/**
 * `npm run bench`: EffectCheckpointSaver against the official
 * @langchain/langgraph-checkpoint-postgres saver on the same PostgreSQL, in
 * the same process, interleaved, with LangGraph's MemorySaver as the
 * in-process reference and a plain INSERT of the same bytes as the floor.
 * Writes bench/RESULTS.md.
 *
 * Uses DATABASE_URL, or starts a throwaway server. `BENCH_SCALE=0.1` runs a
 * smaller version of every scenario.
 */
import { PgClient } from "@effect/sql-pg"
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages"
import type { RunnableConfig } from "@langchain/core/runnables"
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph"
import { type BaseCheckpointSaver, type Checkpoint, MemorySaver, uuid6 } from "@langchain/langgraph-checkpoint"
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres"
import { type Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { cpus } from "node:os"
import { join } from "node:path"
import { Client, Pool } from "pg"
import { EffectCheckpointSaver } from "../src/index.ts"
import * as Postgres from "../src/postgres.ts"
import { makeCountingSocket } from "../test/support/countingSocket.ts"
import { ensureServer } from "../test/support/postgresServer.ts"

const scale = Number(process.env.BENCH_SCALE ?? "1")
const n = (count: number) => Math.max(2, Math.round(count * scale))

// ---------------------------------------------------------------- subjects

const server = await ensureServer()

const admin = async <A>(database: string, f: (client: Client) => Promise<A>): Promise<A> => {
  const url = new URL(server.url)
  url.pathname = `/${database}`
  const client = new Client({ connectionString: url.toString() })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}
const serverDatabase = new URL(server.url).pathname.slice(1) || "postgres"

const createDatabase = async (name: string) => {
  const database = `lce_bench_${name}`
  await admin(serverDatabase, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
    await client.query(`CREATE DATABASE ${database}`)
  })
  const url = new URL(server.url)
  url.pathname = `/${database}`
  return { database, url: url.toString() }
}

const tableBytes = (database: string) =>
  admin(database, async (client) => {
    await client.query("VACUUM ANALYZE")
    const result = await client.query<{ bytes: string }>(`
      SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes
      FROM pg_class c
      WHERE c.relname IN ('checkpoints', 'checkpoint_blobs', 'checkpoint_writes', 'checkpoint_pieces')
        AND c.relnamespace = 'public'::regnamespace`)
    return Number(result.rows[0]!.bytes)
  })

/** The bytes of live data: checkpoint documents, blobs and writes (what deleting rows frees). */
const liveBytes = (database: string) =>
  admin(database, async (client) => {
    const result = await client.query<{ bytes: string }>(`
      SELECT (SELECT coalesce(sum(pg_column_size(checkpoint) + pg_column_size(metadata)), 0) FROM checkpoints)
           + (SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_blobs)
           + (SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_writes)
           + (SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_pieces) AS bytes`)
    return Number(result.rows[0]!.bytes)
  })

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
  const { database, url } = await createDatabase(variant === "default" ? "effect" : `effect_${variant}`)
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
    storageBytes: () => tableBytes(database),
    close: () => saver.close()
  }
}

const official = async (): Promise<Subject> => {
  const { database, url } = await createDatabase("official")
  const pool = new Pool({ connectionString: url, max: 10 })
  const saver = new PostgresSaver(pool)
  await saver.setup()
  return { name: "PostgresSaver (official)", saver, storageBytes: () => tableBytes(database), close: () => saver.end() }
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
 * The floors: one plain INSERT of the same bytes, through the same client
 * stack; and the delta floor, a table that gets one INSERT of each step's
 * new message, whose size is the information the steps added as stored.
 */
const makeFloor = async () => {
  const { database, url } = await createDatabase("floor")
  const runtime = ManagedRuntime.make(PgClient.layer({ url: Redacted.make(url), maxConnections: 10 }))
  const run = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) => runtime.runPromise(effect)
  await run(SqlClient.SqlClient.use((sql) => sql.unsafe("CREATE TABLE floor (id bigserial PRIMARY KEY, data bytea)")))
  await run(
    SqlClient.SqlClient.use((sql) => sql.unsafe("CREATE TABLE floor_delta (id bigserial PRIMARY KEY, data bytea)"))
  )
  return {
    insert: (bytes: Uint8Array) =>
      run(SqlClient.SqlClient.use((sql) => sql.unsafe("INSERT INTO floor (data) VALUES ($1)", [bytes]))),
    insertDelta: (bytes: Uint8Array) =>
      run(SqlClient.SqlClient.use((sql) => sql.unsafe("INSERT INTO floor_delta (data) VALUES ($1)", [bytes]))),
    deltaBytes: () =>
      admin(database, async (client) => {
        await client.query("VACUUM ANALYZE floor_delta")
        const result = await client.query<{ bytes: string }>("SELECT pg_total_relation_size('floor_delta') AS bytes")
        return Number(result.rows[0]!.bytes)
      }),
    close: () => runtime.dispose()
  }
}

// ---------------------------------------------------------------- workload

const words = (
  "the of and to in is you that it he was for on are as with his they at be this have from or one had by word " +
  "but not what all were we when your can said there use an each which she do how their if will up other about out " +
  "many then them these so some her would make like him into time has look two more write go see number no way could " +
  "people my than first water been call who oil its now find long down day did get come made may part graph state agent"
).split(" ")
let seed = 42
const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
const text = (count: number) =>
  Array.from({ length: count }, () => words[Math.floor(random() * words.length)]).join(" ")

/** A chat message of about 800 bytes serialized. */
const message = (step: number): BaseMessage =>
  step % 2 === 0
    ? new HumanMessage({ content: text(130), id: `m-${step}` })
    : new AIMessage({ content: text(130), id: `m-${step}` })

const encoder = new TextEncoder()
const serializedSize = (value: unknown) => encoder.encode(JSON.stringify(value)).length

/**
 * One thread as LangGraph drives it: each super-step stores the node's write
 * against the current checkpoint, then the next checkpoint, in which only the
 * `messages` channel changed.
 */
class ChatThread {
  messages: Array<BaseMessage> = []
  version: number | undefined
  config: RunnableConfig
  step = 0
  readonly saver: BaseCheckpointSaver
  constructor(saver: BaseCheckpointSaver, thread_id: string) {
    this.saver = saver
    this.config = { configurable: { thread_id, checkpoint_ns: "" } }
  }

  /** The input checkpoint every thread starts from. */
  async start() {
    this.version = this.saver.getNextVersion(undefined as never) as number
    const checkpoint: Checkpoint = {
      v: 4,
      id: uuid6(-1),
      ts: new Date().toISOString(),
      channel_values: { messages: [] },
      channel_versions: { messages: this.version },
      versions_seen: {}
    }
    this.config = await this.saver.put(this.config, checkpoint, { source: "input", step: -1, parents: {} }, {
      messages: this.version
    })
    return this
  }

  async putWrites() {
    const next = message(this.step)
    await this.saver.putWrites(this.config, [["messages", [next]]], uuid6(this.step), `~__pregel_pull, agent`)
    return next
  }

  async put(next: BaseMessage) {
    this.messages = [...this.messages, next]
    const previous = this.version
    this.version = this.saver.getNextVersion(previous as never) as number
    const checkpoint: Checkpoint = {
      v: 4,
      id: uuid6(this.step),
      ts: new Date().toISOString(),
      channel_values: { messages: this.messages },
      channel_versions: { messages: this.version, "branch:to:agent": this.version },
      versions_seen: { agent: previous === undefined ? {} : { messages: previous } }
    }
    this.config = await this.saver.put(
      this.config,
      checkpoint,
      { source: "loop", step: this.step, parents: {} },
      { messages: this.version, "branch:to:agent": this.version }
    )
    this.step++
  }

  async superStep() {
    await this.put(await this.putWrites())
  }
}

// ---------------------------------------------------------------- measuring

const now = () => performance.now()

/**
 * The entries of `items` starting at `round` (modulo their count): each round
 * of an interleaved scenario starts with another subject, so none always
 * runs right after the same neighbour (whose writes the server may still be
 * flushing).
 */
const rotated = <A>(items: ReadonlyArray<A>, round: number): Array<[number, A]> =>
  items.map((_, k) => {
    const i = (k + round) % items.length
    return [i, items[i]!]
  })
const percentile = (samples: Array<number>, p: number) => {
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN
}
const time = async (f: () => Promise<unknown>) => {
  const start = now()
  await f()
  return now() - start
}
const ms = (value: number) => value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0)
const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(2)

interface Row {
  readonly name: string
  readonly samples: Array<number>
  readonly total?: number
  readonly count?: number
}

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

const table = (title: string, rows: ReadonlyArray<Row>, unit = "op") => {
  const base = rows.find((row) => row.name === officialSubject.name)
  const lines = [
    `### ${title}`,
    "",
    `| saver | ${unit}s/s | p50 ms | p99 ms | speed-up vs official (p50) |`,
    "|---|---:|---:|---:|---:|"
  ]
  for (const row of rows) {
    const opsPerSecond = row.total === undefined
      ? 1000 / (row.samples.reduce((a, b) => a + b, 0) / row.samples.length)
      : (row.count ?? row.samples.length) / (row.total / 1000)
    const ratio = base === undefined
      ? ""
      : (percentile(base.samples, 50) / percentile(row.samples, 50)).toFixed(1) + "x"
    lines.push(
      `| ${row.name} | ${opsPerSecond.toFixed(1)} | ${ms(percentile(row.samples, 50))} | ${
        ms(percentile(row.samples, 99))
      } | ${ratio} |`
    )
  }
  sections.push(lines.join("\n"))
}

const target = (what: string, ratio: number, goal: number) =>
  verdicts.push(`| ${what} | ${ratio.toFixed(1)}x | ≥ ${goal}x | ${ratio >= goal ? "met" : "**missed**"} |`)

const ratioOf = (rows: ReadonlyArray<Row>, base = officialSubject) => {
  const p50 = (name: string) => percentile(rows.find((row) => row.name === name)!.samples, 50)
  return p50(base.name) / p50(effect.name)
}

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

const log = (line: string) => console.log(`[bench] ${line}`)

// ---------------------------------------------------------------- scenarios

{
  // First, while the process holds little: with all five subjects in one
  // heap (MemorySaver's 33 MB of state, the plain encoding's garbage), every
  // allocation pays for collections the others caused, and the subject
  // writing 40x more bytes per step leaves the server flushing as the next
  // one runs. Two savers, on databases of their own, alternating.
  const steps = n(300)
  const rounds = 5
  log(`encryption overhead: ${rounds} x ${steps} super-steps, with and without encryption, alternating`)
  const pair = await Promise.all(
    (["effect_pair", "effect_pair_encrypted"] as const).map(async (name, i) => {
      const { url } = await createDatabase(name)
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
        const elapsed = await time(() => thread.superStep())
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
  log(`chat thread: ${steps} super-steps, interleaved`)
  const floor = await makeFloor()
  const threads = await Promise.all(subjects.map((subject) => new ChatThread(subject.saver, "chat-300").start()))
  const stepSamples = subjects.map(() => [] as Array<number>)
  const putSamples = subjects.map(() => [] as Array<number>)
  const writeSamples = subjects.map(() => [] as Array<number>)
  const floorPut: Array<number> = []
  const floorWrite: Array<number> = []
  const totals = subjects.map(() => 0)
  let information = 0
  for (let step = 0; step < steps; step++) {
    for (const [i, thread] of rotated(threads, step)) {
      const start = now()
      let next: BaseMessage | undefined
      writeSamples[i]!.push(await time(async () => (next = await thread.putWrites())))
      putSamples[i]!.push(await time(() => thread.put(next!)))
      const elapsed = now() - start
      stepSamples[i]!.push(elapsed)
      totals[i]! += elapsed
    }
    const latest = threads[0]!.messages
    information += serializedSize(latest.at(-1))
    await floor.insertDelta(encoder.encode(JSON.stringify(latest.at(-1))))
    floorWrite.push(await time(() => floor.insert(encoder.encode(JSON.stringify([latest.at(-1)])))))
    floorPut.push(await time(() => floor.insert(encoder.encode(JSON.stringify(latest)))))
  }
  const deltaFloor = await floor.deltaBytes()
  await floor.close()
  table(
    `Chat thread: ${steps} super-steps (putWrites + put), messages growing ~800 bytes a step`,
    subjects.map((subject, i) => ({ name: subject.name, samples: stepSamples[i]!, total: totals[i]! })),
    "super-step"
  )
  const pg = [subjects[0]!, subjects[1]!]
  const storage = await Promise.all(subjects.map((subject) => subject.storageBytes()))
  sections.push([
    `Storage after the thread: ${subjects.map((s, i) => `${s.name} ${mib(storage[i]!)} MiB`).join(", ")}. ` +
    `The steps added ${
      mib(information)
    } MiB of messages; stored one INSERT a step in a plain table (the delta floor) ` +
    `they take ${mib(deltaFloor)} MiB. Against that floor: ` +
    subjects.map((s, i) => `${s.name} ${(storage[i]! / deltaFloor).toFixed(1)}x`).join(", ") + ".",
    "",
    `Floor (one plain INSERT of the same bytes through the same client): put-sized p50 ${
      ms(percentile(floorPut, 50))
    } ms, ` +
    `putWrites-sized p50 ${ms(percentile(floorWrite, 50))} ms. ` +
    pg.map((subject, i) =>
      `${subject.name}: put p50 ${ms(percentile(putSamples[i]!, 50))} ms ` +
      `(${(percentile(putSamples[i]!, 50) / percentile(floorPut, 50)).toFixed(1)}x the floor), ` +
      `putWrites p50 ${ms(percentile(writeSamples[i]!, 50))} ms ` +
      `(${(percentile(writeSamples[i]!, 50) / percentile(floorWrite, 50)).toFixed(1)}x)`
    ).join("; ") + "."
  ].join("\n"))
  target("super-step throughput, chat thread", totals[1]! / totals[0]!, 6)
  verdicts.push(
    `| storage of the chat thread, vs the delta floor | ${(storage[0]! / deltaFloor).toFixed(1)}x ` +
      `(official ${(storage[1]! / deltaFloor).toFixed(1)}x) | ≤ 2x | ${
        storage[0]! <= 2 * deltaFloor ? "met" : "**missed**"
      } |`
  )
  encryptedVs("storage of the chat thread", storage[encryptedIndex]! / storage[0]!, 1.3)

  // Reads of the same thread.
  const reads = n(30)
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
  for (let round = 0; round < Math.max(2, Math.round(reads / 10)); round++) {
    for (const [i, subject] of rotated(subjects, round)) {
      listAllRows[i]!.samples.push(await time(() => drain(subject.saver)))
    }
  }
  table(`list, limit 10 (thread of ${steps} checkpoints)`, listRows, "list")
  table(`list, full (${steps} checkpoints)`, listAllRows, "list")
  target("full list", ratioOf(listAllRows), 20)
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
    const reads = n(size >= 1000 ? 20 : 50)
    for (let round = 0; round < reads; round++) {
      for (const [i, subject] of rotated(subjects, round)) {
        rows[i]!.samples.push(await time(() => subject.saver.getTuple({ configurable: { thread_id: `read-${size}` } })))
      }
    }
    table(`getTuple latest, thread of ${size} steps`, rows, "read")
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
    }
  }
}

{
  const size = n(1000)
  log(`copy and prune of a ${size}-step thread (this library; the official saver has neither)`)
  const { database, url } = await createDatabase("lifecycle")
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
    return { elapsed, trips: socket.roundTrips() - trips, bytes: await liveBytes(database) }
  }
  const stored = await liveBytes(database)
  const copied = await measure(() => saver.copyThread("long", "copy"))
  const pruned = await measure(() => saver.prune(["copy"], { strategy: "keep_latest" }))
  const retained = await measure(() => saver.applyRetention({ keepLast: 10 }))
  await saver.close()
  await admin(serverDatabase, (client) => client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`))
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
  const { database, url } = await createDatabase("long")
  const saver = await EffectCheckpointSaver.fromConnString(url)
  const floor = await makeFloor()
  const thread = await new ChatThread(saver, "long").start()
  const puts: Array<number> = []
  const writes: Array<number> = []
  let information = 0
  for (let step = 0; step < size; step++) {
    let next: BaseMessage | undefined
    writes.push(await time(async () => (next = await thread.putWrites())))
    puts.push(await time(() => thread.put(next!)))
    information += serializedSize(next)
    await floor.insertDelta(encoder.encode(JSON.stringify(next)))
  }
  const reads: Array<number> = []
  for (let round = 0; round < 10; round++) {
    reads.push(await time(() => saver.getTuple({ configurable: { thread_id: "long" } })))
  }
  const stored = await tableBytes(database)
  const deltaFloor = await floor.deltaBytes()
  await floor.close()
  await saver.close()
  await admin(serverDatabase, (client) => client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`))
  const window = Math.max(2, Math.round(size / 30))
  const p50 = (samples: Array<number>) => percentile(samples, 50)
  sections.push([
    `### A ${size}-step chat thread (this library)`,
    "",
    "| measure | first " + window + " steps | last " + window + " steps |",
    "|---|---:|---:|",
    `| put p50 ms | ${ms(p50(puts.slice(0, window)))} | ${ms(p50(puts.slice(-window)))} |`,
    `| putWrites p50 ms | ${ms(p50(writes.slice(0, window)))} | ${ms(p50(writes.slice(-window)))} |`,
    "",
    `Storage: ${mib(stored)} MiB for ${mib(information)} MiB of messages added ` +
    `(${(stored / deltaFloor).toFixed(1)}x the delta floor of ${mib(deltaFloor)} MiB). ` +
    `getTuple latest at the end: p50 ${ms(p50(reads))} ms. The official saver is not run here: it stores the whole ` +
    `array at every step, about ${mib(size * size * 400)} MiB before compression.`
  ].join("\n"))
  verdicts.push(
    `| put cost, last vs first ${window} steps of ${size} | ${
      (p50(puts.slice(-window)) / p50(puts.slice(0, window))).toFixed(2)
    }x ` +
      `| flat | ${p50(puts.slice(-window)) <= 1.5 * p50(puts.slice(0, window)) ? "met" : "**missed**"} |`
  )
}

{
  const threadCount = 32
  const steps = n(50)
  const rounds = 5
  log(`${threadCount} threads x ${steps} steps concurrently, ${rounds} rounds taking turns`)
  // For comparison: every call its own statement (the behaviour before group commit); and batches
  // of every waiting call, two in flight (the first group commit's defaults).
  const alone = EffectCheckpointSaver.fromLayer(
    Postgres.layer({ url: (await createDatabase("effect_alone")).url, groupCommit: false })
  )
  const unbounded = EffectCheckpointSaver.fromLayer(
    Postgres.layer({
      url: (await createDatabase("effect_unbounded")).url,
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
      row.total += await time(() =>
        Promise.all(Array.from({ length: threadCount }, async (_, t) => {
          const thread = await new ChatThread(subject.saver, `concurrent-${round}-${t}`).start()
          for (let step = 0; step < steps; step++) row.samples.push(await time(() => thread.superStep()))
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
}

{
  const turns = n(100)
  log(`StateGraph invoke loop: ${turns} turns`)
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("agent", (state) => ({ messages: [new AIMessage({ content: text(130) })], step: state.messages.length }))
    .addEdge(START, "agent")
    .addEdge("agent", END)
  const apps = subjects.map((subject) => graph.compile({ checkpointer: subject.saver }))
  const rows = subjects.map((subject) => ({ name: subject.name, samples: [] as Array<number> }))
  for (let turn = 0; turn < turns; turn++) {
    for (const [i, app] of rotated(apps, turn)) {
      rows[i]!.samples.push(
        await time(() =>
          app.invoke({ messages: [new HumanMessage(text(130))] }, { configurable: { thread_id: "graph" } })
        )
      )
    }
  }
  table(`StateGraph.invoke, one thread, ${turns} turns (each: getTuple, 2 puts, writes)`, rows, "invoke")
  versusMemory(`StateGraph.invoke loop, ${turns} turns`, rows, "speed", 0.8)
}

// ---------------------------------------------------------------- report

const serverVersion = await admin(
  serverDatabase,
  (client) => client.query<{ server_version: string }>("SHOW server_version")
)
const packageVersion = (name: string) =>
  (JSON.parse(execFileSync("npm", ["ls", name, "--json", "--depth=0"], { encoding: "utf8" })) as {
    dependencies?: Record<string, { version: string }>
  }).dependencies?.[name]?.version ?? "?"

/** Written by hand from a profiling session; the report includes it as it is. */
const profileFile = join(import.meta.dirname, "profile.md")

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
  "## Reading these numbers",
  "",
  "- **Structural sharing** (on by default; the \"plain encoding\" rows turn it off): a step stores and",
  "  sends its new message and a few hashes, not the whole `messages` array, so storage grows with what",
  "  the steps add (the delta floor: each step's new message INSERTed into a plain table) instead of with",
  "  its square, and a `list` page sends each message once.",
  "- **Writes** of this library are bound by two commits per super-step (putWrites, then put; the",
  "  putWrites-sized floor is one commit) plus an O(n) check that the elements it already stored were",
  "  not changed in place; the official saver serializes and sends the whole array at every step.",
  "- **Reads** of the official saver spend most of their time parsing `bytea` arrays returned as hex text.",
  "  This library revives messages directly (no generic `load`) and a `getTuple` fetches only the pieces",
  "  its process does not hold yet: what is left is parsing the array's JSON and building its messages,",
  "  which MemorySaver pays as well (see the read path profile at the end).",
  "- **Concurrent threads**: with two cores, every saver saturates the CPU.",
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
for (const subject of subjects) await subject.close()
await admin(serverDatabase, async (client) => {
  for (
    const name of [
      "effect",
      "effect_plain",
      "effect_encrypted",
      "effect_pair",
      "effect_pair_encrypted",
      "effect_alone",
      "official",
      "floor",
      "long"
    ]
  ) {
    await client.query(`DROP DATABASE IF EXISTS lce_bench_${name} WITH (FORCE)`)
  }
})
server.stop()
