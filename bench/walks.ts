/**
 * `npm run bench:walks`: the cost of the walks over parent links —
 * `getDeltaChannelHistory` of the latest
 * checkpoint of a 1,000-step DeltaChannel thread (every step a write to the
 * channel, no snapshot: the walk goes to the root; and a snapshot every 100
 * steps, as `MessagesDeltaValue` stores them) on PostgreSQL and PGlite;
 * `prune` keep-latest of a 60,000-checkpoint thread, whole on memory and
 * PostgreSQL, and its plan alone.
 *
 * Prints its figures; writes no report. Uses DATABASE_URL, or starts a
 * throwaway server.
 */
import { uuid6 } from "@langchain/langgraph-checkpoint"
import { Layer, ManagedRuntime, Result } from "effect"
import { Client } from "pg"
import { ensureServer } from "../harness/postgresServer.ts"
import { CheckpointStorage, EffectCheckpointSaver } from "../src/index.ts"
import * as Prune from "../src/internal/lifecycle/Prune.ts"
import * as Pglite from "../src/pglite.ts"
import * as Postgres from "../src/postgres.ts"
import type { IndexEntry, ThreadRows } from "../src/StorageDriver.ts"

const server = await ensureServer()
const database = `lce_walks_${process.pid}`
const admin = async (statement: string) => {
  const client = new Client({ connectionString: server.url })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

const median = (samples: Array<number>) => samples.toSorted((a, b) => a - b)[Math.floor(samples.length / 2)]!

/** A thread of `steps` checkpoints after a root storing `messages`; each step writes to it; a snapshot every `every`. */
const populate = async (saver: EffectCheckpointSaver, thread_id: string, steps: number, every: number) => {
  let config = { configurable: { thread_id, checkpoint_ns: "" } } as { configurable: Record<string, unknown> }
  for (let step = 0; step <= steps; step++) {
    const stored = step % every === 0
    config = await saver.put(
      config,
      {
        v: 4,
        id: uuid6(-1),
        ts: new Date().toISOString(),
        channel_values: stored ? { messages: [`snapshot ${step}`] } : {},
        channel_versions: { messages: step + 1 },
        versions_seen: {}
      },
      { source: "loop", step, parents: {} },
      stored ? { messages: step + 1 } : {}
    ) as typeof config
    await saver.putWrites(config, [["messages", `message ${step}`]], `task-${step}`)
  }
  return config
}

const history = async (label: string, saver: EffectCheckpointSaver) => {
  for (const [name, every] of [["no snapshot", 1_000_000], ["a snapshot every 100", 100]] as const) {
    const thread_id = `${label}-${name}-${Date.now()}`
    await populate(saver, thread_id, 1000, every)
    const config = { configurable: { thread_id, checkpoint_ns: "" } }
    const samples: Array<number> = []
    for (let i = 0; i < 40; i++) {
      const start = performance.now()
      const found = await saver.getDeltaChannelHistory({ config, channels: ["messages"] })
      samples.push(performance.now() - start)
      if (i === 0) console.log(`  ${name}: ${found.messages?.writes.length} writes`)
    }
    console.log(`${label}, 1,000 steps, ${name}: getDeltaChannelHistory p50 ${median(samples).toFixed(2)} ms`)
  }
}

/**
 * A linear thread of `size` checkpoints as rows: `messages` written each
 * step and stored every 100th, `step` stored each step.
 */
const rowsOf = (thread_id: string, size: number): ThreadRows => {
  const id = (i: number) => `1f0${String(i).padStart(9, "0")}`
  const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value))
  return {
    thread_id,
    last_activity: new Date(),
    checkpoints: Array.from({ length: size }, (_, i) => ({
      thread_id,
      checkpoint_ns: "",
      checkpoint_id: id(i),
      parent_checkpoint_id: i === 0 ? undefined : id(i - 1),
      checkpoint: {
        v: 4,
        id: id(i),
        ts: new Date().toISOString(),
        channel_versions: { messages: i + 1, step: i + 1 },
        versions_seen: {}
      },
      metadata: JSON.stringify({ source: "loop", step: i, parents: {} })
    })),
    blobs: [
      ...Array.from({ length: Math.ceil(size / 100) }, (_, k) => ({
        checkpoint_ns: "",
        channel: "messages",
        version: String(100 * k + 1),
        type: "json",
        bytes: json([`snapshot ${100 * k}`])
      })),
      ...Array.from({ length: size }, (_, i) => ({
        checkpoint_ns: "",
        channel: "step",
        version: String(i + 1),
        type: "json",
        bytes: json(i)
      }))
    ],
    writes: Array.from({ length: size }, (_, i) => ({
      checkpoint_ns: "",
      checkpoint_id: id(i),
      task_id: `task-${i}`,
      task_path: "",
      idx: 0,
      channel: "messages",
      type: "json",
      bytes: json(`message ${i}`)
    })),
    pieces: []
  }
}

/** `prune` keep-latest of a 60,000-checkpoint thread, whole (index read, plan, removal). */
const prune = async (label: string, layer: Layer.Layer<CheckpointStorage.CheckpointStorage, unknown>) => {
  const runtime = ManagedRuntime.make(layer)
  const thread_id = `pruned-${Date.now()}`
  await runtime.runPromise(CheckpointStorage.CheckpointStorage.use((s) => s.importThread(rowsOf(thread_id, 60_000))))
  const start = performance.now()
  await runtime.runPromise(
    CheckpointStorage.CheckpointStorage.use((s) => s.prune([thread_id], { strategy: "keep_latest" }))
  )
  console.log(`${label}: prune keep-latest of a 60,000-checkpoint thread: ${(performance.now() - start).toFixed(0)} ms`)
  await runtime.dispose()
}

await admin(`CREATE DATABASE "${database}"`)
try {
  const url = server.url.replace(/\/[^/]*$/, `/${database}`)
  const postgres = EffectCheckpointSaver.fromLayer(Postgres.layer({ url, poolSize: 2 }))
  await history("PostgreSQL", postgres)
  await postgres.close()
  const runtime = ManagedRuntime.make(Pglite.layer())
  const pglite = EffectCheckpointSaver.fromLayer(Layer.succeedContext(await runtime.context()))
  await history("PGlite", pglite)
  await runtime.dispose()
  await prune("memory", CheckpointStorage.layerMemory)
  await prune("PostgreSQL", Postgres.layer({ url, poolSize: 2 }))
} finally {
  await admin(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`)
  server.stop()
}

// Planning prune keep-latest of a linear 60,000-checkpoint thread (a snapshot every 100 steps).
const index: Array<IndexEntry> = Array.from({ length: 60_000 }, (_, i) => ({
  checkpoint_ns: "",
  checkpoint_id: String(i).padStart(8, "0"),
  parent_checkpoint_id: i === 0 ? undefined : String(i - 1).padStart(8, "0"),
  channels: ["messages", "step", "branch:to:model"],
  stored: i % 100 === 0 ? ["messages", "step", "branch:to:model"] : ["step", "branch:to:model"],
  written: ["messages"],
  run_id: undefined
}))
const start = performance.now()
const planned = Prune.keepingLast(index, 1)
console.log(
  `prune keep-latest plan, 60,000 checkpoints: ${(performance.now() - start).toFixed(0)} ms ` +
    `(${Result.isSuccess(planned) ? planned.success.removed.length : "a loop"} removed)`
)
