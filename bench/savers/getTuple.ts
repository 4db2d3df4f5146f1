/**
 * getTuple latest on threads of 10, 100 and 1,000 steps, and by id on random
 * checkpoints of the longest.
 */
import { ChatThread, random, rotated, time } from "../support/workload.mjs"
import type { Run } from "./context.ts"

export const getTuple = async (run: Run): Promise<void> => {
  const {
    n,
    databases,
    subjects,
    encryptedSubject,
    measuredSpeedUps,
    table,
    target,
    ratioOf,
    notSlower,
    versusMemory,
    encryptedVs,
    log
  } = run
  log("getTuple latest at 10 / 100 / 1000 steps, and by id")
  const sizes = [10, 100, 1000].map(n)
  const byIdRows = subjects.map((subject) => ({ name: subject.name, samples: [] as Array<number> }))
  for (const size of sizes) {
    const threads = await Promise.all(subjects.map((subject) => new ChatThread(subject.saver, `read-${size}`).start()))
    const ids: Array<Array<string>> = subjects.map(() => [])
    for (let step = 0; step < size; step++) {
      for (const [i, thread] of threads.entries()) {
        await thread.superStep()
        ids[i]!.push(String(thread.config.configurable?.checkpoint_id))
      }
    }
    const rows = subjects.map((subject) => ({ name: subject.name, samples: [] as Array<number> }))
    // Enough reads that a p50 holds still from run to run: "no read slower than today" compares ratios of them.
    const reads = n(size >= 1000 ? 40 : 150)
    await databases.settle()
    for (let round = 0; round < reads; round++) {
      for (const [i, subject] of rotated(subjects, round)) {
        rows[i]!.samples.push(await time(() => subject.saver.getTuple({ configurable: { thread_id: `read-${size}` } })))
      }
    }
    table(`getTuple latest, thread of ${size} steps`, rows, "read")
    measuredSpeedUps[`getTuple latest at ${([10, 100, 1000] as const)[sizes.indexOf(size)]!} steps`] = ratioOf(rows)
    if (size === sizes[2]) {
      target(`getTuple latest at ${size} steps`, ratioOf(rows), 20)
      versusMemory(`getTuple latest at ${size} steps`, rows, "time", 1.5)
      notSlower(`getTuple latest at ${size} steps`, rows)
      encryptedVs(`getTuple latest at ${size} steps (p50)`, ratioOf(rows, encryptedSubject), 1.3)
      for (let round = 0; round < reads; round++) {
        const pick = Math.floor(random() * size)
        for (const [i, subject] of rotated(subjects, round)) {
          const config = {
            configurable: { thread_id: `read-${size}`, checkpoint_ns: "", checkpoint_id: ids[i]![pick]! }
          }
          byIdRows[i]!.samples.push(await time(() => subject.saver.getTuple(config)))
        }
      }
      table(`getTuple by id, random checkpoints of the ${size}-step thread`, byIdRows, "read")
      target(`getTuple by id at ${size} steps`, ratioOf(byIdRows), 10)
      measuredSpeedUps["getTuple by id at 1000 steps"] = ratioOf(byIdRows)
    }
  }
}
