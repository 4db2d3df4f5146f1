/**
 * The cost of encryption at rest: two savers, with and without, on databases of
 * their own, alternating super-steps of chat threads.
 */
import { EffectCheckpointSaver } from "../../src/index.ts"
import { ChatThread, rotated, time } from "../support/workload.mjs"
import type { Run } from "./context.ts"

export const encryption = async (run: Run): Promise<void> => {
  const { n, databases, benchKey, table, encryptedVs, log } = run
  // Early, while the process holds little: with all five subjects in one
  // heap (MemorySaver's 33 MB of state, the plain encoding's garbage), every
  // allocation pays for collections the others caused, and the subject
  // writing 40x more bytes per step leaves the server flushing as the next
  // one runs. Two savers, on databases of their own, alternating.
  const steps = n(300)
  const rounds = 5
  log(`encryption overhead: ${rounds} x ${steps} super-steps, with and without encryption, alternating`)
  const pair = await Promise.all(
    (["effect_pair", "effect_pair_encrypted"] as const).map(async (name, i) => {
      const { url } = await databases.create(name)
      return EffectCheckpointSaver.fromConnString(
        url,
        i === 0 ? {} : { encryption: { keys: { k1: benchKey }, primary: "k1" } }
      )
    })
  )
  const rows = pair.map((_, i) => ({ name: i === 0 ? "unencrypted" : "encrypted", samples: [] as Array<number> }))
  const totals = [0, 0]
  for (let round = 0; round < rounds; round++) {
    const threads = await Promise.all(pair.map((saver) => new ChatThread(saver, `pair-${round}`).start()))
    for (let step = 0; step < steps; step++) {
      for (const [i, thread] of rotated(threads, step)) {
        const next = thread.nextMessage()
        const elapsed = await time(() => thread.superStep(next))
        rows[i]!.samples.push(elapsed)
        totals[i]! += elapsed
      }
    }
  }
  await Promise.all(pair.map((saver) => saver.close()))
  table(`Encryption overhead: ${rounds} chat threads of ${steps} super-steps, alternating`, rows, "super-step")
  encryptedVs("super-step, chat thread (total time, paired)", totals[1]! / totals[0]!, 1.15)
}
