/**
 * What this process remembers, and damage, told apart. A read names the
 * pieces and seeds this process holds, and the driver leaves their bytes
 * out; memory that lets them go before the answer is decoded is no damage:
 * the read runs again naming nothing, and the caller never sees it. A row
 * that is damaged is a `CorruptedCheckpoint` after one read.
 *
 * On every driver, with encryption off and on: real LangGraph graphs (a
 * chat whose messages are shared pieces, a DeltaValue history walked at
 * every turn) run turns while every memory of the process is emptied
 * between a driver's answer and its decoding, and read back as a reader
 * over the plain driver reads them; then a piece is deleted or garbled
 * behind the library's back, and a reader that names the others fails once.
 */
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages"
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph"
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint"
import { Effect, Layer } from "effect"
import type { SqlClient } from "effect/sql"
import { afterAll, describe, expect, it } from "vitest"
import { admin } from "../../harness/databases.ts"
import { framedGraph, long } from "../../harness/inspectedGraph.ts"
import * as Cockroach from "../../src/cockroach.ts"
import { CheckpointStorage, EffectCheckpointSaver, type SaverOptions } from "../../src/index.ts"
import * as Bounded from "../../src/internal/codec/Bounded.ts"
import * as SqlDriver from "../../src/internal/sql/SqlDriver.ts"
import * as Tables from "../../src/internal/sql/Tables.ts"
import { unpackHashes } from "../../src/internal/StorageFormat.ts"
import * as Pglite from "../../src/pglite.ts"
import * as Postgres from "../../src/postgres.ts"
import type { Dialect } from "../../src/SqlOptions.ts"
import type { StorageDriver, StoredCheckpoint } from "../../src/StorageDriver.ts"
import { keyOf } from "../scenarios/encryption.ts"
import { type Driver, type DriverName, drivers } from "../support/drivers.ts"

const matrix = drivers("held")
afterAll(async () => {
  for (const driver of matrix.all) await driver.clear()
})

const encryption: SaverOptions = { encryption: { keys: { k1: keyOf(5) }, primary: "k1" } }

/** A chat whose every message is long enough to be a piece of its own. */
const chat = (saver: BaseCheckpointSaver) =>
  new StateGraph(MessagesAnnotation)
    .addNode("model", (state) => ({ messages: [new AIMessage(long(`reply ${state.messages.length}`))] }))
    .addEdge(START, "model")
    .addEdge("model", END)
    .compile({ checkpointer: saver })

const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

/** A storage over the file's store of `driver`, its driver `wrap`ped (the store migrated by the matrix's layer first). */
const wrapped = (driver: Driver, wrap: (inner: StorageDriver) => StorageDriver) => {
  const over = (client: Layer.Layer<SqlClient.SqlClient, unknown>, dialect: Dialect, schema?: string) =>
    CheckpointStorage.layerDriver(Effect.map(SqlDriver.make(Tables.make(schema), { dialect }), wrap)).pipe(
      Layer.provide(client)
    )
  switch (driver.name) {
    case "memory":
      return CheckpointStorage.layerDriver(Effect.sync(() => wrap(matrix.memoryDriver())))
    case "pglite":
      return Layer.unwrap(
        Effect.promise(matrix.pgliteInstance).pipe(
          Effect.map((pglite) => over(Pglite.layerSqlClient({ pglite }), "postgres"))
        )
      )
    case "postgres":
      return over(Postgres.layerSqlClient({ url: matrix.databaseUrl(), poolSize: 2 }), "postgres")
    case "cockroach dialect":
      return over(Cockroach.layerSqlClient({ url: matrix.crdb.url(), poolSize: 2 }), "cockroach", matrix.crdb.schema)
  }
}

/** `stored` without the pieces `named` names: what the SQL drivers send (the memory driver sends all). */
const leftOut = (stored: StoredCheckpoint, named: Uint8Array): StoredCheckpoint => {
  const left = new Set(unpackHashes(named))
  return left.size === 0 ? stored : { ...stored, pieces: new Map([...stored.pieces].filter(([key]) => !left.has(key))) }
}

/**
 * Drivers that leave out what a read names, and, on every other read that
 * names something, empty every memory of the process once they answered:
 * between the driver's answer and its decoding. Counts what they forgot,
 * and the reads of the same place run again naming nothing after.
 */
const forgetting = () => {
  let named = 0
  const counts = { forgot: 0, again: 0 }
  const pending = new Set<string>()
  const answered = <A>(place: string, names: boolean, answer: A) => {
    if (!names && pending.delete(place)) counts.again++
    if (names && ++named % 2 === 1) {
      Bounded.forgetAll()
      pending.add(place)
      counts.forgot++
    }
    return answer
  }
  const wrap = (inner: StorageDriver): StorageDriver => ({
    ...inner,
    getTuple: (location, known) =>
      inner.getTuple(location, known).pipe(Effect.map((found) =>
        answered(
          `tuple ${JSON.stringify(location)}`,
          known.byteLength > 0,
          found._tag === "Some" ? { ...found, value: leftOut(found.value, known) } : found
        )
      )),
    ancestors: (location, channels, known) =>
      inner.ancestors(location, channels, known).pipe(Effect.map((found) =>
        answered(
          `walk ${JSON.stringify(location)}`,
          known.blobs.length > 0 || known.pieces.byteLength > 0,
          { ...found, chain: found.chain.map((stored) => leftOut(stored, known.pieces)) }
        )
      ))
  })
  return { wrap, counts }
}

/** An empty store of `driver`, migrated by the matrix's own layer. */
const migrated = async (driver: Driver) => {
  await driver.clear()
  const saver = driver.saver()
  await saver.getTuple({ configurable: { thread_id: "none" } })
  await saver.close()
}

/** What a reader sees of a thread of `graph`: its state and its whole history. */
const readThread = async (
  graph: ReturnType<typeof chat> | ReturnType<typeof framedGraph>,
  thread_id: string
) => {
  const config = { configurable: { thread_id } }
  const history: Array<unknown> = []
  for await (const snapshot of graph.getStateHistory(config)) history.push(plain([snapshot.values, snapshot.config]))
  return { state: plain((await graph.getState(config)).values), history }
}

describe.each(matrix.all.map((driver) => [driver.name, driver] as const))("held on %s", (name, driver) => {
  for (const [label, options] of [["encryption off", {}], ["encryption on", encryption]] as const) {
    it(`memory emptied between each read's answer and its decoding: no CorruptedCheckpoint, every read as a reference reads it (${label})`, async () => {
      await migrated(driver)
      const { counts, wrap } = forgetting()
      const saver = EffectCheckpointSaver.fromLayer(wrapped(driver, wrap), options)
      const reference = driver.saver(options)
      try {
        const threads = { chat: `chat-${name}`, framed: `framed-${name}` }
        for (let turn = 0; turn < 6; turn++) {
          const said = await chat(saver).invoke(
            { messages: [new HumanMessage(long(`question ${turn}`))] },
            { configurable: { thread_id: threads.chat } }
          )
          expect(said.messages).toHaveLength(2 * (turn + 1))
          const framed = await framedGraph(saver).invoke(
            { messages: [new HumanMessage(long(`framed ${turn}`))] },
            { configurable: { thread_id: threads.framed } }
          )
          expect((framed.messages as Array<BaseMessage>).map((message) => message.getType())).toEqual(
            Array.from({ length: 2 * (turn + 1) }, (_, i) => i % 2 === 0 ? "human" : "ai")
          )
          // Reads between the turns, forgetting as they go, as another reader's.
          expect(await readThread(chat(saver), threads.chat)).toEqual(await readThread(chat(reference), threads.chat))
          expect(await readThread(framedGraph(saver), threads.framed)).toEqual(
            await readThread(framedGraph(reference), threads.framed)
          )
        }
        // Reads named what they held, forgot it, and every one that did ran again naming nothing.
        expect(counts.forgot).toBeGreaterThan(5)
        expect(counts.again).toBe(counts.forgot)
      } finally {
        await saver.close()
        await reference.close()
      }
    })
  }
})

/** The piece hashes `thread_id` stores. */
const pieceHashes = async (name: DriverName, thread_id: string): Promise<Array<string>> => {
  if (name === "memory") {
    const rows = await Effect.runPromise(matrix.memoryDriver().threadRows(thread_id))
    return rows.pieces.map((piece) => Buffer.from(piece.hash).toString("hex"))
  }
  const { rows } = await sql(name, `SELECT encode(hash, 'hex') AS hash FROM ${table(name)} WHERE thread_id = $1`, [
    thread_id
  ])
  return rows.map((row: { hash: string }) => row.hash)
}

/** Deletes (`bytes` undefined) or rewrites a piece of `thread_id`, behind the library's back. */
const damage = async (name: DriverName, thread_id: string, hash: string, bytes?: Uint8Array) => {
  if (name === "memory") {
    const memory = matrix.memoryDriver()
    const rows = await Effect.runPromise(memory.threadRows(thread_id))
    const pieces = rows.pieces.flatMap((piece) =>
      Buffer.from(piece.hash).toString("hex") !== hash ? [piece] : bytes === undefined ? [] : [{ ...piece, bytes }]
    )
    await Effect.runPromise(memory.writeThread({ ...rows, pieces }))
    return
  }
  const where = `WHERE thread_id = $1 AND hash = decode($2, 'hex')`
  await (bytes === undefined
    ? sql(name, `DELETE FROM ${table(name)} ${where}`, [thread_id, hash])
    : sql(name, `UPDATE ${table(name)} SET blob = $3 ${where}`, [thread_id, hash, bytes]))
}

const table = (name: DriverName) => Tables.make(name === "cockroach dialect" ? matrix.crdb.schema : undefined).pieces

const sql = async (name: DriverName, text: string, values: Array<unknown>): Promise<{ rows: Array<any> }> => {
  if (name === "pglite") return (await matrix.pgliteInstance()).query(text, values)
  if (name === "postgres") return admin((client) => client.query(text, values), matrix.databaseUrl())
  return matrix.crdb.admin((client) => client.query(text, values))
}

/** Drivers that record each read of checkpoints: `getTuple` (whether it named pieces) and `list`. */
const counting = () => {
  const calls: Array<string> = []
  const wrap = (inner: StorageDriver): StorageDriver => ({
    ...inner,
    getTuple: (location, known) =>
      Effect.suspend(() => {
        calls.push(`getTuple naming ${known.byteLength > 0 ? "some" : "none"}`)
        return inner.getTuple(location, known)
      }),
    list: (selection) => {
      calls.push("list")
      return inner.list(selection)
    }
  })
  return { wrap, calls }
}

describe.each(matrix.all.map((driver) => [driver.name, driver] as const))("damage on %s", (name, driver) => {
  for (const [label, options] of [["encryption off", {}], ["encryption on", encryption]] as const) {
    for (const kind of ["deleted", "garbled"] as const) {
      it(`a piece ${kind} behind the library's back is a CorruptedCheckpoint after exactly one read, by a reader naming the others (${label})`, async () => {
        await migrated(driver)
        const thread_id = `damaged-${name}-${kind}`
        const config = { configurable: { thread_id } }
        const writer = driver.saver(options)
        const { calls, wrap } = counting()
        const reader = EffectCheckpointSaver.fromLayer(wrapped(driver, wrap), options)
        try {
          const turn = (i: number) =>
            chat(writer).invoke({ messages: [new HumanMessage(long(`question ${i}`))] }, config)
          for (let i = 0; i < 3; i++) await turn(i)
          // The reader holds every piece stored so far; its next read names them.
          expect((await reader.getTuple(config))?.checkpoint.channel_values.messages).toHaveLength(6)
          const before = new Set(await pieceHashes(name, thread_id))
          await turn(3)
          // The new messages' pieces (and the frame of the turn's input), which the reader never held.
          const added = (await pieceHashes(name, thread_id)).filter((hash) => !before.has(hash))
          expect(added.length).toBeGreaterThan(1)
          for (const hash of added) {
            await damage(name, thread_id, hash, kind === "deleted" ? undefined : Buffer.from("{not json"))
          }

          calls.length = 0
          const refused = await reader.getTuple(config).then(() => undefined, (error: unknown) => error)
          expect(refused).toMatchObject({ _tag: "CorruptedCheckpoint", thread_id })
          expect(calls).toEqual(["getTuple naming some"])
          // A list reads it once too.
          calls.length = 0
          await expect((async () => {
            for await (const _ of reader.list(config)) continue
          })()).rejects.toMatchObject({ _tag: "CorruptedCheckpoint" })
          expect(calls).toEqual(["list"])
          // A list of every thread fails there too, naming the thread and the checkpoint that cannot be read.
          await expect((async () => {
            for await (const _ of reader.list({})) continue
          })()).rejects.toMatchObject({
            _tag: "CorruptedCheckpoint",
            thread_id,
            checkpoint_id: (refused as { checkpoint_id: string }).checkpoint_id
          })
        } finally {
          await writer.close()
          await reader.close()
        }
      })
    }
  }
})
