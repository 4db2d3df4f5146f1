/**
 * bench/results/RESULTS.md, as `npm run bench` writes it: the machine, the
 * goals' verdicts, how to read the figures, the targets, every case's
 * section, and the read path profile written by hand.
 */
import { existsSync, readFileSync } from "node:fs"
import { cpus } from "node:os"
import { admin } from "../../harness/databases.ts"
import { goalsTitle } from "../support/goals.ts"
import { packageVersion, resultPath, runDate } from "../support/report.ts"
import type { Run } from "./context.ts"

/** Written by hand from a profiling session; the report includes it as it is. */
const profileFile = resultPath("profile.md")

export const renderResults = async (run: Run, goalsTable: string): Promise<string> => {
  const serverVersion = await admin(
    (client) => client.query<{ server_version: string }>("SHOW server_version"),
    run.server.url
  )
  return [
    "# Benchmark results",
    "",
    `Produced by \`npm run bench\` (bench/run.ts) on ${runDate()}: ` +
    `${cpus().length} cores (${cpus()[0]?.model.trim()}), Node ${process.version}, ` +
    `PostgreSQL ${serverVersion.rows[0]!.server_version}, ` +
    `@langchain/langgraph-checkpoint-postgres ${packageVersion("@langchain/langgraph-checkpoint-postgres")}` +
    (run.scale === 1 ? "." : `, BENCH_SCALE=${run.scale}.`),
    "",
    "All savers run in one process against one server; scenarios interleave the savers step by step, so",
    "both see the same machine. Latencies are per call as a LangGraph user makes them (through the",
    "`BaseCheckpointSaver` API, serialization included). MemorySaver is the in-process reference.",
    "",
    `## ${goalsTitle}`,
    "",
    goalsTable,
    "",
    "## Reading these numbers",
    "",
    "- **Structural sharing** (on by default; the \"plain encoding\" rows turn it off): a step stores and",
    "  sends its new message and a few hashes, not the whole `messages` array, so storage grows with what",
    "  the steps add (the delta floor: each step's new message INSERTed into a plain table) instead of with",
    "  its square, and a `list` page sends each message once.",
    "- **Writes** of this library are bound by two commits per super-step (putWrites, then put) plus an",
    "  O(n) check that the elements it already stored were not changed in place; the official saver",
    "  serializes and sends the whole array at every step. **CPU** is this process's, per call (user and",
    "  system time): what the library itself costs, apart from the database, which runs elsewhere.",
    "- **Reads** of the official saver spend most of their time parsing `bytea` arrays returned as hex text.",
    "  This library revives messages directly (no generic `load`) and a `getTuple` fetches only the pieces",
    "  its process does not hold yet: what is left is parsing the array's JSON and building its messages,",
    "  which MemorySaver pays as well (see the read path profile at the end).",
    "- **Concurrent threads**: with two cores, every saver saturates the CPU.",
    "- **Floors**: the two-commit floors take their turns among the savers, each on a connection of its",
    "  own: a putWrites is one INSERT of the writes' JSON (one commit of the same bytes), a put one INSERT of",
    "  the checkpoint with only the step's new message; through node-postgres's `Client`, and through",
    "  effect's `PgClient` (the client stack this library runs on). The workload's messages are made before",
    "  each call is timed: a call's time is the saver's.",
    "- **Embedded**: PGlite (this process) and SqliteSaver (a child on the Node that built better-sqlite3) are",
    "  each divided by a MemorySaver run beside them in the same process, so the two Nodes need not match.",
    "",
    "## Targets",
    "",
    "| measure | this library vs official | target | |",
    "|---|---:|---:|---|",
    ...run.verdicts,
    "",
    "## Scenarios",
    "",
    run.sections.join("\n\n"),
    "",
    "## Read path profile",
    "",
    ...(existsSync(profileFile)
      ? [readFileSync(profileFile, "utf8").trim()]
      : ["Not recorded: bench/results/profile.md, when present, is included here (where a getTuple spends its time)."]),
    ""
  ].join("\n")
}
