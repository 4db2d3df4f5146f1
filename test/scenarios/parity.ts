/**
 * The graphs the differential suite runs on `MemorySaver` and on every
 * driver: each scenario is one program over a `Probe`, recording what a user
 * can observe at every step (see `support/differential.ts`).
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages"
import type { RunnableConfig } from "@langchain/core/runnables"
import {
  Annotation,
  Command,
  END,
  entrypoint,
  getPreviousState,
  interrupt,
  MemorySaver,
  Send,
  START,
  StateGraph,
  task
} from "@langchain/langgraph"
import type { Checkpoint, CheckpointMetadata } from "@langchain/langgraph-checkpoint"
import {
  approvalGraph,
  chatGraph,
  deltaGraph,
  framedGraph,
  long,
  nestedGraph,
  stepsGraph
} from "../../harness/inspectedGraph.ts"
import type { Probe, Runnable, Scenario } from "../support/differential.ts"

const Log = Annotation.Root({
  log: Annotation<Array<string>>({ reducer: (a, b) => a.concat(b), default: () => [] })
})

const runnable = (graph: unknown) => graph as Runnable

/** Steps newest first, as `getStateHistory` yields them. */
const history = async (graph: Runnable, config: RunnableConfig, options?: Record<string, unknown>) => {
  const snapshots: Array<{ config: RunnableConfig; values: Record<string, unknown>; next: Array<string> }> = []
  for await (const snapshot of graph.getStateHistory(config, options)) snapshots.push(snapshot as never)
  return snapshots
}

const chat: Scenario = {
  name: "a conversation over turns, with configurable and metadata keys LangGraph passes on",
  run: async (probe) => {
    const graph = runnable(chatGraph(probe.saver))
    const config = { ...probe.thread({ assistant_id: "assistant-1", user_id: "ada" }), metadata: { team: "blue" } }
    await probe.invoke("turn 1", graph, { messages: [new HumanMessage("hello")] }, config)
    await probe.stream("turn 2", graph, { messages: [new HumanMessage("again")] }, config)
    await probe.invoke("turn 3", graph, { messages: [new HumanMessage("and again")] }, { ...config, tags: ["t"] })
    await probe.state("after three turns", graph, config)
    // Another thread starts empty.
    const other = probe.thread()
    await probe.invoke("other thread", graph, { messages: [new HumanMessage("hi")] }, other)
    await probe.state("other thread", graph, other)
  }
}

const interrupts: Scenario = {
  name: "interrupt() and Command({ resume }), a second interrupt answered by updateState",
  run: async (probe) => {
    const State = Annotation.Root({
      request: Annotation<string>,
      decision: Annotation<string>,
      note: Annotation<string>
    })
    const graph = runnable(
      new StateGraph(State)
        .addNode("review", (state) => ({ decision: interrupt(`approve ${state.request}?`) as string }))
        .addNode("annotate", () => ({ note: interrupt({ question: "why?", options: ["a", "b"] }) as string }))
        .addEdge(START, "review")
        .addEdge("review", "annotate")
        .addEdge("annotate", END)
        .compile({ checkpointer: probe.saver })
    )
    const config = probe.thread()
    await probe.stream("ask", graph, { request: "deploy" }, config)
    await probe.state("paused", graph, config)
    await probe.stream("resume", graph, new Command({ resume: "yes" }), config)
    await probe.state("paused again", graph, config)
    await probe.invoke(
      "resume with an update",
      graph,
      new Command({ resume: "because", update: { request: "ship" } }),
      config
    )
    await probe.state("done", graph, config)
    // The same graph, paused and resumed through invoke.
    const second = probe.thread()
    await probe.invoke("ask (invoke)", graph, { request: "delete" }, second)
    await probe.invoke("resume (invoke)", graph, new Command({ resume: "no" }), second)
    await probe.state("second paused", graph, second)
  }
}

const staticInterrupts: Scenario = {
  name: "interruptBefore and interruptAfter, continued by invoke(null) and after updateState",
  run: async (probe) => {
    const graph = runnable(
      new StateGraph(Log)
        .addNode("draft", () => ({ log: ["draft"] }))
        .addNode("review", () => ({ log: ["review"] }))
        .addNode("publish", () => ({ log: ["publish"] }))
        .addEdge(START, "draft")
        .addEdge("draft", "review")
        .addEdge("review", "publish")
        .addEdge("publish", END)
        .compile({ checkpointer: probe.saver, interruptBefore: ["review"], interruptAfter: ["publish"] })
    )
    const config = probe.thread()
    await probe.stream("start", graph, { log: ["start"] }, config)
    await probe.state("before review", graph, config)
    await probe.attempt("edit as draft", () => graph.updateState(config, { log: ["edited"] }, "draft"))
    await probe.stream("continue", graph, null, config)
    await probe.state("after publish", graph, config)
    await probe.invoke("finish", graph, null, config)
    await probe.state("finished", graph, config)
  }
}

const timeTravel: Scenario = {
  name: "time travel: history with limit, before and filter, a replay, forks by updateState",
  run: async (probe) => {
    const graph = runnable(stepsGraph(probe.saver))
    const config = probe.thread()
    await probe.invoke("run", graph, { steps: [] }, config)
    const steps = await history(graph, config)
    probe.record("history", steps)
    probe.record("history limit 2", await history(graph, config, { limit: 2 }))
    probe.record("history before the latest", await history(graph, config, { before: steps[0]!.config }))
    probe.record("history source loop", await history(graph, config, { filter: { source: "loop" } }))
    probe.record("history step 1", await history(graph, config, { filter: { step: 1 } }))
    // Replay from the checkpoint before "c".
    await probe.stream("replay", graph, null, steps[1]!.config)
    // Fork before "b", as a node and as no node.
    const fork = await probe.attempt("fork", () => graph.updateState(steps[2]!.config, { steps: ["edited"] }))
    await probe.stream("continue the fork", graph, null, fork!)
    const asNode = await probe.attempt("fork as b", () => graph.updateState(steps[2]!.config, { steps: ["as b"] }, "b"))
    await probe.invoke("continue as b", graph, null, asNode!)
    await probe.state("latest", graph, config)
    await probe.state("the fork", graph, fork!)
    await probe.state("the original head", graph, steps[0]!.config)
    // A new input from an old checkpoint.
    await probe.invoke("new input from the first step", graph, { steps: ["again"] }, steps[3]!.config)
    await probe.state("end", graph, config)
  }
}

/** Three levels: root → middle → leaf, the leaf asking twice. */
const threeDeep = (probe: Probe) => {
  const State = Annotation.Root({
    path: Annotation<Array<string>>({ reducer: (a, b) => a.concat(b), default: () => [] })
  })
  const leaf = new StateGraph(State)
    .addNode("ask", () => ({ path: [`leaf:${interrupt("leaf question") as string}`] }))
    .addNode("again", () => ({ path: [`leaf again:${interrupt("second question") as string}`] }))
    .addEdge(START, "ask")
    .addEdge("ask", "again")
    .addEdge("again", END)
    .compile()
  const middle = new StateGraph(State)
    .addNode("before", () => ({ path: ["middle"] }))
    .addNode("leaf", leaf)
    .addEdge(START, "before")
    .addEdge("before", "leaf")
    .addEdge("leaf", END)
    .compile()
  return runnable(
    new StateGraph(State)
      .addNode("root", () => ({ path: ["root"] }))
      .addNode("middle", middle)
      .addNode("after", () => ({ path: ["after"] }))
      .addEdge(START, "root")
      .addEdge("root", "middle")
      .addEdge("middle", "after")
      .addEdge("after", END)
      .compile({ checkpointer: probe.saver })
  )
}

const subgraphs: Scenario = {
  name: "subgraphs three deep: interrupts inside, state and history per namespace, resumes",
  run: async (probe) => {
    const graph = threeDeep(probe)
    const config = probe.thread()
    await probe.stream("run", graph, { path: [] }, config)
    const configs = async (label: string) => {
      const state = await probe.state(label, graph, config) as {
        tasks: Array<{ state?: { config?: RunnableConfig; tasks?: Array<{ state?: { config?: RunnableConfig } }> } }>
      }
      return { middle: state.tasks[0]?.state?.config, leaf: state.tasks[0]?.state?.tasks?.[0]?.state?.config }
    }
    const paused = await configs("paused in the leaf")
    await probe.state("the middle graph", graph, paused.middle!)
    await probe.state("the leaf graph", graph, paused.leaf!)
    await probe.stream("first answer", graph, new Command({ resume: "one" }), config)
    // The leaf's state edited where it waits, then resumed.
    const again = await configs("paused again")
    await probe.attempt("edit the leaf", () => graph.updateState(again.leaf!, { path: ["edited in the leaf"] }))
    await probe.state("the leaf after the edit", graph, again.leaf!)
    await probe.stream("second answer", graph, new Command({ resume: "two" }), config)
    await probe.state("done", graph, config)
    // The fixture two levels deep, through invoke.
    const nested = runnable(nestedGraph(probe.saver))
    const other = probe.thread()
    await probe.invoke("nested", nested, { value: "x" }, other)
    await probe.invoke("nested resumed", nested, new Command({ resume: "answer" }), other)
    await probe.state("nested done", nested, other)
  }
}

const sends: Scenario = {
  name: "Send: a map over workers and subgraphs, one of them interrupting, then reduced",
  run: async (probe) => {
    const State = Annotation.Root({
      topics: Annotation<Array<string>>,
      results: Annotation<Array<string>>({ reducer: (a, b) => a.concat(b).sort(), default: () => [] }),
      summary: Annotation<string>
    })
    const Job = Annotation.Root({ topic: Annotation<string>, results: Annotation<Array<string>> })
    const research = new StateGraph(Job)
      .addNode("dig", (job) => ({ results: [`dug ${job.topic}`] }))
      .addEdge(START, "dig")
      .addEdge("dig", END)
      .compile()
    const graph = runnable(
      new StateGraph(State)
        .addNode("plan", () => ({}))
        .addNode("write", (job: { topic: string }) => ({
          results: [
            job.topic === "risky" ? `${job.topic}: ${interrupt(`write about ${job.topic}?`) as string}` : job.topic
          ]
        }))
        .addNode("research", research)
        .addNode("reduce", (state) => ({ summary: state.results.join(", ") }))
        .addEdge(START, "plan")
        .addConditionalEdges("plan", (state) => [
          ...state.topics.map((topic) => new Send("write", { topic })),
          new Send("research", { topic: state.topics[0]!, results: [] })
        ], ["write", "research"])
        .addEdge("write", "reduce")
        .addEdge("research", "reduce")
        .addEdge("reduce", END)
        .compile({ checkpointer: probe.saver })
    )
    const config = probe.thread()
    await probe.stream("map", graph, { topics: ["cats", "risky", "dogs"] }, config)
    await probe.state("one worker paused", graph, config)
    await probe.stream("answer", graph, new Command({ resume: "carefully" }), config)
    await probe.state("reduced", graph, config)
  }
}

const commands: Scenario = {
  name: "Command: goto with an update, and a subgraph node going to its parent (graph: PARENT)",
  run: async (probe) => {
    const State = Annotation.Root({
      log: Annotation<Array<string>>({ reducer: (a, b) => a.concat(b), default: () => [] }),
      route: Annotation<string>
    })
    const child = new StateGraph(State)
      .addNode("escalate", () => new Command({ graph: Command.PARENT, goto: "human", update: { log: ["escalated"] } }))
      .addEdge(START, "escalate")
      .compile()
    const graph = runnable(
      new StateGraph(State)
        .addNode(
          "router",
          (state) =>
            new Command({
              goto: state.route === "escalate" ? "child" : "bot",
              update: { log: [`routed ${state.route}`] }
            }),
          { ends: ["bot", "child"] }
        )
        .addNode("bot", () => ({ log: ["bot"] }))
        .addNode("child", child, { ends: ["human"] })
        .addNode("human", () => ({ log: [`human: ${interrupt("take over?") as string}`] }))
        .addEdge(START, "router")
        .addEdge("bot", END)
        .addEdge("human", END)
        .compile({ checkpointer: probe.saver })
    )
    const config = probe.thread()
    await probe.stream("to the bot", graph, { route: "bot" }, config)
    await probe.stream("escalated", graph, { route: "escalate" }, config)
    await probe.state("waiting for a human", graph, config)
    await probe.stream("taken over", graph, new Command({ resume: "yes", goto: "bot" }), config)
    await probe.state("done", graph, config)
  }
}

const durability: Scenario = {
  name: "durability sync, async and exit, each with an interrupt and a resume",
  run: async (probe) => {
    const graph = runnable(
      new StateGraph(Log)
        .addNode("one", () => ({ log: ["one"] }))
        .addNode("two", () => ({ log: [`two:${interrupt("continue?") as string}`] }))
        .addNode("three", () => ({ log: ["three"] }))
        .addEdge(START, "one")
        .addEdge("one", "two")
        .addEdge("two", "three")
        .addEdge("three", END)
        .compile({ checkpointer: probe.saver })
    )
    for (const mode of ["sync", "async", "exit"] as const) {
      const config = { ...probe.thread(), durability: mode }
      await probe.stream(`${mode}: run`, graph, { log: [] }, config)
      await probe.state(`${mode}: paused`, graph, config)
      await probe.invoke(`${mode}: resume`, graph, new Command({ resume: "go" }), config)
      await probe.state(`${mode}: done`, graph, config)
    }
  }
}

const parallel: Scenario = {
  name: "parallel branches: a pending write kept across an interrupt and across a failed sibling",
  run: async (probe) => {
    let failures = 1
    // (No Uint8Array write: MemorySaver fails to read one back; the graph scenarios cover them.)
    const State = Annotation.Root({
      log: Annotation<Array<string>>({ reducer: (a, b) => [...a, ...b].sort(), default: () => [] })
    })
    const graph = runnable(
      new StateGraph(State)
        .addNode("fast", () => ({ log: ["fast"] }))
        .addNode("ask", () => ({ log: [`ask:${interrupt("which?") as string}`] }))
        .addNode("flaky", () => {
          if (failures-- > 0) throw new Error("flaky failed")
          return { log: ["flaky"] }
        })
        .addNode("join", (state) => ({ log: [`join ${state.log.length}`] }))
        .addEdge(START, "fast")
        .addEdge(START, "ask")
        .addEdge(START, "flaky")
        .addEdge(["fast", "ask", "flaky"], "join")
        .addEdge("join", END)
        .compile({ checkpointer: probe.saver })
    )
    const config = probe.thread()
    await probe.invoke("fan out: one fails", graph, { log: [] }, config)
    await probe.state("after the failure", graph, config)
    await probe.stream("retry: now one asks", graph, null, config)
    await probe.state("paused", graph, config)
    await probe.stream("answer", graph, new Command({ resume: "this" }), config)
    await probe.state("joined", graph, config)
  }
}

const errors: Scenario = {
  name: "an error in a node, then a retry from the same checkpoint; a retry policy",
  run: async (probe) => {
    let attempts = 0
    let retried = 0
    const graph = runnable(
      new StateGraph(Log)
        .addNode("prepare", () => ({ log: ["prepare"] }))
        .addNode("call", () => {
          attempts++
          if (attempts === 1) throw new Error("the tool timed out")
          return { log: [`call ${attempts}`] }
        })
        .addNode("retrying", () => {
          if (retried++ < 2) throw new Error("transient")
          return { log: [`retrying ${retried}`] }
        }, { retryPolicy: { maxAttempts: 3, initialInterval: 1, jitter: false } })
        .addEdge(START, "prepare")
        .addEdge("prepare", "call")
        .addEdge("call", "retrying")
        .addEdge("retrying", END)
        .compile({ checkpointer: probe.saver })
    )
    const config = probe.thread()
    await probe.invoke("fails", graph, { log: [] }, config)
    await probe.state("failed", graph, config)
    await probe.stream("retried", graph, null, config)
    await probe.state("done", graph, config)
  }
}

const delta: Scenario = {
  name: "DeltaChannel (MessagesDeltaValue and a DeltaValue with snapshots): turns, history, a fork",
  run: async (probe) => {
    const graph = runnable(deltaGraph(probe.saver))
    const config = probe.thread()
    for (let turn = 0; turn < 5; turn++) {
      const input = { messages: [new HumanMessage(`q${turn}`)] }
      if (turn % 2 === 0) await probe.invoke(`turn ${turn}`, graph, input, config)
      else await probe.stream(`turn ${turn}`, graph, input, config)
    }
    await probe.state("after five turns", graph, config)
    const steps = await history(graph, config)
    const afterTwo = steps.find((step) => (step.values.log as Array<string>).length === 2 && step.next.length === 0)!
    const fork = await probe.attempt(
      "fork after two turns",
      () => graph.updateState(afterTwo.config, { messages: [new AIMessage("edited")], log: "edited" })
    )
    await probe.stream("continue the fork", graph, { messages: [new HumanMessage("on the fork")] }, fork!)
    await probe.state("the fork", graph, config)
  }
}

const framed: Scenario = {
  name: "values written around an array of messages (DeltaChannel snapshots, each turn's input): framed lists",
  run: async (probe) => {
    // A DeltaValue snapshot every 2 updates: the snapshots are framed lists.
    const graph = runnable(framedGraph(probe.saver))
    const config = probe.thread()
    for (let turn = 0; turn < 6; turn++) {
      // Each input `{ messages: [...] }` is a framed list too, in the `__start__` channel.
      const input = { messages: [new HumanMessage(long(`question ${turn}`))] }
      if (turn % 2 === 0) await probe.invoke(`turn ${turn}`, graph, input, config)
      else await probe.stream(`turn ${turn}`, graph, input, config)
    }
    await probe.state("after six turns", graph, config)
    const steps = await history(graph, config)
    const afterTwo = steps.find((step) =>
      (step.values.messages as Array<unknown>).length === 4 && step.next.length === 0
    )!
    const fork = await probe.attempt(
      "fork after two turns",
      () => graph.updateState(afterTwo.config, { messages: [new AIMessage(long("edited"))] })
    )
    await probe.stream("continue the fork", graph, { messages: [new HumanMessage(long("on the fork"))] }, fork!)
    await probe.state("the fork", graph, config)
  }
}

const functional: Scenario = {
  name: "the functional API: an entrypoint with tasks, an interrupt and getPreviousState",
  run: async (probe) => {
    const double = task("double", async (n: number) => n * 2)
    const workflow = entrypoint({ name: "workflow", checkpointer: probe.saver }, async (n: number) => {
      const doubled = await double(n)
      const approved = interrupt({ doubled }) as boolean
      // The thread's previous return value, read from the checkpoint.
      const total = getPreviousState<number>() ?? 0
      return total + (approved ? doubled : -1)
    })
    const graph = runnable(workflow)
    const config = probe.thread()
    await probe.stream("start", graph, 21, config)
    await probe.state("paused", graph, config)
    await probe.stream("approve", graph, new Command({ resume: true }), config)
    await probe.state("done", graph, config)
    await probe.invoke("again", graph, 5, config)
    await probe.invoke("decline", graph, new Command({ resume: false }), config)
    await probe.state("declined", graph, config)
  }
}

/** A `MemorySaver` storing the run id as this library does by default: LangGraph's server keeps it too. */
class RunIdMemorySaver extends MemorySaver {
  override put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata) {
    const run_id = config.metadata?.run_id
    return super.put(
      config,
      checkpoint,
      run_id === undefined ? metadata : { ...metadata, run_id } as CheckpointMetadata
    )
  }
}

/** Two invokes under one `run_id`: the second is the run retried. */
const sameRunTwice = async (probe: Probe) => {
  const graph = runnable(chatGraph(probe.saver))
  const config = probe.thread()
  await probe.invoke("run r1", graph, { messages: [new HumanMessage("first")] }, {
    ...config,
    metadata: { run_id: "r1" }
  })
  await probe.invoke("run r1 again, new input", graph, { messages: [new HumanMessage("second")] }, {
    ...config,
    metadata: { run_id: "r1" }
  })
  await probe.invoke("run r2 (a configurable run id)", graph, { messages: [new HumanMessage("third")] }, {
    configurable: { ...config.configurable, run_id: "r2" }
  })
  await probe.state("after the runs", graph, config)
  // An approval paused in one run and resumed in another.
  const approval = runnable(approvalGraph(probe.saver))
  const paused = probe.thread()
  await probe.invoke("approval run a", approval, { request: "x" }, { ...paused, metadata: { run_id: "a" } })
  await probe.invoke("approval run b", approval, new Command({ resume: "ok" }), {
    ...paused,
    metadata: { run_id: "b" }
  })
  await probe.state("approved", approval, paused)
}

/**
 * Run ids are stored (default): a second invoke under the run id of the
 * thread's latest checkpoint is, for LangGraph, that run resumed, and its
 * new input is not used — as on LangGraph's server, which stores run ids
 * too. The oracle is `MemorySaver` storing them the same way; `run ids not
 * recorded` shows the plain `MemorySaver` behaviour.
 */
const runIds: Scenario = {
  name: "run ids recorded: a second invoke with the latest run id resumes that run",
  oracle: () => new RunIdMemorySaver(),
  run: sameRunTwice
}

const runIdsNotRecorded: Scenario = {
  name: "run ids not recorded (metadataFromConfig: []): exactly MemorySaver",
  options: { metadataFromConfig: [] },
  run: sameRunTwice
}

export const parityScenarios: ReadonlyArray<Scenario> = [
  chat,
  interrupts,
  staticInterrupts,
  timeTravel,
  subgraphs,
  sends,
  commands,
  durability,
  parallel,
  errors,
  delta,
  framed,
  functional,
  runIds,
  runIdsNotRecorded
]
