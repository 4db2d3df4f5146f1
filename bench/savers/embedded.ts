/**
 * PGlite against SqliteSaver (in a child process), each normalised by a MemorySaver
 * beside it: super-steps of a chat thread and getTuple latest. Runs first, while
 * the heap is nearly empty (as the SQLite child's is).
 */
import { runEmbedded } from "../support/embedded.ts"
import { ms, p50 } from "../support/measure.ts"
import { packageVersion } from "../support/report.ts"
import type { Run } from "./context.ts"

export const embedded = async (run: Run): Promise<void> => {
  const { n, sections, goals, log } = run
  // First of all, while this process's heap is nearly empty (as the SQLite child's is): the MemorySaver
  // each side is normalised by allocates the most, and would pay for every scenario's garbage later.
  const parameters = { steps: n(300), readSizes: [10, 1000].map(n), reads: n(100) }
  log(
    `embedded: PGlite vs SqliteSaver (child process), each beside a MemorySaver: ${parameters.steps} super-steps, ` +
      `getTuple latest of threads of ${parameters.readSizes.join(" and ")} steps`
  )
  const { pglite, sqlite } = await runEmbedded(parameters)
  // Time over MemorySaver's time in the same process: lower is better; speed is SQLite's over ours.
  const normalised = (samples: { saver: Array<number>; memory: Array<number> }) =>
    p50(samples.saver) / p50(samples.memory)
  const measures = [
    {
      what: `super-step (putWrites + put), chat thread of ${parameters.steps} steps`,
      ours: pglite.superStep,
      theirs: sqlite.superStep
    },
    ...parameters.readSizes.map((size, k) => ({
      what: `getTuple latest, thread of ${size} steps`,
      ours: pglite.getTupleLatest[k]!,
      theirs: sqlite.getTupleLatest[k]!
    }))
  ]
  const rows = measures.map(({ ours, theirs, what }) => {
    const [a, b] = [normalised(ours), normalised(theirs)]
    return { what, ours, theirs, normalisedOurs: a, normalisedTheirs: b, speed: b / a }
  })
  sections.push([
    `### Embedded: this library on PGlite vs SqliteSaver, each normalised by MemorySaver in its own process`,
    "",
    "| measure | PGlite p50 ms | its MemorySaver p50 ms | normalised | SqliteSaver p50 ms | its MemorySaver p50 ms " +
    "| normalised | PGlite vs SQLite (speed) |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map((row) =>
      `| ${row.what} | ${ms(p50(row.ours.saver))} | ${ms(p50(row.ours.memory))} | ${row.normalisedOurs.toFixed(2)} | ${
        ms(p50(row.theirs.saver))
      } | ${ms(p50(row.theirs.memory))} | ${row.normalisedTheirs.toFixed(2)} | ${row.speed.toFixed(2)}x |`
    ),
    "",
    `This library: \`pglite:<fresh temporary directory>\`, in this process (Node ${process.version}). SqliteSaver ` +
    `${packageVersion("@langchain/langgraph-checkpoint-sqlite")} (SQLite ${sqlite.sqlite}) on a file in a fresh ` +
    `temporary directory, in a child process on Node ${sqlite.node} (better-sqlite3 is built for the Node that ran ` +
    "`npm ci`). Each side interleaves its saver with its own MemorySaver step by step, on the same messages " +
    "(bench/support/workload.mjs); normalised is the saver's p50 over its MemorySaver's."
  ].join("\n"))
  const [superStep, shortRead] = rows as [(typeof rows)[number], (typeof rows)[number]]
  goals.embedded = {
    value: `super-step ${superStep.speed.toFixed(2)}x SqliteSaver's speed (${superStep.normalisedOurs.toFixed(2)} vs ` +
      `${superStep.normalisedTheirs.toFixed(2)} MemorySaver); getTuple latest @${parameters.readSizes[0]} ` +
      `${(1 / shortRead.speed).toFixed(2)}x its time (${shortRead.normalisedOurs.toFixed(2)} vs ` +
      `${shortRead.normalisedTheirs.toFixed(2)} MemorySaver)`,
    target: "≥ 1x; ≤ 5x",
    met: superStep.speed >= 1 && 1 / shortRead.speed <= 5
  }
}
