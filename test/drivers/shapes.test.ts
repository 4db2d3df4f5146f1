/**
 * A lone `put` or `putWrites` spells its rows out as scalar parameters, one
 * statement per shape, up to `SPELLED` rows of a kind, and sends more as
 * arrays (see `sql/statements/Rows.ts`): every shape stores what
 * `MemorySaver` stores of the same calls, on every driver.
 */
import { type BaseCheckpointSaver, type Checkpoint, MemorySaver, uuid6 } from "@langchain/langgraph-checkpoint"
import { afterAll, describe, expect, it } from "vitest"
import { SPELLED } from "../../src/internal/sql/statements/Rows.ts"
import { drivers } from "../support/drivers.ts"

const matrix = drivers("shapes")
afterAll(async () => {
  for (const driver of matrix.all) await driver.clear()
})

/** A list long enough to be stored shared: its elements are pieces. */
const list = (label: string, length: number) =>
  Array.from({ length }, (_, i) => ({ text: `${label} ${i}: `.padEnd(120, "words ") }))

/** `n` list channels (`n` blobs, each adding pieces), then each extended (`n` bases required), then `n` writes. */
const run = async (saver: BaseCheckpointSaver, thread_id: string, n: number, ids: readonly [string, string]) => {
  const channels = Array.from({ length: n }, (_, i) => `c${i}`)
  const step = (id: string, length: number): Checkpoint => ({
    v: 4,
    id,
    ts: new Date(0).toISOString(),
    channel_values: Object.fromEntries(channels.map((channel) => [channel, list(channel, length)])),
    channel_versions: Object.fromEntries(channels.map((channel) => [channel, length])),
    versions_seen: {}
  })
  const versions = (length: number) => Object.fromEntries(channels.map((channel) => [channel, length]))
  const first = await saver.put(
    { configurable: { thread_id, checkpoint_ns: "" } },
    step(ids[0], 3),
    { source: "input", step: -1, parents: {} },
    versions(3)
  )
  const second = await saver.put(first, step(ids[1], 4), { source: "loop", step: 0, parents: {} }, versions(4))
  await saver.putWrites(
    second,
    Array.from({ length: Math.max(n, 1) }, (_, i) => [`w${i}`, list(`write ${i}`, 3)] as [string, unknown]),
    "task"
  )
  const tuples = []
  for await (const tuple of saver.list({ configurable: { thread_id } })) {
    tuples.push({ checkpoint: tuple.checkpoint, writes: tuple.pendingWrites })
  }
  return JSON.parse(JSON.stringify(tuples)) as unknown
}

describe.each(matrix.all)("every shape of a lone call on $name", (driver) => {
  it("stores what MemorySaver stores, rows spelled out or sent as arrays", async () => {
    const saver = driver.saver()
    try {
      for (const n of [0, 1, SPELLED, SPELLED + 1, 2 * SPELLED + 1]) {
        const thread_id = `shape-${n}`
        const ids = [uuid6(1), uuid6(2)] as const
        expect(await run(saver, thread_id, n, ids), `${n} of each`).toEqual(
          await run(new MemorySaver(), thread_id, n, ids)
        )
      }
    } finally {
      await saver.close()
    }
  })
})
