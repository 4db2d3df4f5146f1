/**
 * Time travel: list a thread's checkpoints, replay from one of them, and
 * fork the thread by changing the state at an earlier checkpoint.
 * `npm run example:time-travel`
 */
import { HumanMessage } from "@langchain/core/messages"
import { EffectCheckpointSaver } from "../src/index.ts"
import { buildAgent, say, text } from "./agent/graph.ts"

const checkpointer = await EffectCheckpointSaver.fromConnString("pglite:")
const agent = buildAgent(checkpointer)
const config = { configurable: { thread_id: "travel" } }

await agent.invoke(say("Hi, I'm Ada."), config)
await agent.invoke(say("Second turn."), config)

const history = []
for await (const snapshot of agent.getStateHistory(config)) history.push(snapshot)
console.log("history, newest first:")
for (const snapshot of history) {
  const last = snapshot.values.messages?.at(-1)
  console.log(
    `  ${snapshot.config.configurable?.checkpoint_id}  next=[${snapshot.next.join(",")}]  ${
      last ? text(last) : "(empty)"
    }`
  )
}

// The checkpoint where the model was about to answer the first turn.
const first = history.findLast((snapshot) => snapshot.next.includes("model"))!
const replayed = await agent.invoke(null, first.config)
console.log(`replayed from the first turn:  ${text(replayed.messages.at(-1))}`)

const said = first.values.messages.at(-1)!
const fork = await agent.updateState(first.config, {
  messages: [new HumanMessage({ id: said.id!, content: "Hi, I'm Grace." })]
})
const forked = await agent.invoke(null, fork)
console.log(`forked at the first turn:      ${text(forked.messages.at(-1))}`)
const forkState = await agent.getState(fork)
console.log(
  `the fork's parent is ${forkState.parentConfig?.configurable?.checkpoint_id}, the checkpoint it was made from`
)

await checkpointer.close()
