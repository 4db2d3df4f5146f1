/**
 * Derived pieces (storage format level 3) on every driver: a chat whose
 * messages LangGraph gives ids in place after their tasks wrote them stores
 * each message's second text as a derived piece of its first, and every
 * checkpoint reads back as written, in this process and a new one, after a
 * prune, a copy, an export and import; an import whose derived pieces do not
 * read back is refused.
 */
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages"
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph"
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint"
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { CheckpointError, CheckpointStorage, EffectCheckpointSaver } from "../../src/index.ts"
import * as StorageFormat from "../../src/internal/StorageFormat.ts"
import type { ThreadRows } from "../../src/StorageDriver.ts"
import { drivers } from "../support/drivers.ts"

const matrix = drivers("derived")
afterAll(async () => {
  for (const driver of matrix.all) await driver.clear()
})

const long = (label: string) => `${label}: `.padEnd(400, "some words of a chat message ")

/** A chat whose messages carry no id: LangGraph's reducer gives each one in place, after its task wrote it. */
const chat = (saver: BaseCheckpointSaver) =>
  new StateGraph(MessagesAnnotation)
    .addNode("model", (state) => ({ messages: [new AIMessage(long(`reply ${state.messages.length}`))] }))
    .addEdge(START, "model")
    .addEdge("model", END)
    .compile({ checkpointer: saver })

const turn = (saver: BaseCheckpointSaver, thread_id: string, n: number) =>
  chat(saver).invoke({ messages: [new HumanMessage(long(`question ${n}`))] }, { configurable: { thread_id } })

const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

/** Every checkpoint's messages, newest first, as JSON. */
const history = async (saver: BaseCheckpointSaver, thread_id: string) => {
  const found: Array<unknown> = []
  for await (const tuple of saver.list({ configurable: { thread_id } })) {
    found.push(plain({ messages: tuple.checkpoint.channel_values.messages, writes: tuple.pendingWrites }))
  }
  return found
}

/** A storage kept open for the test: a saver over it, and its service's own operations. */
const open = async (layer: Layer.Layer<CheckpointStorage.CheckpointStorage, unknown>) => {
  const runtime = ManagedRuntime.make(layer)
  const context = await runtime.context()
  const saver = EffectCheckpointSaver.fromLayer(Layer.succeedContext(context))
  const run = <A, E>(f: (storage: CheckpointStorage.CheckpointStorage["Service"]) => Effect.Effect<A, E>) =>
    runtime.runPromise(CheckpointStorage.CheckpointStorage.use(f))
  return { saver, run, close: () => Promise.all([saver.close(), runtime.dispose()]).then(() => undefined) }
}

const derivedPieces = (rows: ThreadRows) =>
  rows.pieces.filter((piece) => StorageFormat.derivedFrom(piece.bytes) !== undefined)

describe.each(matrix.all)("derived pieces on $name", (driver) => {
  it("store a message's id'd text as a derived piece of the text its task wrote, and read back exactly", async () => {
    const thread_id = `derived-${driver.name}`
    const { close, run, saver } = await open(driver.layer())
    let last: { messages: Array<BaseMessage> } | undefined
    for (let n = 0; n < 4; n++) last = await turn(saver, thread_id, n)
    const rows = await run((storage) => storage.exportThread(thread_id))
    // Each turn's two messages got their ids after their writes: one derived piece each.
    expect(derivedPieces(rows)).toHaveLength(8)
    for (const piece of derivedPieces(rows)) {
      expect(piece.bytes.byteLength).toBeLessThan(100)
      const base = rows.pieces.find((p) => StorageFormat.pieceKey(p.hash) === StorageFormat.derivedFrom(piece.bytes))
      expect(base, "its base is stored").toBeDefined()
    }
    const latest = await saver.getTuple({ configurable: { thread_id } })
    expect(plain(latest?.checkpoint.channel_values.messages)).toEqual(plain(last!.messages))
    const written = await history(saver, thread_id)
    await close()

    // A process that holds nothing reads the same, and goes on.
    const fresh = driver.saver()
    expect(await history(fresh, thread_id)).toEqual(written)
    const after = await turn(fresh, thread_id, 4)
    expect(after.messages).toHaveLength(10)
    expect(plain(after.messages.slice(0, 8))).toEqual(plain(last!.messages))
    await fresh.close()
  })

  it("keep every checkpoint readable through prune, copy, export and import", async () => {
    const thread_id = `derived-lifecycle-${driver.name}`
    const { close, run, saver } = await open(driver.layer())
    for (let n = 0; n < 3; n++) await turn(saver, thread_id, n)
    const written = await history(saver, thread_id)

    await saver.copyThread(thread_id, `${thread_id}-copy`)
    expect(await history(driver.saver(), `${thread_id}-copy`)).toEqual(written)

    const rows = await run((storage) => storage.exportThread(thread_id))
    await saver.deleteThread(thread_id)
    await run((storage) => storage.importThread(rows))
    expect(await history(driver.saver(), thread_id)).toEqual(written)

    // The writes that stored the bases go with the checkpoints prune removes; the bases stay.
    await saver.prune([thread_id], { strategy: "keep_latest" })
    const reader = driver.saver()
    expect(await history(reader, thread_id)).toEqual([written[0]])
    const pruned = await run((storage) => storage.exportThread(thread_id))
    expect(derivedPieces(pruned).length).toBeGreaterThan(0)
    expect((await turn(reader, thread_id, 3)).messages).toHaveLength(8)
    await reader.close()
    await close()
  })

  it("an import whose derived piece extends a piece it lacks, or a derived one, is refused", async () => {
    const thread_id = `derived-import-${driver.name}`
    const { close, run, saver } = await open(driver.layer())
    await turn(saver, thread_id, 0)
    const rows = await run((storage) => storage.exportThread(thread_id))
    const piece = derivedPieces(rows)[0]!
    const base = StorageFormat.derivedFrom(piece.bytes)!
    const refused = (changed: ThreadRows) =>
      run((storage) => Effect.flip(storage.importThread(changed, { replace: true })))
    const lacking = await refused({
      ...rows,
      pieces: rows.pieces.filter((p) => StorageFormat.pieceKey(p.hash) !== base)
    })
    expect(lacking).toBeInstanceOf(CheckpointError.InvalidInput)
    expect(lacking.message).toContain("extends a piece the rows do not hold")
    // The same change written against the derived piece instead of its base, under its own hash.
    const chained = new Uint8Array([...piece.bytes.subarray(0, 1), ...piece.hash, ...piece.bytes.subarray(17)])
    const onDerived = await refused({
      ...rows,
      pieces: [...rows.pieces, { hash: Buffer.from(StorageFormat.hashOf(chained), "latin1"), bytes: chained }]
    })
    expect(onDerived).toBeInstanceOf(CheckpointError.InvalidInput)
    expect(onDerived.message).toContain("extends a derived piece")
    await close()
  })
})
