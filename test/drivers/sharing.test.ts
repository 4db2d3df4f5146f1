/**
 * Structural sharing on every backend: generated sequences of appends, edits
 * in place, deletions from the middle, forks, pending writes and prunes read
 * back byte for byte as the plain encoding would have stored them; and what
 * the encoding promises about storage, round trips and stale knowledge.
 */
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages"
import type { RunnableConfig } from "@langchain/core/runnables"
import { type BaseCheckpointSaver, JsonPlusSerializer, uuid6 } from "@langchain/langgraph-checkpoint"
import { Effect, Layer, Redacted, Schema } from "effect"
import { afterAll, beforeAll } from "vitest"
import { makeCountingSocket } from "../../harness/countingSocket.ts"
import { admin, createDatabase } from "../../harness/databases.ts"
import { CheckpointStorage, EffectCheckpointSaver } from "../../src/index.ts"
import * as Sharing from "../../src/internal/codec/Sharing.ts"
import * as Postgres from "../../src/postgres.ts"
import { type DriverName, drivers } from "../support/drivers.ts"

const runs = (fallback: number) => Number(process.env.CONTRACT_RUNS ?? fallback)
const plain = new JsonPlusSerializer()
const text = new TextDecoder()

/** What the plain encoding stores for a value: the bytes reads must reproduce. */
const plainBytes = async (value: unknown) => text.decode((await plain.dumpsTyped(value))[1])

const Index = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 63 }))
const Step = Schema.Union([
  Schema.TaggedStruct("Append", { count: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 3 })), seed: Index }),
  Schema.TaggedStruct("Edit", { at: Index, nested: Schema.Boolean }),
  Schema.TaggedStruct("Delete", { at: Index }),
  Schema.TaggedStruct("Fork", { back: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 6 })) }),
  Schema.TaggedStruct("Write", { last: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 3 })) }),
  Schema.TaggedStruct("Prune", {})
])
const Steps = Schema.Array(Step).check(Schema.isMinLength(24), Schema.isMaxLength(60))
type Step = typeof Step.Type

/** A message of about 60–700 bytes; every fifth carries bytes, which no trace can prove unchanged. */
const messageOf = (n: number, seed: number): BaseMessage | Record<string, unknown> => {
  const content = `message ${n} `.padEnd(40 + (seed * 37) % 600, "abc é 😀 ")
  switch (n % 5) {
    case 0:
      return new HumanMessage({ content, id: `m-${n}` })
    case 1:
      return new AIMessage({
        content,
        id: `m-${n}`,
        tool_calls: [{ id: `call-${n}`, name: "search", args: { q: content.slice(0, 8) } }]
      })
    case 2:
      return new ToolMessage({ content, tool_call_id: `call-${n - 1}`, id: `m-${n}` })
    case 3:
      return { role: "note", content, nested: { list: [n, n + 1], flag: true } }
    default:
      return new AIMessage({ content, id: `m-${n}`, additional_kwargs: { raw: new Uint8Array([n % 256, 0, 255]) } })
  }
}

/** Puts a checkpoint whose one channel, `messages`, changed to `version`. */
const putMessages = (
  saver: BaseCheckpointSaver,
  config: RunnableConfig,
  messages: ReadonlyArray<unknown>,
  version: number,
  source: "loop" | "fork" = "loop"
) =>
  saver.put(
    config,
    {
      v: 4,
      id: uuid6(Math.floor(version)),
      ts: new Date().toISOString(),
      channel_values: { messages },
      channel_versions: { messages: version },
      versions_seen: {}
    },
    { source, step: Math.floor(version), parents: {} },
    { messages: version }
  )

interface Written {
  readonly config: RunnableConfig
  readonly expected: string
  readonly writes: ReadonlyArray<string>
}

/**
 * Runs the steps on one thread of `saver` as LangGraph would (a new array
 * per step, the same message objects, edits made in place), checking after
 * every step the new checkpoint and one earlier survivor.
 */
const runSteps = async (saver: BaseCheckpointSaver, steps: ReadonlyArray<Step>) => {
  const thread_id = `thread-${uuid6(-1)}`
  let messages: Array<BaseMessage | Record<string, unknown>> = []
  let config: RunnableConfig = { configurable: { thread_id, checkpoint_ns: "" } }
  let counter = 0
  let version = 0
  const written: Array<Written> = []

  const check = async (entry: Written) => {
    const tuple = await saver.getTuple(entry.config)
    expect(tuple, "a surviving checkpoint").toBeDefined()
    expect(await plainBytes(tuple!.checkpoint.channel_values.messages)).toBe(entry.expected)
    expect(await Promise.all(tuple!.pendingWrites!.map(([, , value]) => plainBytes(value)))).toEqual(entry.writes)
  }

  const put = async () => {
    version = Math.floor(version) + 1 + Math.random() / 2
    const expected = await plainBytes(messages)
    config = await putMessages(saver, config, messages, version)
    counter++
    written.push({ config, expected, writes: [] })
    await check(written.at(-1)!)
  }

  const warmUp: ReadonlyArray<Step> = [1, 2, 3].map((seed) => ({ _tag: "Append", count: 3, seed }))
  for (const step of [...warmUp, ...steps]) {
    switch (step._tag) {
      case "Append": {
        messages = [...messages, ...Array.from({ length: step.count }, (_, i) => messageOf(counter * 3 + i, step.seed))]
        await put()
        break
      }
      case "Edit": {
        if (messages.length === 0) break
        const target = messages[step.at % messages.length]!
        if (step.nested) {
          const kwargs = (target as { additional_kwargs?: Record<string, unknown> }).additional_kwargs
          if (kwargs !== undefined) kwargs.edited = counter
          else (target as { nested?: { list: Array<number> } }).nested?.list.push(counter)
        } else {
          ;(target as { content: string }).content = `edited in place at ${counter}`
        }
        messages = [...messages]
        await put()
        break
      }
      case "Delete": {
        if (messages.length === 0) break
        messages = messages.filter((_, i) => i !== step.at % messages.length)
        await put()
        break
      }
      case "Fork": {
        const from = written.at(-1 - (step.back % Math.max(1, written.length)))
        if (from === undefined) break
        const tuple = await saver.getTuple(from.config)
        if (tuple === undefined) break
        config = from.config
        messages = [...tuple.checkpoint.channel_values.messages as Array<BaseMessage>, messageOf(counter * 3, 1)]
        await put()
        break
      }
      case "Write": {
        const last = written.at(-1)
        if (last === undefined) break
        const value = messages.slice(-step.last)
        await saver.putWrites(last.config, [["messages", value]], uuid6(counter++))
        written[written.length - 1] = { ...last, writes: [...last.writes, await plainBytes(value)] }
        await check(written.at(-1)!)
        break
      }
      case "Prune": {
        if (written.length === 0) break
        await (saver as EffectCheckpointSaver).prune([thread_id], { strategy: "keep_latest" })
        // Every checkpoint that stays reads back as written: no piece it needs is gone.
        const surviving = new Set<string>()
        for await (const tuple of saver.list({ configurable: { thread_id } })) {
          surviving.add(String(tuple.config.configurable?.checkpoint_id))
        }
        expect(surviving.size).toBeGreaterThan(0)
        for (const entry of written) {
          if (surviving.has(String(entry.config.configurable?.checkpoint_id))) await check(entry)
        }
        written.splice(
          0,
          written.length,
          ...written.filter((entry) => surviving.has(String(entry.config.configurable?.checkpoint_id)))
        )
        break
      }
    }
  }
  for (const entry of written) await check(entry)
  if (process.env.SHARING_DEBUG) console.log("steps", steps.length, "puts", counter, "messages", messages.length)
}

const property = (name: string, saver: () => EffectCheckpointSaver, count: number) =>
  it.effect.prop(
    `${name}: appends, edits in place, deletions, forks, writes and prunes read back exactly`,
    [Steps],
    ([steps]) => Effect.promise(() => runSteps(saver(), steps)),
    { timeout: 300_000, arbitrary: { runs: runs(count) } }
  )

describe("structural sharing", () => {
  const matrix = drivers("sharing")
  const savers = new Map<DriverName, EffectCheckpointSaver>()
  beforeAll(() => {
    for (const driver of matrix.all) savers.set(driver.name, driver.saver())
  })
  afterAll(async () => {
    for (const saver of savers.values()) await saver.close()
  })

  property("memory", () => savers.get("memory")!, 60)
  property("PostgreSQL", () => savers.get("postgres")!, 15)
  property("CockroachDB dialect", () => savers.get("cockroach dialect")!, 8)
  property("PGlite", () => savers.get("pglite")!, 8)
})

/** A chat of `steps` super-steps as LangGraph stores it: the message as a pending write, then the checkpoint. */
const chat = async (saver: BaseCheckpointSaver, thread_id: string, steps: number, from: Array<BaseMessage> = []) => {
  let config: RunnableConfig = { configurable: { thread_id, checkpoint_ns: "" } }
  let messages = from
  for (let step = 0; step < steps; step++) {
    const next = messageOf(messages.length, step) as BaseMessage
    if (config.configurable?.checkpoint_id !== undefined) {
      await saver.putWrites(config, [["messages", [next]]], uuid6(step))
    }
    messages = [...messages, next]
    config = await putMessages(saver, config, messages, messages.length + Math.random() / 2)
  }
  return { config, messages }
}

const readsBack = async (saver: BaseCheckpointSaver, config: RunnableConfig, messages: ReadonlyArray<unknown>) =>
  expect(await plainBytes((await saver.getTuple(config))?.checkpoint.channel_values.messages)).toBe(
    await plainBytes(messages)
  )

/** A saver whose one connection counts what crosses the wire. */
const counted = (url: string) => {
  const socket = makeCountingSocket(url)
  const saver = EffectCheckpointSaver.fromLayer(
    Postgres.layerClient().pipe(
      Layer.provide(PgClient.layerFrom(PgClient.makeClient({ url: Redacted.make(url), stream: socket.open })))
    )
  )
  return { saver, socket }
}

describe("structural sharing on PostgreSQL", () => {
  let database: Awaited<ReturnType<typeof createDatabase>>
  const count = async (sql: string, params: Array<unknown> = []) =>
    Number((await admin((client) => client.query<{ n: string }>(sql, params), database.url)).rows[0]!.n)
  beforeAll(async () => {
    database = await createDatabase("sharing_pg")
  }, 60_000)
  afterAll(() => database.drop())

  it("a step sends and stores its new message once, in one round trip", async () => {
    const { saver, socket } = counted(database.url)
    const { config, messages } = await chat(saver, "one-trip", 60)
    const next = messageOf(60, 1) as BaseMessage
    const [trips, bytes] = [socket.roundTrips(), socket.bytesWritten()]
    const stored = await putMessages(saver, config, [...messages, next], 99)
    expect(socket.roundTrips() - trips).toBe(1)
    // The whole array is ~20 KB; the put carries the new message, the list's
    // newest hashes and the checkpoint row.
    expect(socket.bytesWritten() - bytes).toBeLessThan(3_000)
    await readsBack(saver, stored, [...messages, next])
    expect(await count("SELECT count(*) AS n FROM checkpoint_pieces WHERE thread_id = 'one-trip'")).toBe(61)
    await saver.close()
  })

  it("a getTuple fetches only the pieces this process does not have yet", async () => {
    const writer = await EffectCheckpointSaver.fromConnString(database.url)
    const { saver: reader, socket } = counted(database.url)
    const { config, messages } = await chat(writer, "known", 60)
    const before = socket.bytesRead()
    await readsBack(reader, config, messages)
    const first = socket.bytesRead() - before
    const next = messageOf(60, 3) as BaseMessage
    const stored = await putMessages(writer, config, [...messages, next], 99)
    const again = socket.bytesRead()
    await readsBack(reader, stored, [...messages, next])
    // The whole array is ~20 KB (~16 KB compressed): the second read brings the row, the list and the one new message.
    expect(first).toBeGreaterThan(12_000)
    expect(socket.bytesRead() - again).toBeLessThan(3_000)
    await writer.close()
    await reader.close()
  })

  it("a list whose base another process removed is stored whole again, and reads back", async () => {
    const writer = await EffectCheckpointSaver.fromConnString(database.url)
    const other = await EffectCheckpointSaver.fromConnString(database.url)
    const { messages } = await chat(writer, "stale", 30)
    await other.deleteThread("stale")
    // The writer still knows the lists it wrote; none of them exists any more.
    const next = messageOf(30, 2) as BaseMessage
    const config = await putMessages(writer, { configurable: { thread_id: "stale", checkpoint_ns: "" } }, [
      ...messages,
      next
    ], 100)
    await readsBack(other, config, [...messages, next])
    await writer.close()
    await other.close()
  })

  it("concurrent forks of one checkpoint each read back exactly", async () => {
    const saver = await EffectCheckpointSaver.fromConnString(database.url)
    const { config, messages } = await chat(saver, "forks", 25)
    const forks = await Promise.all(Array.from({ length: 8 }, async (_, i) => {
      const value = [...messages.slice(0, 20 + i % 5), messageOf(100 + i, i) as BaseMessage]
      const stored = await putMessages(saver, config, value, 200 + i, "fork")
      return { stored, value }
    }))
    for (const { stored, value } of forks) await readsBack(saver, stored, value)
    await saver.close()
  })

  it("a writer racing a pruner: every checkpoint that survives reads back exactly", async () => {
    const writer = await EffectCheckpointSaver.fromConnString(database.url)
    const pruner = await EffectCheckpointSaver.fromConnString(database.url)
    const expected = new Map<string, string>()
    let done = false
    const writing = (async () => {
      let config: RunnableConfig = { configurable: { thread_id: "raced", checkpoint_ns: "" } }
      let messages: Array<BaseMessage | Record<string, unknown>> = []
      for (let step = 0; step < 60; step++) {
        // Appends, and now and then a deletion from the middle.
        messages = step % 9 === 8 ? messages.filter((_, i) => i !== 3) : [...messages, messageOf(step, step)]
        const value = [...messages]
        config = await putMessages(writer, config, value, step + 1 + Math.random() / 2)
        expected.set(String(config.configurable?.checkpoint_id), await plainBytes(value))
      }
      done = true
    })()
    let prunes = 0
    while (!done) {
      // Before the first put there is no thread to prune.
      if (await pruner.prune(["raced"], { strategy: "keep_latest" }).then(() => true, () => false)) prunes++
    }
    await writing
    expect(prunes).toBeGreaterThan(3)
    let surviving = 0
    for await (const tuple of pruner.list({ configurable: { thread_id: "raced" } })) {
      expect(await plainBytes(tuple.checkpoint.channel_values.messages))
        .toBe(expected.get(String(tuple.config.configurable?.checkpoint_id)))
      surviving++
    }
    expect(surviving).toBeGreaterThan(0)
    await writer.close()
    await pruner.close()
  })

  it("a thread written in both encodings reads back, and only shared lists use pieces", async () => {
    const plainSaver = await EffectCheckpointSaver.fromConnString(database.url, { sharing: false })
    const sharedSaver = await EffectCheckpointSaver.fromConnString(database.url)
    const first = await chat(plainSaver, "mixed", 10)
    expect(await count("SELECT count(*) AS n FROM checkpoint_pieces WHERE thread_id = 'mixed'")).toBe(0)
    const second = await chat(sharedSaver, "mixed", 10, first.messages)
    const third = await chat(plainSaver, "mixed", 5, second.messages)
    expect(
      await count("SELECT count(*) AS n FROM checkpoint_blobs WHERE thread_id = 'mixed' AND type = $1", [
        Sharing.SHARED
      ])
    )
      .toBeGreaterThan(5)
    for (const saver of [plainSaver, sharedSaver]) {
      const read = []
      for await (const tuple of saver.list({ configurable: { thread_id: "mixed" } })) read.push(tuple)
      expect(read).toHaveLength(25)
      await readsBack(saver, third.config, third.messages)
      await readsBack(saver, second.config, second.messages)
      await readsBack(saver, first.config, first.messages)
    }
    await plainSaver.close()
    await sharedSaver.close()
  })

  it("copy, prune and delete keep exactly the pieces something still refers to", async () => {
    const saver = await EffectCheckpointSaver.fromConnString(database.url)
    const pieces = (thread: string) =>
      count("SELECT count(*) AS n FROM checkpoint_pieces WHERE thread_id = $1", [thread])
    const { config, messages } = await chat(saver, "source", 40)
    // Every message once, whatever the forty lists and pending writes that refer to it.
    expect(await pieces("source")).toBe(40)
    await saver.copyThread("source", "copy")
    expect(await pieces("copy")).toBe(40)
    // Every other message deleted, then one appended: prune keeps the head
    // (which stores its messages) and the pieces it shares with older ones.
    const edited = messages.filter((_, i) => i % 2 === 0)
    let head = config
    for (const [step, value] of [edited, [...edited, messageOf(77, 7)]].entries()) {
      head = await putMessages(saver, head, value, 500 + step)
    }
    await saver.prune(["source"], { strategy: "keep_latest" })
    expect(await pieces("source")).toBe(21)
    await readsBack(saver, head, [...edited, messageOf(77, 7)])
    await saver.deleteThread("source")
    expect(await pieces("source")).toBe(0)
    await readsBack(saver, { configurable: { ...config.configurable, thread_id: "copy" } }, messages)
    await saver.close()
  })

  it("small arrays and arrays of small elements keep the plain encoding", async () => {
    const saver = await EffectCheckpointSaver.fromConnString(database.url)
    const values = [
      Array.from({ length: 1536 }, (_, i) => Math.sin(i)), // an embedding
      Array.from({ length: 500 }, (_, i) => `id-${i}`),
      Array.from({ length: 200 }, (_, i) => ({ i })),
      [{ role: "user", content: "hi" }]
    ]
    let config: RunnableConfig = { configurable: { thread_id: "small", checkpoint_ns: "" } }
    for (const [i, value] of values.entries()) {
      config = await putMessages(saver, config, value, i + 1)
      await readsBack(saver, config, value)
    }
    expect(await count("SELECT count(*) AS n FROM checkpoint_pieces WHERE thread_id = 'small'")).toBe(0)
    // Plain: `json`, compressed where that pays (storage format level 4).
    expect(
      await count(
        "SELECT count(*) AS n FROM checkpoint_blobs WHERE thread_id = 'small' AND type IN ('json', 'zstd-json/1')"
      )
    ).toBe(4)
    await saver.close()
  })

  it("a piece missing from storage is a CorruptedCheckpoint naming the checkpoint", async () => {
    const saver = await EffectCheckpointSaver.fromConnString(database.url)
    const { config } = await chat(saver, "damaged", 5)
    await admin(
      (client) =>
        client.query(
          "DELETE FROM checkpoint_pieces WHERE thread_id = 'damaged' AND ctid IN (SELECT ctid FROM checkpoint_pieces WHERE thread_id = 'damaged' LIMIT 1)"
        ),
      database.url
    )
    // The writer still has every piece in memory and reads the thread whole; another process cannot.
    expect((await saver.getTuple(config))?.checkpoint.channel_values.messages).toHaveLength(5)
    await saver.close()
    const reader = await EffectCheckpointSaver.fromConnString(database.url)
    await expect(reader.getTuple(config)).rejects.toMatchObject({
      _tag: "CorruptedCheckpoint",
      message: expect.stringContaining("a piece it refers to is missing")
    })
    await reader.close()
  })
})

describe("elements changed in place", () => {
  const saver = () => EffectCheckpointSaver.fromLayer(CheckpointStorage.layerMemory)
  const putAll = async (target: BaseCheckpointSaver, values: Array<unknown>, steps: Array<() => void>) => {
    let config: RunnableConfig = { configurable: { thread_id: "t", checkpoint_ns: "" } }
    for (const [step, change] of steps.entries()) {
      change()
      const value = [...values]
      config = await putMessages(target, config, value, step + 1)
      await readsBack(target, config, value)
    }
  }

  it("are serialized again when they were read back, then edited before the next put", async () => {
    const target = saver()
    const first = [new HumanMessage("question ".repeat(20)), new AIMessage({ content: "answer ".repeat(20), id: "a" })]
    let config = await putMessages(target, { configurable: { thread_id: "t", checkpoint_ns: "" } }, first, 1)
    // The latest checkpoint, as a graph's next step reads it: its items are recognized.
    const latest = { configurable: { thread_id: "t", checkpoint_ns: "" } }
    const read = (await target.getTuple(latest))?.checkpoint.channel_values.messages as Array<BaseMessage>
    read[1]!.content = "edited after the read"
    const next = [...read, new HumanMessage("follow-up ".repeat(20))]
    config = await putMessages(target, config, next, 2)
    await readsBack(target, config, next)
  })

  it("are serialized again, whatever kind of object they are", async () => {
    class Counter {
      #count = 0
      bump() {
        this.#count++
      }
      toJSON() {
        return { count: this.#count }
      }
    }
    const message = new AIMessage({ content: "first".repeat(40), id: "a1", tool_calls: [] })
    const when = new Date(0)
    const counter = new Counter()
    const note = { content: "note ".repeat(40), tags: ["a"] }
    const values: Array<unknown> = [message, { when }, counter, note, new HumanMessage("x".repeat(300))]
    await putAll(saver(), values, [
      () => undefined,
      () => (message.content = "second"),
      () => message.tool_calls!.push({ id: "1", name: "search", args: { q: "x" } }),
      () => (message.additional_kwargs.extra = { nested: [1] }),
      () => when.setFullYear(2030),
      () => counter.bump(),
      () => note.tags.push("b"),
      () => delete (note as { tags?: unknown }).tags,
      () => Object.assign(note, { tags: ["a"] }),
      () => (message.id = "a2"),
      // A key the message no longer holds is read from its constructor's arguments ("a1").
      () => delete (message as { id?: unknown }).id,
      () => Object.assign(message, { toJSON: () => ({ replaced: true }) })
    ])
  })
})
