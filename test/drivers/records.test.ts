/**
 * Record lists (storage format level 4) on every driver, with encryption off
 * and on: a record channel a node returns whole each turn (a coding agent's
 * `files`) stores each entry it ever held once, as lists store messages; an
 * edited entry is one new piece, a removed one none; every state reads back
 * as LangGraph's own `MemorySaver` shows it, in this process and a new one;
 * a record with an entry not worth a piece keeps the plain encoding.
 */
import { Annotation, END, START, StateGraph } from "@langchain/langgraph"
import { type BaseCheckpointSaver, MemorySaver } from "@langchain/langgraph-checkpoint"
import { type Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { CheckpointStorage, EffectCheckpointSaver, Encryption } from "../../src/index.ts"
import * as StorageFormat from "../../src/internal/StorageFormat.ts"
import type { ThreadRows } from "../../src/StorageDriver.ts"
import { keyOf } from "../scenarios/encryption.ts"
import { drivers } from "../support/drivers.ts"

const matrix = drivers("records")
afterAll(async () => {
  for (const driver of matrix.all) await driver.clear()
})

const file = (name: string, version: number) => `# ${name}, version ${version}\n`.padEnd(600, "some source text ")

/** What each turn does to the files: add one, and at turns 3 and 5 edit or remove one. */
const change = (files: Record<string, string>, turn: number): Record<string, string> => {
  const next = { ...files, [`src/${turn}.ts`]: file(`src/${turn}.ts`, 0) }
  if (turn === 3) next["src/1.ts"] = file("src/1.ts", 1)
  if (turn === 5) delete next["src/0.ts"]
  return next
}

const State = Annotation.Root({
  turn: Annotation<number>,
  files: Annotation<Record<string, string>>({ reducer: (_, next) => next, default: () => ({}) }),
  // A record with a number in it: no entry of its is worth a piece alone, so it stays plain.
  usage: Annotation<Record<string, unknown>>({ reducer: (_, next) => next, default: () => ({}) })
})

const agent = (saver: BaseCheckpointSaver) =>
  new StateGraph(State)
    .addNode("code", (state) => ({
      files: change(state.files, state.turn),
      usage: { tokens: state.turn * 10, model: "a model name that is long enough to be worth a piece of its own" }
    }))
    .addEdge(START, "code")
    .addEdge("code", END)
    .compile({ checkpointer: saver })

const TURNS = 7

const run = async (saver: BaseCheckpointSaver, thread_id: string, from = 0, to = TURNS) => {
  for (let turn = from; turn < to; turn++) await agent(saver).invoke({ turn }, { configurable: { thread_id } })
}

/** The thread's states as the graph shows them, newest first. */
const states = async (saver: BaseCheckpointSaver, thread_id: string) => {
  const found: Array<unknown> = []
  for await (const state of agent(saver).getStateHistory({ configurable: { thread_id } })) {
    found.push({ values: state.values, next: state.next, step: state.metadata?.step })
  }
  return JSON.parse(JSON.stringify(found)) as Array<unknown>
}

const ENCRYPTION = { keys: { k: keyOf(9) }, primary: "k" }

/** The pieces the `files` channel's rows (values and writes) refer to (a sealed list's trailer is none). */
const filePieces = (rows: ThreadRows) => {
  const stored = new Set(rows.pieces.map((piece) => StorageFormat.pieceKey(piece.hash)))
  return new Set(
    [...rows.blobs, ...rows.writes].filter((row) => row.channel === "files").flatMap((row) =>
      StorageFormat.references(row).filter((key) => stored.has(key))
    )
  )
}

describe.each(matrix.all)("record lists on $name", (driver) => {
  it.each([false, true])("store each entry once and read back as MemorySaver's (encrypted: %s)", async (encrypted) => {
    const thread_id = `records-${driver.name}-${encrypted}`
    const runtime = ManagedRuntime.make(
      encrypted ? driver.layer().pipe(Layer.provide(Encryption.layer(ENCRYPTION))) : driver.layer()
    )
    const saver = EffectCheckpointSaver.fromLayer(Layer.succeedContext(await runtime.context()))
    await run(saver, thread_id)
    const rows = await runtime.runPromise(
      CheckpointStorage.CheckpointStorage.use((storage) => storage.exportThread(thread_id))
    )
    const files = rows.blobs.filter((blob) => blob.channel === "files")
    const usage = rows.blobs.filter((blob) => blob.channel === "usage")
    expect(new Set(files.map((blob) => blob.type))).toEqual(
      new Set([encrypted ? `${StorageFormat.RECORD}+sealed` : StorageFormat.RECORD])
    )
    expect(usage.every((blob) => !StorageFormat.isList(blob.type.replace(StorageFormat.SEALED_SUFFIX, "")))).toBe(true)
    // Seven files added, one edited: eight entries in all, whatever the record held at each step.
    expect(filePieces(rows).size).toBe(TURNS + 1)
    // Each step's record after the first is a few hashes on its base, not the files again.
    for (const blob of files.slice(1)) expect(blob.bytes!.byteLength).toBeLessThan(300)
    const written = await states(saver, thread_id)
    const memory = new MemorySaver()
    await run(memory, "oracle")
    expect(written).toEqual(await states(memory, "oracle"))
    await saver.close()
    await runtime.dispose()

    // A process that holds nothing reads the same, and goes on.
    const fresh = driver.saver(encrypted ? { encryption: ENCRYPTION } : undefined)
    expect(await states(fresh, thread_id)).toEqual(written)
    await run(fresh, thread_id, TURNS, TURNS + 1)
    await run(memory, "oracle", TURNS, TURNS + 1)
    expect(await states(fresh, thread_id)).toEqual(await states(memory, "oracle"))
    await fresh.close()
  })

  it("copy, export and import, and prune keep every state", async () => {
    const thread_id = `records-lifecycle-${driver.name}`
    const saver = driver.saver()
    await run(saver, thread_id, 0, 4)
    const written = await states(saver, thread_id)
    await saver.copyThread(thread_id, `${thread_id}-copy`)
    expect(await states(driver.saver(), `${thread_id}-copy`)).toEqual(written)
    const runtime = ManagedRuntime.make(driver.layer())
    const use = <A, E>(f: (storage: CheckpointStorage.CheckpointStorage["Service"]) => Effect.Effect<A, E>) =>
      runtime.runPromise(CheckpointStorage.CheckpointStorage.use(f))
    const rows = await use((storage) => storage.exportThread(thread_id))
    await saver.deleteThread(thread_id)
    await use((storage) => storage.importThread(rows))
    expect(await states(driver.saver(), thread_id)).toEqual(written)
    await saver.prune([thread_id], { strategy: "keep_latest" })
    const reader = driver.saver()
    expect(await states(reader, thread_id)).toEqual([written[0]])
    await run(reader, thread_id, 4, 5)
    const state = await agent(reader).getState({ configurable: { thread_id } })
    expect(Object.keys(state.values.files)).toHaveLength(5)
    await Promise.all([reader.close(), saver.close(), runtime.dispose()])
  })
})
