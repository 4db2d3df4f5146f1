/**
 * A 3,000-step chat thread (this library only): put and putWrites, latency and
 * CPU, over its first and last steps, against MemorySaver's put of the same state.
 */
import { type BaseCheckpointSaver, MemorySaver } from "@langchain/langgraph-checkpoint"
import { EffectCheckpointSaver } from "../../src/index.ts"
import { tableBytes } from "../support/databases.ts"
import { makeDeltaFloor } from "../support/floors.ts"
import { mib, ms, p50, type Sample, sample } from "../support/measure.ts"
import { ChatThread, jsonBytes, serializedSize, time } from "../support/workload.mjs"
import type { Run } from "./context.ts"

export const longThread = async (run: Run): Promise<void> => {
  const { n, databases, sections, measuredStorage, putCpu, log } = run
  const size = n(3000)
  log(`a ${size}-step chat thread (this library; the official saver would store ~${mib(size * size * 400)} MiB)`)
  const { url, drop } = await databases.create("long")
  const saver = await EffectCheckpointSaver.fromConnString(url)
  const delta = await makeDeltaFloor(databases)
  const thread = await new ChatThread(saver, "long").start()
  // 100 steps at full scale (the window the put-CPU goal reads); over the last of them, MemorySaver puts the same
  // state (each on its own, dropped after: it would keep every step's whole array).
  const window = Math.max(2, Math.round(size / 30))
  const memory: BaseCheckpointSaver = new MemorySaver()
  const puts: Array<Sample> = []
  const writes: Array<Sample> = []
  const memoryPuts: Array<Sample> = []
  let information = 0
  for (let step = 0; step < size; step++) {
    const next = thread.nextMessage()
    writes.push(await sample(() => thread.putWrites(next)))
    puts.push(await sample(() => thread.put(next)))
    information += serializedSize(next)
    await delta.insert(jsonBytes(next))
    if (step >= size - window) {
      const { checkpoint, metadata, newVersions } = thread.last!
      memoryPuts.push(
        await sample(() => memory.put({ configurable: { thread_id: "long" } }, checkpoint, metadata, newVersions))
      )
      await memory.deleteThread("long")
    }
  }
  const reads: Array<number> = []
  for (let round = 0; round < 10; round++) {
    reads.push(await time(() => saver.getTuple({ configurable: { thread_id: "long" } })))
  }
  const stored = await tableBytes(url)
  const deltaFloor = await delta.bytes()
  await delta.close()
  await saver.close()
  await drop()
  const at = (samples: ReadonlyArray<Sample>, key: "ms" | "cpu") => p50(samples.map((s) => s[key]))
  sections.push([
    `### A ${size}-step chat thread (this library)`,
    "",
    "| measure | first " + window + " steps | last " + window + " steps |",
    "|---|---:|---:|",
    `| put p50 ms | ${ms(at(puts.slice(0, window), "ms"))} | ${ms(at(puts.slice(-window), "ms"))} |`,
    `| put CPU p50 ms | ${ms(at(puts.slice(0, window), "cpu"))} | ${ms(at(puts.slice(-window), "cpu"))} |`,
    `| MemorySaver.put of the same state, CPU p50 ms | | ${ms(at(memoryPuts, "cpu"))} |`,
    `| putWrites p50 ms | ${ms(at(writes.slice(0, window), "ms"))} | ${ms(at(writes.slice(-window), "ms"))} |`,
    `| putWrites CPU p50 ms | ${ms(at(writes.slice(0, window), "cpu"))} | ${ms(at(writes.slice(-window), "cpu"))} |`,
    "",
    `Storage: ${mib(stored)} MiB for ${mib(information)} MiB of messages added ` +
    `(${(stored / deltaFloor).toFixed(1)}x the delta floor of ${mib(deltaFloor)} MiB). ` +
    `getTuple latest at the end: p50 ${ms(p50(reads))} ms. A put checks that the elements it already stored ` +
    "were not changed in place (an O(n) walk, cheaper per element than serializing it); MemorySaver's " +
    "serializes the whole state. The official saver is not run here: it stores the whole array at every " +
    `step, about ${mib(size * size * 400)} MiB before compression.`
  ].join("\n"))
  putCpu.push({ steps: size, ours: at(puts.slice(-window), "cpu"), memory: at(memoryPuts, "cpu"), floor: NaN })
  measuredStorage["chat thread, 3000 steps"] = stored
}
