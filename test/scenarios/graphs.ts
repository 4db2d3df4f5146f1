/**
 * Real LangGraph graphs persisting through a saver: the scenarios every
 * driver must pass. Each driver's test file calls `graphScenarios` with a
 * factory for a fresh saver.
 */
import { HumanMessage } from "@langchain/core/messages"
import { Annotation, Command, END, interrupt, START, StateGraph } from "@langchain/langgraph"
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { chatGraph, deltaGraph, nestedGraph, stepsGraph, text } from "../../harness/inspectedGraph.ts"

type Saver = BaseCheckpointSaver & { close(): Promise<void> }

export const graphScenarios = (name: string, makeSaver: () => Promise<Saver>) =>
  describe(`StateGraph on ${name}`, () => {
    let saver: Saver
    let thread = 0
    const config = () => ({ configurable: { thread_id: `${name}-graph-${process.pid}-${Date.now()}-${++thread}` } })

    beforeEach(async () => {
      saver = await makeSaver()
    })
    afterEach(async () => {
      await saver.close()
    })

    it("remembers a conversation across turns", async () => {
      const graph = chatGraph(saver)
      const cfg = config()
      await graph.invoke({ messages: [new HumanMessage("hello")] }, cfg)
      const second = await graph.invoke({ messages: [new HumanMessage("again")] }, cfg)
      expect(second.messages.map(text)).toEqual([
        "hello",
        `heard "hello" (1 messages)`,
        "again",
        `heard "again" (3 messages)`
      ])
      // A different thread starts empty.
      const other = await graph.invoke({ messages: [new HumanMessage("hi")] }, config())
      expect(other.messages).toHaveLength(2)
    })

    it("pauses at interrupt() and resumes later with Command({ resume })", async () => {
      const State = Annotation.Root({
        request: Annotation<string>,
        decision: Annotation<string>
      })
      const graph = new StateGraph(State)
        .addNode("review", (state) => ({ decision: interrupt<string, string>(`approve ${state.request}?`) }))
        .addEdge(START, "review")
        .addEdge("review", END)
        .compile({ checkpointer: saver })
      const cfg = config()
      const paused = await graph.invoke({ request: "deploy" }, cfg)
      expect((paused as { __interrupt__?: Array<{ value: unknown }> }).__interrupt__?.[0]?.value).toBe(
        "approve deploy?"
      )
      const state = await graph.getState(cfg)
      expect(state.next).toEqual(["review"])
      expect(state.tasks[0]?.interrupts[0]?.value).toBe("approve deploy?")

      const resumed = await graph.invoke(new Command({ resume: "yes" }), cfg)
      expect(resumed).toEqual({ request: "deploy", decision: "yes" })
      expect((await graph.getState(cfg)).next).toEqual([])
    })

    it("stops before a node with interruptBefore and continues on invoke(null)", async () => {
      const State = Annotation.Root({
        log: Annotation<Array<string>>({ reducer: (a, b) => a.concat(b), default: () => [] })
      })
      const graph = new StateGraph(State)
        .addNode("draft", () => ({ log: ["draft"] }))
        .addNode("publish", () => ({ log: ["publish"] }))
        .addEdge(START, "draft")
        .addEdge("draft", "publish")
        .addEdge("publish", END)
        .compile({ checkpointer: saver, interruptBefore: ["publish"] })
      const cfg = config()
      expect((await graph.invoke({ log: ["start"] }, cfg)).log).toEqual(["start", "draft"])
      expect((await graph.getState(cfg)).next).toEqual(["publish"])
      expect((await graph.invoke(null, cfg)).log).toEqual(["start", "draft", "publish"])
    })

    it("travels in time: history, replay from an earlier checkpoint, and a fork with updateState", async () => {
      const graph = stepsGraph(saver)
      const cfg = config()
      await graph.invoke({ steps: [] }, cfg)

      const history = []
      for await (const snapshot of graph.getStateHistory(cfg)) history.push(snapshot)
      // input, then one checkpoint per node: newest first.
      expect(history.map((s) => s.values.steps)).toEqual([["a", "b", "c"], ["a", "b"], ["a"], [], []])
      expect(history.map((s) => s.next)).toEqual([[], ["c"], ["b"], ["a"], ["__start__"]])
      expect(history.map((s) => s.metadata?.step)).toEqual([3, 2, 1, 0, -1])

      // Replay from the checkpoint before "c": only "c" runs again.
      const beforeC = history[1]!
      const replayed = await graph.invoke(null, beforeC.config)
      expect(replayed.steps).toEqual(["a", "b", "c"])

      // Fork from the checkpoint before "b": change the state, then continue.
      const beforeB = history[2]!
      const forkConfig = await graph.updateState(beforeB.config, { steps: ["edited"] })
      const forked = await graph.invoke(null, forkConfig)
      expect(forked.steps).toEqual(["a", "edited", "b", "c"])

      // The fork's parent is the checkpoint it was forked from; the original branch is intact.
      const forkState = await graph.getState(forkConfig)
      expect(forkState.parentConfig?.configurable?.checkpoint_id).toBe(beforeB.config.configurable?.checkpoint_id)
      const original = await graph.getState(history[0]!.config)
      expect(original.values.steps).toEqual(["a", "b", "c"])
    })

    it("keeps a subgraph's checkpoints in their own namespace", async () => {
      const graph = nestedGraph(saver)
      const cfg = config()
      await graph.invoke({ value: "x" }, cfg)

      const state = await graph.getState(cfg, { subgraphs: true })
      const childState = state.tasks[0]?.state as {
        config: { configurable: { checkpoint_ns: string } }
        values: unknown
      }
      expect(childState.config.configurable.checkpoint_ns).toMatch(/^child:/)
      expect(childState.values).toEqual({ value: "x" })

      const namespaces = new Set<string>()
      for await (const tuple of saver.list({ configurable: { thread_id: cfg.configurable.thread_id } })) {
        namespaces.add(String(tuple.config.configurable?.checkpoint_ns))
      }
      expect(namespaces.has("")).toBe(true)
      expect([...namespaces].some((ns) => ns.startsWith("child:"))).toBe(true)

      const done = await graph.invoke(new Command({ resume: "answer" }), cfg)
      expect(done).toEqual({ value: "x+answer+after" })
    })

    it("rebuilds DeltaValue channels from stored writes and snapshots", async () => {
      const graph = deltaGraph(saver)
      const cfg = config()
      for (let turn = 0; turn < 5; turn++) {
        await graph.invoke({ messages: [new HumanMessage(`q${turn}`)] }, cfg)
      }
      const state = await graph.getState(cfg)
      expect(state.values.messages.map(text)).toEqual(
        Array.from({ length: 5 }, (_, turn) => [`q${turn}`, `reply ${2 * turn + 1}`]).flat()
      )
      expect(state.values.log).toEqual(["turn 0", "turn 1", "turn 2", "turn 3", "turn 4"])

      // An older checkpoint rebuilds its own, shorter, value.
      const history = []
      for await (const snapshot of graph.getStateHistory(cfg)) history.push(snapshot)
      const afterTwoTurns = history.find((s) => s.values.log?.length === 2 && s.next.length === 0)
      expect(afterTwoTurns?.values.messages.map(text)).toEqual(["q0", "reply 1", "q1", "reply 3"])
    })

    it("round-trips a node's Uint8Array value and a Uint8Array pending write", async () => {
      const State = Annotation.Root({
        data: Annotation<Uint8Array>,
        answer: Annotation<string>
      })
      const bytes = new Uint8Array([0, 1, 2, 254, 255])
      const graph = new StateGraph(State)
        .addNode("bytes", () => ({ data: bytes }))
        .addNode("ask", () => ({ answer: interrupt<string, string>("continue?") }))
        .addEdge(START, "bytes")
        .addEdge(START, "ask")
        .addEdge("bytes", END)
        .addEdge("ask", END)
        .compile({ checkpointer: saver })
      const cfg = config()
      await graph.invoke({ answer: "" }, cfg)

      // "bytes" finished while "ask" interrupted: its write waits as a pending write.
      const tuple = await saver.getTuple(cfg)
      const pending = tuple?.pendingWrites?.find(([, channel]) => channel === "data")
      expect(pending?.[2]).toBeInstanceOf(Uint8Array)
      expect(Array.from(pending?.[2] as Uint8Array)).toEqual(Array.from(bytes))

      const done = await graph.invoke(new Command({ resume: "yes" }), cfg)
      expect(done.answer).toBe("yes")
      expect(done.data).toBeInstanceOf(Uint8Array)
      expect(Array.from(done.data)).toEqual(Array.from(bytes))
      const state = await graph.getState(cfg)
      expect(Array.from(state.values.data as Uint8Array)).toEqual(Array.from(bytes))
    })
  })
