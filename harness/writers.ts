/**
 * Agents writing at once, as a LangGraph server's conversations do: each of
 * `threads` threads runs chat turns one after another until stopped, and
 * every turn is counted as acknowledged (the graph returned) or rejected
 * (it threw). Afterwards, `lost` reads each thread back: a thread that holds
 * fewer messages than its acknowledged turns wrote lost one.
 */
import { HumanMessage } from "@langchain/core/messages"
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint"
import { chatGraph } from "./inspectedGraph.ts"

export interface Outcome {
  /** Acknowledged turns, by thread. */
  readonly acknowledged: ReadonlyMap<string, number>
  /** What rejected turns threw. */
  readonly rejected: ReadonlyArray<unknown>
  /** When each acknowledged turn returned (`Date.now()`). */
  readonly acknowledgedAt: ReadonlyArray<number>
  /** The longest an acknowledged turn took, in milliseconds. */
  readonly longestTurn: number
}

export const chatWriters = (
  saver: BaseCheckpointSaver,
  threads: number,
  prefix: string,
  /** Each writer moves on to a new thread after this many turns (a conversation ends); default never. */
  turnsPerThread = Infinity
) => {
  const graph = chatGraph(saver)
  const acknowledged = new Map<string, number>()
  const acknowledgedAt: Array<number> = []
  const rejected: Array<unknown> = []
  let longestTurn = 0
  let running = true
  const done = Promise.all(Array.from({ length: threads }, async (_, i) => {
    let conversation = 0
    let thread_id = `${prefix}-${i}`
    let turns = 0
    while (running) {
      if (turns >= turnsPerThread) {
        thread_id = `${prefix}-${i}-${++conversation}`
        turns = 0
      }
      const started = Date.now()
      try {
        await graph.invoke({ messages: [new HumanMessage(`turn ${turns}`)] }, { configurable: { thread_id } })
        acknowledged.set(thread_id, ++turns)
        acknowledgedAt.push(Date.now())
        longestTurn = Math.max(longestTurn, Date.now() - started)
      } catch (error) {
        rejected.push(error)
      }
    }
  }))
  return {
    /** Turns acknowledged so far, all threads together. */
    turns: () => acknowledgedAt.length,
    /** Stops after each thread's current turn. */
    stop: async (): Promise<Outcome> => {
      running = false
      await done
      return { acknowledged, rejected, acknowledgedAt, longestTurn }
    }
  }
}

/** The threads whose stored messages do not hold every acknowledged turn (two messages each), read through `saver`. */
export const lostTurns = async (saver: BaseCheckpointSaver, outcome: Outcome) => {
  const lost: Array<string> = []
  for (const [thread_id, turns] of outcome.acknowledged) {
    const tuple = await saver.getTuple({ configurable: { thread_id } })
    const messages = (tuple?.checkpoint.channel_values["messages"] as ReadonlyArray<unknown> | undefined)?.length ?? 0
    if (messages < 2 * turns) lost.push(`${thread_id}: ${turns} turns acknowledged, ${messages} messages stored`)
  }
  return lost
}
