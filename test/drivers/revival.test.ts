/**
 * Safe revival (issue 13) on every driver, through the `BaseCheckpointSaver`
 * API; data written by LangGraph's own PostgreSQL saver; the count of inert
 * records on spans and in the metric.
 */
import { describe, expect, it } from "@effect/vitest"
import { load } from "@langchain/core/load"
import { HumanMessage } from "@langchain/core/messages"
import { PromptTemplate } from "@langchain/core/prompts"
import { JsonPlusSerializer, uuid6 } from "@langchain/langgraph-checkpoint"
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres"
import { Effect, Metric, Tracer } from "effect"
import { Pool } from "pg"
import { afterAll, beforeAll } from "vitest"
import { createDatabase } from "../../harness/databases.ts"
import {
  CheckpointStorage,
  EffectCheckpointSaver,
  Metrics,
  SafeJsonPlusSerializer,
  type SaverOptions
} from "../../src/index.ts"
import {
  canary,
  canaryVariables,
  collect,
  expectHarmless,
  hostileData,
  Quote,
  revivalScenarios,
  shape,
  store,
  threadId
} from "../scenarios/revival.ts"
import { drivers } from "../support/drivers.ts"
import { checkpoint, metadata } from "../support/fixtures.ts"

const savedVariables = new Map(canaryVariables.map((name) => [name, process.env[name]]))
beforeAll(() => {
  // Set before anything is read: a secret record resolved from the environment would carry it.
  for (const name of canaryVariables) process.env[name] = canary
})
afterAll(() => {
  for (const [name, value] of savedVariables) {
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
})
const matrix = drivers("revival")

/** Generated values per property test: bounded in `npm test`, more with REVIVAL_RUNS. */
const runs = (fallback: number) => Number(process.env.REVIVAL_RUNS ?? fallback)

/** Every saver of a driver opens its one store, so that savers with different options see the same data. */
const runsOn = { memory: runs(200), postgres: runs(50), "cockroach dialect": runs(30), pglite: runs(30) }
for (const driver of matrix.all) {
  revivalScenarios(driver.name, () => ({
    saver: (options?: SaverOptions) => driver.saver(options, 2),
    runs: runsOn[driver.name]
  }))
}

describe("the corpus is hostile", () => {
  it("LangGraph's own serializer builds a PromptTemplate from the plain object this library reads as data", async () => {
    const built = await new JsonPlusSerializer().loadsTyped(
      "json",
      JSON.stringify(hostileData["a PromptTemplate record"])
    )
    expect(built).toBeInstanceOf(PromptTemplate)
  })

  it("LangChain's load() resolves the secret records from the environment, where the canary is", async () => {
    expect(await load(JSON.stringify(hostileData["a secret record"]), { secretsFromEnv: true })).toBe(canary)
  })
})

/** Plain objects LangGraph's writer stores as they are, which name no class this library revives. */
const inertWhenAdopted = [
  "a PromptTemplate record",
  "a PromptTemplate record under its short id",
  "a RunnableSequence record",
  "a LangChainTracer record with a secret in its kwargs",
  "an InMemoryCache record",
  "a FakeChatModel record",
  "a FakeListChatModel record",
  "an id ending in constructor",
  "an id ending in constructor under prompts",
  "a secret record",
  "a secret record for LangSmith's key",
  "an unknown class",
  "an unregistered namespace",
  "a non-constructor export",
  "an environment reader export",
  "a not_implemented record",
  "a malformed lc 1 record",
  "an lc 1 record of an unknown type",
  "an lc 2 Function record",
  "an lc 2 record of an unknown type",
  "an __lc_escaped__ wrapper",
  "a top-level __proto__ key",
  "a __proto__ key holding a record",
  "a constructor.prototype key"
]

describe("a database written by @langchain/langgraph-checkpoint-postgres", () => {
  it("reads the hostile plain objects LangGraph's writer stored unescaped as inert data", async () => {
    const adopted = await createDatabase("revival_adopt")
    const pool = new Pool({ connectionString: adopted.url })
    // Dropping the database ends its connections; that is expected here.
    pool.on("error", () => undefined)
    const official = new PostgresSaver(pool)
    let ours: EffectCheckpointSaver | undefined
    try {
      await official.setup()
      const values = Object.fromEntries(inertWhenAdopted.map((label) => [label, hostileData[label]]))
      // Allowlisted: LangGraph's writer stores this plain object as a message record, and it reads as one.
      const lookalike = hostileData["a HumanMessage record as a plain object"]
      const hostile = "adopted-hostile"
      const config = await official.put(
        { configurable: { thread_id: hostile, checkpoint_ns: "" } },
        {
          v: 4,
          id: uuid6(-1),
          ts: new Date().toISOString(),
          channel_values: { ...values, lookalike, list: Object.values(values) },
          channel_versions: Object.fromEntries([...Object.keys(values), "lookalike", "list"].map((k) => [k, 1])),
          versions_seen: {}
        },
        { source: "loop", step: 1, parents: {}, hostile: values } as never,
        Object.fromEntries([...Object.keys(values), "lookalike", "list"].map((k) => [k, 1]))
      )
      await official.putWrites(config, Object.entries(values), "task-1")
      await official.put(
        { configurable: { thread_id: "adopted-clean", checkpoint_ns: "" } },
        checkpoint({ messages: [new HumanMessage("clean")] }),
        metadata(),
        { messages: 1 }
      )

      ours = await EffectCheckpointSaver.fromConnString(adopted.url)
      const tuple = await ours.getTuple({ configurable: { thread_id: hostile } })
      expect(tuple).toBeDefined()
      const read = tuple!.checkpoint.channel_values
      for (const [label, value] of Object.entries(values)) expect(shape(read[label]), label).toEqual(shape(value))
      expect(shape(read.list)).toEqual(shape(Object.values(values)))
      expect(shape(tuple!.pendingWrites)).toEqual(
        shape(Object.entries(values).map(([channel, value]) => ["task-1", channel, value]))
      )
      expect(shape((tuple!.metadata as Record<string, unknown>).hostile, true)).toEqual(shape(values, true))
      expect(read.lookalike).toBeInstanceOf(HumanMessage)
      expect((read.lookalike as HumanMessage).content).toBe("I am data, not a message")
      expectHarmless(tuple)

      const all = await collect(ours.list({ configurable: {} }))
      expect(all.map((t) => t.config.configurable?.thread_id).sort()).toEqual(["adopted-clean", hostile])
      expectHarmless(all)
    } finally {
      await ours?.close()
      await official.end()
      await adopted.drop()
    }
  }, 60_000)
})

describe("inert records are counted", () => {
  const real = () => new PromptTemplate({ template: "{x}", inputVariables: ["x"] })
  /** The record the writer stores for it (its kwargs hold `partial_variables: undefined` as LangGraph's record). */
  const record = () => JSON.parse(new TextDecoder().decode(new SafeJsonPlusSerializer().dumpJson(real()))) as unknown

  it.effect("on the read's span (checkpoint.inert_records) and in langgraph_checkpoint_inert_records", () =>
    Effect.gen(function*() {
      const spans: Array<Tracer.NativeSpan> = []
      const tracer = Tracer.make({
        span(options) {
          const span = new Tracer.NativeSpan(options)
          spans.push(span)
          return span
        }
      })
      const storage = yield* CheckpointStorage.CheckpointStorage
      // Real instances of classes outside the allowlist: written as their records, read back as that data.
      const ref = yield* storage.put(
        { thread_id: "counted" },
        checkpoint({ prompt: real(), quote: new Quote({ text: "t", author: "a", pageNumber: 1 }), clean: 1 }),
        metadata(),
        { prompt: 1, quote: 1, clean: 1 }
      )
      yield* storage.putWrites(ref, [["prompt", real()]], { task_id: "task-1" })
      const count = Metric.value(Metrics.inertRecords).pipe(Effect.map((state) => state.count))
      const before = yield* count
      const tuple = yield* storage.getTuple(ref).pipe(Effect.withTracer(tracer))
      expect(yield* count).toBe(before + 3)
      const values = tuple._tag === "Some" ? tuple.value.checkpoint.channel_values : {}
      expect(values.prompt).not.toBeInstanceOf(PromptTemplate)
      expect(values.prompt).toEqual(record())
      expect(values.quote).not.toBeInstanceOf(Quote)
      const events = spans.filter((span) => span.name === "CheckpointStorage.getTuple").flatMap((span) => span.events)
      expect(events).toEqual([
        ["checkpoint.inert_records", expect.anything(), { checkpoint_id: ref.checkpoint_id, count: 3 }]
      ])

      // Nothing inert, nothing counted.
      const clean = yield* storage.put({ thread_id: "clean" }, checkpoint({ a: 1 }), metadata(), { a: 1 })
      const between = yield* count
      yield* storage.getTuple(clean)
      expect(yield* count).toBe(between)
    }).pipe(Effect.provide(CheckpointStorage.layerMemory)))

  it("through the saver: a real PromptTemplate in state reads back as its plain record", async () => {
    const saver = EffectCheckpointSaver.fromLayer(CheckpointStorage.layerMemory)
    try {
      const config = await store(saver, threadId("real"), { prompt: real() })
      const tuple = await saver.getTuple(config)
      expect(tuple?.checkpoint.channel_values.prompt).not.toBeInstanceOf(PromptTemplate)
      expect(shape(tuple?.checkpoint.channel_values.prompt)).toEqual(shape(record()))
      expectHarmless(tuple)
    } finally {
      await saver.close()
    }
  })
})
