/**
 * Compressed values and pieces (storage format level 4) on every driver, with
 * encryption off and on: an agent's thread (a base64 image, a long tool
 * result, a record rewritten whole each turn) stores its pieces and its
 * `json` values compressed, smaller than their text, and reads back exactly
 * as LangGraph's own `MemorySaver` does (in this process and a new one,
 * after a copy, an export and import, and a prune); a sealed thread keeps
 * its pieces whole and compresses its values inside their seals; damaged
 * compressed text is refused by an import and reads as `CorruptedCheckpoint`.
 */
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages"
import { Annotation, END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph"
import { type BaseCheckpointSaver, MemorySaver } from "@langchain/langgraph-checkpoint"
import { Effect, Layer, ManagedRuntime } from "effect"
import { randomBytes } from "node:crypto"
import { afterAll, describe, expect, it } from "vitest"
import { CheckpointError, CheckpointStorage, EffectCheckpointSaver, Encryption } from "../../src/index.ts"
import * as StorageFormat from "../../src/internal/StorageFormat.ts"
import type { ThreadRows } from "../../src/StorageDriver.ts"
import { keyOf } from "../scenarios/encryption.ts"
import { drivers } from "../support/drivers.ts"

const matrix = drivers("compressed")
afterAll(async () => {
  for (const driver of matrix.all) await driver.clear()
})

const words = (n: number, seed: string) =>
  Array.from({ length: n }, (_, i) => `${seed} word ${i % 37} of a long tool result`).join(" ")

/** Drawn once: every saver stores the same content. */
const IMAGE = `data:image/png;base64,${randomBytes(6000).toString("base64")}`

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  files: Annotation<Record<string, string>>({ reducer: (_, next) => next, default: () => ({}) }),
  plan: Annotation<string>
})

/** An agent turn: a user's picture, a tool's long result, a file added to a record returned whole, a plan. */
const agent = (saver: BaseCheckpointSaver) =>
  new StateGraph(State)
    .addNode("tools", (state) => ({
      messages: [new ToolMessage({ content: words(60, `turn ${state.messages.length}`), tool_call_id: "call" })],
      files: { ...state.files, [`notes/${Object.keys(state.files).length}.md`]: words(30, "file") },
      plan: words(20, `plan ${state.messages.length}`)
    }))
    .addNode("answer", () => ({ messages: [new AIMessage(words(10, "answer"))] }))
    .addEdge(START, "tools")
    .addEdge("tools", "answer")
    .addEdge("answer", END)
    .compile({ checkpointer: saver })

const turn = (saver: BaseCheckpointSaver, thread_id: string, n: number) =>
  agent(saver).invoke({
    messages: [
      new HumanMessage({
        id: `q${n}`,
        content: [{ type: "text", text: `turn ${n}` }, { type: "image_url", image_url: { url: IMAGE } }]
      })
    ]
  }, { configurable: { thread_id } })

const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

/** Every checkpoint's values and writes, newest first, as JSON: what the saver gives back. */
const history = async (saver: BaseCheckpointSaver, thread_id: string) => {
  const found: Array<unknown> = []
  for await (const tuple of saver.list({ configurable: { thread_id } })) {
    found.push(plain({ values: tuple.checkpoint.channel_values, writes: tuple.pendingWrites }))
  }
  return found
}

/** The thread's states as the graph shows them, newest first, without the message ids LangGraph draws in each run. */
const states = async (saver: BaseCheckpointSaver, thread_id: string) => {
  const found: Array<unknown> = []
  for await (const state of agent(saver).getStateHistory({ configurable: { thread_id } })) {
    found.push({ values: state.values, next: state.next, step: state.metadata?.step })
  }
  return JSON.parse(JSON.stringify(
    found,
    (key, value) => key === "id" && typeof value === "string" && value.length > 8 ? undefined : value
  )) as unknown
}

/** What LangGraph's own saver shows after the same turns: the oracle. */
const oracle = async (turns: number) => {
  const memory = new MemorySaver()
  for (let n = 0; n < turns; n++) await turn(memory, "oracle", n)
  return states(memory, "oracle")
}

const ENCRYPTION = { keys: { k: keyOf(7) }, primary: "k" }

/** A storage kept open for the test: a saver over it, and its service's own operations. */
const open = async (layer: Layer.Layer<CheckpointStorage.CheckpointStorage, unknown>, encrypted: boolean) => {
  const runtime = ManagedRuntime.make(encrypted ? layer.pipe(Layer.provide(Encryption.layer(ENCRYPTION))) : layer)
  const context = await runtime.context()
  const saver = EffectCheckpointSaver.fromLayer(Layer.succeedContext(context))
  const run = <A, E>(f: (storage: CheckpointStorage.CheckpointStorage["Service"]) => Effect.Effect<A, E>) =>
    runtime.runPromise(CheckpointStorage.CheckpointStorage.use(f))
  return { saver, run, close: () => Promise.all([saver.close(), runtime.dispose()]).then(() => undefined) }
}

const compressedPieces = (rows: ThreadRows) => rows.pieces.filter((piece) => StorageFormat.isCompressed(piece.bytes))
const typesOf = (rows: ThreadRows) => new Set([...rows.blobs, ...rows.writes].map((row) => row.type))

describe.each(matrix.all)("compressed values and pieces on $name", (driver) => {
  it.each([false, true])(
    "store smaller than their text and read back as MemorySaver's (encrypted: %s)",
    async (encrypted) => {
      const thread_id = `compressed-${driver.name}-${encrypted}`
      const { close, run, saver } = await open(driver.layer(), encrypted)
      for (let n = 0; n < 3; n++) await turn(saver, thread_id, n)
      const rows = await run((storage) => storage.exportThread(thread_id))
      const types = typesOf(rows)
      if (encrypted) {
        // Sealed: values compressed inside their seals, pieces whole.
        expect(types).toContain(`${StorageFormat.COMPRESSED}+sealed`)
        expect(compressedPieces(rows)).toEqual([])
      } else {
        expect(types).toContain(StorageFormat.COMPRESSED)
        const pieces = compressedPieces(rows)
        // The picture (6,000 bytes as 8,000 of base64) in about 3/4 of its text, as its bytes would be (the message around it aside).
        const image = pieces.filter((piece) => piece.bytes.byteLength > 5000)
        expect(image.length).toBeGreaterThan(0)
        for (const piece of image) expect(piece.bytes.byteLength).toBeLessThan(0.76 * 8000 + 400)
        for (const piece of pieces) {
          const text = StorageFormat.decompress(piece.bytes) as Uint8Array
          expect(StorageFormat.hashOf(text), "its hash is its text's").toBe(StorageFormat.pieceKey(piece.hash))
          expect(piece.bytes.byteLength).toBeLessThan(text.byteLength)
        }
      }
      const written = await history(saver, thread_id)
      expect(await states(saver, thread_id)).toEqual(await oracle(3))
      await close()

      // A process that holds nothing reads the same, and goes on.
      const fresh = driver.saver(encrypted ? { encryption: ENCRYPTION } : undefined)
      expect(await history(fresh, thread_id)).toEqual(written)
      expect((await turn(fresh, thread_id, 3)).messages).toHaveLength(12)
      await fresh.close()
    }
  )

  it("keep every checkpoint readable through copy, export and import, and prune", async () => {
    const thread_id = `compressed-lifecycle-${driver.name}`
    const { close, run, saver } = await open(driver.layer(), false)
    for (let n = 0; n < 2; n++) await turn(saver, thread_id, n)
    const written = await history(saver, thread_id)

    await saver.copyThread(thread_id, `${thread_id}-copy`)
    expect(await history(driver.saver(), `${thread_id}-copy`)).toEqual(written)

    const rows = await run((storage) => storage.exportThread(thread_id))
    await saver.deleteThread(thread_id)
    await run((storage) => storage.importThread(rows))
    expect(await history(driver.saver(), thread_id)).toEqual(written)

    await saver.prune([thread_id], { strategy: "keep_latest" })
    const reader = driver.saver()
    expect(await history(reader, thread_id)).toEqual([written[0]])
    expect((await turn(reader, thread_id, 2)).messages).toHaveLength(9)
    await reader.close()
    await close()
  })

  it("damaged compressed text: an import refuses it, a read says CorruptedCheckpoint", async () => {
    const thread_id = `compressed-damaged-${driver.name}`
    const { close, run, saver } = await open(driver.layer(), false)
    await turn(saver, thread_id, 0)
    const rows = await run((storage) => storage.exportThread(thread_id))
    const piece = compressedPieces(rows)[0]!
    // A length it cannot stand for (a "bomb"), then a frame cut short.
    const bomb = new Uint8Array([
      StorageFormat.COMPRESSED_MARK,
      0x80,
      0x80,
      0x80,
      0x80,
      0x01,
      ...piece.bytes.subarray(3)
    ])
    for (const bytes of [bomb, piece.bytes.subarray(0, piece.bytes.byteLength - 9)]) {
      const changed = { ...rows, pieces: rows.pieces.map((p) => p === piece ? { ...p, bytes } : p) }
      const refused = await run((storage) => Effect.flip(storage.importThread(changed, { replace: true })))
      expect(refused).toBeInstanceOf(CheckpointError.InvalidInput)
      expect(refused.message).toContain("compressed text")
    }
    // Written past the check (as a damaged disk would), a read names the damage.
    const blob = rows.blobs.find((row) => row.type === StorageFormat.COMPRESSED)!
    const damaged = {
      ...rows,
      blobs: rows.blobs.map((row) =>
        row === blob ? { ...row, bytes: new Uint8Array([StorageFormat.COMPRESSED_MARK, 5, 1, 2, 3]) } : row
      )
    }
    await run((storage) => storage.deleteThread(thread_id))
    await run((storage) => storage.importThread(damaged))
    const met = await driver.saver().getTuple({ configurable: { thread_id } }).then(
      () => undefined,
      (error: unknown) => error
    )
    expect(met).toBeInstanceOf(CheckpointError.CorruptedCheckpoint)
    expect(String(met)).toContain("compressed text")
    await close()
  })
})
