/**
 * Conversation memory: each turn on a thread sees the earlier ones; another
 * thread starts empty. `npm run example:memory`
 */
import { EffectCheckpointSaver } from "../src/index.ts"
import { buildAgent, say, text } from "./agent/graph.ts"

// An embedded PostgreSQL in memory; "pglite:<dir>" would keep it on disk, for one process at a time.
const checkpointer = await EffectCheckpointSaver.fromConnString("pglite:")
const agent = buildAgent(checkpointer)

const ada = { configurable: { thread_id: "ada" } }
const bob = { configurable: { thread_id: "bob" } }

for (
  const [config, message] of [[ada, "Hi, I'm Ada."], [ada, "What turn is this?"], [bob, "Hi, I'm Bob."], [
    ada,
    "And now?"
  ]] as const
) {
  const state = await agent.invoke(say(message), config)
  console.log(`${config.configurable.thread_id.padEnd(4)} user:  ${message}`)
  console.log(`${config.configurable.thread_id.padEnd(4)} agent: ${text(state.messages.at(-1))}`)
}

await checkpointer.close()
