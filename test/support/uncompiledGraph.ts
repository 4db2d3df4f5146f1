/**
 * A module exporting a graph not compiled yet, as a newcomer might give
 * `serve` (which says to export its `.compile()`).
 */
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph"

export const builder = new StateGraph(MessagesAnnotation)
  .addNode("echo", () => ({}))
  .addEdge(START, "echo")
  .addEdge("echo", END)
