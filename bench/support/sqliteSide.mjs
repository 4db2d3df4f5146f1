/**
 * The SQLite side of the embedded comparison, run by bench/support/embedded.ts
 * in a child process on the machine's Node: better-sqlite3 is built for the
 * Node that ran `npm ci` (Node 20 here) and does not load in the
 * repository's Node 24. Needs nothing of this library.
 *
 * Argument: the workload parameters as JSON ({ steps, readSizes, reads }).
 * Output: one line of JSON, the samples of `embeddedWorkload` and the
 * versions it ran on.
 */
import { MemorySaver } from "@langchain/langgraph-checkpoint"
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { embeddedWorkload } from "./workload.mjs"

const parameters = JSON.parse(process.argv[2] ?? "{}")
const directory = mkdtempSync(join(tmpdir(), "lce-bench-sqlite-"))
let saver
try {
  saver = SqliteSaver.fromConnString(join(directory, "checkpoints.sqlite"))
  const samples = await embeddedWorkload(saver, new MemorySaver(), parameters)
  process.stdout.write(
    JSON.stringify({
      ...samples,
      node: process.version,
      sqlite: saver.db.prepare("SELECT sqlite_version() AS version").get().version
    }) + "\n"
  )
} finally {
  saver?.db.close()
  rmSync(directory, { recursive: true, force: true })
}
