/**
 * One profiled case, run by bench/profile.ts in a child process under
 * `node --cpu-prof`: `node bench/profiling/cases.ts <case> <postgres url>`.
 * Prints the workload's window (see cpuProfile.ts `Window`) as its last
 * line of output, so the summary leaves start-up out.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { EffectCheckpointSaver } from "../../src/index.ts"
import { agentGraph, agentTurn } from "../agentGraph.ts"
import { ChatThread } from "../workload.mjs"
import { profileClock, type Window } from "./cpuProfile.ts"

const scale = Number(process.env.BENCH_SCALE ?? "1")
const n = (count: number) => Math.max(2, Math.round(count * scale))

/** 5 chat threads of 300 super-steps (putWrites + put), one after the other. */
const superSteps = async (saver: EffectCheckpointSaver) => {
  for (let t = 0; t < 5; t++) {
    const thread = await new ChatThread(saver, `profile-${t}`).start()
    for (let step = 0; step < n(300); step++) await thread.superStep()
  }
}

/** 100 turns of the invoke loop's graph on one thread. */
const invokeLoop = async (saver: EffectCheckpointSaver) => {
  const app = agentGraph(saver)
  for (let turn = 0; turn < n(100); turn++) await agentTurn(app, "profile")
}

/** Each case: where its saver lives and what it runs. */
export const cases = {
  "superstep-postgres": { store: "postgres", run: superSteps },
  "superstep-pglite": { store: "pglite", run: superSteps },
  "invoke-postgres": { store: "postgres", run: invokeLoop }
} as const

export type CaseName = keyof typeof cases

const main = async (name: CaseName, url: string | undefined) => {
  const { store, run } = cases[name]
  const directory = store === "pglite" ? mkdtempSync(join(tmpdir(), "lce-profile-pglite-")) : undefined
  const target = directory !== undefined ? `pglite:${directory}` : url
  if (target === undefined) throw new Error(`${name} needs a PostgreSQL URL as its second argument`)
  const saver = await EffectCheckpointSaver.fromConnString(target)
  try {
    const start = profileClock()
    await run(saver)
    const window: Window = { start, end: profileClock() }
    console.log(JSON.stringify(window))
  } finally {
    await saver.close()
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true })
  }
}

if (import.meta.main) {
  const [name, url] = process.argv.slice(2)
  if (name === undefined || !(name in cases)) throw new Error(`a case: ${Object.keys(cases).join(", ")}`)
  await main(name as CaseName, url)
}
