/**
 * The server (`langgraph-checkpoint-effect/server`) as a web application
 * meets it: a React page on the LangGraph SDK's `useStream`
 * (`test/support/chatPage/`), served from another origin and driven in a
 * real headless Chromium, talking to the scripted chat graph
 * (`harness/chatGraph.ts`) stored on PGlite and on PostgreSQL.
 *
 * One conversation each: the answer streams in token by token, a reload
 * reopens the thread from the database, an interrupt shows an Approve
 * button whose resume finishes the run, an edit of the first message
 * branches the thread from the checkpoint before it (both branches stay
 * reachable, and a fresh browser opens the new one), and hostile text stays
 * text. Screenshots of each step are kept, for a person to look at, in
 * `$TMPDIR/lce-server-browser-<database>-*`.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launch } from "../../harness/browser.ts"
import { approvedWith, chatGraph, QUESTION, replyTo } from "../../harness/chatGraph.ts"
import { createDatabase } from "../../harness/databases.ts"
import { type LangGraphServer, serve } from "../../src/server.ts"
import { buildChatPage, openChatPage } from "../support/chatPage.ts"

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
/** Text that would run a script if it reached the page as markup. */
const HOSTILE = `<img src=x onerror="window.__xss=1">`

/** Every message shown, as `type: text`. */
const shown = (page: Page) =>
  page.getByTestId("message").evaluateAll((elements) =>
    elements.map((element) =>
      `${element.getAttribute("data-type")}: ${element.querySelector("[data-testid=text]")?.textContent ?? ""}`
    )
  )

/** Until the stream is over and the page shows `expected`, and no error. */
const settled = async (page: Page, expected: ReadonlyArray<string>) => {
  await expect.poll(
    async () => ({ status: await page.getByTestId("status").textContent(), messages: await shown(page) }),
    {
      timeout: 15_000
    }
  ).toEqual({ status: "idle", messages: expected })
  expect(await page.getByTestId("error").allTextContents()).toEqual([])
}

/** What goes wrong in `page`: uncaught errors, and the server's answers of 400 and above. */
const troubles = (page: Page, api: string): Array<string> => {
  const seen: Array<string> = []
  page.on("pageerror", (error) => seen.push(`page error: ${error.message}`))
  page.on("response", (response) => {
    if (response.url().startsWith(api) && response.status() >= 400) {
      seen.push(`${response.request().method()} ${response.url()}: ${response.status()}`)
    }
  })
  return seen
}

/** Types `text` into the box and sends it. */
const send = async (page: Page, text: string) => {
  await page.getByTestId("input").fill(text)
  await page.getByTestId("send").click()
}

/**
 * Records, in the page, every text an AI message shows, to see the answer
 * arrive in pieces (the function runs in the browser: the DOM's globals are
 * reached through `globalThis`, which the Node program types without them).
 */
const watchAnswers = (page: Page) =>
  page.getByTestId("messages").evaluate((list) => {
    const scope = globalThis as unknown as {
      __answers: Array<string>
      MutationObserver: new(f: () => void) => { observe: (target: unknown, options: object) => void }
    }
    const seen: Array<string> = []
    scope.__answers = seen
    new scope.MutationObserver(() => {
      for (const element of list.querySelectorAll("[data-type=ai] [data-testid=text]")) {
        const text: string = element.textContent ?? ""
        if (!seen.includes(text)) seen.push(text)
      }
    }).observe(list, { subtree: true, childList: true, characterData: true })
  })

const answersSeen = (page: Page) => page.evaluate("window.__answers") as Promise<Array<string>>

const conversation = (name: string, database: () => Promise<{ url: string; drop?: () => Promise<unknown> }>) =>
  describe(`the chat page on useStream, against the server on ${name}`, () => {
    let browser: Browser
    let server: LangGraphServer
    let drop: (() => Promise<unknown>) | undefined
    let shots: string

    beforeAll(async () => {
      const [opened, db] = await Promise.all([launch(), database(), buildChatPage()])
      browser = opened
      drop = db.drop
      // Slow enough that every token is a render of its own.
      server = await serve({ graphs: { agent: chatGraph({ slow: 30 }) }, database: db.url, port: 0 })
      shots = await mkdtemp(join(tmpdir(), `lce-server-browser-${name.toLowerCase()}-`))
    })

    afterAll(async () => {
      await browser?.close()
      await server?.close()
      await drop?.()
    })

    /** A screenshot of `page` kept as `<step>.png`, checked to be a PNG with something drawn. */
    const shoot = async (page: Page, step: string): Promise<Buffer> => {
      const path = join(shots, `${step}.png`)
      await page.screenshot({ path, fullPage: true })
      const png = await readFile(path)
      expect(png.subarray(0, 8).equals(PNG), `${path} is a PNG`).toBe(true)
      expect(png.length, `${path} has more than a blank page`).toBeGreaterThan(3_000)
      return png
    }

    it("streams the answer, reopens the thread, resumes an interrupt and branches", async () => {
      const page = await openChatPage(browser, { api: server.url })
      page.setDefaultTimeout(15_000)
      const problems = troubles(page, server.url)
      const empty = await shoot(page, "0-empty")

      // The answer arrives token by token, then stays whole.
      await watchAnswers(page)
      await send(page, "hello")
      const first = ["human: hello", `ai: ${replyTo("hello")}`]
      await settled(page, first)
      const pieces = await answersSeen(page)
      expect(pieces.at(-1)).toBe(replyTo("hello"))
      expect(pieces.some((text) => text.length > 0 && text.length < replyTo("hello").length)).toBe(true)
      const thread = new URL(page.url()).searchParams.get("thread")
      expect(thread).toMatch(UUID)
      expect(await page.getByTestId("thread").textContent()).toBe(thread)
      const hello = await shoot(page, "1-hello")
      expect(hello.equals(empty)).toBe(false)

      // A reload reads the thread back from the server's database.
      await page.reload()
      await settled(page, first)
      expect(new URL(page.url()).searchParams.get("thread")).toBe(thread)
      await shoot(page, "2-reloaded")

      // An interrupt: the page asks, Approve resumes with "yes".
      await send(page, "please approve")
      const asked = [...first, "human: please approve", `ai: ${replyTo("please approve")}`]
      await settled(page, asked)
      await page.getByTestId("approve").waitFor()
      expect(await page.getByTestId("question").textContent()).toBe(QUESTION.question)
      const interrupted = await shoot(page, "3-interrupt")
      await page.getByTestId("approve").click()
      const approved = [...asked, `ai: ${approvedWith("yes")}`]
      await settled(page, approved)
      expect(await page.getByTestId("interrupt").count()).toBe(0)
      const resumed = await shoot(page, "4-approved")
      expect(resumed.equals(interrupted)).toBe(false)

      // Edit the first message: the thread forks from the checkpoint before it.
      await page.getByTestId("branch").first().click()
      await page.getByTestId("edit").fill("hello again")
      await page.getByTestId("resubmit").click()
      const branched = ["human: hello again", `ai: ${replyTo("hello again")}`]
      await settled(page, branched)
      expect(await page.getByTestId("branch-position").allTextContents()).toEqual(["2/2"])
      const fork = await shoot(page, "5-branched")
      expect(fork.equals(resumed)).toBe(false)

      // The first branch is still there, whole.
      await page.getByTestId("branch-previous").click()
      await settled(page, approved)
      expect(await page.getByTestId("branch-position").allTextContents()).toEqual(["1/2"])
      await shoot(page, "6-first-branch")
      expect(problems).toEqual([])

      // Another browser on the thread opens its newest branch, and hostile text there stays text.
      const context = await browser.newContext()
      try {
        const fresh = await openChatPage(context, { api: server.url, thread: thread! })
        fresh.setDefaultTimeout(15_000)
        const freshProblems = troubles(fresh, server.url)
        await settled(fresh, branched)
        await send(fresh, HOSTILE)
        await settled(fresh, [...branched, `human: ${HOSTILE}`, `ai: ${replyTo(HOSTILE)}`])
        expect(await fresh.evaluate("window.__xss")).toBeUndefined()
        expect(await fresh.locator("[data-testid=messages] img").count()).toBe(0)
        await shoot(fresh, "7-fresh-browser")
        expect(freshProblems).toEqual([])
      } finally {
        await context.close()
      }
    }, 90_000)
  })

conversation("PGlite", async () => {
  const dir = await mkdtemp(join(tmpdir(), "lce-server-browser-db-"))
  return { url: `pglite:${dir}`, drop: () => rm(dir, { recursive: true, force: true }) }
})

conversation("PostgreSQL", () => createDatabase("server_browser"))
