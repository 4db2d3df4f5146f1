/**
 * The graphs the replica tests serve from `serve` processes of their own
 * (`langgraph-checkpoints serve harness/replicaGraphs.ts:chat …`):
 * the scripted chat graph, and a slow one whose model, as it starts, adds
 * its process's pid to a file named by the thread in `REPLICA_MARKS` (one
 * line per execution), so a test learns which replica executes a run, and
 * that a run was executed again elsewhere.
 */
import { appendFileSync } from "node:fs"
import { join } from "node:path"
import { chatGraph } from "./chatGraph.ts"

export const chat = chatGraph()

export const slow = chatGraph({
  slow: 120,
  onModel: (config) => {
    const marks = process.env.REPLICA_MARKS
    if (marks !== undefined) appendFileSync(join(marks, String(config.configurable?.thread_id)), `${process.pid}\n`)
  }
})
