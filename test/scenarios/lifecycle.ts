/**
 * Thread lifecycle on a saver: copyThread and prune, checked on real graphs
 * with DeltaValue channels, a subgraph namespace and a fork. Every checkpoint
 * that exists after the operation must read back exactly as before, and the
 * newest ones the delta history LangGraph reads of them.
 */
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages"
import type { RunnableConfig } from "@langchain/core/runnables"
import {
  Annotation,
  Command,
  DeltaValue,
  END,
  interrupt,
  MessagesAnnotation,
  MessagesDeltaValue,
  START,
  StateGraph,
  StateSchema
} from "@langchain/langgraph"
import { type CheckpointMetadata, type CheckpointTuple, uuid6 } from "@langchain/langgraph-checkpoint"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { z } from "zod"
import { CheckpointError, type EffectCheckpointSaver } from "../../src/index.ts"
import { canonical } from "../../src/testing/index.ts"

const Inner = Annotation.Root({ answer: Annotation<string> })

export const build = (saver: EffectCheckpointSaver) => {
  const inner = new StateGraph(Inner)
    .addNode("ask", () => ({ answer: interrupt<string, string>("approve?") }))
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile()
  const State = new StateSchema({
    messages: MessagesDeltaValue,
    log: new DeltaValue(z.array(z.string()).default(() => []), {
      inputSchema: z.string(),
      reducer: (current: Array<string>, writes: Array<string>) => [...current, ...writes],
      snapshotFrequency: 3
    }),
    answer: z.string().default("")
  })
  return new StateGraph(State)
    .addNode("model", (state) => ({
      messages: [new AIMessage(`reply ${state.messages.length}`)],
      log: `turn ${state.log.length}`
    }))
    .addNode("review", inner)
    .addEdge(START, "model")
    .addConditionalEdges("model", (state) => state.log.length % 4 === 0 ? "review" : END)
    .addEdge("review", END)
    .compile({ checkpointer: saver })
}

/**
 * A turn's question, long enough (~300 bytes) for structural sharing: the
 * graph's input `{ messages: [...] }` is a framed list and its write a
 * shared one, so the lifecycle operations move pieces too.
 */
const question = (turn: number) => `q${turn}: `.padEnd(300, "and some more words ")

/** Runs turns, resuming any interrupt, and forks once from an earlier checkpoint. */
export const populate = async (saver: EffectCheckpointSaver, thread_id: string) => {
  const graph = build(saver)
  const config = { configurable: { thread_id } }
  for (let turn = 0; turn < 7; turn++) {
    const state = await graph.getState(config)
    if (state.tasks.some((task) => task.interrupts.length > 0)) {
      await graph.invoke(new Command({ resume: `yes ${turn}` }), config)
    } else await graph.invoke({ messages: [new HumanMessage(question(turn))] }, config)
    if (turn === 3) {
      const history = []
      for await (const snapshot of graph.getStateHistory(config)) history.push(snapshot)
      const earlier = history[Math.floor(history.length / 2)]!
      await graph.invoke(null, await graph.updateState(earlier.config, { log: "forked" }))
    }
  }
  return graph
}

/**
 * Every checkpoint of a thread (all namespaces), without thread ids: its
 * tuple and, with `histories`, its delta history too.
 */
export const snapshot = async (saver: EffectCheckpointSaver, thread_id: string, histories = true) => {
  const entries = new Map<string, string>()
  for await (const tuple of saver.list({ configurable: { thread_id } })) {
    const config: RunnableConfig = tuple.config
    const history = histories
      ? await saver.getDeltaChannelHistory({ config, channels: Object.keys(tuple.checkpoint.channel_versions) })
      : undefined
    const { thread_id: _, ...place } = config.configurable ?? {}
    const parent = tuple.parentConfig?.configurable?.checkpoint_id
    entries.set(
      canonical(place),
      canonical({
        checkpoint: tuple.checkpoint,
        metadata: tuple.metadata,
        parent,
        writes: tuple.pendingWrites,
        history
      })
    )
  }
  return entries
}

/**
 * What a pruned thread keeps reads back as before, except that a kept
 * checkpoint whose parent was removed names no parent now: no link dangles.
 */
const expectKeptAsBefore = (before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>) => {
  for (const [place, value] of after) {
    const was = JSON.parse(before.get(place)!) as Record<string, unknown>
    const parentPlace = typeof was.parent === "string"
      ? canonical({ ...JSON.parse(place) as Record<string, unknown>, checkpoint_id: was.parent })
      : undefined
    if (parentPlace !== undefined && !after.has(parentPlace)) was.parent = { $undefined: true }
    expect(JSON.parse(value)).toEqual(was)
  }
}

/** The graph's DeltaChannels: what LangGraph reads back when a checkpoint does not store them. */
const DELTA_CHANNELS = ["messages", "log"]

/** The delta histories LangGraph reads of the newest `last` checkpoints of each namespace. */
const headHistories = async (saver: EffectCheckpointSaver, thread_id: string, last: number) => {
  const byNamespace = new Map<string, Array<RunnableConfig>>()
  for await (const tuple of saver.list({ configurable: { thread_id } })) {
    const ns = String(tuple.config.configurable?.checkpoint_ns)
    byNamespace.set(ns, [...byNamespace.get(ns) ?? [], tuple.config])
  }
  const histories: Array<string> = []
  for (const configs of byNamespace.values()) {
    for (const config of configs.slice(0, last)) {
      const tuple = await saver.getTuple(config)
      histories.push(canonical(
        await saver.getDeltaChannelHistory({
          config,
          channels: DELTA_CHANNELS.filter((channel) => !(channel in tuple!.checkpoint.channel_values))
        })
      ))
    }
  }
  return histories.sort()
}

export const lifecycleScenarios = (name: string, makeSaver: () => Promise<EffectCheckpointSaver>) =>
  describe(`thread lifecycle on ${name}`, () => {
    let saver: EffectCheckpointSaver
    let run = 0
    const thread = (label: string) => `${label}-${process.pid}-${++run}`
    beforeEach(async () => {
      saver = await makeSaver()
    })
    afterEach(async () => {
      await saver.close()
    })

    it("copyThread copies every namespace, the whole chain, values and writes; the copy runs on", async () => {
      const source = thread("source")
      const target = thread("copy")
      const graph = await populate(saver, source)
      const before = await snapshot(saver, source)
      expect([...before.keys()].some((place) => place.includes("review:"))).toBe(true)

      await saver.copyThread(source, target)
      expect(await snapshot(saver, target)).toEqual(before)
      expect(await snapshot(saver, source)).toEqual(before)

      const next = { messages: [new HumanMessage("after the copy")] }
      const fromSource = await graph.invoke(next, { configurable: { thread_id: source } })
      const fromCopy = await graph.invoke(next, { configurable: { thread_id: target } })
      expect(canonical(fromCopy.log)).toBe(canonical(fromSource.log))
      expect(fromCopy.messages.map((m) => String(m.content))).toEqual(fromSource.messages.map((m) => String(m.content)))
    }, 60_000)

    it(
      "copyThread latest copies what prune keep_latest keeps, leaving the source whole; the copy runs on",
      async () => {
        const source = thread("latest-source")
        const graph = await populate(saver, source)
        const before = await snapshot(saver, source)
        // The oracle: a whole copy, pruned.
        const pruned = thread("latest-pruned")
        await saver.copyThread(source, pruned)
        await saver.prune([pruned], { strategy: "keep_latest" })
        const latest = thread("latest-copy")
        await saver.copyThread(source, latest, { latest: true })
        expect(await snapshot(saver, latest)).toEqual(await snapshot(saver, pruned))
        expect(await snapshot(saver, source)).toEqual(before)
        const [copied, whole] = [await saver.threadStorage(latest), await saver.threadStorage(source)]
        expect(copied.checkpoints.count).toBeLessThan(whole.checkpoints.count)
        expect(copied.total_bytes).toBeLessThan(whole.total_bytes)
        expect(await saver.threadStorage(pruned)).toEqual({ ...copied, thread_id: pruned })

        const config = (thread_id: string) => ({ configurable: { thread_id } })
        expect(canonical((await graph.getState(config(latest))).values)).toBe(
          canonical((await graph.getState(config(source))).values)
        )
        const next = { messages: [new HumanMessage("after the copy")] }
        const fromSource = await graph.invoke(next, config(source))
        const fromCopy = await graph.invoke(next, config(latest))
        expect(canonical(fromCopy.log)).toBe(canonical(fromSource.log))
        expect(fromCopy.messages.map((m) => String(m.content))).toEqual(
          fromSource.messages.map((m) => String(m.content))
        )
      },
      60_000
    )

    it("prune keep_latest keeps what the latest checkpoints need, exactly as it was; the thread runs on", async () => {
      const id = thread("pruned")
      const graph = await populate(saver, id)
      const before = await snapshot(saver, id, false)
      const heads = await headHistories(saver, id, 1)
      const stateBefore = await graph.getState({ configurable: { thread_id: id } })

      await saver.prune([id], { strategy: "keep_latest" })
      const after = await snapshot(saver, id, false)
      expect(after.size).toBeGreaterThan(0)
      expect(after.size).toBeLessThan(before.size)
      expectKeptAsBefore(before, after)
      expect(await headHistories(saver, id, 1)).toEqual(heads)
      const stateAfter = await graph.getState({ configurable: { thread_id: id } })
      expect(canonical(stateAfter.values)).toBe(canonical(stateBefore.values))

      const next = await graph.invoke({ messages: [new HumanMessage("after pruning")] }, {
        configurable: { thread_id: id }
      })
      expect(next.messages.at(-1)?.content).toBe(`reply ${stateBefore.values.messages.length + 1}`)
      // Pruning again removes what the new step made redundant, and nothing the latest needs.
      await saver.prune([id], { strategy: "keep_latest" })
      const again = await graph.getState({ configurable: { thread_id: id } })
      expect(canonical(again.values)).toBe(canonical(next))
    }, 60_000)

    it("prune delete removes the threads", async () => {
      const id = thread("deleted")
      await populate(saver, id)
      await saver.prune([id], { strategy: "delete" })
      expect((await snapshot(saver, id)).size).toBe(0)
    }, 60_000)

    it(
      "deleteForRuns removes the runs' checkpoints and writes; survivors keep their values and a consistent chain",
      async () => {
        const id = thread("runs")
        const other = thread("runs-other")
        const put = async (
          thread_id: string,
          parent: RunnableConfig | undefined,
          run_id: string,
          values: Record<string, unknown>,
          versions: Record<string, number>
        ) => {
          const config = await saver.put(
            parent ?? { configurable: { thread_id, checkpoint_ns: "" } },
            {
              v: 4,
              id: uuid6(-1),
              ts: new Date().toISOString(),
              channel_values: values,
              channel_versions: versions,
              versions_seen: {}
            },
            { source: "loop", step: 0, parents: {}, run_id } as CheckpointMetadata,
            Object.fromEntries(Object.entries(versions).filter(([channel]) => channel in values))
          )
          await saver.putWrites(config, [["a", `write of ${run_id}`]], `task-${run_id}`)
          return config
        }
        const c0 = await put(id, undefined, "r1", { a: "kept by everyone", b: 0 }, { a: 1, b: 1 })
        const c1 = await put(id, c0, "r1", { b: 1 }, { a: 1, b: 2 })
        const c2 = await put(id, c1, "r2", { c: 2 }, { a: 1, b: 2, c: 1 })
        const c3 = await put(id, c2, "r2", { c: 3 }, { a: 1, b: 2, c: 2 })
        await put(other, undefined, "r1", { a: "other" }, { a: 1 })
        const before = await snapshot(saver, id)

        const failure = await saver.deleteForRuns([]).then(() => undefined, (error: unknown) => error)
        expect(failure).toBeInstanceOf(CheckpointError.InvalidInput)
        await saver.deleteForRuns(["no such run"])
        expect(await snapshot(saver, id)).toEqual(before)

        await saver.deleteForRuns(["r1"])
        expect(await saver.getTuple(c0)).toBeUndefined()
        expect(await saver.getTuple(c1)).toBeUndefined()
        expect((await snapshot(saver, other)).size).toBe(0)
        const survivor = await saver.getTuple(c2)
        // Its values, including those written by the removed run, read back; its chain ends here now.
        expect(survivor?.checkpoint.channel_values).toEqual({ a: "kept by everyone", b: 1, c: 2 })
        expect(survivor?.parentConfig).toBeUndefined()
        expect(survivor?.pendingWrites).toEqual([["task-r2", "a", "write of r2"]])
        const latest = await saver.getTuple({ configurable: { thread_id: id } })
        expect(latest?.config.configurable?.checkpoint_id).toBe(c3.configurable?.checkpoint_id)
        expect(latest?.parentConfig?.configurable?.checkpoint_id).toBe(c2.configurable?.checkpoint_id)
        expect(latest?.checkpoint.channel_values).toEqual({ a: "kept by everyone", b: 1, c: 3 })
      },
      60_000
    )

    it(
      "deleteForRuns removes what LangGraph runs given run ids wrote; the thread continues from the first run",
      async () => {
        const id = thread("graph-runs")
        const graph = new StateGraph(MessagesAnnotation)
          .addNode("model", (state) => ({ messages: [new AIMessage(`reply ${state.messages.length}`)] }))
          .addEdge(START, "model")
          .addEdge("model", END)
          .compile({ checkpointer: saver })
        const runs = ["run-1", "run-2", "run-3"].map((run) => `${run}-${id}`)
        const invoke = (question: string, run_id: string) =>
          graph.invoke({ messages: [new HumanMessage(question)] }, {
            configurable: { thread_id: id, user_id: "ada", __secret_internal: "x" },
            metadata: {
              run_id,
              user: "ada",
              step: 99,
              attempt: 2,
              thread_id: "elsewhere",
              tags: ["not", "a", "primitive"]
            }
          })
        for (const [turn, run_id] of runs.entries()) await invoke(`q${turn}`, run_id)

        const stored: Array<CheckpointTuple> = []
        for await (const tuple of saver.list({ configurable: { thread_id: id } })) stored.push(tuple)
        const byRun = (run_id: string) =>
          stored.filter((tuple) => (tuple.metadata as Record<string, unknown> | undefined)?.run_id === run_id).map((
            tuple
          ) => tuple.config.configurable?.checkpoint_id)
        // Every checkpoint carries its run's id (three per invoke: input, then two loop steps).
        for (const run_id of runs) expect(byRun(run_id).length).toBeGreaterThan(0)
        expect(runs.flatMap(byRun)).toHaveLength(stored.length)
        // What LangGraph's own savers store, plus the run id: nothing else of config.metadata or configurable.
        expect(stored.at(-1)!.metadata).toEqual({ source: "input", step: -1, parents: {}, run_id: runs[0] })
        for (const tuple of stored) {
          expect(Object.keys(tuple.metadata ?? {}).sort()).toEqual(["parents", "run_id", "source", "step"])
        }

        await saver.deleteForRuns([runs[1]!, runs[2]!])
        const left: Array<unknown> = []
        for await (const tuple of saver.list({ configurable: { thread_id: id } })) {
          left.push(tuple.config.configurable?.checkpoint_id)
        }
        expect(left).toEqual(byRun(runs[0]!))
        const state = await graph.getState({ configurable: { thread_id: id } })
        expect(state.values.messages.map((message: BaseMessage) => message.content)).toEqual(["q0", "reply 1"])

        const next = await invoke("q after", `run-4-${id}`)
        expect(next.messages.map((message) => message.content)).toEqual(["q0", "reply 1", "q after", "reply 3"])
      },
      60_000
    )

    it("retention keeps the newest checkpoints with what they need, and deletes inactive threads", async () => {
      const id = thread("retained")
      const graph = await populate(saver, id)
      const before = await snapshot(saver, id, false)
      const heads = await headHistories(saver, id, 2)
      const state = await graph.getState({ configurable: { thread_id: id } })

      const kept = await saver.applyRetention({ keepLast: 2, inactiveFor: "1 hour" })
      expect(kept.threadsDeleted).toBe(0)
      expect(kept.skipped).toEqual([])
      expect(kept.checkpointsRemoved).toBeGreaterThan(0)
      const after = await snapshot(saver, id, false)
      expect(after.size).toBeLessThan(before.size)
      expectKeptAsBefore(before, after)
      expect(await headHistories(saver, id, 2)).toEqual(heads)
      expect(canonical((await graph.getState({ configurable: { thread_id: id } })).values)).toBe(
        canonical(state.values)
      )

      await new Promise((resolve) => setTimeout(resolve, 20))
      const expired = await saver.applyRetention({ inactiveFor: "10 millis" })
      expect(expired.threadsDeleted).toBeGreaterThan(0)
      expect((await snapshot(saver, id)).size).toBe(0)
      const bad = await saver.applyRetention({ keepLast: 0 }).then(() => undefined, (error: unknown) => error)
      expect(bad).toBeInstanceOf(CheckpointError.InvalidInput)
    }, 60_000)

    it("bad input is a typed error and changes nothing", async () => {
      const source = thread("kept")
      const other = thread("other")
      await populate(saver, source)
      await saver.copyThread(source, other)
      const before = await snapshot(saver, source)

      const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error)
      expect(await failure(saver.copyThread(source, source))).toBeInstanceOf(CheckpointError.InvalidInput)
      expect(await failure(saver.copyThread(thread("nobody"), thread("x")))).toBeInstanceOf(
        CheckpointError.ThreadNotFound
      )
      const exists = await failure(saver.copyThread(source, other))
      expect(exists).toBeInstanceOf(CheckpointError.ThreadExists)
      expect((exists as Error).message).toContain("replace: true")
      expect(await failure(saver.prune([source, thread("nobody")], { strategy: "delete" }))).toBeInstanceOf(
        CheckpointError.ThreadNotFound
      )
      expect(await failure(saver.prune([], { strategy: "keep_latest" }))).toBeInstanceOf(CheckpointError.InvalidInput)
      expect(await snapshot(saver, source)).toEqual(before)

      // With replace, the target becomes a copy.
      await saver.prune([other], { strategy: "keep_latest" })
      await saver.copyThread(source, other, { replace: true })
      expect(await snapshot(saver, other)).toEqual(before)
    }, 60_000)
  })
