/**
 * The PGlite owner's latest reads, answered from what it wrote
 * (`sql/decorators/LatestTuples`): real LangGraph graphs on a directory this process
 * owns, with every read that reaches the database counted. A chat loop
 * reads its thread once; threads of every kind (a fork, an interrupt, a
 * subgraph's namespaces, delta channels, run metadata, a human's edit) are
 * answered without a statement and exactly as a reader in another process
 * (a snapshot) and the owner restarted read them; what else writes a thread
 * (delete, prune, copy, a transaction rolled back) is never answered stale.
 * With encryption off and on.
 */
import { HumanMessage } from "@langchain/core/messages"
import { Effect, Layer, ManagedRuntime, Option } from "effect"
import { SqlClient } from "effect/sql"
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { chatGraph, THREADS, writeInspected } from "../../harness/inspectedGraph.ts"
import { CheckpointStorage, EffectCheckpointSaver, Encryption, type SaverOptions } from "../../src/index.ts"
import * as LatestTuples from "../../src/internal/sql/decorators/LatestTuples.ts"
import * as SqlDriver from "../../src/internal/sql/SqlDriver.ts"
import * as Tables from "../../src/internal/sql/Tables.ts"
import * as Pglite from "../../src/pglite.ts"
import { keyOf } from "../scenarios/encryption.ts"
import { checkpoint, metadata } from "../support/fixtures.ts"

type Location = { readonly thread_id: string; readonly checkpoint_ns: string }

/** Every namespace of the threads. */
const locationsOf = async (saver: EffectCheckpointSaver, threads: ReadonlyArray<string>) => {
  const locations: Array<Location> = []
  for (const thread_id of threads) {
    const namespaces = new Set<string>()
    for await (const tuple of saver.list({ configurable: { thread_id } })) {
      namespaces.add(String(tuple.config.configurable?.checkpoint_ns ?? ""))
    }
    for (const checkpoint_ns of [...namespaces].sort()) locations.push({ thread_id, checkpoint_ns })
  }
  return locations
}

const latestOf = async (saver: EffectCheckpointSaver, locations: ReadonlyArray<Location>) => {
  const tuples = []
  for (const configurable of locations) tuples.push((await saver.getTuple({ configurable })) ?? null)
  return JSON.stringify(tuples)
}

const encryption: SaverOptions = { encryption: { keys: { k1: keyOf(9) }, primary: "k1" } }

describe.each([["encryption off", {}], ["encryption on", encryption]] as const)("the owner's latest reads (%s)", (
  _,
  options: SaverOptions
) => {
  const dataDir = mkdtempSync(join(tmpdir(), "lce-latest-"))
  /** The driver's `getTuple`s that reached the database. */
  let reads = 0

  /** The owner as `Pglite.layer` builds it, with the database's reads counted under the latest tuples. */
  const ownerLayer = () =>
    Layer.provideMerge(
      CheckpointStorage.layerDriver(
        SqlDriver.make(Tables.make(), { dialect: "pglite" }).pipe(
          Effect.map((driver) => ({
            ...driver,
            getTuple: (...args: Parameters<typeof driver.getTuple>) =>
              Effect.suspend(() => {
                reads++
                return driver.getTuple(...args)
              })
          })),
          Effect.flatMap(LatestTuples.over)
        )
      ).pipe(Layer.provide(options.encryption === undefined ? Layer.empty : Encryption.layer(options.encryption))),
      Pglite.layerSqlClient({ dataDir })
    )

  let runtime: ManagedRuntime.ManagedRuntime<CheckpointStorage.CheckpointStorage | SqlClient.SqlClient, unknown>
  let owner: EffectCheckpointSaver
  const openOwner = async () => {
    runtime = ManagedRuntime.make(ownerLayer())
    owner = EffectCheckpointSaver.fromLayer(Layer.succeedContext(await runtime.context()))
  }

  beforeAll(async () => {
    // Migrated by the library's own layer first.
    await (await EffectCheckpointSaver.fromConnString(`pglite:${dataDir}`)).close()
    await openOwner()
  }, 120_000)

  afterAll(async () => {
    await owner?.close()
    await runtime?.dispose()
    rmSync(dataDir, { recursive: true, force: true })
  })

  /** The same reads by another process, over a snapshot the owner serves. */
  const readElsewhere = async (locations: ReadonlyArray<Location>) => {
    const reader = join(import.meta.dirname, "..", "support", "latestReader.ts")
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [reader, dataDir, JSON.stringify(locations), JSON.stringify(options)],
      { encoding: "utf8", timeout: 120_000 }
    )
    return stdout.trim()
  }

  /** The same reads by this library opening the directory afresh (the owner closed meanwhile, and reopened). */
  const readRestarted = async (locations: ReadonlyArray<Location>) => {
    await owner.close()
    await runtime.dispose()
    const fresh = await EffectCheckpointSaver.fromConnString(`pglite:${dataDir}`, options)
    try {
      return await latestOf(fresh, locations)
    } finally {
      await fresh.close()
      await openOwner()
    }
  }

  it("a chat loop reads its thread from the database once: at its first turn, finding nothing", async () => {
    const graph = chatGraph(owner)
    const before = reads
    for (let turn = 0; turn < 6; turn++) {
      await graph.invoke({ messages: [new HumanMessage(`turn ${turn}`)] }, { configurable: { thread_id: "loop" } })
    }
    expect(reads - before).toBe(1)
    const state = await graph.getState({ configurable: { thread_id: "loop" } })
    expect(state.values.messages).toHaveLength(12)
  }, 60_000)

  it(
    "threads of every kind: answered without a statement, as another process and a restarted owner read them",
    async () => {
      await writeInspected(owner)
      const locations = await locationsOf(owner, [...THREADS, "loop"])
      expect(locations.filter((location) => location.checkpoint_ns !== "").length).toBeGreaterThan(0)
      const first = await latestOf(owner, locations)
      const before = reads
      const answered = await latestOf(owner, locations)
      expect(reads - before).toBe(0)
      expect(answered).toBe(first)
      expect(await readElsewhere(locations)).toBe(answered)
      expect(await readRestarted(locations)).toBe(answered)
    },
    180_000
  )

  it("what else writes a thread is never answered stale: delete, prune, copy, a transaction rolled back", async () => {
    const locations = await locationsOf(owner, ["chat", "tools", "runs", "loop"])
    await latestOf(owner, locations)
    await owner.deleteThread("runs")
    await owner.prune(["chat"], { strategy: "keep_latest" })
    await owner.copyThread("loop", "tools", { replace: true })
    // A put in a transaction that rolls back: the latest stays what it was.
    const rolledBack = await runtime.runPromiseExit(Effect.gen(function*() {
      const storage = yield* CheckpointStorage.CheckpointStorage
      const sql = yield* SqlClient.SqlClient
      yield* sql.withTransaction(Effect.gen(function*() {
        const latest = yield* storage.getTuple({ thread_id: "loop" })
        yield* storage.put(
          {
            thread_id: "loop",
            checkpoint_ns: "",
            checkpoint_id: Option.getOrThrow(latest).config.configurable?.checkpoint_id
          },
          checkpoint({ messages: "never" }),
          metadata(),
          {}
        )
        return yield* Effect.fail("roll back")
      }))
    }))
    expect(rolledBack._tag).toBe("Failure")
    const answered = await latestOf(owner, locations)
    expect(JSON.parse(answered)[locations.findIndex((location) => location.thread_id === "runs")]).toBeNull()
    expect(answered).not.toContain("never")
    expect(await readElsewhere(locations)).toBe(answered)
    expect(await readRestarted(locations)).toBe(answered)
  }, 180_000)
})
