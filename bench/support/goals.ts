/**
 * The goals `npm run bench` checks, one line each (write cost against the
 * floors, concurrency, the embedded driver, storage, the soak, the invoke
 * loop, no regression), with this library's figures before the work that
 * set them ("today"), and the verdict table at the top of
 * bench/results/RESULTS.md.
 */
import type { Verdict } from "./measure.ts"

export const goalLines = {
  putCpu: "put CPU (p50, beyond the commit) below `MemorySaver.put`'s on the same state, at 300 and 3,000 steps",
  putWrites: "putWrites of one message ≤ 1.5× one commit of the same bytes",
  superStep: "super-step ≤ 2× the two-commit floor on a server where a commit costs ≤ 0.3 ms",
  concurrent: "32 concurrent threads ≥ 4× the official saver, p99 no worse than today's share",
  embedded: "PGlite super-step ≥ `SqliteSaver`'s and `getTuple` latest at 10 steps ≤ 5× its time (normalised)",
  storage: "a 300-turn chat graph stores less than the official saver with `MessagesDeltaValue`, either schema",
  soak: "a 10-minute soak with 32 writers and faults through PgBouncer: 0 lost, 0 rejected, heap after GC and " +
    "RSS at the end within 15% of their values at minute 2",
  invoke: "`StateGraph.invoke` loop ≥ 1.0× `MemorySaver` (an earlier target, kept)",
  noRegression: "no workload slower than today, every suite green"
} as const

export type GoalLine = keyof typeof goalLines

/** What `npm run soak` found (bench/results/soak.json): turns, and memory at the end over minute 2. */
export interface SoakVerdict {
  readonly date: string
  readonly minutes: number
  readonly writers: number
  readonly faults: number
  readonly acknowledged: number
  readonly lost: number
  readonly refused: number
  /** Heap after GC at the end over its value at minute 2. */
  readonly heap: number
  /** RSS at the end over its value at minute 2. */
  readonly rss: number
}

/**
 * "Today": this library's figures at the commit before the work on these
 * goals (f28af20), in a full `npm run bench` of 2026-12-04 on this machine, each
 * as a ratio to the official saver's in the same run (absolute latencies
 * follow the machine's load, the ratios far less); storage in MiB.
 */
export const today = {
  /** The 32-thread scenario's p99 over the official saver's (31.6 ms against 69.3 ms). */
  concurrentP99VsOfficial: 31.6 / 69.3,
  /** Each workload's speed-up over the official saver (p50 against p50; throughput for the 32 threads). */
  speedUps: {
    "chat thread super-step": 3.8,
    "32 concurrent threads (throughput)": 3.15,
    "StateGraph.invoke loop": 4.5,
    "list, limit 10 (300 checkpoints)": 28.1,
    "list, full (300 checkpoints)": 32.8,
    "getTuple latest at 10 steps": 2.6,
    "getTuple latest at 100 steps": 10.3,
    "getTuple latest at 1000 steps": 26.2,
    "getTuple by id at 1000 steps": 14.3
  },
  /** MiB: the 300-step chat thread's four tables, the 3,000-step thread's, and the 300-turn chat graph's. */
  storage: {
    "chat thread, 300 steps": 0.93,
    "chat thread, 3000 steps": 6.83,
    "chat graph, MessagesValue": 2.27,
    "chat graph, MessagesDeltaValue": 2.05
  }
} as const

export type WorkloadName = keyof typeof today.speedUps
export type StorageName = keyof typeof today.storage

/** A speed-up may be this much below today's before it counts as slower: run-to-run noise. */
export const noise = 1.05

/** The title of the verdict table, in the report and on the console. */
export const goalsTitle = "Goals: write cost, concurrency, embedded, storage, soak, invoke, no regression"

/** The verdict table: one row per goal, in their order; a goal no scenario measured says so. */
export const renderGoals = (verdicts: Partial<Record<GoalLine, Verdict>>) =>
  [
    "| goal | measured | target | |",
    "|---|---|---|---|",
    ...(Object.keys(goalLines) as Array<GoalLine>).map((line) => {
      const verdict = verdicts[line]
      return verdict === undefined
        ? `| ${goalLines[line]} | not measured | | **missed** |`
        : `| ${goalLines[line]} | ${verdict.value} | ${verdict.target} | ${verdict.met ? "met" : "**missed**"} |`
    })
  ].join("\n")
