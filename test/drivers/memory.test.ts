/**
 * What only the memory driver shows (the storage contract runs on every
 * driver in `storage.test.ts`).
 */
import { describe, expect, it } from "@effect/vitest"
import { uuid6 } from "@langchain/langgraph-checkpoint"
import { Effect, Layer, Schedule, Stream } from "effect"
import { afterEach } from "vitest"
import { CheckpointStorage, MemoryDriver } from "../../src/index.ts"
import { drivers } from "../support/drivers.ts"
import { checkpoint as checkpointOf, metadata as metadataOf } from "../support/fixtures.ts"

// The file's memory store; `layerMemory`'s own builds are what its tests are about.
const { memory, memoryDriver } = drivers("memory")
afterEach(() => memory.clear())

const noShared = { pieces: [], requires: [] }

describe("stored data that no longer decodes", () => {
  it.effect("is a CorruptedCheckpoint naming the thread, namespace and checkpoint", () =>
    Effect.gen(function*() {
      const driver = memoryDriver()
      const storage = yield* CheckpointStorage.make(driver)
      const id = uuid6(-1)
      const row = {
        thread_id: "t",
        checkpoint_ns: "ns",
        checkpoint_id: id,
        parent_checkpoint_id: undefined,
        checkpoint: { v: 4, id, ts: "now", channel_versions: { a: 1 }, versions_seen: {} },
        metadata: "{}"
      }
      yield* driver.put(row, [{
        channel: "a",
        version: "1",
        type: "json",
        bytes: new TextEncoder().encode("{not json")
      }], noShared)
      const blobError = yield* Effect.flip(storage.getTuple({ thread_id: "t", checkpoint_ns: "ns" }))
      expect(blobError._tag).toBe("CorruptedCheckpoint")
      expect(blobError.message).toMatch(
        new RegExp(`^checkpoint ${id} of thread "t" \\(namespace "ns"\\) cannot be read: channel "a"`)
      )

      yield* driver.put({ ...row, checkpoint: { ...row.checkpoint, channel_versions: "oops" } as never }, [], noShared)
      const headerError = yield* Effect.flip(storage.getTuple({ thread_id: "t", checkpoint_ns: "ns" }))
      expect(headerError._tag).toBe("CorruptedCheckpoint")
      expect(headerError.message).toContain("channel_versions")

      yield* driver.put(
        { ...row, checkpoint: { ...row.checkpoint, channel_versions: {} }, metadata: "[1]" },
        [],
        noShared
      )
      const metadataError = yield* Effect.flip(
        Stream.runCollect(storage.list({ thread_id: "t" }))
      )
      expect(metadataError._tag).toBe("CorruptedCheckpoint")
      expect(metadataError.message).toContain("metadata")
    }))
})

describe("CheckpointStorage.layerMemory", () => {
  it.effect("each build starts empty", () =>
    Effect.gen(function*() {
      const put = CheckpointStorage.CheckpointStorage.use((storage) =>
        storage.put({ thread_id: "t" }, {
          v: 4,
          id: uuid6(-1),
          ts: "",
          channel_values: {},
          channel_versions: {},
          versions_seen: {}
        }, {
          source: "input",
          step: -1,
          parents: {}
        }, {})
      )
      const count = Stream.runCount(
        CheckpointStorage.CheckpointStorage.use((storage) => Effect.succeed(storage.list({}))).pipe(Stream.unwrap)
      )
      yield* put.pipe(Effect.provide(CheckpointStorage.layerMemory))
      expect(yield* count.pipe(Effect.provide(CheckpointStorage.layerMemory))).toBe(0)
    }))

  it.effect("provides the driver beneath the storage too: what a put stored is in its threads", () =>
    Effect.gen(function*() {
      const storage = yield* CheckpointStorage.CheckpointStorage
      const { threads } = yield* MemoryDriver.MemoryDriver
      expect(threads.size).toBe(0)
      const stored = yield* storage.put({ thread_id: "seen" }, checkpointOf({ a: 1 }), metadataOf(), { a: 1 })
      const namespace = threads.get("seen")?.namespaces.get("")
      expect(namespace?.checkpoints.has(stored.checkpoint_id)).toBe(true)
      yield* storage.deleteThread("seen")
      expect(threads.has("seen")).toBe(false)
    }).pipe(Effect.provide(CheckpointStorage.layerMemory)))
})

describe("CheckpointStorage.layerRetention", () => {
  it.live("applies the policy on its schedule, in the background, for as long as the layer lives", () =>
    Effect.gen(function*() {
      const storage = yield* CheckpointStorage.CheckpointStorage
      let ref = yield* storage.put({ thread_id: "kept short" }, checkpointOf({ a: 0 }), metadataOf(), { a: 1 })
      for (let step = 1; step < 6; step++) {
        ref = yield* storage.put(
          ref,
          { ...checkpointOf({ a: step }), channel_versions: { a: step + 1 } },
          metadataOf(),
          { a: step + 1 }
        )
      }
      yield* Effect.sleep("200 millis")
      const left = yield* Stream.runCollect(storage.list({ thread_id: "kept short" }))
      // The two newest: each stores its value, so no older one is read back.
      expect(Array.from(left).map((tuple) => tuple.checkpoint.channel_values)).toEqual([{ a: 5 }, { a: 4 }])
    }).pipe(
      Effect.provide(
        CheckpointStorage.layerRetention({ keepLast: 2 }, Schedule.spaced("20 millis")).pipe(
          Layer.provideMerge(memory.layer())
        )
      )
    ))
})
