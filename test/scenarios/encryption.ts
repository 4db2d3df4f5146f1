/**
 * Encryption at rest on a saver, with real graphs: rotation while writers
 * run, per-tenant keys and crypto-shredding, metadata filters, and reading
 * (then sealing) rows written before encryption was on. Every driver runs
 * them over one storage that savers with different keys open in turn.
 */
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages"
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph"
import type { CheckpointTuple } from "@langchain/langgraph-checkpoint"
import { Effect, Metric } from "effect"
import { describe, expect, it } from "vitest"
import {
  CheckpointError,
  type EffectCheckpointSaver,
  type Encryption,
  Metrics,
  type SaverOptions
} from "../../src/index.ts"

export const keyOf = (byte: number) => Buffer.alloc(32, byte).toString("base64")
const keys = { k1: keyOf(1), k2: keyOf(2), acme: keyOf(3), globex: keyOf(4) }

const sealed = (options: Partial<Encryption.EncryptionOptions> = {}): SaverOptions => ({
  encryption: { keys: { k1: keys.k1 }, primary: "k1", ...options }
})

/** Long enough for structural sharing to store the messages as lists of pieces. */
const filler = " and then some more words so that every message is stored as a piece of its own".repeat(2)

const chat = (saver: EffectCheckpointSaver) =>
  new StateGraph(MessagesAnnotation)
    .addNode("model", (state) => ({
      messages: [new AIMessage(`reply ${state.messages.length}${filler}`)]
    }))
    .addEdge(START, "model")
    .addEdge("model", END)
    .compile({ checkpointer: saver })

const say = (saver: EffectCheckpointSaver, thread_id: string, turn: number) =>
  chat(saver).invoke({ messages: [new HumanMessage(`turn ${turn} of ${thread_id}${filler}`)] }, {
    configurable: { thread_id }
  })

const messagesOf = async (saver: EffectCheckpointSaver, thread_id: string) => {
  const tuple = await saver.getTuple({ configurable: { thread_id } })
  return ((tuple?.checkpoint.channel_values.messages ?? []) as Array<BaseMessage>).map((m) => String(m.content))
}

const history = async (saver: EffectCheckpointSaver, thread_id: string) => {
  const tuples: Array<CheckpointTuple> = []
  for await (const tuple of saver.list({ configurable: { thread_id } })) tuples.push(tuple)
  return tuples.map((tuple) => ({
    id: tuple.checkpoint.id,
    metadata: tuple.metadata,
    messages: ((tuple.checkpoint.channel_values.messages ?? []) as Array<BaseMessage>).map((m) => String(m.content)),
    writes: tuple.pendingWrites?.length ?? 0
  }))
}

const delta = async (saver: EffectCheckpointSaver, thread_id: string) => {
  const histories = await saver.getDeltaChannelHistory({
    config: { configurable: { thread_id } },
    channels: ["messages"]
  })
  return JSON.stringify(histories)
}

const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error)

const plaintextRead = () => Effect.runSync(Metric.value(Metrics.plaintextRows)).count

/** A storage savers with different options open one at a time. */
export interface EncryptionDriver {
  readonly open: (options: SaverOptions) => Promise<EffectCheckpointSaver>
}

export const encryptionScenarios = (name: string, driver: () => EncryptionDriver) =>
  describe(`encryption on ${name}`, () => {
    let run = 0
    const threadId = (label: string) => `${label}-${process.pid}-${Date.now()}-${++run}`

    /** Opens a saver, runs `f`, closes it. */
    const using = async <A>(options: SaverOptions, f: (saver: EffectCheckpointSaver) => Promise<A>) => {
      const saver = await driver().open(options)
      try {
        return await f(saver)
      } finally {
        await saver.close()
      }
    }

    it(
      "rotation: written under k1, k2 made primary, reencrypt while writers run, k1 removed: everything reads, nothing lost",
      async () => {
        const threads = [threadId("rotate-a"), threadId("rotate-b"), threadId("rotate-c")]
        const before = await using(sealed(), async (saver) => {
          for (const thread of threads) for (let turn = 0; turn < 4; turn++) await say(saver, thread, turn)
          return Promise.all(
            threads.map(async (thread) => ({
              history: await history(saver, thread),
              delta: await delta(saver, thread)
            }))
          )
        })

        const late = threadId("rotate-late")
        const rotated = sealed({ keys: { k1: keys.k1, k2: keys.k2 }, primary: "k2" })
        const progress = await using(rotated, async (saver) => {
          const writers = [...threads, late].map(async (thread) => {
            for (let turn = 4; turn < 7; turn++) await say(saver, thread, turn)
          })
          const steps: Array<{ thread_id: string; outcome: string; done: number; total: number }> = []
          const rotation = (async () => {
            for await (const step of saver.reencrypt()) steps.push(step)
          })()
          await Promise.all([...writers, rotation])
          // A second run finds every thread under k2 (resumable: it only rewrites what is not).
          const again: Array<string> = []
          for await (const step of saver.reencrypt()) if (threads.includes(step.thread_id)) again.push(step.outcome)
          expect(again).toEqual(["current", "current", "current"])
          return steps
        })
        expect(progress.at(-1)?.done).toBe(progress.at(-1)?.total)
        expect(progress.filter((step) => threads.includes(step.thread_id)).map((step) => step.outcome)).toEqual([
          "rewritten",
          "rewritten",
          "rewritten"
        ])

        await using(sealed({ keys: { k2: keys.k2 }, primary: "k2" }), async (saver) => {
          for (const [i, thread] of threads.entries()) {
            const messages = await messagesOf(saver, thread)
            expect(messages).toHaveLength(14)
            expect(messages.filter((m) => m.startsWith("turn "))).toEqual(
              Array.from({ length: 7 }, (_, turn) => `turn ${turn} of ${thread}${filler}`)
            )
            // The checkpoints written before the rotation read back as they were (lists of pieces included).
            const now = await history(saver, thread)
            expect(now.slice(-before[i]!.history.length)).toEqual(before[i]!.history)
            expect(JSON.parse(await delta(saver, thread))).toMatchObject({ messages: expect.anything() })
          }
          expect(await messagesOf(saver, late)).toHaveLength(6)
          await say(saver, threads[0]!, 7)
          expect(await messagesOf(saver, threads[0]!)).toHaveLength(16)
        })
      },
      120_000
    )

    it(
      "per-tenant keys: removing a tenant's key makes exactly its threads unreadable (typed), never showing a key",
      async () => {
        const keyFor = (thread: string) => (thread.startsWith("acme") ? "acme" : "globex")
        const both = sealed({ keys: { acme: keys.acme, globex: keys.globex }, primary: "acme", keyFor })
        const acme = threadId("acme")
        const globex = threadId("globex")
        await using(both, async (saver) => {
          for (const thread of [acme, globex]) for (let turn = 0; turn < 2; turn++) await say(saver, thread, turn)
        })
        const erased = sealed({ keys: { acme: keys.acme }, primary: "acme", keyFor })
        await using(erased, async (saver) => {
          expect(await messagesOf(saver, acme)).toHaveLength(4)
          expect((await history(saver, acme)).length).toBeGreaterThan(0)
          const error = await failure(messagesOf(saver, globex))
          expect(error).toBeInstanceOf(CheckpointError.CorruptedCheckpoint)
          expect(error).toMatchObject({ thread_id: globex })
          expect(String(error)).toContain(`"globex"`)
          expect(String(error)).toContain("keyring does not hold")
          for (const key of Object.values(keys)) expect(JSON.stringify(error) + String(error)).not.toContain(key)
          expect(await failure(history(saver, globex))).toBeInstanceOf(CheckpointError.CorruptedCheckpoint)
          // Nothing new can be written for the erased tenant either; a rotation reports the thread and leaves it.
          expect(await failure(say(saver, threadId("globex"), 0))).toBeInstanceOf(CheckpointError.InvalidConfig)
          const steps = []
          for await (const step of saver.reencrypt()) if ([acme, globex].includes(step.thread_id)) steps.push(step)
          expect(steps.map((step) => [step.thread_id, step.outcome])).toEqual(
            expect.arrayContaining([[acme, "current"], [globex, "unreadable"]])
          )
          expect(steps.find((step) => step.thread_id === globex)?.detail).toContain(`"globex"`)
        })
      },
      60_000
    )

    it(
      "metadata: plaintext keys filter, an encrypted key is InvalidInput naming it, deleteForRuns needs run_id plaintext",
      async () => {
        const thread = threadId("filter")
        // A user key stored beside the run id (metadataFromConfig), sealed like every key but the plaintext ones.
        await using({ ...sealed(), metadataFromConfig: ["run_id", "customer"] }, async (saver) => {
          await chat(saver).invoke({ messages: [new HumanMessage("hi")] }, {
            configurable: { thread_id: thread },
            metadata: { customer: "alice", run_id: "run-filter" }
          })
          const matching = []
          for await (
            const tuple of saver.list({ configurable: { thread_id: thread } }, { filter: { source: "loop" } })
          ) {
            matching.push(tuple)
          }
          expect(matching.length).toBeGreaterThan(0)
          for (const tuple of matching) expect(tuple.metadata).toMatchObject({ source: "loop", customer: "alice" })
          const error = await failure(
            (async () => {
              for await (const _ of saver.list({}, { filter: { customer: "alice" } })) break
            })()
          )
          expect(error).toBeInstanceOf(CheckpointError.InvalidInput)
          expect(String(error)).toContain(`"customer" is encrypted`)
        })
        await using(sealed({ plaintextMetadata: ["source", "step", "customer"] }), async (saver) => {
          const found = []
          for await (
            const tuple of saver.list({ configurable: { thread_id: thread } }, { filter: { customer: "alice" } })
          ) {
            found.push(tuple)
          }
          // Stored with `customer` sealed: the filter cannot see it, and says nothing false.
          expect(found).toHaveLength(0)
          expect(await failure(saver.deleteForRuns(["run-filter"]))).toBeInstanceOf(CheckpointError.InvalidInput)
        })
        await using(sealed(), async (saver) => {
          await saver.deleteForRuns(["run-filter"])
          expect(await history(saver, thread)).toEqual([])
        })
      },
      60_000
    )

    it("an encrypted thread read without encryption is CorruptedCheckpoint saying it is encrypted, not a bad type", async () => {
      const thread = threadId("keyless")
      await using(sealed(), (saver) => say(saver, thread, 0))
      await using({}, async (saver) => {
        const error = await failure(messagesOf(saver, thread))
        expect(error).toBeInstanceOf(CheckpointError.CorruptedCheckpoint)
        expect(String(error)).toContain("it is encrypted: open the storage with encryption")
        expect(String(error)).not.toContain("serialization type")
      })
    })

    it(
      "rows written before encryption: an error without allowPlaintext, read (and counted) with it, sealed by reencrypt",
      async () => {
        const thread = threadId("plaintext")
        await using({}, async (saver) => {
          for (let turn = 0; turn < 3; turn++) await say(saver, thread, turn)
        })
        const plain = await using({}, (saver) => history(saver, thread))
        await using(sealed(), async (saver) => {
          const error = await failure(messagesOf(saver, thread))
          expect(error).toBeInstanceOf(CheckpointError.CorruptedCheckpoint)
          expect(String(error)).toContain("not encrypted (allowPlaintext is off)")
        })
        await using(sealed({ allowPlaintext: true }), async (saver) => {
          const counted = plaintextRead()
          expect(await history(saver, thread)).toEqual(plain)
          expect(plaintextRead()).toBeGreaterThan(counted)
          const steps = []
          for await (const step of saver.reencrypt()) if (step.thread_id === thread) steps.push(step.outcome)
          expect(steps).toEqual(["rewritten"])
        })
        await using(sealed(), async (saver) => {
          const counted = plaintextRead()
          expect(await history(saver, thread)).toEqual(plain)
          expect(plaintextRead()).toBe(counted)
          await say(saver, thread, 3)
          expect(await messagesOf(saver, thread)).toHaveLength(8)
        })
      },
      60_000
    )
  })
