/**
 * Issue 27's "Done when" list, line by line as the issue words it, with
 * what this library did on the same run as of the release before it
 * ("today"), and the verdict table at the top of bench/RESULTS.md.
 */
import type { Verdict } from "./measure.ts"

export const doneWhenLines = {
  floor: "super-step p50 ≤ 1.5× the two-commit floor of the same run on PostgreSQL",
  longThread: "put cost of the last 100 steps of a 3,000-step thread ≤ 1.25× the first 100",
  invoke: "invoke loop ≥ 1.0× MemorySaver's speed",
  embedded: "PGlite super-step and `getTuple` latest @1,000 at least SqliteSaver's (normalised)",
  concurrent: "32 concurrent threads ≥ 4× the official saver, with the p99 no worse than today",
  deltaChannel: "a 300-turn chat graph stores less than the official saver with `MessagesDeltaValue` does in the " +
    "same run, with either state schema; with `MessagesDeltaValue` it runs at ≥ 0.9× its `MessagesValue` speed",
  noRegression: "no read workload slower than today, storage no larger, every suite green"
} as const

export type DoneWhenLine = keyof typeof doneWhenLines

/**
 * "Today": EffectCheckpointSaver's figures in bench/RESULTS.md as committed
 * before issue 27 (the full-scale run of 2026-11-30, commit c5d783f), which
 * the "no worse than today" lines are read against. Latencies are
 * kept as ratios to the official saver's in that run, and compared with the
 * same ratios of the new run: absolute milliseconds follow the machine's
 * load (a busy machine reads everything slower), its ratios far less.
 */
export const today = {
  /**
   * The 32-thread scenario's p99 over the official saver's in the same run
   * (21.1 ms against 57.4 ms): the share, as absolute latencies follow the
   * machine's load.
   */
  concurrentP99VsOfficial: 21.1 / 57.4,
  /** Each read's speed-up over the official saver (p50 against p50, same run). */
  reads: {
    "list, limit 10 (300 checkpoints)": 23.8,
    "list, full (300 checkpoints)": 24.3,
    "getTuple latest at 10 steps": 2.6,
    "getTuple latest at 100 steps": 10.2,
    "getTuple latest at 1000 steps": 31.3,
    "getTuple by id at 1000 steps": 9.8
  },
  /** MiB: the 300-step chat thread's four tables, and the 3,000-step thread's. */
  storage: {
    "chat thread, 300 steps": 0.93,
    "chat thread, 3000 steps": 6.83
  }
} as const

export type ReadName = keyof typeof today.reads
export type StorageName = keyof typeof today.storage

/** A read's speed-up may be this much below today's before it counts as slower: run-to-run noise. */
export const readNoise = 1.05

/** The verdict table: one row per line of the issue, in its order; a line no scenario measured says so. */
export const renderDoneWhen = (verdicts: Partial<Record<DoneWhenLine, Verdict>>) =>
  [
    "| done when (issue 27) | measured | target | |",
    "|---|---|---|---|",
    ...(Object.keys(doneWhenLines) as Array<DoneWhenLine>).map((line) => {
      const verdict = verdicts[line]
      return verdict === undefined
        ? `| ${doneWhenLines[line]} | not measured | | **missed** |`
        : `| ${doneWhenLines[line]} | ${verdict.value} | ${verdict.target} | ${verdict.met ? "met" : "**missed**"} |`
    })
  ].join("\n")
