/**
 * The bench's workload: chat messages from a seeded generator, and one chat
 * thread driven through a saver as LangGraph drives it.
 *
 * Plain JavaScript (types in workload.d.mts) because the SQLite side of the
 * embedded comparison runs on the machine's Node 20, which cannot run
 * TypeScript: both sides import this file, so they write the same messages
 * (same seed, same sizes) in the same calls.
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages"
import { uuid6 } from "@langchain/langgraph-checkpoint"

const words = (
  "the of and to in is you that it he was for on are as with his they at be this have from or one had by word " +
  "but not what all were we when your can said there use an each which she do how their if will up other about out " +
  "many then them these so some her would make like him into time has look two more write go see number no way could " +
  "people my than first water been call who oil its now find long down day did get come made may part graph state agent"
).split(" ")

// A process's generator starts from the same seed, so each side of a comparison draws the same texts.
let seed = 42

/** Restarts the generator, so a workload run after others draws the texts it would draw first. */
export const reseed = () => {
  seed = 42
}

/** A number in [0, 1) from the seeded generator. */
export const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648

/** `count` words drawn from the generator. */
export const text = (count) =>
  Array.from({ length: count }, () => words[Math.floor(random() * words.length)]).join(" ")

/** A chat message of about 800 bytes serialized, human on even steps, AI on odd ones. */
export const message = (step) =>
  step % 2 === 0
    ? new HumanMessage({ content: text(130), id: `m-${step}` })
    : new AIMessage({ content: text(130), id: `m-${step}` })

const encoder = new TextEncoder()

/** The UTF-8 bytes of `value` as JSON. */
export const jsonBytes = (value) => encoder.encode(JSON.stringify(value))

/** The length of `value` as JSON, in UTF-8 bytes. */
export const serializedSize = (value) => jsonBytes(value).length

/**
 * One thread as LangGraph drives it: each super-step stores the node's write
 * against the current checkpoint, then the next checkpoint, in which only the
 * `messages` channel changed.
 */
export class ChatThread {
  messages = []
  /** The last put's arguments (to put the same state into another saver). */
  last = undefined
  version = undefined
  step = 0

  constructor(saver, thread_id) {
    this.saver = saver
    this.config = { configurable: { thread_id, checkpoint_ns: "" } }
  }

  /** The input checkpoint every thread starts from. */
  async start() {
    this.version = this.saver.getNextVersion(undefined)
    const checkpoint = {
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

  /**
   * The step's new message, as a model would answer it: made before the
   * saver is called (and timed), so that a call's time is the saver's.
   */
  nextMessage() {
    return message(this.step)
  }

  /** The node's write of the step's new message; returns the message. */
  async putWrites(next = this.nextMessage()) {
    await this.saver.putWrites(this.config, this.writesOf(next), uuid6(this.step), `~__pregel_pull, agent`)
    return next
  }

  /** The next checkpoint, with `next` appended to the messages. */
  async put(next) {
    this.messages = [...this.messages, next]
    const previous = this.version
    this.version = this.saver.getNextVersion(previous)
    const { checkpoint, metadata, newVersions } = (this.last = this.checkpointOf(this.messages, previous))
    this.config = await this.saver.put(this.config, checkpoint, metadata, newVersions)
    this.step++
  }

  async superStep(next = this.nextMessage()) {
    await this.put(await this.putWrites(next))
  }

  /** The writes a step stores for its new message. */
  writesOf(next) {
    return [["messages", [next]]]
  }

  /** The checkpoint (with its metadata and new versions) of this step, holding `messages`. */
  checkpointOf(messages, previous) {
    const versions = { messages: this.version, "branch:to:agent": this.version }
    return {
      checkpoint: {
        v: 4,
        id: uuid6(this.step),
        ts: new Date().toISOString(),
        channel_values: { messages },
        channel_versions: versions,
        versions_seen: { agent: previous === undefined ? {} : { messages: previous } }
      },
      metadata: { source: "loop", step: this.step, parents: {} },
      newVersions: versions
    }
  }
}

/** The entries of `items` starting at `round` (modulo their count), with their indexes. */
export const rotated = (items, round) =>
  items.map((_, k) => {
    const i = (k + round) % items.length
    return [i, items[i]]
  })

/** How long `f` takes, in milliseconds. */
export const time = async (f) => {
  const start = performance.now()
  await f()
  return performance.now() - start
}

/**
 * The embedded comparison's workload, run the same way on each side: a chat
 * thread of `steps` super-steps on `saver` and on `memory` (a MemorySaver of
 * the same process), interleaved step by step; then, for each of
 * `readSizes`, a thread of that many steps on each and `reads` getTuple
 * calls of its latest checkpoint, interleaved. Returns each side's samples
 * in milliseconds (`getTupleLatest[k]`: the k-th read size).
 */
export const embeddedWorkload = async (saver, memory, { steps, readSizes, reads }) => {
  reseed()
  const savers = [saver, memory]
  const superStep = [[], []]
  const chats = await Promise.all(savers.map((s) => new ChatThread(s, "embedded-chat").start()))
  for (let step = 0; step < steps; step++) {
    for (const [i, thread] of rotated(chats, step)) {
      const next = thread.nextMessage()
      superStep[i].push(await time(() => thread.superStep(next)))
    }
  }
  const getTupleLatest = []
  for (const size of readSizes) {
    const thread_id = `embedded-read-${size}`
    const long = await Promise.all(savers.map((s) => new ChatThread(s, thread_id).start()))
    for (let step = 0; step < size; step++) {
      for (const thread of long) await thread.superStep()
    }
    const samples = [[], []]
    for (let round = 0; round < reads; round++) {
      for (const [i, s] of rotated(savers, round)) {
        samples[i].push(await time(() => s.getTuple({ configurable: { thread_id } })))
      }
    }
    getTupleLatest.push({ size, saver: samples[0], memory: samples[1] })
  }
  return { superStep: { saver: superStep[0], memory: superStep[1] }, getTupleLatest }
}
