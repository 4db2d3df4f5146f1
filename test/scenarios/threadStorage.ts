/**
 * `threadStorage` on a saver: where a real graph's thread keeps its bytes
 * (checkpoints, channel values by channel with the shared pieces, writes by
 * channel), the sections adding up, stored and uncompressed, growing with a turn, the same for a copy.
 */
import { HumanMessage } from "@langchain/core/messages"
import { describe, expect, it } from "vitest"
import type { StorageSection, ThreadStorage } from "../../src/CheckpointStorage.ts"
import { CheckpointError, type EffectCheckpointSaver } from "../../src/index.ts"
import { populate } from "./lifecycle.ts"

const sum = (sections: Readonly<Record<string, StorageSection>>) =>
  Object.values(sections).reduce((total, section) => ({
    count: total.count + section.count,
    bytes: total.bytes + section.bytes,
    raw_bytes: total.raw_bytes + section.raw_bytes
  }), { count: 0, bytes: 0, raw_bytes: 0 })

/** The report's sections add up to its totals, stored and uncompressed. */
const addsUp = (report: ThreadStorage) => {
  const values = sum(report.channel_values.by_channel)
  const { shared_pieces: pieces } = report.channel_values
  expect(report.channel_values.count).toBe(values.count)
  expect(report.channel_values.bytes).toBe(values.bytes + pieces.bytes)
  expect(report.channel_values.raw_bytes).toBe(values.raw_bytes + pieces.raw_bytes)
  expect(sum(report.pending_writes.by_channel)).toEqual({
    count: report.pending_writes.count,
    bytes: report.pending_writes.bytes,
    raw_bytes: report.pending_writes.raw_bytes
  })
  const sections = [report.checkpoints, report.channel_values, report.pending_writes]
  expect(report.total_bytes).toBe(sections.reduce((total, section) => total + section.bytes, 0))
  expect(report.total_raw_bytes).toBe(sections.reduce((total, section) => total + section.raw_bytes, 0))
  // Compressed where that saves (storage format level 4), never larger.
  for (const section of [...sections, pieces]) expect(section.raw_bytes).toBeGreaterThanOrEqual(section.bytes)
}

export const threadStorageScenarios = (name: string, make: () => Promise<EffectCheckpointSaver>) =>
  describe(`threadStorage on ${name}`, () => {
    it("says where a real graph's bytes are: checkpoints, values and writes by channel, adding up", async () => {
      const saver = await make()
      const thread_id = `storage-${name}-${Date.now()}`
      const graph = await populate(saver, thread_id)
      const report = await saver.threadStorage(thread_id)
      expect(report.thread_id).toBe(thread_id)
      addsUp(report)
      // Every checkpoint of every namespace (the subgraph's too), as `list` lists them.
      let listed = 0
      for await (const _ of saver.list({ configurable: { thread_id } })) listed++
      expect(report.checkpoints.count).toBe(listed)
      // `log` stores a snapshot every 3 steps; `messages` (a MessagesDeltaValue) lives in its writes, whose
      // lists of 300-byte questions are shared: their text is in the pieces.
      expect(report.channel_values.by_channel.log!.bytes).toBeGreaterThan(0)
      expect(report.channel_values.by_channel.messages).toBeUndefined()
      expect(report.pending_writes.by_channel.messages!.count).toBeGreaterThan(0)
      // Their text, that is: stored compressed, the questions (one phrase repeated) take less.
      expect(report.channel_values.shared_pieces.raw_bytes).toBeGreaterThan(7 * 300)
      expect(report.channel_values.shared_pieces.bytes).toBeLessThan(report.channel_values.shared_pieces.raw_bytes)

      // A turn adds its question (about 300 bytes) to what the thread stores.
      await graph.invoke({ messages: [new HumanMessage("one more ".repeat(40))] }, {
        configurable: { thread_id }
      })
      const after = await saver.threadStorage(thread_id)
      addsUp(after)
      expect(after.total_raw_bytes).toBeGreaterThan(report.total_raw_bytes + 300)
      expect(after.total_bytes).toBeGreaterThan(report.total_bytes)
      expect(after.checkpoints.count).toBeGreaterThan(report.checkpoints.count)

      // A copy holds the same rows.
      await saver.copyThread(thread_id, `${thread_id}-copy`)
      const copy = await saver.threadStorage(`${thread_id}-copy`)
      expect({ ...copy, thread_id }).toEqual(after)

      const missing = await saver.threadStorage(`${thread_id}-none`).catch((error: unknown) => error)
      expect(missing).toBeInstanceOf(CheckpointError.ThreadNotFound)
    }, 60_000)
  })
