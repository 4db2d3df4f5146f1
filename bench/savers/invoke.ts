/**
 * The StateGraph.invoke loop (bench/support/agentGraph.ts) on one thread, the
 * subjects taking turns.
 */
import { agentGraph, agentInput, agentTurn } from "../support/agentGraph.ts"
import { rotated, time } from "../support/workload.mjs"
import type { Run } from "./context.ts"

export const invoke = async (run: Run): Promise<void> => {
  const { n, subjects, memorySubject, goals, measuredSpeedUps, table, ratioOf, log } = run
  const turns = n(100)
  log(`StateGraph invoke loop: ${turns} turns`)
  const apps = subjects.map((subject) => agentGraph(subject.saver))
  const rows = subjects.map((subject) => ({ name: subject.name, samples: [] as Array<number> }))
  for (let turn = 0; turn < turns; turn++) {
    for (const [i, app] of rotated(apps, turn)) {
      const input = agentInput()
      rows[i]!.samples.push(await time(() => agentTurn(app, "graph", input)))
    }
  }
  table(`StateGraph.invoke, one thread, ${turns} turns (each: getTuple, 2 puts, writes)`, rows, "invoke")
  const speed = ratioOf(rows, memorySubject)
  goals.invoke = {
    value: `${speed.toFixed(2)}x MemorySaver's speed (p50 per invoke, ${turns} turns)`,
    target: "≥ 1.0x",
    met: speed >= 1
  }
  measuredSpeedUps["StateGraph.invoke loop"] = ratioOf(rows)
}
