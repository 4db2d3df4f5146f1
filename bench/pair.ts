/**
 * `npm run bench:pair -- --against <checkout>`: this release beside another
 * (a checkout of this repository at an earlier commit, its node_modules in
 * place) in one process, call by call, on the memory driver and on
 * PostgreSQL: the same chat thread written and read by both, the two
 * alternating which goes first. Where `npm run bench`'s figures move from run
 * to run with the machine, the ratios here compare two releases under the
 * same load; it writes bench/results/PAIR.md.
 *
 *   git worktree add --detach /tmp/before HEAD~5 && ln -s "$PWD/node_modules" /tmp/before/node_modules
 *   npm run bench:pair -- --against /tmp/before
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages"
import { uuid6 } from "@langchain/langgraph-checkpoint"
import type { BaseCheckpointSaver, Checkpoint } from "@langchain/langgraph-checkpoint"
import { join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { parseArgs } from "node:util"
import { createDatabase } from "../harness/databases.ts"
import type * as Index from "../src/index.ts"
import { ms, p50 } from "./support/measure.ts"
import { commitOf, root, runDate, writeResult } from "./support/report.ts"

const { values } = parseArgs({
  options: {
    against: { type: "string" },
    server: { type: "string", default: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres" },
    steps: { type: "string", default: "300" }
  }
})
if (values.against === undefined) throw new Error("usage: npm run bench:pair -- --against <checkout> [--steps 300]")
const against = resolve(values.against)
const steps = Number(values.steps)

type Library = typeof Index
const load = async (root: string): Promise<Library> => import(pathToFileURL(join(root, "src/index.ts")).href)
const sides = { before: await load(against), now: await load(root) }
type Side = keyof typeof sides

const message = (i: number) =>
  i % 2 === 0
    ? new HumanMessage({ id: `m${i}`, content: `question ${i} `.padEnd(400, "q") })
    : new AIMessage({ id: `m${i}`, content: `answer ${i} `.padEnd(400, "a") })

type Samples = Record<"putWrites" | "put" | "getTuple" | "list", Record<Side, Array<number>>>

/** `steps` super-steps (putWrites, put, getTuple) on one thread per side, then full lists, the sides alternating. */
const pair = async (savers: Record<Side, BaseCheckpointSaver>): Promise<Samples> => {
  const samples: Samples = {
    putWrites: { before: [], now: [] },
    put: { before: [], now: [] },
    getTuple: { before: [], now: [] },
    list: { before: [], now: [] }
  }
  const threads = Object.fromEntries(
    (["before", "now"] as const).map((side) => [side, {
      config: { configurable: { thread_id: "t", checkpoint_ns: "" } } as Parameters<BaseCheckpointSaver["put"]>[0],
      messages: [] as Array<unknown>
    }])
  ) as Record<Side, { config: Parameters<BaseCheckpointSaver["put"]>[0]; messages: Array<unknown> }>
  const order = (i: number): ReadonlyArray<Side> => i % 2 === 0 ? ["before", "now"] : ["now", "before"]
  const timed = async (into: Array<number>, call: () => Promise<unknown>) => {
    const start = performance.now()
    await call()
    into.push(performance.now() - start)
  }
  for (let step = 0; step < steps; step++) {
    for (const side of order(step)) {
      const saver = savers[side]
      const thread = threads[side]
      const added = message(step)
      thread.messages = [...thread.messages, added]
      if (step > 0) {
        await timed(
          samples.putWrites[side],
          () => saver.putWrites(thread.config, [["messages", [added]]], `task-${step}`)
        )
      }
      const checkpoint: Checkpoint = {
        v: 4,
        id: uuid6(-1),
        ts: new Date().toISOString(),
        channel_values: { messages: thread.messages },
        channel_versions: { messages: step + 1 },
        versions_seen: {}
      }
      await timed(samples.put[side], async () => {
        thread.config = await saver.put(thread.config, checkpoint, { source: "loop", step, parents: {} }, {
          messages: step + 1
        })
      })
      await timed(samples.getTuple[side], () => saver.getTuple({ configurable: { thread_id: "t" } }))
    }
  }
  for (let round = 0; round < 16; round++) {
    for (const side of order(round)) {
      await timed(samples.list[side], async () => {
        for await (const _ of savers[side].list({ configurable: { thread_id: "t" } }));
      })
    }
  }
  return samples
}

const rows = (driver: string, samples: Samples) =>
  Object.entries(samples).map(([operation, { before, now }]) =>
    `| ${driver} | ${operation} | ${ms(p50(before))} | ${ms(p50(now))} | ${(p50(now) / p50(before)).toFixed(2)}x |`
  )

const lines: Array<string> = []
const memory = {
  before: sides.before.EffectCheckpointSaver.fromLayer(sides.before.CheckpointStorage.layerMemory),
  now: sides.now.EffectCheckpointSaver.fromLayer(sides.now.CheckpointStorage.layerMemory)
}
lines.push(...rows("memory", await pair(memory)))
await Promise.all([memory.before.close(), memory.now.close()])

const databases = await Promise.all([createDatabase("pair", values.server), createDatabase("pair", values.server)])
try {
  const postgres = {
    before: await sides.before.EffectCheckpointSaver.fromConnString(databases[0].url),
    now: await sides.now.EffectCheckpointSaver.fromConnString(databases[1].url)
  }
  lines.push(...rows("PostgreSQL", await pair(postgres)))
  await Promise.all([postgres.before.close(), postgres.now.close()])
} finally {
  await Promise.all(databases.map((database) => database.drop()))
}

const report = [
  "# This release beside another, call by call",
  "",
  `Produced by \`npm run bench:pair -- --against <checkout of ${
    commitOf(against)
  }>\` at ${commitOf()} on ${runDate()}: one chat thread of ${steps} super-steps (messages of 400 bytes; putWrites, put, then getTuple of the latest)`,
  "per release, the two alternating which goes first, then 16 full lists each; p50 per call in milliseconds.",
  "",
  "| driver | operation | before p50 ms | now p50 ms | now / before |",
  "|---|---|---:|---:|---:|",
  ...lines,
  ""
].join("\n")
writeResult("PAIR.md", report)
console.log(report)
