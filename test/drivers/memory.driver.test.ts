/**
 * The memory driver's state, as its service shows it: one entry per thread,
 * its rows by namespace, and what the driver's operations leave there.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { CheckpointStorage, MemoryDriver } from "../../src/index.ts"
import type { CheckpointRow } from "../../src/StorageDriver.ts"

const noShared = { pieces: [], requires: [] }

const row = (checkpoint_id: string, version: number, parent?: string): CheckpointRow => ({
  thread_id: "t",
  checkpoint_ns: "",
  checkpoint_id,
  parent_checkpoint_id: parent,
  checkpoint: { v: 4, id: checkpoint_id, ts: "now", channel_versions: { a: version }, versions_seen: {} },
  metadata: "{}"
})

const blob = (version: number) => ({
  channel: "a",
  version: String(version),
  type: "json",
  bytes: new TextEncoder().encode(String(version))
})

const write = { task_id: "task", task_path: "", idx: 0, channel: "a", type: "json", bytes: new Uint8Array([1]) }

describe("MemoryDriver", () => {
  it.effect("holds each thread's rows by namespace, and what remove and deleteThread leave", () =>
    Effect.gen(function*() {
      const { driver, threads } = yield* MemoryDriver.MemoryDriver
      expect(yield* driver.put(row("1", 1), [blob(1)], noShared)).toBe("stored")
      yield* driver.putWrites({ thread_id: "t", checkpoint_ns: "", checkpoint_id: "1" }, [write], [])
      const namespace = () => threads.get("t")!.namespaces.get("")!
      expect(threads.get("t")!.lastActivity).toBeInstanceOf(Date)
      expect([...namespace().checkpoints.keys()]).toEqual(["1"])
      expect([...namespace().blobs.get("a")!.keys()]).toEqual(["1"])
      expect(namespace().writes.get("1")?.size).toBe(1)

      yield* driver.put(row("2", 2, "1"), [blob(2)], noShared)
      yield* driver.remove("t", [{ checkpoint_ns: "", checkpoint_id: "1" }])
      expect([...namespace().checkpoints.keys()]).toEqual(["2"])
      expect([...namespace().blobs.get("a")!.keys()]).toEqual(["2"])
      expect(namespace().writes.has("1")).toBe(false)

      yield* driver.deleteThread("t")
      expect(threads.has("t")).toBe(false)
    }).pipe(Effect.provide(MemoryDriver.MemoryDriver.layer)))

  it.effect("stores copies: the caller's bytes can change after a put", () =>
    Effect.gen(function*() {
      const { driver, threads } = yield* MemoryDriver.MemoryDriver
      const given = blob(1)
      yield* driver.put(row("1", 1), [given], noShared)
      given.bytes[0] = 0
      expect(threads.get("t")!.namespaces.get("")!.blobs.get("a")!.get("1")!.bytes).toEqual(
        new TextEncoder().encode("1")
      )
    }).pipe(Effect.provide(MemoryDriver.MemoryDriver.layer)))

  it.effect("a thread holding only writes is held, but not listed among the threads", () =>
    Effect.gen(function*() {
      const { driver, threads } = yield* MemoryDriver.MemoryDriver
      yield* driver.putWrites({ thread_id: "w", checkpoint_ns: "", checkpoint_id: "1" }, [write], [])
      expect(threads.get("w")?.lastActivity).toBeUndefined()
      expect(yield* driver.threads).toEqual([])
      expect(yield* driver.threadExists("w")).toBe(false)
    }).pipe(Effect.provide(MemoryDriver.MemoryDriver.layer)))

  it.effect("each build of the layer starts empty", () =>
    Effect.gen(function*() {
      const put = Effect.flatMap(
        MemoryDriver.MemoryDriver,
        ({ driver }) => driver.put(row("1", 1), [blob(1)], noShared)
      )
      const size = Effect.map(MemoryDriver.MemoryDriver, ({ threads }) => threads.size)
      yield* put.pipe(Effect.provide(MemoryDriver.MemoryDriver.layer))
      expect(yield* size.pipe(Effect.provide(MemoryDriver.MemoryDriver.layer))).toBe(0)
    }))

  it.effect("under the service: what a put through CheckpointStorage stored is in view", () =>
    Effect.gen(function*() {
      const storage = yield* CheckpointStorage.CheckpointStorage
      const { threads } = yield* MemoryDriver.MemoryDriver
      yield* storage.put(
        { thread_id: "s" },
        {
          v: 4,
          id: "1f0b8a42-0000-6000-8000-000000000000",
          ts: "",
          channel_values: { a: "value" },
          channel_versions: { a: 1 },
          versions_seen: {}
        },
        { source: "input", step: -1, parents: {} },
        { a: 1 }
      )
      const namespace = threads.get("s")!.namespaces.get("")!
      expect(namespace.checkpoints.size).toBe(1)
      expect([...namespace.blobs.keys()]).toEqual(["a"])
    }).pipe(
      Effect.provide(
        CheckpointStorage.layerDriver(Effect.map(MemoryDriver.MemoryDriver, ({ driver }) => driver)).pipe(
          Layer.provideMerge(MemoryDriver.MemoryDriver.layer)
        )
      )
    ))
})
