/**
 * Structural sharing on every backend: generated sequences of appends, edits
 * in place, deletions from the middle, forks, pending writes and prunes read
 * back byte for byte as the plain encoding would have stored them; and what
 * the encoding promises about storage, round trips and stale knowledge.
 */
import { describe, expect, it } from "@effect/vitest"
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages"
import type { RunnableConfig } from "@langchain/core/runnables"
import { type BaseCheckpointSaver, type Checkpoint, JsonPlusSerializer, uuid6 } from "@langchain/langgraph-checkpoint"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import { afterAll, beforeAll } from "vitest"
import { CheckpointStorage, EffectCheckpointSaver } from "../src/index.ts"
import * as Cockroach from "../src/cockroach.ts"
import * as Pglite from "../src/pglite.ts"
import * as Postgres from "../src/postgres.ts"
import { createDatabase } from "./support/databases.ts"

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
    const checkpoint: Checkpoint = {
      v: 4,
      id: uuid6(counter++),
      ts: new Date().toISOString(),
      channel_values: { messages },
      channel_versions: { messages: version },
      versions_seen: {}
    }
    const expected = await plainBytes(messages)
    config = await saver.put(config, checkpoint, { source: "loop", step: counter, parents: {} }, { messages: version })
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
        written.splice(0, written.length, ...written.filter((entry) => surviving.has(String(entry.config.configurable?.checkpoint_id))))
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
  let database: Awaited<ReturnType<typeof createDatabase>>
  let pglite: ManagedRuntime.ManagedRuntime<CheckpointStorage.CheckpointStorage, unknown>
  const savers: Record<string, EffectCheckpointSaver> = {}
  beforeAll(async () => {
    database = await createDatabase("sharing")
    pglite = ManagedRuntime.make(Pglite.layer())
    savers.memory = EffectCheckpointSaver.fromLayer(CheckpointStorage.layerMemory)
    savers.postgres = EffectCheckpointSaver.fromLayer(Postgres.layer({ url: database.url, poolSize: 4 }))
    savers.cockroach = EffectCheckpointSaver.fromLayer(
      Cockroach.layer({ url: database.url.replace(/^postgres/, "cockroachdb"), schema: "crdb", poolSize: 4 })
    )
    savers.pglite = EffectCheckpointSaver.fromLayer(Layer.succeedContext(await pglite.context()))
  }, 60_000)
  afterAll(async () => {
    for (const saver of Object.values(savers)) await saver.close()
    await pglite.dispose()
    await database.drop()
  })

  property("memory", () => savers.memory!, 60)
  property("PostgreSQL", () => savers.postgres!, 15)
  property("CockroachDB dialect", () => savers.cockroach!, 8)
  property("PGlite", () => savers.pglite!, 8)
})
