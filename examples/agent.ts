/**
 * `npm start`: a LangGraph agent whose state persists in an embedded
 * PostgreSQL (PGlite) in `.data/agent`. No server, no API key.
 *
 * One run shows conversation memory, a human-in-the-loop interrupt left for
 * the next run to resume, and time travel (history, replay, a fork). Run it
 * again: it resumes the interrupt the previous run left and remembers
 * everything, because the checkpoints are on disk.
 *
 *   npm start                        continue the thread "demo"
 *   npm start -- --thread alice      another thread
 *   npm start -- --reset             delete the thread first
 *   DATABASE_URL=postgres://… npm start   use PostgreSQL instead
 *
 * `.data/agent` is one process's database: a second `npm start` while one
 * runs fails with DatabaseLocked, and `npx langgraph-checkpoints threads
 * pglite:.data/agent` reads a snapshot of it meanwhile.
 */
import { HumanMessage } from "@langchain/core/messages"
import { Command } from "@langchain/langgraph"
import { parseArgs } from "node:util"
import { EffectCheckpointSaver } from "../src/index.ts"
import { buildAgent, question, say, text } from "./agent/graph.ts"

const { values: options } = parseArgs({
  options: {
    thread: { type: "string", default: "demo" },
    reset: { type: "boolean", default: false },
    "data-dir": { type: "string", default: ".data/agent" }
  }
})

const url = process.env.DATABASE_URL || `pglite:${options["data-dir"]}`
const checkpointer = await EffectCheckpointSaver.fromConnString(url).catch((error: unknown) => {
  // What is wrong with the database, in the one line the error says it (a stack trace would bury it).
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})
const agent = buildAgent(checkpointer)
const config = { configurable: { thread_id: options.thread } }
const line = (label: string, content: string) => console.log(`${label.padEnd(8)} ${content}`)

console.log(
  `checkpoints: ${url.startsWith("pglite:") ? `PGlite in ${options["data-dir"]}` : "PostgreSQL (DATABASE_URL)"}`
)
console.log(`thread:      ${options.thread}\n`)

if (options.reset) {
  await checkpointer.deleteThread(options.thread)
  line("reset", "the thread was deleted")
}

// 1. A previous run may have left an approval waiting: resume it.
const waiting = await agent.getState(config)
const pending = waiting.tasks.flatMap((task) => task.interrupts)[0]
if (pending !== undefined) {
  line("resume", `${question(pending.value)} (asked by an earlier run) -> yes`)
  const resumed = await agent.invoke(new Command({ resume: "yes" }), config)
  line("agent", text(resumed.messages.at(-1)))
}

// 2. Conversation memory: the agent sees every earlier turn of the thread.
const before = await agent.invoke(say("Hi, I'm Ada."), config)
line("user", "Hi, I'm Ada.")
line("agent", text(before.messages.at(-1)))

// 3. Time travel: the thread's history, newest first.
console.log("\nhistory (newest first):")
const history = []
for await (const snapshot of agent.getStateHistory(config)) history.push(snapshot)
for (const snapshot of history.slice(0, 8)) {
  const { source, step } = snapshot.metadata ?? {}
  const last = snapshot.values.messages?.at(-1)
  console.log(
    `  step ${String(step).padStart(3)} ${String(source).padEnd(6)} next=[${snapshot.next.join(",")}]`.padEnd(40) +
      (last ? `${last.getType()}: ${text(last).slice(0, 60) || "(tool call)"}` : "(empty)")
  )
}
if (history.length > 8) console.log(`  … ${history.length - 8} older checkpoints`)

// Replay: run again from the checkpoint where the model was about to answer.
const beforeAnswer = history.find((snapshot) => snapshot.next.includes("model"))!
const replayed = await agent.invoke(null, beforeAnswer.config)
console.log()
line("replay", `from checkpoint ${beforeAnswer.config.configurable?.checkpoint_id}: ${text(replayed.messages.at(-1))}`)

// Fork: change what the user said at that checkpoint (same message id), and continue from there.
const said = beforeAnswer.values.messages.at(-1)!
const forkConfig = await agent.updateState(beforeAnswer.config, {
  messages: [new HumanMessage({ id: said.id!, content: "Hi, call me Grace." })]
})
const forked = await agent.invoke(null, forkConfig)
line("fork", `"Hi, call me Grace." instead: ${text(forked.messages.at(-1))}`)
line("", "the thread now continues from the fork")

// 4. Human in the loop: saving a note waits for approval, which the next run gives.
const runs = forked.messages.filter((message) => text(message).startsWith("remember:")).length + 1
const note = `run ${runs} was here`
const asked = await agent.invoke(say(`remember: ${note}`), config)
console.log()
line("user", `remember: ${note}`)
const asking = (await agent.getState(config)).tasks.flatMap((task) => task.interrupts)[0]?.value
void asked
line("paused", `${question(asking)} (waiting for a human; run again to approve)`)

await checkpointer.close()
