/**
 * One profiled case, run by bench/profile.ts in a child process under
 * `node --cpu-prof`: `node bench/support/profiling/cases.ts <case> <postgres url>`.
 * Prints the workload's window (see cpuProfile.ts `Window`) as its last
 * line of output, so the summary leaves start-up out.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { EffectCheckpointSaver } from "../../../src/index.ts"
import { agentGraph, agentTurn } from "../agentGraph.ts"
import { ChatThread, message } from "../workload.mjs"
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

/** 3,000 putWrites of one new message each, on a checkpoint of a 300-step thread. */
const putWrites = async (saver: EffectCheckpointSaver) => {
  const thread = await new ChatThread(saver, "profile-writes").start()
  for (let step = 0; step < n(300); step++) await thread.superStep()
  const messages = Array.from({ length: n(3000) }, (_, i) => message(i))
  for (const [i, next] of messages.entries()) {
    await saver.putWrites(thread.config, [["messages", [next]]], `task-${i}`, "~__pregel_pull, agent")
  }
}

/** 5 chat threads of 300 puts, each adding one message (no putWrites first: each put serializes it). */
const puts = async (saver: EffectCheckpointSaver) => {
  for (let t = 0; t < 5; t++) {
    const thread = await new ChatThread(saver, `profile-puts-${t}`).start()
    for (let step = 0; step < n(300); step++) await thread.put(thread.nextMessage())
  }
}

/** 32 chat threads of 50 super-steps at once, 5 rounds: the bench's concurrent scenario. */
const concurrent = async (saver: EffectCheckpointSaver) => {
  for (let round = 0; round < 5; round++) {
    await Promise.all(Array.from({ length: 32 }, async (_, t) => {
      const thread = await new ChatThread(saver, `profile-concurrent-${round}-${t}`).start()
      for (let step = 0; step < n(50); step++) await thread.superStep()
    }))
  }
}

/**
 * Each case: where its saver lives, what it runs, and whether its
 * PostgreSQL database commits without waiting for the disk
 * (`synchronous_commit = off`): where a commit costs little, the library's
 * own CPU is most of a call's time.
 */
export const cases = {
  "superstep-postgres": { store: "postgres", run: superSteps, fastCommit: false },
  "superstep-pglite": { store: "pglite", run: superSteps, fastCommit: false },
  "invoke-postgres": { store: "postgres", run: invokeLoop, fastCommit: false },
  "putwrites-postgres-fast-commit": { store: "postgres", run: putWrites, fastCommit: true },
  "put-postgres-fast-commit": { store: "postgres", run: puts, fastCommit: true },
  "concurrent-postgres-fast-commit": { store: "postgres", run: concurrent, fastCommit: true }
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
