/**
 * 32 threads at once, in rounds taking turns: throughput and p99, group commit
 * against none and against batches of every waiting call.
 */
import { EffectCheckpointSaver } from "../../src/index.ts"
import * as Postgres from "../../src/postgres.ts"
import { today } from "../support/goals.ts"
import { ms, percentile, type Row } from "../support/measure.ts"
import { ChatThread, message, rotated, time } from "../support/workload.mjs"
import type { Run, Subject } from "./context.ts"

export const concurrent = async (run: Run): Promise<void> => {
  const { scale, n, databases, subjects, verdicts, goals, measuredSpeedUps, table, target, log } = run
  const threadCount = 32
  const steps = n(50)
  const rounds = 5
  log(`${threadCount} threads x ${steps} steps concurrently, ${rounds} rounds taking turns`)
  // For comparison: every call its own statement (the behaviour before group commit); and batches
  // of every waiting call, two in flight (the first group commit's defaults).
  const alone = EffectCheckpointSaver.fromLayer(
    Postgres.layer({ url: (await databases.create("effect_alone")).url, groupCommit: false })
  )
  const unbounded = EffectCheckpointSaver.fromLayer(
    Postgres.layer({
      url: (await databases.create("effect_unbounded")).url,
      groupCommit: { concurrency: 2, maxBatch: 256 }
    })
  )
  const concurrent: Array<Subject> = [
    ...subjects,
    {
      name: "EffectCheckpointSaver, group commit off",
      saver: alone,
      storageBytes: async () => 0,
      close: () => alone.close()
    },
    {
      name: "EffectCheckpointSaver, batches of every waiting call, 2 in flight",
      saver: unbounded,
      storageBytes: async () => 0,
      close: () => unbounded.close()
    }
  ]
  const rows: Array<{ name: string; samples: Array<number>; total: number; count: number }> = concurrent.map((
    subject
  ) => ({
    name: subject.name,
    samples: [],
    total: 0,
    count: 0
  }))
  for (let round = 0; round < rounds; round++) {
    for (const [i, subject] of rotated(concurrent, round)) {
      const row = rows[i]!
      // The models' answers, made before the round is timed.
      const answers = Array.from(
        { length: threadCount },
        () => Array.from({ length: steps }, (_, step) => message(step))
      )
      row.total += await time(() =>
        Promise.all(answers.map(async (messages, t) => {
          const thread = await new ChatThread(subject.saver, `concurrent-${round}-${t}`).start()
          for (const next of messages) row.samples.push(await time(() => thread.superStep(next)))
        }))
      )
      row.count += threadCount * steps
    }
  }
  await alone.close()
  await unbounded.close()
  table(`${threadCount} threads x ${steps} super-steps, concurrently (${rounds} rounds)`, rows, "super-step")
  const [a, b] = rows
  target(`${threadCount} concurrent threads (throughput)`, b!.total / a!.total, 4)
  const p99 = (row: Row) => percentile(row.samples, 99)
  const [off, unboundedRow] = rows.slice(-2) as [Row & { total: number }, Row & { total: number }]
  verdicts.push(
    `| ${threadCount} concurrent threads, p99 with group commit vs without | ${
      (p99(a!) / p99(off)).toFixed(2)
    }x | ≤ 1x | ${p99(a!) <= p99(off) ? "met" : "**missed**"} |`
  )
  verdicts.push(
    `| ${threadCount} concurrent threads, throughput vs batches of every waiting call | ${
      (unboundedRow.total / a!.total).toFixed(2)
    }x | ≥ 1x | ${unboundedRow.total >= a!.total ? "met" : "**missed**"} |`
  )
  const speedUp = b!.total / a!.total
  // The p99 against the official saver's in the same run: absolute latencies follow the machine's load.
  const p99VsOfficial = p99(a!) / p99(b!)
  goals.concurrent = {
    value:
      `${speedUp.toFixed(2)}x the official saver's throughput; p99 ${ms(p99(a!))} ms, ${
        p99VsOfficial.toFixed(2)
      }x the official saver's (today ${today.concurrentP99VsOfficial.toFixed(2)}x)` +
      (scale === 1 ? "" : "; a scaled run: today's p99 is of 50 steps a thread"),
    target: `≥ 4x, p99 ≤ today's share of the official saver's`,
    met: speedUp >= 4 && p99VsOfficial <= today.concurrentP99VsOfficial
  }
  measuredSpeedUps["32 concurrent threads (throughput)"] = speedUp
}
