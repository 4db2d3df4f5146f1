/**
 * The first hour's chat, end to end: `npm run serve` (the example agent on
 * PGlite) and agent-chat-ui from the npm registry (`create-agent-chat-app`'s
 * Vite template, see `support/agentChatUi.ts`), driven in Chromium as a
 * person would: a turn, then a note the agent asks to save, answered with
 * agent-chat-ui's own Accept button; its thread list, given the assistant's
 * UUID, shows the thread. What the agent answered is what the same turns
 * give on LangGraph's MemorySaver.
 *
 * Minutes the first time (the template's 490 packages installed and built),
 * seconds after: `npm run test:long`.
 */
import { type BaseMessage, HumanMessage } from "@langchain/core/messages"
import { Command, MemorySaver } from "@langchain/langgraph"
import { Client } from "@langchain/langgraph-sdk"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildAgent, text } from "../../examples/agent/graph.ts"
import { launch } from "../../harness/browser.ts"
import * as AgentChatUi from "../support/agentChatUi.ts"
import { type Lines, spawnLines } from "../support/children.ts"

const TURNS = ["Hi, I'm Ada.", "remember: the tea is green"]

/** What the agent says to `TURNS`, the note accepted, on LangGraph's own saver. */
const oracle = async () => {
  const agent = buildAgent(new MemorySaver())
  const config = { configurable: { thread_id: "oracle" } }
  for (const turn of TURNS) await agent.invoke({ messages: [new HumanMessage(turn)] }, config)
  await agent.invoke(new Command({ resume: [{ type: "accept" }] }), config)
  const { values } = await agent.getState(config)
  return values.messages.map((message: BaseMessage) => [message.getType(), text(message)])
}

describe("agent-chat-ui from the registry, on npm run serve", () => {
  let dataDir = ""
  let serve: Lines
  let api = ""
  let assistant = ""
  let ui: Awaited<ReturnType<typeof AgentChatUi.host>>

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "lce-agent-chat-ui-data-"))
    const [dist] = await Promise.all([
      AgentChatUi.prepare(),
      (async () => {
        // Its own process group: Ctrl-C reaches npm and the server it runs, as from a terminal.
        serve = spawnLines("npm", ["run", "-s", "serve", "--", "--db", `pglite:${dataDir}`, "--port", "0"], {
          cwd: join(import.meta.dirname, "..", ".."),
          detached: true
        })
        api = await serve.take((line) => line.startsWith("http://127.0.0.1:"), 120_000)
        const serving = await serve.take((line) => line.startsWith("serving graph graph "), 10_000)
        assistant = /\(assistant ([0-9a-f-]{36})\)/.exec(serving)![1]!
      })()
    ])
    ui = await AgentChatUi.host(dist)
  }, 900_000)

  afterAll(async () => {
    await ui?.close()
    if (serve !== undefined) process.kill(-serve.pid, "SIGINT")
    await serve?.exited
    await rm(dataDir, { recursive: true, force: true })
  })

  it(
    "a turn, a question answered with its Accept button, and the thread in its list by the assistant's UUID",
    async () => {
      const browser = await launch()
      try {
        const page = await browser.newPage()
        // What agent-chat-ui's thread list reads its server and assistant from (or its form asks).
        const opened = `${ui.url}/?apiUrl=${encodeURIComponent(api)}&assistantId=${assistant}`
        await page.goto(opened)
        const box = page.locator("textarea")
        await box.fill(TURNS[0]!)
        await box.press("Enter")
        await page.getByText("Hello Ada! That was turn 1 of this thread (no notes yet).").waitFor({ timeout: 60_000 })

        await box.fill(TURNS[1]!)
        await box.press("Enter")
        // LangGraph's human-in-the-loop request, which agent-chat-ui renders with the buttons its config allows.
        const accept = page.getByRole("button", { name: "Accept", exact: true })
        await accept.waitFor({ timeout: 60_000 })
        await accept.click()
        await page.getByText("Saved. I keep 1 note(s).").waitFor({ timeout: 60_000 })

        // The thread, as the server stored it, is what MemorySaver holds after the same turns.
        const client = new Client({ apiUrl: api })
        const [thread, ...others] = await client.threads.search({ metadata: { assistant_id: assistant } })
        expect(others).toEqual([])
        const state = await client.threads.getState<{ messages: Array<{ type: string; content: unknown }> }>(
          thread!.thread_id
        )
        const served = state.values.messages.map((message) => [
          message.type,
          typeof message.content === "string"
            ? message.content
            : (message.content as Array<{ text?: string }>).map((block) => block.text ?? "").join("")
        ])
        expect(served).toEqual(await oracle())
        expect(thread!.status).toBe("idle")

        // A fresh page given the UUID lists the thread (its first message is how agent-chat-ui names it).
        const again = await browser.newPage()
        await again.goto(opened)
        await again.getByRole("button", { name: TURNS[0]!, exact: true }).first().waitFor({ timeout: 30_000 })
      } finally {
        await browser.close()
      }
      expect(serve.stderr()).toBe("")
    },
    300_000
  )
})
