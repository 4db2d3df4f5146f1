/**
 * Parity with LangGraph's own saver: every scenario of `scenarios/parity.ts`
 * runs on `MemorySaver` and on each driver (memory, PGlite, PostgreSQL, the
 * CockroachDB dialect), and everything a user can observe must be equal
 * once ids and timestamps are normalised. A failure names the first
 * differing path.
 */
import { HumanMessage } from "@langchain/core/messages"
import { MemorySaver } from "@langchain/langgraph"
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint"
import { type Context, Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { chatGraph, text } from "../../harness/inspectedGraph.ts"
import { CheckpointStorage, EffectCheckpointSaver, type SaverOptions } from "../../src/index.ts"
import { parityScenarios } from "../scenarios/parity.ts"
import { describeDifference, firstDifference, observe, type Scenario } from "../support/differential.ts"
import { type Driver, drivers } from "../support/drivers.ts"

/** Each scenario's recording on its oracle, made once. */
const oracles = new Map<Scenario, Promise<unknown>>()
const oracleOf = (scenario: Scenario) => {
  let recording = oracles.get(scenario)
  if (recording === undefined) {
    oracles.set(scenario, recording = observe(scenario, scenario.oracle?.() ?? new MemorySaver()))
  }
  return recording
}

/** The difference between a scenario on its oracle and on a saver made with `make`, if any. */
const compare = async (scenario: Scenario, make: (options: SaverOptions) => EffectCheckpointSaver) => {
  const saver = make(scenario.options ?? {})
  try {
    return firstDifference(await oracleOf(scenario), await observe(scenario, saver))
  } finally {
    await saver.close()
  }
}

/** A driver, with the parity scenarios on a storage over its store (made once: opening PGlite takes seconds). */
const parity = (name: string, driver: Driver) =>
  describe(`parity with MemorySaver on ${name}`, () => {
    let runtime: ManagedRuntime.ManagedRuntime<CheckpointStorage.CheckpointStorage, unknown>
    let storage: Context.Context<CheckpointStorage.CheckpointStorage>
    beforeAll(async () => {
      runtime = ManagedRuntime.make(driver.layer())
      storage = await runtime.context()
    }, 60_000)
    afterAll(() => runtime.dispose())
    const make = (options: SaverOptions) => EffectCheckpointSaver.fromLayer(Layer.succeedContext(storage), options)

    for (const scenario of parityScenarios) {
      it(scenario.name, async () => {
        const difference = await compare(scenario, make)
        if (difference !== undefined) expect.fail(describeDifference(difference))
      }, 60_000)
    }
  })

const matrix = drivers("parity")
parity("memory", matrix.memory)
parity("PGlite", matrix.pglite)
parity("PostgreSQL", matrix.postgres)
parity("the CockroachDB dialect", matrix.cockroach)

describe("the run id, stored by default: an intended difference", () => {
  it("a second invoke under the run id of the thread's latest checkpoint resumes that run, without its new input", async () => {
    const replies = async (saver: BaseCheckpointSaver) => {
      const graph = chatGraph(saver)
      const config = { configurable: { thread_id: "t" }, metadata: { run_id: "r1" } }
      await graph.invoke({ messages: [new HumanMessage("first")] }, config)
      const second = await graph.invoke({ messages: [new HumanMessage("second")] }, config)
      return second.messages.map(text)
    }
    const saver = EffectCheckpointSaver.fromLayer(CheckpointStorage.layerMemory)
    const notRecorded = EffectCheckpointSaver.fromLayer(CheckpointStorage.layerMemory, { metadataFromConfig: [] })
    try {
      expect(await replies(new MemorySaver())).toEqual([
        "first",
        `heard "first" (1 messages)`,
        "second",
        `heard "second" (3 messages)`
      ])
      expect(await replies(saver)).toEqual(["first", `heard "first" (1 messages)`])
      expect(await replies(notRecorded)).toEqual(await replies(new MemorySaver()))
    } finally {
      await saver.close()
      await notRecorded.close()
    }
  })
})

describe("the parity check", () => {
  it("fails, naming the key, when a saver stores one metadata key more", async () => {
    const [scenario] = parityScenarios
    const difference = await compare(
      scenario!,
      () =>
        EffectCheckpointSaver.fromLayer(CheckpointStorage.layerMemory, {
          metadataFromConfig: ["run_id", "ls_integration"]
        })
    )
    expect(difference?.path).toMatch(/\.metadata\.ls_integration$/)
    expect(difference?.oracle).not.toBe("langgraph")
    expect(difference?.subject).toBe("langgraph")
  })
})
