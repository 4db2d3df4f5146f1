/**
 * The property-based contract kit against every driver, against LangGraph's
 * own MemorySaver (where it finds a real bug), and through @effect/vitest.
 *
 * `npm test` runs a bounded number of sequences; `npm run test:contract`
 * runs many more (CONTRACT_RUNS).
 */
import { describe, expect, it } from "@effect/vitest"
import { MemorySaver } from "@langchain/langgraph-checkpoint"
import { Effect } from "effect"
import { CheckpointStorage, EffectCheckpointSaver, Encryption } from "../../src/index.ts"
import { check, type ContractReport, operations, runContract, runContractOnLayer } from "../../src/testing/index.ts"
import { names } from "../../src/testing/Operations.ts"
import { keyOf } from "../scenarios/encryption.ts"
import { type Driver, drivers } from "../support/drivers.ts"

const runs = (fallback: number) => Number(process.env.CONTRACT_RUNS ?? fallback)
const passes = (report: ContractReport) => expect(report.failure?.script ?? "passed").toBe("passed")

/**
 * Encryption on: the keys the contract filters on are plaintext metadata;
 * every other key, and every value, write and piece, is sealed.
 */
const encrypted = {
  encryption: {
    keys: { k1: keyOf(1), k2: keyOf(2) },
    primary: "k2",
    plaintextMetadata: [...Encryption.defaultPlaintextMetadata, ...names.metadataKeys]
  }
}

describe("runContract", () => {
  it("memory driver", async () => {
    passes(await runContractOnLayer({ name: "memory", layer: CheckpointStorage.layerMemory, runs: runs(100) }))
  }, 120_000)

  it("memory driver, encrypted", async () => {
    passes(
      await runContract({
        name: "memory, encrypted",
        create: () => EffectCheckpointSaver.fromLayer(CheckpointStorage.layerMemory, encrypted),
        destroy: (saver) => saver.close(),
        runs: runs(50)
      })
    )
  }, 120_000)

  describe("SQL drivers", () => {
    const matrix = drivers("contract")

    /** The contract on `count` sequences, each over a saver of `driver` that starts from an empty storage. */
    const sqlContract = (name: string, count: number, driver: Driver, options = {}) => async () => {
      passes(
        await runContract({
          name,
          create: () => driver.saver(options),
          destroy: async (saver) => {
            await saver.close()
            await driver.clear()
          },
          runs: runs(count)
        })
      )
    }

    it("PostgreSQL", sqlContract("postgres", 20, matrix.postgres), 300_000)
    it("CockroachDB dialect", sqlContract("cockroach dialect", 10, matrix.cockroach), 300_000)
    it("PGlite", sqlContract("pglite", 15, matrix.pglite), 300_000)
    it("PGlite, encrypted", sqlContract("pglite, encrypted", 10, matrix.pglite, encrypted), 300_000)
  })

  it("finds LangGraph's MemorySaver failing on a Uint8Array pending write, and replays it", async () => {
    const report = await runContract({ name: "MemorySaver", create: () => new MemorySaver(), runs: 200, seed: 7 })
    expect(report.passed).toBe(false)
    const failure = report.failure!
    expect(failure.script).toContain("MemorySaver breaks the checkpointer contract")
    expect(failure.steps.join("\n")).toContain("Uint8Array")
    expect(failure.steps.length).toBeLessThanOrEqual(4)
    expect(failure.script).toContain(`replay: runContract({ ..., replay: ${JSON.stringify(failure.replay)} })`)

    const replayed = await runContract({ name: "MemorySaver", create: () => new MemorySaver(), replay: failure.replay })
    expect(replayed.failure?.steps).toEqual(failure.steps)
  }, 120_000)
})

describe("with @effect/vitest", () => {
  it.effect.prop(
    "every generated sequence keeps the contract (memory driver)",
    [operations],
    ([sequence]) =>
      Effect.acquireUseRelease(
        Effect.sync(() => EffectCheckpointSaver.fromLayer(CheckpointStorage.layerMemory)),
        (saver) => check(saver, sequence),
        (saver) => Effect.promise(() => saver.close())
      ),
    { timeout: 120_000, arbitrary: { runs: runs(30) } }
  )
})
