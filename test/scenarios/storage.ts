/**
 * The CheckpointStorage contract seen from Effect, for every driver: typed
 * errors for bad input, exact round trips of awkward values, write ordering,
 * concurrency, listing and DeltaChannel history.
 */
import { describe, expect, layer } from "@effect/vitest"
import { ERROR, INTERRUPT, TASKS, uuid6 } from "@langchain/langgraph-checkpoint"
import { Effect, type Layer, Option, Schema, Stream } from "effect"
import { Checkpoint, CheckpointStorage } from "../../src/index.ts"
import { checkpoint, metadata } from "../support/fixtures.ts"

const { CheckpointStorage: Storage } = CheckpointStorage

let threads = 0
const newThread = () => `thread-${process.pid}-${Date.now()}-${++threads}`

/** Puts a checkpoint whose values are all new, returning its reference. */
const putValues = (thread_id: string, values: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const storage = yield* Storage
    const cp = checkpoint(values)
    return yield* storage.put({ thread_id }, cp, metadata(extra), cp.channel_versions)
  })

const latest = (thread_id: string, checkpoint_ns = "") =>
  Storage.use((storage) => storage.getTuple({ thread_id, checkpoint_ns })).pipe(Effect.map(Option.getOrThrow))

export const storageScenarios = (name: string, storage: Layer.Layer<CheckpointStorage.CheckpointStorage, unknown>) =>
  layer(storage, { timeout: 60_000 })(`CheckpointStorage (${name})`, (it) => {
    describe("bad input is a typed error and writes nothing", () => {
      it.effect("a missing thread_id", () =>
        Effect.gen(function*() {
          const storage = yield* Storage
          const error = yield* Effect.flip(storage.put({} as never, checkpoint(), metadata(), {}))
          expect(error._tag).toBe("InvalidConfig")
          expect(error.message).toMatch(/^put: invalid config: .*thread_id/)
        }))

      it.effect("a non-string or empty thread_id", () =>
        Effect.gen(function*() {
          const storage = yield* Storage
          for (const thread_id of [42, null, ["a"], ""]) {
            const error = yield* Effect.flip(storage.getTuple({ thread_id } as never))
            expect(error._tag).toBe("InvalidConfig")
            expect(error.message).toContain("thread_id")
          }
        }))

      it.effect("putWrites without a checkpoint_id", () =>
        Effect.gen(function*() {
          const storage = yield* Storage
          const error = yield* Effect.flip(
            storage.putWrites({ thread_id: newThread() } as never, [["a", 1]], { task_id: "t" })
          )
          expect(error._tag).toBe("InvalidConfig")
          expect(error.message).toContain("checkpoint_id")
        }))

      it.effect("an unknown checkpoint_id reads as None, not an error", () =>
        Effect.gen(function*() {
          const thread_id = newThread()
          yield* putValues(thread_id, { a: 1 })
          const storage = yield* Storage
          expect(Option.isNone(yield* storage.getTuple({ thread_id, checkpoint_id: uuid6(-1) }))).toBe(true)
          expect(Option.isNone(yield* storage.getTuple({ thread_id: newThread() }))).toBe(true)
        }))

      it.effect("a malformed checkpoint or metadata", () =>
        Effect.gen(function*() {
          const storage = yield* Storage
          const thread_id = newThread()
          const noId = { ...checkpoint(), id: undefined } as never
          const error = yield* Effect.flip(storage.put({ thread_id }, noId, metadata(), {}))
          expect(error._tag).toBe("InvalidInput")
          expect(error.message).toMatch(/^put: invalid checkpoint: .*id/)

          const badMetadata = yield* Effect.flip(storage.put({ thread_id }, checkpoint(), "nope" as never, {}))
          expect(badMetadata._tag).toBe("InvalidInput")
          expect(badMetadata.message).toContain("metadata")

          const badVersions = yield* Effect.flip(
            storage.put({ thread_id }, checkpoint(), metadata(), { a: {} } as never)
          )
          expect(badVersions._tag).toBe("InvalidInput")
          expect(Option.isNone(yield* storage.getTuple({ thread_id }))).toBe(true)
        }))

      it.effect("a value the serializer cannot encode names the channel, and nothing is half-written", () =>
        Effect.gen(function*() {
          const storage = yield* Storage
          const thread_id = newThread()
          const cp = checkpoint({ fine: "ok", bad: { n: 1n } })
          const error = yield* Effect.flip(storage.put({ thread_id }, cp, metadata(), cp.channel_versions))
          expect(error._tag).toBe("SerializationFailed")
          expect(error.message).toContain("channel_values.bad")
          expect(Option.isNone(yield* storage.getTuple({ thread_id }))).toBe(true)

          const stored = yield* putValues(thread_id, { a: 1 })
          const writeError = yield* Effect.flip(
            storage.putWrites(stored, [["a", 2], ["b", 3n]], { task_id: "task" })
          )
          expect(writeError._tag).toBe("SerializationFailed")
          expect(writeError.message).toContain(`writes[1] (channel "b")`)
          expect((yield* latest(thread_id)).pendingWrites).toEqual([])
        }))
    })

    describe("exact round trips", () => {
      const awkward = "NUL:\u0000 astral:\u{1F600}\u{10FFFF} cjk:漢字 rtl:שלום quote:\"' backslash:\\ newline:\n"

      it.effect("NUL and astral characters in values and metadata (keys too)", () =>
        Effect.gen(function*() {
          const storage = yield* Storage
          const printable = awkward.replace("\u0000", "")
          const thread_id = `${newThread()}-${printable}`
          const cp = checkpoint({ text: awkward, nested: { [awkward]: [awkward, { deep: awkward }] } })
          const meta = metadata({
            note: awkward,
            [awkward]: awkward,
            private: "\uE000\uE0000\uE000u",
            lone: "\ud800 \udfff \\ud800 \\u0000",
            ["\udbff"]: "key"
          })
          const ref = yield* storage.put({ thread_id, checkpoint_ns: printable }, cp, meta, cp.channel_versions)
          yield* storage.putWrites(ref, [[printable, awkward]], { task_id: printable, task_path: printable })
          const tuple = yield* latest(thread_id, printable)
          // What the service returns is a well-formed tuple by the published schema.
          expect(Schema.decodeUnknownSync(Checkpoint.CheckpointTuple)(tuple)).toEqual(tuple)
          expect(tuple.checkpoint).toEqual(cp)
          expect(tuple.metadata).toEqual(meta)
          expect(tuple.pendingWrites).toEqual([[printable, printable, awkward]])
          const filtered = yield* Stream.runCollect(storage.list({ thread_id, filter: { note: awkward } }))
          expect(Array.from(filtered)).toHaveLength(1)
          const lone = yield* Stream.runCollect(
            storage.list({ thread_id, filter: { lone: "\ud800 \udfff \\ud800 \\u0000" } })
          )
          expect(Array.from(lone)).toHaveLength(1)
        }))

      it.effect("NUL in a key (thread, namespace, checkpoint id, channel, task) is a typed error", () =>
        Effect.gen(function*() {
          const storage = yield* Storage
          const nul = "a\u0000b"
          const thread = yield* Effect.flip(storage.put({ thread_id: nul }, checkpoint(), metadata(), {}))
          expect(thread._tag).toBe("InvalidConfig")
          expect(thread.message).toContain("NUL")
          const surrogate = yield* Effect.flip(storage.getTuple({ thread_id: "a\ud800" }))
          expect(surrogate.message).toContain("well-formed")
          const ns = yield* Effect.flip(storage.getTuple({ thread_id: "t", checkpoint_ns: nul }))
          expect(ns._tag).toBe("InvalidConfig")
          const id = yield* Effect.flip(storage.getTuple({ thread_id: "t", checkpoint_id: nul }))
          expect(id._tag).toBe("InvalidConfig")
          const before = yield* Effect.flip(Stream.runCollect(storage.list({ thread_id: "t", before: nul })))
          expect(before._tag).toBe("InvalidInput")
          expect(before.message).toContain("NUL")
          const channel = yield* Effect.flip(
            storage.put({ thread_id: "t" }, checkpoint({ [nul]: 1 }), metadata(), { [nul]: 1 })
          )
          expect(channel._tag).toBe("InvalidInput")
          const history = yield* Effect.flip(storage.getDeltaChannelHistory({ thread_id: "t" }, ["messages", nul]))
          expect(history._tag).toBe("InvalidInput")
          expect(history.message).toContain("NUL")
          const ref = yield* putValues(newThread(), {})
          const task = yield* Effect.flip(storage.putWrites(ref, [["a", 1]], { task_id: nul }))
          expect(task._tag).toBe("InvalidInput")
          expect((yield* latest(ref.thread_id)).pendingWrites).toEqual([])
        }))

      it.effect("unknown metadata keys are kept exactly", () =>
        Effect.gen(function*() {
          const thread_id = newThread()
          const extra = { run_id: "r1", lc_agent_name: "agent", custom: { list: [1, "two", null, true], empty: {} } }
          yield* putValues(thread_id, {}, extra)
          expect((yield* latest(thread_id)).metadata).toEqual(metadata(extra))
        }))

      it.effect("Uint8Array values and pending writes (LangGraph's MemorySaver throws on the latter)", () =>
        Effect.gen(function*() {
          const storage = yield* Storage
          const thread_id = newThread()
          const bytes = new Uint8Array([0, 10, 128, 255])
          const ref = yield* putValues(thread_id, { bytes, nested: { bytes } })
          yield* storage.putWrites(ref, [["bytes", bytes]], { task_id: "task" })
          const tuple = yield* latest(thread_id)
          expect(tuple.checkpoint.channel_values.bytes).toEqual(bytes)
          expect(tuple.checkpoint.channel_values.nested).toEqual({ bytes })
          expect(tuple.pendingWrites).toEqual([["task", "bytes", bytes]])
          // Stored bytes are not the caller's object: mutating it afterwards changes nothing.
          bytes[0] = 99
          expect((yield* latest(thread_id)).pendingWrites?.[0]?.[2]).toEqual(new Uint8Array([0, 10, 128, 255]))
        }))

      it.effect("a 16 MiB string and a 16 MiB Uint8Array", () =>
        Effect.gen(function*() {
          const thread_id = newThread()
          const big = "x".repeat(16 * 1024 * 1024)
          const bytes = new Uint8Array(16 * 1024 * 1024).map((_, i) => i % 251)
          yield* putValues(thread_id, { big, bytes })
          const values = (yield* latest(thread_id)).checkpoint.channel_values
          expect((values.big as string).length).toBe(big.length)
          expect(values.big === big).toBe(true)
          expect(Buffer.compare(values.bytes as Uint8Array, bytes)).toBe(0)
        }), 60_000)
    })

    describe("pending writes", () => {
      it.effect("come back in writesSortKey order: task path, task id, index", () =>
        Effect.gen(function*() {
          const storage = yield* Storage
          const ref = yield* putValues(newThread(), {})
          yield* storage.putWrites(ref, [["c", "b0"], ["c", "b1"]], { task_id: "b", task_path: "~1" })
          yield* storage.putWrites(ref, [["c", "a0"]], { task_id: "a", task_path: "~2" })
          yield* storage.putWrites(ref, [["c", "z0"]], { task_id: "z", task_path: "~1" })
          yield* storage.putWrites(ref, [["c", "input"]], { task_id: "y" })
          // Code point order: an astral path sorts after every BMP path.
          yield* storage.putWrites(ref, [["c", "astral"]], { task_id: "x1", task_path: "\u{1F600}" })
          yield* storage.putWrites(ref, [["c", "bmp"]], { task_id: "x2", task_path: "\uFFFF" })
          const tuple = yield* latest(ref.thread_id)
          expect(tuple.pendingWrites?.map(([, , value]) => value)).toEqual([
            "input",
            "b0",
            "b1",
            "z0",
            "a0",
            "bmp",
            "astral"
          ])
        }))

      it.effect("special channels replace an earlier write; ordinary writes keep the first", () =>
        Effect.gen(function*() {
          const storage = yield* Storage
          const ref = yield* putValues(newThread(), {})
          yield* storage.putWrites(ref, [["out", "first"], [ERROR, "boom 1"]], { task_id: "t" })
          yield* storage.putWrites(ref, [["out", "second"], [ERROR, "boom 2"], [INTERRUPT, "ask"]], { task_id: "t" })
          const writes = (yield* latest(ref.thread_id)).pendingWrites ?? []
          expect(writes).toHaveLength(3)
          expect(writes).toEqual(expect.arrayContaining([
            ["t", "out", "first"],
            ["t", ERROR, "boom 2"],
            ["t", INTERRUPT, "ask"]
          ]))
        }))

      it.effect("concurrent writers on one checkpoint all land", () =>
        Effect.gen(function*() {
          const storage = yield* Storage
          const ref = yield* putValues(newThread(), {})
          yield* Effect.forEach(
            Array.from({ length: 50 }, (_, i) => i),
            (i) => storage.putWrites(ref, [["c", i], ["d", -i]], { task_id: `task-${String(i).padStart(2, "0")}` }),
            { concurrency: "unbounded" }
          )
          const writes = (yield* latest(ref.thread_id)).pendingWrites ?? []
          expect(writes).toHaveLength(100)
          expect(writes.filter(([, channel]) => channel === "c").map(([, , v]) => v)).toEqual(
            Array.from({ length: 50 }, (_, i) => i)
          )
        }))
    })

    describe("threads, namespaces and listing", () => {
      it.effect("namespaces of a thread are isolated", () =>
        Effect.gen(function*() {
          const storage = yield* Storage
          const thread_id = newThread()
          const id = uuid6(-1)
          const root = checkpoint({ where: "root" }, id)
          const child = checkpoint({ where: "child" }, id)
          yield* storage.put({ thread_id }, root, metadata(), root.channel_versions)
          yield* storage.put({ thread_id, checkpoint_ns: "child:1" }, child, metadata(), child.channel_versions)
          expect((yield* latest(thread_id)).checkpoint.channel_values).toEqual({ where: "root" })
          expect((yield* latest(thread_id, "child:1")).checkpoint.channel_values).toEqual({ where: "child" })
          expect(Option.isNone(yield* storage.getTuple({ thread_id, checkpoint_ns: "child:2" }))).toBe(true)
        }))

      it.effect("list is newest first, with filter, before and limit", () =>
        Effect.gen(function*() {
          const storage = yield* Storage
          const thread_id = newThread()
          const refs = []
          for (let step = 0; step < 5; step++) {
            refs.push(
              yield* putValues(thread_id, { step }, {
                step,
                source: step % 2 === 0 ? "loop" : "input",
                tags: { even: step % 2 === 0 }
              })
            )
          }
          const ids = (query: Checkpoint.ListQuery) =>
            storage.list(query).pipe(
              Stream.map((tuple) => tuple.metadata?.step),
              Stream.runCollect,
              Effect.map((chunk) => Array.from(chunk))
            )
          expect(yield* ids({ thread_id })).toEqual([4, 3, 2, 1, 0])
          expect(yield* ids({ thread_id, limit: 2 })).toEqual([4, 3])
          expect(yield* ids({ thread_id, before: refs[3]!.checkpoint_id })).toEqual([2, 1, 0])
          expect(yield* ids({ thread_id, filter: { source: "input" } })).toEqual([3, 1])
          // Filter values compare as JSON: nested objects by value.
          expect(yield* ids({ thread_id, filter: { tags: { even: true } } })).toEqual([4, 2, 0])
          expect(yield* ids({ thread_id, filter: { source: "loop", step: 2 } })).toEqual([2])
          expect(yield* ids({ thread_id, filter: { missing: null } })).toEqual([])

          const error = yield* Effect.flip(Stream.runCollect(storage.list({ thread_id, limit: -1 })))
          expect(error._tag).toBe("InvalidInput")
        }))

      it.effect("a put of a stored id keeps its first parent (so it cannot close a loop) and takes the new values", () =>
        Effect.gen(function*() {
          const storage = yield* Storage
          const thread_id = newThread()
          /** A checkpoint whose one channel is at `version` (each put a new blob). */
          const at = (step: string, version: number, id?: string) => ({
            ...checkpoint({ step }, id),
            channel_versions: { step: version }
          })
          const put = (parent: Checkpoint.CheckpointRef, cp: ReturnType<typeof at>, step: number) =>
            storage.put(parent, cp, metadata({ step }), cp.channel_versions)
          const a = yield* put({ thread_id }, at("a", 1), 0)
          const b = yield* put(a, at("b", 2), 1)
          const c = yield* put(b, at("c", 3), 2)
          // b again, under its own child c: re-pointed, b → c → b would loop.
          yield* put(c, at("b again", 4, b.checkpoint_id), 3)
          const tuple = yield* storage.getTuple(b).pipe(Effect.map(Option.getOrThrow))
          expect(tuple.parentConfig?.configurable?.checkpoint_id).toBe(a.checkpoint_id)
          expect(tuple.checkpoint.channel_values).toEqual({ step: "b again" })
          expect(tuple.metadata?.step).toBe(3)
          const parents = yield* storage.list({ thread_id }).pipe(
            Stream.map((listed) => [listed.checkpoint.id, listed.parentConfig?.configurable?.checkpoint_id]),
            Stream.runCollect
          )
          expect(Array.from(parents)).toEqual([
            [c.checkpoint_id, b.checkpoint_id],
            [b.checkpoint_id, a.checkpoint_id],
            [a.checkpoint_id, undefined]
          ])
          // The chain ends: prune plans over it rather than finding a loop.
          yield* storage.prune([thread_id], { strategy: "keep_latest" })
          expect((yield* latest(thread_id)).checkpoint.id).toBe(c.checkpoint_id)
        }))

      it.effect("deleteThread removes one thread, every namespace, and nothing else", () =>
        Effect.gen(function*() {
          const storage = yield* Storage
          const doomed = newThread()
          const kept = newThread()
          const ref = yield* putValues(doomed, { a: 1 })
          yield* storage.putWrites(ref, [["a", 2]], { task_id: "t" })
          yield* storage.put({ thread_id: doomed, checkpoint_ns: "sub" }, checkpoint(), metadata(), {})
          yield* putValues(kept, { a: 1 })
          yield* storage.deleteThread(doomed)
          expect(Option.isNone(yield* storage.getTuple({ thread_id: doomed }))).toBe(true)
          expect(Option.isNone(yield* storage.getTuple({ thread_id: doomed, checkpoint_ns: "sub" }))).toBe(true)
          const listed = yield* Stream.runCollect(storage.list({ thread_id: doomed }))
          expect(Array.from(listed)).toEqual([])
          expect((yield* latest(kept)).checkpoint.channel_values).toEqual({ a: 1 })
          // Writing to the thread again starts it afresh, without the old writes.
          const again = yield* putValues(doomed, {})
          expect((yield* latest(doomed)).pendingWrites).toEqual([])
          expect(again.thread_id).toBe(doomed)
        }))
    })

    describe("deleting under a slow writer", () => {
      it.effect("a put whose parent was deleted meanwhile writes nothing: the thread stays deleted", () =>
        Effect.gen(function*() {
          const storage = yield* Storage
          const thread_id = newThread()
          const root = yield* putValues(thread_id, { a: 1 })
          const child = yield* storage.put(root, checkpoint({ a: 2 }), metadata(), { a: 2 })
          yield* storage.deleteThread(thread_id)
          // The slow writer finishes its step on top of the checkpoint it knew.
          const error = yield* Effect.flip(storage.put(child, checkpoint({ a: 3 }), metadata(), { a: 3 }))
          expect(error._tag).toBe("CheckpointNotFound")
          expect(error.message).toContain(`checkpoint ${child.checkpoint_id} of thread "${thread_id}" no longer exists`)
          expect(Option.isNone(yield* storage.getTuple({ thread_id }))).toBe(true)
          expect(Array.from(yield* Stream.runCollect(storage.list({ thread_id })))).toEqual([])
          // Starting the thread afresh is fine.
          yield* putValues(thread_id, { a: 4 })
          expect((yield* latest(thread_id)).checkpoint.channel_values).toEqual({ a: 4 })
        }))
    })

    describe("DeltaChannel history", () => {
      it.effect("walks the parent chain to the nearest stored value, replaying writes oldest first", () =>
        Effect.gen(function*() {
          const storage = yield* Storage
          const thread_id = newThread()
          // root (stores "log" = ["seed"]) → c1 → c2 → c3 (target); writes on each ancestor.
          // Like a DeltaChannel, c1 and c2 bump the channel's version without storing a value.
          const root = checkpoint({ log: ["seed"] })
          let ref = yield* storage.put({ thread_id }, root, metadata(), root.channel_versions)
          yield* storage.putWrites(ref, [["log", "w0"], ["other", "x"]], { task_id: "t0" })
          for (const step of [1, 2]) {
            const cp = { ...checkpoint(), channel_versions: { log: step + 1 } }
            ref = yield* storage.put(ref, cp, metadata({ step }), cp.channel_versions)
            yield* storage.putWrites(ref, [["log", `w${step}b`]], { task_id: "b" })
            yield* storage.putWrites(ref, [["log", `w${step}a`]], { task_id: "a" })
          }
          const target = yield* storage.put(ref, checkpoint(), metadata({ step: 3 }), {})
          const history = yield* storage.getDeltaChannelHistory(target, ["log", "never"])
          expect(history).toEqual({
            log: {
              seed: ["seed"],
              writes: [["t0", "log", "w0"], ["a", "log", "w1a"], ["b", "log", "w1b"], ["a", "log", "w2a"], [
                "b",
                "log",
                "w2b"
              ]]
            },
            never: { writes: [] }
          })
          expect(yield* storage.getDeltaChannelHistory(target, [])).toEqual({})
        }))
    })

    it.effect("checkpoints older than format 4 get their pending sends from the parent", () =>
      Effect.gen(function*() {
        const storage = yield* Storage
        const thread_id = newThread()
        const parent = yield* storage.put({ thread_id }, { ...checkpoint(), v: 1 }, metadata(), {})
        yield* storage.putWrites(parent, [[TASKS, "send-1"]], { task_id: "t1" })
        yield* storage.put(parent, { ...checkpoint(), v: 1 }, metadata(), {})
        const tuple = yield* latest(thread_id)
        expect(tuple.checkpoint.channel_values[TASKS]).toEqual(["send-1"])
        expect(tuple.checkpoint.channel_versions[TASKS]).toBe(1)
      }))
  })
