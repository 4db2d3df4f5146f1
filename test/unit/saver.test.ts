/**
 * The adapter as plain LangGraph users see it: errors, construction, lifecycle
 * and a custom serializer.
 */
import type { RunnableConfig } from "@langchain/core/runnables"
import { JsonPlusSerializer, type SerializerProtocol } from "@langchain/langgraph-checkpoint"
import { Effect, Layer } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { CheckpointError, CheckpointStorage, EffectCheckpointSaver, type SaverOptions } from "../../src/index.ts"
import { checkpoint, metadata as fixtureMetadata } from "../support/fixtures.ts"

const metadata = fixtureMetadata({ source: "input", step: -1 })

describe("EffectCheckpointSaver", () => {
  const savers: Array<EffectCheckpointSaver> = []
  const make = (options?: SaverOptions) => {
    const saver = EffectCheckpointSaver.fromLayer(CheckpointStorage.layerMemory, options)
    savers.push(saver)
    return saver
  }
  afterEach(async () => {
    await Promise.all(savers.splice(0).map((saver) => saver.close()))
  })

  it("rejects a missing thread_id with an Error that says so", async () => {
    const saver = make()
    const error = await saver.put({ configurable: {} }, checkpoint(), metadata, {}).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Error)
    expect(error).toBeInstanceOf(CheckpointError.InvalidConfig)
    expect((error as Error).message).toMatch(/^put: invalid config: .*thread_id/)
    const writeError = await saver.putWrites({ configurable: { thread_id: "t" } }, [["a", 1]], "task").catch((
      e: unknown
    ) => e)
    expect(writeError).toBeInstanceOf(CheckpointError.InvalidConfig)
    expect((writeError as Error).message).toContain("checkpoint_id")
  })

  it("reads nothing for a config without a thread_id, as the contract says", async () => {
    expect(await make().getTuple({ configurable: {} })).toBeUndefined()
  })

  it("lists through an async generator that stops early without reading further", async () => {
    const saver = make()
    let config = { configurable: { thread_id: "t" } }
    for (let i = 0; i < 5; i++) {
      config = await saver.put(config, checkpoint({ i }), metadata, { i: 1 + i }) as typeof config
    }
    const seen: Array<unknown> = []
    for await (const tuple of saver.list({ configurable: { thread_id: "t" } })) {
      seen.push(tuple.metadata?.step)
      if (seen.length === 2) break
    }
    expect(seen).toHaveLength(2)
    const error = await (async () => {
      for await (const _ of saver.list({ configurable: { thread_id: 7 } })) void _
    })().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CheckpointError.InvalidInput)
  })

  it("fromConnString gives a ready saver for memory: and a typed error for anything else", async () => {
    const saver = await EffectCheckpointSaver.fromConnString("memory:")
    savers.push(saver)
    const config = await saver.put({ configurable: { thread_id: "t" } }, checkpoint({ a: 1 }), metadata, { a: 1 })
    expect((await saver.getTuple(config))?.checkpoint.channel_values).toEqual({ a: 1 })

    const error = await EffectCheckpointSaver.fromConnString("mysql://user:secret@host/db").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CheckpointError.InvalidConfig)
    expect((error as Error).message).toContain("unsupported connection string")
    expect((error as Error).message).not.toContain("secret")
  })

  it("close() releases what the layer acquired", async () => {
    const events: Array<string> = []
    const layer = Layer.effect(
      CheckpointStorage.CheckpointStorage,
      Effect.acquireRelease(
        Effect.sync(() => events.push("acquired")),
        () => Effect.sync(() => events.push("released"))
      ).pipe(Effect.andThen(Effect.service(CheckpointStorage.CheckpointStorage)))
    ).pipe(Layer.provide(CheckpointStorage.layerMemory))
    const saver = EffectCheckpointSaver.fromLayer(layer)
    await saver.ready()
    expect(events).toEqual(["acquired"])
    await saver.close()
    expect(events).toEqual(["acquired", "released"])
  })

  it("uses a custom serializer for values and exposes it as serde", async () => {
    const calls: Array<string> = []
    const inner = new JsonPlusSerializer()
    const serde: SerializerProtocol = {
      dumpsTyped: async (value) => {
        calls.push("dump")
        const [type, bytes] = await inner.dumpsTyped(value)
        return [`wrapped-${type}`, bytes.slice().reverse()]
      },
      loadsTyped: async (type, bytes) => {
        calls.push("load")
        return inner.loadsTyped(type.replace(/^wrapped-/, ""), (bytes as Uint8Array).slice().reverse())
      }
    }
    const saver = EffectCheckpointSaver.fromLayer(CheckpointStorage.layerMemory, { serde })
    savers.push(saver)
    expect(saver.serde).toBe(serde)
    const config = await saver.put({ configurable: { thread_id: "t" } }, checkpoint({ a: [1, 2] }), metadata, { a: 1 })
    await saver.putWrites(config, [["a", "w"]], "task")
    const tuple = await saver.getTuple(config)
    expect(tuple?.checkpoint.channel_values).toEqual({ a: [1, 2] })
    expect(tuple?.pendingWrites).toEqual([["task", "a", "w"]])
    expect(tuple?.metadata).toEqual(metadata)
    expect(calls).toEqual(["dump", "dump", "load", "load"])
  })

  it("stores the metadata LangGraph gives it, plus the run id; other config keys only when asked", async () => {
    const config: RunnableConfig = {
      configurable: { thread_id: "t", assistant_id: "a", user_id: "ada", run_id: "from configurable" },
      metadata: { ls_integration: "langgraph", run_id: "r1", tenant: "acme", nested: { no: 1 }, source: "not this" }
    }
    const stored = async (saver: EffectCheckpointSaver, put = config) =>
      (await saver.getTuple(await saver.put(put, checkpoint(), metadata, {})))?.metadata
    // The run id, from config.metadata first; the checkpoint's own keys always win.
    expect(await stored(make())).toEqual({ ...metadata, run_id: "r1" })
    const { run_id: _, ...withoutRun } = config.metadata!
    expect(await stored(make(), { ...config, metadata: withoutRun })).toEqual({
      ...metadata,
      run_id: "from configurable"
    })
    // Nothing at all, or more: from config.metadata, then configurable; strings, numbers and booleans only.
    expect(await stored(make({ metadataFromConfig: [] }))).toEqual(metadata)
    const asked = make({ metadataFromConfig: ["run_id", "tenant", "user_id", "nested", "source", "absent"] })
    expect(await stored(asked)).toEqual({ ...metadata, run_id: "r1", tenant: "acme", user_id: "ada" })
  })

  it("gives every new channel version a distinct value, so forks never share one", () => {
    const saver = make()
    const versions = Array.from({ length: 1000 }, () => saver.getNextVersion(2))
    expect(new Set(versions).size).toBe(1000)
    for (const version of versions) {
      expect(version).toBeGreaterThan(2)
      expect(saver.getNextVersion(version)).toBeGreaterThan(version)
    }
    expect(Math.floor(saver.getNextVersion(undefined))).toBe(1)
  })
})
