/**
 * A real chat graph under both of LangGraph's message schemas: `MessagesValue`
 * (the whole list in every checkpoint) and `MessagesDeltaValue` (a
 * `DeltaChannel`: per-step writes plus periodic snapshots, the list rebuilt
 * from ancestors on read). Each saver runs each schema on a database of its
 * own, so storage is everything that database holds; the four runs take
 * turns, one turn each.
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages"
import { END, MessagesDeltaValue, MessagesValue, START, StateGraph, StateSchema } from "@langchain/langgraph"
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint"
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres"
import { Pool } from "pg"
import { EffectCheckpointSaver } from "../../src/index.ts"
import { type ScratchDatabases, type TableSize, tableSizes } from "./databases.ts"
import { rotated, serializedSize, text, time } from "./workload.mjs"

export type SchemaName = "MessagesValue" | "MessagesDeltaValue"
export type SaverName = "EffectCheckpointSaver" | "PostgresSaver (official)"

export interface GraphRun {
  readonly saver: SaverName
  readonly schema: SchemaName
  /** Milliseconds per `invoke`. */
  readonly samples: Array<number>
  readonly turnsPerSecond: number
  /** Every table of the run's database, after a VACUUM: the sum of `tables`. */
  readonly storageBytes: number
  /** Each table of the run's database, with its indexes. */
  readonly tables: ReadonlyArray<TableSize>
}

export interface DeltaChannelResult {
  readonly turns: number
  /** The messages the turns added, serialized as JSON. */
  readonly messageBytes: number
  readonly runs: ReadonlyArray<GraphRun>
}

/** Words of each message: a turn's two messages take ~800 bytes as JSON, as the earlier chat graph's did. */
const wordsPerMessage = 45

const schemas = { MessagesValue, MessagesDeltaValue } as const

/** One agent node answering each human message with one AI message. */
const chatGraph = (schema: SchemaName, checkpointer: BaseCheckpointSaver) =>
  new StateGraph(new StateSchema({ messages: schemas[schema] }))
    .addNode("agent", () => ({ messages: [new AIMessage({ content: text(wordsPerMessage) })] }))
    .addEdge(START, "agent")
    .addEdge("agent", END)
    .compile({ checkpointer })

const makeSaver = async (saver: SaverName, url: string) => {
  if (saver === "EffectCheckpointSaver") {
    const ours = await EffectCheckpointSaver.fromConnString(url)
    return { checkpointer: ours as BaseCheckpointSaver, close: () => ours.close() }
  }
  const official = new PostgresSaver(new Pool({ connectionString: url, max: 10 }))
  await official.setup()
  return { checkpointer: official as BaseCheckpointSaver, close: () => official.end() }
}

export const runDeltaChannelGraph = async (turns: number, databases: ScratchDatabases): Promise<DeltaChannelResult> => {
  const plans = (["EffectCheckpointSaver", "PostgresSaver (official)"] as const).flatMap((saver) =>
    (["MessagesValue", "MessagesDeltaValue"] as const).map((schema) => ({ saver, schema }))
  )
  const runs = await Promise.all(plans.map(async ({ saver, schema }) => {
    const database = await databases.create(`delta_${saver === "EffectCheckpointSaver" ? "effect" : "official"}`)
    const made = await makeSaver(saver, database.url)
    return {
      saver,
      schema,
      url: database.url,
      ...made,
      app: chatGraph(schema, made.checkpointer),
      samples: [] as Array<number>
    }
  }))
  let messageBytes = 0
  for (let turn = 0; turn < turns; turn++) {
    for (const [, run] of rotated(runs, turn)) {
      const input = new HumanMessage(text(wordsPerMessage))
      let output: { messages: ReadonlyArray<unknown> } | undefined
      run.samples.push(
        await time(async () => {
          output = await run.app.invoke({ messages: [input] }, { configurable: { thread_id: "chat" } })
        })
      )
      // A saver that lost a step's messages would look fast: every turn must see the whole conversation.
      if (output!.messages.length !== 2 * (turn + 1)) {
        throw new Error(`${run.saver} with ${run.schema}: ${output!.messages.length} messages after turn ${turn + 1}`)
      }
      if (run === runs[0]) messageBytes += serializedSize(output!.messages.slice(-2))
    }
  }
  const results: Array<GraphRun> = []
  for (const run of runs) {
    await run.close()
    const tables = await tableSizes(run.url)
    results.push({
      saver: run.saver,
      schema: run.schema,
      samples: run.samples,
      turnsPerSecond: run.samples.length / (run.samples.reduce((a, b) => a + b, 0) / 1000),
      storageBytes: tables.reduce((sum, table) => sum + table.tableBytes + table.indexBytes, 0),
      tables
    })
  }
  return { turns, messageBytes, runs: results }
}
