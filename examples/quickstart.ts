/**
 * `npm start`: a small LangGraph agent whose state persists through
 * EffectCheckpointSaver. No server and no API key: the "model" is scripted.
 *
 * It shows conversation memory on a thread, a human-in-the-loop interrupt
 * resumed with Command({ resume }), and the thread's history.
 */
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages"
import { Annotation, Command, END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph"
import { EffectCheckpointSaver } from "../src/index.ts"

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  approved: Annotation<boolean>
})

const text = (message: BaseMessage) => String(message.content)

const graph = new StateGraph(State)
  // A scripted model: it remembers what it was told earlier in the thread.
  .addNode("model", (state) => {
    const said = state.messages.filter((m) => m.getType() === "human").map(text)
    return { messages: [new AIMessage(`You have told me: ${said.join(" / ")}`)] }
  })
  // A human-in-the-loop step: the run pauses here until someone answers.
  .addNode("review", () => ({ approved: interrupt<string, string>("Send this reply?") === "yes" }))
  .addEdge(START, "model")
  .addEdge("model", "review")
  .addEdge("review", END)

const url = process.env.CHECKPOINTER_URL ?? "memory:"
const checkpointer = await EffectCheckpointSaver.fromConnString(url)
const app = graph.compile({ checkpointer })
const config = { configurable: { thread_id: process.env.THREAD_ID ?? "quickstart" } }

const turn = async (input: string) => {
  await app.invoke({ messages: [new HumanMessage(input)] }, config)
  const paused = await app.getState(config)
  console.log(`user   > ${input}`)
  console.log(`model  > ${text(paused.values.messages.at(-1))}`)
  console.log(`pause  > ${String(paused.tasks[0]?.interrupts[0]?.value)} (waiting at "${paused.next.join(", ")}")`)
  const done = await app.invoke(new Command({ resume: "yes" }), config)
  console.log(`resume > approved=${String(done.approved)}\n`)
}

console.log(`checkpointer: ${url}, thread: ${config.configurable.thread_id}\n`)
await turn("My name is Ada.")
await turn("I like graphs.")

console.log("history (newest first):")
for await (const snapshot of app.getStateHistory(config)) {
  const { step, source } = snapshot.metadata ?? {}
  const last = snapshot.values.messages?.at(-1)
  console.log(
    `  step ${String(step).padStart(2)} ${String(source).padEnd(6)} next=[${snapshot.next.join(",")}]`.padEnd(44) +
      (last ? `${last.getType()}: ${text(last).slice(0, 40)}` : "(empty)")
  )
}

await checkpointer.close()
