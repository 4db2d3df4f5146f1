/**
 * The goals no scenario of their own measures: put's CPU against
 * MemorySaver's (from the chat-thread cases' figures), the soak (from
 * bench/results/soak.json, which `npm run soak` writes) and no regression
 * against today's figures. Run after every other case.
 */
import { existsSync, readFileSync } from "node:fs"
import { noise, type SoakVerdict, type StorageName, today, type WorkloadName } from "../support/goals.ts"
import { mib, ms } from "../support/measure.ts"
import { resultPath } from "../support/report.ts"
import type { Run } from "./context.ts"

/** put's CPU (p50, ms) against MemorySaver's on the same state, at each thread length the cases measured. */
export const putCpuGoal = (run: Run): void => {
  const { goals, putCpu } = run
  // put's CPU against MemorySaver's on the same state (its whole serialization), at each length.
  goals.putCpu = {
    value: putCpu.map(({ floor, memory, ours, steps }) =>
      `${ms(ours)} ms vs ${ms(memory)} ms at ${steps} steps (${(ours / memory).toFixed(2)}x` +
      (Number.isNaN(floor) ? ")" : `; a commit's CPU: ${ms(floor)} ms)`)
    ).join("; "),
    target: "< 1x at each",
    met: putCpu.length === 2 && putCpu.every(({ memory, ours }) => ours < memory)
  }
}

/** The soak's goal, from what `npm run soak` last wrote. */
export const soakGoal = (run: Run): void => {
  const { goals } = run
  // bench/results/soak.json, as `npm run soak` left it: only a run of 10 minutes, 32 writers and faults counts.
  const file = resultPath("soak.json")
  const soak = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) as SoakVerdict : undefined
  const complete = soak !== undefined && soak.minutes >= 10 && soak.writers >= 32 && soak.faults > 0
  goals.soak = soak === undefined
    ? { value: "not run (`npm run soak` writes bench/results/soak.json)", target: "", met: false }
    : {
      value: `${soak.date}, ${soak.minutes} min, ${soak.writers} writers, ${soak.faults} faults: ` +
        `${soak.acknowledged} turns, ${soak.lost} lost, ${soak.refused} refused; heap ${soak.heap.toFixed(2)}x, ` +
        `RSS ${soak.rss.toFixed(2)}x from minute 2 to the end (bench/results/SOAK.md)`,
      target: "0 lost, 0 refused, ≤ 1.15x each",
      met: complete && soak.lost === 0 && soak.refused === 0 && soak.heap <= 1.15 && soak.rss <= 1.15
    }
}

/** No workload slower, no storage larger, than today's. */
export const noRegressionGoal = (run: Run): void => {
  const { scale, goals, measuredSpeedUps, measuredStorage } = run
  // Against this library before the work on these goals (bench/support/goals.ts `today`): speed-ups over the official
  // saver in the same run (absolute latencies follow the machine's load), and storage; a ratio above 1:
  // slower, or larger, than today.
  const slower = (Object.keys(today.speedUps) as Array<WorkloadName>).map((name) => ({
    name,
    ratio: today.speedUps[name] / (measuredSpeedUps[name] ?? NaN)
  }))
  const larger = (Object.keys(today.storage) as Array<StorageName>).map((name) => ({
    name,
    ratio: (measuredStorage[name] ?? NaN) / (today.storage[name] * 1024 * 1024)
  }))
  const worst = (ratios: ReadonlyArray<{ name: string; ratio: number }>) =>
    ratios.reduce((a, b) => (b.ratio > a.ratio || Number.isNaN(b.ratio) ? b : a))
  const slowest = worst(slower)
  const largest = worst(larger)
  goals.noRegression = {
    value: `slowest vs today: ${slowest.name} ${slowest.ratio.toFixed(2)}x; largest storage vs today: ` +
      `${largest.name} ${largest.ratio.toFixed(2)}x` + (scale === 1 ? "" : " (a scaled run: not comparable)") +
      "; suites: not run by the bench",
    target: `speed-ups over the official saver ≥ today's / ${noise} (noise), storage ≤ today's; \`npm test\` green`,
    // Today's storage is in MiB to two decimals: the same rounding of ours is compared.
    met: slower.every(({ ratio }) => ratio <= noise) &&
      larger.every(({ name }) => Number(mib(measuredStorage[name] ?? NaN)) <= today.storage[name])
  }
}
