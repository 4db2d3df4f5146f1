/**
 * What the inspector is tested on: real LangGraph graphs persisting through
 * a saver, writing threads with everything the inspector has to show — a
 * conversation of several turns with a fork, a graph paused at an
 * interrupt, a subgraph's checkpoints in a child namespace, DeltaValue
 * channels, runs with a `run_id`, a tool-using agent whose pending tool call
 * a human edited, and a message made to attack a terminal (an escape
 * sequence) and a web page (a script tag).
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages"
import { tool } from "@langchain/core/tools"
import {
  Annotation,
  Command,
  DeltaValue,
  END,
  interrupt,
  MessagesAnnotation,
  messagesDeltaReducer,
  MessagesDeltaValue,
  START,
  StateGraph,
  StateSchema
} from "@langchain/langgraph"
import type { BaseCheckpointSaver, CheckpointTuple } from "@langchain/langgraph-checkpoint"
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt"
import { z } from "zod"

/** A message that must reach a terminal escaped: it would turn the text red, or run in a page. */
export const CANARY = "canary \u001b[31mRED <script>alert(1)</script>"

export const text = (message: { content: unknown }) => String(message.content)

/** A scripted chat model: answers with what it was told and how long the conversation is. */
export const chatGraph = (saver: BaseCheckpointSaver) =>
  new StateGraph(MessagesAnnotation)
    .addNode("model", (state) => ({
      messages: [new AIMessage(`heard "${text(state.messages.at(-1)!)}" (${state.messages.length} messages)`)]
    }))
    .addEdge(START, "model")
    .addEdge("model", END)
    .compile({ checkpointer: saver })

/** Three nodes in a row, each appending its name: a thread to travel in time and fork. */
export const stepsGraph = (saver: BaseCheckpointSaver) => {
  const State = Annotation.Root({
    steps: Annotation<Array<string>>({ reducer: (a, b) => a.concat(b), default: () => [] })
  })
  return new StateGraph(State)
    .addNode("a", () => ({ steps: ["a"] }))
    .addNode("b", () => ({ steps: ["b"] }))
    .addNode("c", () => ({ steps: ["c"] }))
    .addEdge(START, "a")
    .addEdge("a", "b")
    .addEdge("b", "c")
    .addEdge("c", END)
    .compile({ checkpointer: saver })
}

export const approvalGraph = (saver: BaseCheckpointSaver) => {
  const State = Annotation.Root({ request: Annotation<string>, decision: Annotation<string> })
  return new StateGraph(State)
    .addNode("review", () => ({ decision: interrupt<string, string>("approve?") }))
    .addEdge(START, "review")
    .addEdge("review", END)
    .compile({ checkpointer: saver })
}

export const nestedGraph = (saver: BaseCheckpointSaver) => {
  const State = Annotation.Root({ value: Annotation<string> })
  const inner = new StateGraph(State)
    .addNode("ask", (state) => ({ value: `${state.value}+${interrupt<string, string>("inner question")}` }))
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile()
  return new StateGraph(State)
    .addNode("child", inner)
    .addNode("after", (state) => ({ value: `${state.value}+after` }))
    .addEdge(START, "child")
    .addEdge("child", "after")
    .addEdge("after", END)
    .compile({ checkpointer: saver })
}

export const deltaGraph = (saver: BaseCheckpointSaver) => {
  const State = new StateSchema({
    messages: MessagesDeltaValue,
    // A snapshot every 2 updates: reads combine a snapshot seed with replayed writes.
    log: new DeltaValue(z.array(z.string()).default(() => []), {
      inputSchema: z.string(),
      reducer: (current: Array<string>, writes: Array<string>) => [...current, ...writes],
      snapshotFrequency: 2
    })
  })
  return new StateGraph(State)
    .addNode("model", (state) => ({
      messages: [new AIMessage(`reply ${state.messages.length}`)],
      log: `turn ${state.log.length}`
    }))
    .addEdge(START, "model")
    .addEdge("model", END)
    .compile({ checkpointer: saver })
}

/** A message long enough (~300 bytes) for structural sharing to give it a piece. */
export const long = (label: string) => `${label}: `.padEnd(300, "lorem ipsum ")

/**
 * Messages in a DeltaValue with a snapshot every 2 updates (MessagesDeltaValue
 * snapshots every 100), the model answering at length: each turn's input and
 * every snapshot are an array of messages written inside some text, stored as
 * framed lists where the store's format level has them.
 */
export const framedGraph = (saver: BaseCheckpointSaver) => {
  const messages = z.custom<Array<BaseMessage>>()
  const State = new StateSchema({
    messages: new DeltaValue(messages.default(() => []), {
      inputSchema: messages,
      reducer: messagesDeltaReducer,
      snapshotFrequency: 2
    })
  })
  return new StateGraph(State)
    .addNode("model", (state) => ({ messages: [new AIMessage(long(`reply ${state.messages.length}`))] }))
    .addEdge(START, "model")
    .addEdge("model", END)
    .compile({ checkpointer: saver })
}

/** The tool the agent calls: what the weather is in a city. */
const weather = tool(({ city }: { city: string }) => `${city}: 21 degrees, sunny`, {
  name: "get_weather",
  description: "The weather in a city",
  schema: z.object({ city: z.string() })
})

/** What the scripted model reports of its call, as a provider's model would. */
export const USAGE = { input_tokens: 12, output_tokens: 7, total_tokens: 19 }
export const MODEL_NAME = "scripted-model"

/**
 * A tool-using agent (LangGraph's ReAct shape): a scripted model that asks
 * for the weather in Paris with a tool call, then answers with the tool's
 * result; `ToolNode` runs the call. It pauses before the tools, where a human
 * reviews the call.
 */
export const toolsGraph = (saver: BaseCheckpointSaver) =>
  new StateGraph(MessagesAnnotation)
    .addNode("model", (state) => {
      const last = state.messages.at(-1)!
      const answered = ToolMessage.isInstance(last)
      return {
        messages: [
          new AIMessage({
            content: answered ? `the weather: ${text(last)}` : "",
            tool_calls: answered
              ? []
              : [{ name: "get_weather", args: { city: "Paris" }, id: "call_weather_1", type: "tool_call" }],
            // (The fields type of AIMessage does not admit usage_metadata; the constructor does.)
            usage_metadata: USAGE as never,
            response_metadata: { model_name: MODEL_NAME }
          })
        ]
      }
    })
    .addNode("tools", new ToolNode([weather]))
    .addEdge(START, "model")
    .addConditionalEdges("model", toolsCondition, ["tools", END])
    .addEdge("tools", "model")
    .compile({ checkpointer: saver, interruptBefore: ["tools"] })

/** The channels of the DeltaValue thread, for `getDeltaChannelHistory`. */
export const DELTA_CHANNELS = ["messages", "log"]

const configOf = (thread_id: string) => ({ configurable: { thread_id } })

export interface ChatThread {
  /** The checkpoint after the first turn: the fork's parent. */
  readonly afterFirstTurn: string
  /** The end of the original branch (three turns), no longer the thread's latest. */
  readonly originalHead: string
  /** The checkpoint `updateState` made. */
  readonly fork: string
}

/**
 * "chat": three turns, then a fork from the checkpoint after the first
 * turn (`updateState` adds a message there) continued with the canary as
 * the next turn — the thread's latest checkpoint is on the fork.
 */
export const writeChat = async (saver: BaseCheckpointSaver, thread_id = "chat"): Promise<ChatThread> => {
  const graph = chatGraph(saver)
  const config = configOf(thread_id)
  for (const turn of ["hello", "how are you", "tell me more"]) {
    await graph.invoke({ messages: [new HumanMessage(turn)] }, config)
  }
  const history = []
  for await (const snapshot of graph.getStateHistory(config)) history.push(snapshot)
  const originalHead = String(history[0]!.config.configurable?.checkpoint_id)
  const first = history.find((snapshot) => snapshot.values.messages?.length === 2 && snapshot.next.length === 0)!
  const forked = await graph.updateState(first.config, { messages: [new HumanMessage("forked question")] })
  await graph.invoke({ messages: [new HumanMessage(CANARY)] }, forked)
  return {
    afterFirstTurn: String(first.config.configurable?.checkpoint_id),
    originalHead,
    fork: String(forked.configurable?.checkpoint_id)
  }
}

/** "approval": paused at `interrupt("approve?")`. */
export const writeApproval = async (saver: BaseCheckpointSaver, thread_id = "approval") => {
  await approvalGraph(saver).invoke({ request: "deploy" }, configOf(thread_id))
}

/** "nested": a subgraph that interrupted and was resumed: checkpoints in a `child:…` namespace. */
export const writeNested = async (saver: BaseCheckpointSaver, thread_id = "nested") => {
  const graph = nestedGraph(saver)
  await graph.invoke({ value: "x" }, configOf(thread_id))
  await graph.invoke(new Command({ resume: "answer" }), configOf(thread_id))
}

/** "delta": MessagesDeltaValue and a DeltaValue log over four turns. */
export const writeDelta = async (saver: BaseCheckpointSaver, thread_id = "delta") => {
  const graph = deltaGraph(saver)
  for (let turn = 0; turn < 4; turn++) {
    await graph.invoke({ messages: [new HumanMessage(`q${turn}`)] }, configOf(thread_id))
  }
}

/**
 * The "tools" thread's question: longer than a preview (60 characters), so
 * the inspector's drawing must cut its label whatever the font.
 */
export const TOOLS_QUESTION = "what is the weather in Paris this afternoon, and should I take an umbrella with me?"

export interface ToolsThread {
  /** Paused before the tools, the model's call as it asked: `{ city: "Paris" }`. */
  readonly paused: string
  /** After the human's edit (`updateState`): the same message, `{ city: "Lyon" }`. */
  readonly edited: string
}

/**
 * "tools": the agent asks for the weather in Paris and pauses before its
 * tools; a human edits the pending call to Lyon (LangGraph's review-and-edit
 * pattern: the AIMessage replaced by one with the same id), and the run goes
 * on: the tool answers for Lyon, the model answers with it.
 */
export const writeTools = async (saver: BaseCheckpointSaver, thread_id = "tools"): Promise<ToolsThread> => {
  const graph = toolsGraph(saver)
  const config = configOf(thread_id)
  await graph.invoke({ messages: [new HumanMessage(TOOLS_QUESTION)] }, config)
  const paused = await graph.getState(config)
  const call = paused.values.messages.at(-1) as AIMessage
  const edited = await graph.updateState(config, {
    messages: [
      new AIMessage({
        content: call.content,
        id: call.id!,
        tool_calls: call.tool_calls!.map((toolCall) => ({ ...toolCall, args: { city: "Lyon" } })),
        usage_metadata: call.usage_metadata!,
        response_metadata: call.response_metadata
      })
    ]
  })
  await graph.invoke(null, config)
  return {
    paused: String(paused.config.configurable?.checkpoint_id),
    edited: String(edited.configurable?.checkpoint_id)
  }
}

/** The run ids the "runs" thread's turns carry in their metadata (as LangGraph's server passes them). */
export const RUNS = ["run-a", "run-b"] as const

/** "runs": two turns, each run with its `run_id` in the config's metadata. */
export const writeRuns = async (saver: BaseCheckpointSaver, thread_id = "runs") => {
  const graph = chatGraph(saver)
  for (const run_id of RUNS) {
    await graph.invoke({ messages: [new HumanMessage(`from ${run_id}`)] }, {
      ...configOf(thread_id),
      metadata: { run_id }
    })
  }
}

export const THREADS = ["chat", "approval", "nested", "delta", "runs", "tools"] as const

/** Writes every thread. */
export const writeInspected = async (
  saver: BaseCheckpointSaver
): Promise<{ readonly chat: ChatThread; readonly tools: ToolsThread }> => {
  const chat = await writeChat(saver)
  await writeApproval(saver)
  await writeNested(saver)
  await writeDelta(saver)
  await writeRuns(saver)
  const tools = await writeTools(saver)
  return { chat, tools }
}

export const collect = async (
  saver: BaseCheckpointSaver,
  config: Parameters<BaseCheckpointSaver["list"]>[0]
): Promise<Array<CheckpointTuple>> => {
  const tuples: Array<CheckpointTuple> = []
  for await (const tuple of saver.list(config)) tuples.push(tuple)
  return tuples
}

/** What two savers (or a saver before and after) must agree on for a tuple. */
export const view = (tuple: CheckpointTuple | undefined) =>
  tuple === undefined ? undefined : {
    thread_id: tuple.config.configurable?.thread_id,
    checkpoint_ns: tuple.config.configurable?.checkpoint_ns,
    checkpoint_id: tuple.config.configurable?.checkpoint_id,
    parent_checkpoint_id: tuple.parentConfig?.configurable?.checkpoint_id,
    checkpoint: tuple.checkpoint,
    metadata: tuple.metadata,
    pendingWrites: tuple.pendingWrites
  }

/** A tuple's address: namespace and id. */
export const address = (tuple: CheckpointTuple) => ({
  checkpoint_ns: String(tuple.config.configurable?.checkpoint_ns ?? ""),
  checkpoint_id: String(tuple.config.configurable?.checkpoint_id),
  parent_checkpoint_id: tuple.parentConfig?.configurable?.checkpoint_id === undefined
    ? null
    : String(tuple.parentConfig.configurable.checkpoint_id)
})

/** The run that writes the "forest" thread's shared trunk: removing it leaves two trees. */
export const TRUNK_RUN = "trunk-run"

/**
 * "forest": a turn by `TRUNK_RUN`, continued by run "left-run", and forked
 * from the trunk's end (time travel) by run "right-run". After `delete-runs
 * trunk-run`, two parentless chains: the thread's history is a forest.
 */
export const writeForest = async (saver: BaseCheckpointSaver, thread_id = "forest") => {
  const graph = chatGraph(saver)
  const config = configOf(thread_id)
  await graph.invoke({ messages: [new HumanMessage("trunk")] }, { ...config, metadata: { run_id: TRUNK_RUN } })
  const trunk = await graph.getState(config)
  await graph.invoke({ messages: [new HumanMessage("left")] }, { ...config, metadata: { run_id: "left-run" } })
  await graph.invoke({ messages: [new HumanMessage("right")] }, { ...trunk.config, metadata: { run_id: "right-run" } })
}
