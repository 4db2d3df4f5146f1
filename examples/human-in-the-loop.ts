/**
 * Human in the loop: a tool call pauses the run with `interrupt()`; the
 * checkpoint keeps it waiting until `Command({ resume })` answers.
 * `npm run example:human-in-the-loop`
 */
import { Command } from "@langchain/langgraph"
import { EffectCheckpointSaver } from "../src/index.ts"
import { buildAgent, question, say, text } from "./agent/graph.ts"

const checkpointer = await EffectCheckpointSaver.fromConnString("pglite:")
const agent = buildAgent(checkpointer)
const config = { configurable: { thread_id: "approvals" } }

for (const [note, answer] of [["buy milk", "yes"], ["delete everything", "no"]] as const) {
  await agent.invoke(say(`remember: ${note}`), config)
  const paused = await agent.getState(config)
  const asking = paused.tasks.flatMap((task) => task.interrupts)[0]?.value
  console.log(`paused at [${paused.next.join(", ")}]: ${question(asking)}`)
  const resumed = await agent.invoke(new Command({ resume: answer }), config)
  console.log(`answered "${answer}": ${text(resumed.messages.at(-1))} notes=${JSON.stringify(resumed.notes)}`)
}

await checkpointer.close()
