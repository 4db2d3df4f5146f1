/**
 * The invoke loop's graph: one agent node answering each human message with
 * an AI message of ~800 bytes, on LangGraph's `MessagesAnnotation`. Shared
 * by the bench's invoke loop and its profile.
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages"
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph"
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint"
import { text } from "./workload.mjs"

const builder = new StateGraph(MessagesAnnotation)
  .addNode("agent", (state) => ({ messages: [new AIMessage({ content: text(130) })], step: state.messages.length }))
  .addEdge(START, "agent")
  .addEdge("agent", END)

export const agentGraph = (checkpointer: BaseCheckpointSaver) => builder.compile({ checkpointer })

/** A turn's input: the human message, made before the turn is timed (it is the user's, not the saver's, work). */
export const agentInput = () => ({ messages: [new HumanMessage(text(130))] })

/** One turn on `thread_id`: a human message in, the agent's answer out. */
export const agentTurn = (app: ReturnType<typeof agentGraph>, thread_id: string, input = agentInput()) =>
  app.invoke(input, { configurable: { thread_id } })
