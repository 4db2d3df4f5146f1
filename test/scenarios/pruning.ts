/**
 * Prune and retention in the user's sense, on a real graph: a linear thread
 * of 9 checkpoints ending in an interrupt keeps 1 checkpoint with `prune`
 * keep_latest and 2 with retention's `keepLast: 2`, and from every kept
 * checkpoint the graph reads the same state, resumes, replays and forks
 * exactly as it did before (the same operations on a copy taken before).
 */
import type { RunnableConfig } from "@langchain/core/runnables"
import { Annotation, Command, END, interrupt, START, StateGraph } from "@langchain/langgraph"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { EffectCheckpointSaver } from "../../src/index.ts"
import { canonical } from "../../src/testing/index.ts"

const State = Annotation.Root({
  steps: Annotation<Array<string>>({ reducer: (current, update) => [...current, ...update], default: () => [] }),
  last: Annotation<string>
})

/** A node that notes its name and how many steps it saw. */
const step = (node: string) => (state: typeof State.State) => ({ steps: [node], last: `${node}@${state.steps.length}` })

/** START → a → … → g → ask (which interrupts) → END: 9 checkpoints before `ask` waits. */
const build = (saver: EffectCheckpointSaver) =>
  new StateGraph(State)
    .addNode("a", step("a"))
    .addNode("b", step("b"))
    .addNode("c", step("c"))
    .addNode("d", step("d"))
    .addNode("e", step("e"))
    .addNode("f", step("f"))
    .addNode("g", step("g"))
    .addNode("ask", () => ({ steps: [`ask:${interrupt<string, string>("go on?")}`] }))
    .addEdge(START, "a")
    .addEdge("a", "b")
    .addEdge("b", "c")
    .addEdge("c", "d")
    .addEdge("d", "e")
    .addEdge("e", "f")
    .addEdge("f", "g")
    .addEdge("g", "ask")
    .addEdge("ask", END)
    .compile({ checkpointer: saver })

type Graph = ReturnType<typeof build>

const at = (thread_id: string, checkpoint_id?: string): RunnableConfig => ({
  configurable: checkpoint_id === undefined ? { thread_id } : { thread_id, checkpoint_id }
})

/** The newest checkpoint ids of the thread's root namespace, newest first. */
const ids = async (saver: EffectCheckpointSaver, thread_id: string) => {
  const found: Array<string> = []
  for await (const tuple of saver.list(at(thread_id))) found.push(String(tuple.config.configurable?.checkpoint_id))
  return found
}

/** A run's answer without interrupt ids (they name the new checkpoints' tasks). */
const outcome = (result: Record<string, unknown>) => {
  const { __interrupt__, ...values } = result
  return { values, interrupts: (__interrupt__ as Array<{ value: unknown }> | undefined)?.map((i) => i.value) }
}

/**
 * What the graph does from a checkpoint: the state it reads (but the parent,
 * which pruning may cut), a replay, a resume, and a fork by `updateState`
 * then resumed. Each run starts from the checkpoint itself.
 */
const observe = async (graph: Graph, thread_id: string, checkpoint_id: string) => {
  const state = await graph.getState(at(thread_id, checkpoint_id))
  // The metadata names the thread it was written in: the copy's differs.
  const { thread_id: _, ...metadata }: Record<string, unknown> = { ...state.metadata }
  const read = {
    values: state.values,
    next: state.next,
    metadata,
    createdAt: state.createdAt,
    tasks: state.tasks.map((task) => ({ name: task.name, interrupts: task.interrupts.map((i) => i.value) }))
  }
  const replay = outcome(await graph.invoke(null, at(thread_id, checkpoint_id)))
  const resume = outcome(await graph.invoke(new Command({ resume: "yes" }), at(thread_id, checkpoint_id)))
  const fork = await graph.updateState(at(thread_id, checkpoint_id), { steps: ["edited"] })
  const forked = outcome(await graph.invoke(null, fork))
  const forkResumed = outcome(await graph.invoke(new Command({ resume: "fork" }), at(thread_id)))
  return canonical({ read, replay, resume, forked, forkResumed })
}

export const pruningScenarios = (name: string, makeSaver: () => Promise<EffectCheckpointSaver>) =>
  describe(`prune and retention in the user's sense on ${name}`, () => {
    let saver: EffectCheckpointSaver
    let run = 0
    const thread = (label: string) => `${label}-${process.pid}-${++run}`
    beforeEach(async () => {
      saver = await makeSaver()
    })
    afterEach(async () => {
      await saver.close()
    })

    /**
     * A linear thread, what the graph does from its `keep` newest checkpoints
     * (on a copy, deleted after), then `shrink`: exactly those stay, and the
     * graph does the same from each.
     */
    const keeps = async (keep: number, shrink: (thread_id: string) => Promise<unknown>) => {
      const graph = build(saver)
      const id = thread("linear")
      const first = outcome(await graph.invoke({ steps: ["in"] }, at(id)))
      expect(first.interrupts).toEqual(["go on?"])
      const before = await ids(saver, id)
      expect(before).toHaveLength(9)
      const kept = before.slice(0, keep)

      const copy = thread("before")
      await saver.copyThread(id, copy)
      const expected = []
      for (const checkpoint_id of kept) expected.push(await observe(graph, copy, checkpoint_id))
      await saver.prune([copy], { strategy: "delete" })

      await shrink(id)
      expect(await ids(saver, id)).toEqual(kept)
      const actual = []
      for (const checkpoint_id of kept) actual.push(await observe(graph, id, checkpoint_id))
      expect(actual).toEqual(expected)
    }

    it(
      "prune keep_latest keeps 1 of 9 checkpoints; the graph reads, resumes, replays and forks as before",
      async () => {
        await keeps(1, (id) => saver.prune([id], { strategy: "keep_latest" }))
      },
      60_000
    )

    it(
      "retention keepLast 2 keeps 2 of 9; the graph reads, resumes, replays and forks from both as before",
      async () => {
        await keeps(2, async () => {
          const report = await saver.applyRetention({ keepLast: 2 })
          expect(report.checkpointsRemoved).toBeGreaterThanOrEqual(7)
        })
      },
      60_000
    )
  })
