/**
 * The web inspector (`src/internal/inspector/web`), served in-process over real databases real
 * graphs wrote, and driven in a real headless Chromium: the token guards
 * every route, actions exist only with `write` and only with the token in a
 * header, every response carries the security headers, the page finds a
 * thread, draws its history with the fork, shows a diff, shows hostile
 * message text as text without running it, shows bidirectional and other
 * control characters in every stored name as visible escapes, and lists the
 * first page of 100,000 threads in under a second.
 */
import { HumanMessage } from "@langchain/core/messages"
import { Effect, Exit, Layer, Scope } from "effect"
import { mkdir } from "node:fs/promises"
import { request } from "node:http"
import { join } from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launch } from "../../harness/browser.ts"
import { createDatabase } from "../../harness/databases.ts"
import { putChain, putForks } from "../../harness/forks.ts"
import {
  chatGraph,
  type ChatThread,
  type ToolsThread,
  TRUNK_RUN,
  USAGE,
  writeApproval,
  writeChat,
  writeForest,
  writeNested,
  writeTools
} from "../../harness/inspectedGraph.ts"
import { CheckpointStorage } from "../../src/CheckpointStorage.ts"
import { EffectCheckpointSaver } from "../../src/index.ts"
import * as Database from "../../src/internal/cli/Database.ts"
import * as Server from "../../src/internal/inspector/web/Server.ts"
import { escapeKeepingLines } from "../../src/internal/Visible.ts"
import { checkpoint, metadata } from "../support/fixtures.ts"
import { insertThreads } from "../support/manyThreads.ts"

const ARTIFACTS = join(import.meta.dirname, "..", "..", "test-artifacts")

/** Message text that would run a script if it reached the page as markup. */
const PAYLOADS = [
  "<script>window.__xss=1</script>",
  `<img src=x onerror="window.__xss=1">`,
  `<a href="javascript:window.__xss=1">x</a>`
]
/** A thread whose id is itself a payload: ids are shown in the list and the title. */
const XSS_THREAD = `xss <img src=x onerror="window.__xss=2">`
/**
 * Stored names holding bidirectional controls (U+202E reverses what follows,
 * U+061C is the Arabic letter mark, U+2066 an isolate) and a C1 CSI: the
 * page shows each as a visible escape.
 */
const BIDI_THREAD = "bidi\u202eevil\u061c"
const BIDI = {
  namespace: "sub\u2066ns",
  channel: "notes\u061c",
  key: "tag\u202e",
  value: "v\u061c\u009b2J",
  text: "hello\u202ereversed"
}
/** Any of them raw, or any other control but tab and line feed. */
// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/

interface Served extends Server.Running {
  readonly close: () => Promise<void>
}

/** The server over `url`, in this process, until `close`. */
const serve = async (url: string, options: Server.Options = {}): Promise<Served> => {
  const scope = Effect.runSync(Scope.make())
  const running = await Effect.runPromise(Effect.gen(function*() {
    const services = yield* Layer.buildWithScope(
      Database.layer(url, options.write === true ? "write" : "read"),
      scope
    )
    return yield* Server.start(options).pipe(Effect.provideContext(services), Scope.provide(scope))
  }))
  return { ...running, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

const origin = (served: Served) => `http://127.0.0.1:${served.port}`

const call = (served: Served, path: string, init: RequestInit = {}) => fetch(`${origin(served)}${path}`, init)

const withToken = (served: Served, init: RequestInit = {}): RequestInit => ({
  ...init,
  headers: { ...init.headers as Record<string, string>, [Server.TOKEN_HEADER]: served.token }
})

const postJson = (served: Served, path: string, body: unknown, init: RequestInit = {}) =>
  call(served, path, {
    ...init,
    method: "POST",
    headers: { "content-type": "application/json", ...init.headers as Record<string, string> },
    body: JSON.stringify(body)
  })

const expectSecure = (response: Response) => {
  for (const [name, value] of Object.entries(Server.securityHeaders)) {
    expect(response.headers.get(name), name).toBe(value)
  }
}

let database: Awaited<ReturnType<typeof createDatabase>>
let saver: EffectCheckpointSaver
let chat: ChatThread
let tools: ToolsThread
let readOnly: Served
let writable: Served
let browser: Browser

beforeAll(async () => {
  database = await createDatabase("web")
  saver = await EffectCheckpointSaver.fromConnString(database.url)
  chat = await writeChat(saver)
  await writeApproval(saver)
  await writeNested(saver)
  tools = await writeTools(saver)
  await chatGraph(saver).invoke(
    { messages: [new HumanMessage(PAYLOADS.join("\n"))] },
    { configurable: { thread_id: "xss" } }
  )
  await chatGraph(saver).invoke({ messages: [new HumanMessage("hi")] }, { configurable: { thread_id: XSS_THREAD } })
  const values = { [BIDI.channel]: { [BIDI.key]: BIDI.value }, messages: [new HumanMessage(BIDI.text)] }
  await saver.put(
    { configurable: { thread_id: BIDI_THREAD, checkpoint_ns: "" } },
    checkpoint(values),
    metadata({ [BIDI.key]: BIDI.value }),
    { [BIDI.channel]: 1, messages: 1 }
  )
  await saver.put(
    { configurable: { thread_id: BIDI_THREAD, checkpoint_ns: BIDI.namespace } },
    checkpoint(),
    metadata(),
    {}
  )
  readOnly = await serve(database.url)
  writable = await serve(database.url, { write: true })
  browser = await launch()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await readOnly?.close()
  await writable?.close()
  await saver?.close()
  await database?.drop()
})

describe("the token", () => {
  const routes: ReadonlyArray<readonly [string, string]> = [
    ["GET", "/"],
    ["GET", "/app.js"],
    ["GET", "/app.css"],
    ["GET", "/favicon.ico"],
    ["GET", "/api/info"],
    ["GET", "/api/threads"],
    ["GET", "/api/threads/chat/history"],
    ["GET", "/api/threads/chat/checkpoints/x"],
    ["GET", "/api/threads/chat/diff?a=x&b=y"],
    ["GET", "/api/threads/chat/plan?action=delete"],
    ["POST", "/api/threads/chat/copy"],
    ["POST", "/api/threads/chat/prune"],
    ["POST", "/api/threads/chat/delete"],
    ["OPTIONS", "/api/threads/chat/delete"],
    ["GET", "/no/such/route"]
  ]

  it("is required on every route, page and API, read-only or not: 401 without it or with a wrong one", async () => {
    for (const served of [readOnly, writable]) {
      const wrong = `${served.token.slice(0, -1)}${served.token.endsWith("A") ? "B" : "A"}`
      for (const [method, path] of routes) {
        const separator = path.includes("?") ? "&" : "?"
        const attempts: ReadonlyArray<readonly [string, RequestInit]> = [
          [path, {}],
          [`${path}${separator}token=${wrong}`, {}],
          [`${path}${separator}token=`, {}],
          [path, { headers: { [Server.TOKEN_HEADER]: wrong } }],
          [path, { headers: { [Server.TOKEN_HEADER]: "" } }]
        ]
        for (const [target, init] of attempts) {
          const response = await call(served, target, {
            ...init,
            method,
            ...(method === "POST"
              ? { body: "{}", headers: { ...init.headers as object, "content-type": "application/json" } }
              : {})
          })
          expect(response.status, `${method} ${target}`).toBe(401)
          expectSecure(response)
          // Nothing lets another origin read an answer.
          expect(response.headers.get("access-control-allow-origin")).toBeNull()
        }
      }
    }
  })

  it("opens the page from the printed URL, and every response carries the security headers", async () => {
    expect(readOnly.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{32}$/)
    expect(readOnly.token).not.toBe(writable.token)
    const page = await fetch(readOnly.url)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toMatch(/^text\/html/)
    expectSecure(page)
    const html = await page.text()
    // No inline script or style: the page loads its own files, with the token.
    expect(html).toContain(`<script type="module" src="/app.js?token=${readOnly.token}"></script>`)
    expect(html).not.toMatch(/<script>|<style|\sstyle=|\son[a-z]+=/i)
    for (const path of ["/app.js", "/app.css", "/api/threads", "/no/such/route"]) {
      const response = await call(readOnly, `${path}?token=${readOnly.token}`)
      expectSecure(response)
    }
    const api = await call(readOnly, "/api/threads", withToken(readOnly))
    expect(api.status).toBe(200)
    expect(api.headers.get("content-type")).toMatch(/^application\/json/)
  })
})

describe("the Host header", () => {
  /** A GET with the token and the given `Host` (fetch cannot set one): its status. */
  const statusWithHost = (served: Served, host: string) =>
    new Promise<number>((resolve, reject) => {
      const url = new URL(served.url)
      const sent = request(
        { host: url.hostname, port: url.port, path: `/api/info?token=${served.token}`, headers: { host } },
        (response) => {
          response.resume()
          resolve(response.statusCode ?? 0)
        }
      )
      sent.once("error", reject)
      sent.end()
    })

  it("must be the address the server printed: another name (DNS rebinding) is refused with 421", async () => {
    const printed = new URL(readOnly.url).host
    expect(await statusWithHost(readOnly, printed)).toBe(200)
    expect(await statusWithHost(readOnly, printed.toUpperCase())).toBe(200)
    for (
      const foreign of [
        "attacker.example",
        `attacker.example:${new URL(readOnly.url).port}`,
        "localhost:1",
        "127.0.0.1"
      ]
    ) {
      expect(await statusWithHost(readOnly, foreign), foreign).toBe(421)
    }
  })
})

describe("actions", () => {
  it("do not exist without write: 404 even with the token in its header", async () => {
    const actions: ReadonlyArray<readonly [string, unknown]> = [["copy", { target: "chat-copy" }], ["prune", {
      strategy: "delete"
    }], ["delete", {}]]
    for (const [path, body] of actions) {
      const response = await postJson(readOnly, `/api/threads/chat/${path}`, body, withToken(readOnly))
      expect(response.status, path).toBe(404)
    }
    const info = await (await call(readOnly, "/api/info", withToken(readOnly))).json() as any
    expect(info).toEqual({ write: false, layout: "current" })
    const threads = await (await call(readOnly, "/api/threads?prefix=chat", withToken(readOnly))).json() as any
    expect(threads.threads.map((thread: { thread_id: string }) => thread.thread_id)).toEqual(["chat"])
  })

  it("with write, need the token in the header (not the URL) and a JSON body", async () => {
    const byQuery = await postJson(writable, `/api/threads/chat/delete?token=${writable.token}`, {})
    expect(byQuery.status).toBe(403)
    const form = await call(
      writable,
      "/api/threads/chat/delete",
      withToken(writable, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "a=1"
      })
    )
    expect(form.status).toBe(415)
    const malformed = await postJson(writable, "/api/threads/chat/prune", { strategy: "all" }, withToken(writable))
    expect(malformed.status).toBe(400)
    // The thread is still there.
    const history = await call(writable, "/api/threads/chat/history", withToken(writable))
    expect(history.status).toBe(200)
  })

  it("with write, copy, prune and delete a thread", async () => {
    const copied = await postJson(writable, "/api/threads/chat/copy", { target: "chat-copy" }, withToken(writable))
    expect(copied.status).toBe(200)
    const again: any = await postJson(writable, "/api/threads/chat/copy", { target: "chat-copy" }, withToken(writable))
    expect(again.status).toBe(409)
    const plan = await (await call(writable, "/api/threads/chat-copy/plan?action=keep-latest", withToken(writable)))
      .json() as any
    expect(plan.removals[0].checkpoints).toBeGreaterThan(0)
    const pruned = await postJson(
      writable,
      "/api/threads/chat-copy/prune",
      { strategy: "keep-latest" },
      withToken(writable)
    )
    expect(pruned.status).toBe(200)
    const history = await (await call(writable, "/api/threads/chat-copy/history", withToken(writable))).json() as any
    expect(history.namespaces[0].rows.length).toBeLessThan(plan.removals[0].checkpoints + 1)
    const deleted = await postJson(writable, "/api/threads/chat-copy/delete", {}, withToken(writable))
    expect(deleted.status).toBe(200)
    const gone = await call(writable, "/api/threads/chat-copy/history", withToken(writable))
    expect(gone.status).toBe(404)
  })
})

describe("the API", () => {
  it("pages threads with a cursor, newest activity first, by id prefix", async () => {
    const first = await (await call(readOnly, "/api/threads?limit=2", withToken(readOnly))).json() as any
    expect(first.threads).toHaveLength(2)
    expect(first.next).toEqual(expect.any(String))
    const rest = await (await call(readOnly, `/api/threads?limit=50&after=${first.next}`, withToken(readOnly)))
      .json() as any
    const ids = [...first.threads, ...rest.threads].map((thread: { thread_id: string }) => thread.thread_id)
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids.sort()).toEqual(["approval", "chat", "nested", "tools", "xss", XSS_THREAD, BIDI_THREAD].sort())
    expect(rest.next).toBeNull()
    expect((await call(readOnly, "/api/threads?after=nonsense", withToken(readOnly))).status).toBe(400)
    expect((await call(readOnly, "/api/threads?limit=0", withToken(readOnly))).status).toBe(400)
  })

  it("lays out the history in lanes, shows a checkpoint with its messages, and diffs two", async () => {
    const history = await (await call(readOnly, "/api/threads/chat/history", withToken(readOnly))).json() as any
    const rows: Array<{ checkpoint_id: string; lane: number; joins: Array<number> }> = history.namespaces[0].rows
    expect(new Set(rows.map((row) => row.lane)).size).toBe(2)
    expect(rows.find((row) => row.checkpoint_id === chat.afterFirstTurn)!.joins).toEqual([1])

    const shown = await (await call(readOnly, `/api/threads/chat/checkpoints/${chat.fork}`, withToken(readOnly)))
      .json() as any
    expect(shown.checkpoint_id).toBe(chat.fork)
    expect(shown.messages.messages.map((message: { text: string }) => message.text).at(-1)).toBe("forked question")

    const diff = await (await call(
      readOnly,
      `/api/threads/chat/diff?a=${chat.afterFirstTurn}&b=${chat.originalHead}`,
      withToken(readOnly)
    )).json() as any
    const messages = diff.channels.find((change: { channel: string }) => change.channel === "messages")
    expect(messages.change).toBe("messages")
    expect(messages.appended.map((message: { text: string }) => message.text)).toContain("tell me more")

    // A page at a time, laid out over the whole history: the pages put together are the whole.
    const first = await (await call(readOnly, "/api/threads/chat/history?limit=5", withToken(readOnly))).json() as any
    expect(first.namespaces[0].rows).toHaveLength(5)
    expect(first.total).toBe(rows.length)
    const second =
      await (await call(readOnly, `/api/threads/chat/history?limit=500&after=${first.next}`, withToken(readOnly)))
        .json() as any
    expect(second.next).toBeNull()
    expect([...first.namespaces[0].rows, ...second.namespaces[0].rows]).toEqual(rows)
    expect((await call(readOnly, "/api/threads/chat/history?limit=0", withToken(readOnly))).status).toBe(400)
    expect((await call(readOnly, "/api/threads/chat/history?after=x", withToken(readOnly))).status).toBe(400)

    expect((await call(readOnly, "/api/threads/nobody/history", withToken(readOnly))).status).toBe(404)
    expect((await call(readOnly, "/api/threads/chat/checkpoints/zzz", withToken(readOnly))).status).toBe(400)
  })
})

/** A page on `url` that records dialogs and errors. */
const open = async (url: string) => {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } })
  const dialogs: Array<string> = []
  const errors: Array<string> = []
  page.on("dialog", (dialog) => {
    dialogs.push(dialog.message())
    void dialog.dismiss()
  })
  page.on("pageerror", (error) => errors.push(error.message))
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text())
  })
  await page.goto(url)
  return { page, dialogs, errors }
}

const nodes = (page: Page) => page.locator("svg.history g.namespace[data-ns=''] g.node")

/** Each history label's right end, and the drawing's width: none is cut off by the drawing's edge. */
const labelEnds = (page: Page) =>
  page.locator("svg.history").evaluate((root) => ({
    width: Number(root.getAttribute("width")),
    ends: Array.from(root.querySelectorAll("text.label"), (label) => {
      const text = label as unknown as {
        getAttribute: (name: string) => string | null
        getComputedTextLength: () => number
      }
      return Number(text.getAttribute("x")) + text.getComputedTextLength()
    }),
    previews: Array.from(root.querySelectorAll("tspan.preview"), (preview) =>
      String((preview as { textContent: unknown }).textContent))
  }))

describe("in a browser", () => {
  it("finds the chat thread, draws its fork, shows a state and a diff, and follows new checkpoints", async () => {
    const { dialogs, errors, page } = await open(readOnly.url)
    await page.locator(".thread-row").first().waitFor()
    await page.fill("#prefix", "cha")
    await expect.poll(() => page.locator(".thread-row").count()).toBe(1)
    const history = await (await call(readOnly, "/api/threads/chat/history", withToken(readOnly))).json() as any
    // What tells threads apart in the list: what the latest step wrote.
    expect(await page.locator(".thread-row td.preview").textContent()).toBe(
      escapeKeepingLines(history.namespaces[0].rows[0].preview)
    )
    expect(history.namespaces[0].rows[0].preview).toMatch(/^ai: /)
    await page.click("a.thread-link >> text=chat")
    await nodes(page).first().waitFor()

    // The history: one circle per checkpoint, on two lanes, the fork marked, the head marked.
    expect(await nodes(page).count()).toBe(history.namespaces[0].rows.length)
    const lanes = await page.locator("svg.history g.node circle").evaluateAll((circles) =>
      new Set(circles.map((circle) => circle.getAttribute("cx"))).size
    )
    expect(lanes).toBe(2)
    expect(await page.locator("svg.history path.edge.branch").count()).toBeGreaterThan(0)
    // The same words as the CLI's: head, branch (the original conversation after the edit), fork point, root.
    await expect.poll(() => page.locator(`g.node.fork-point[data-id="${chat.afterFirstTurn}"]`).count()).toBe(1)
    expect(await page.locator(`g.node.fork-point[data-id="${chat.afterFirstTurn}"] .tag`).allTextContents())
      .toContain("fork point")
    expect(await page.locator("g.node.head").count()).toBe(1)
    expect(await page.locator("g.node.head .tag").allTextContents()).toContain("head")
    expect(await page.locator("g.node.branch").getAttribute("data-id")).toBe(chat.originalHead)
    expect(await page.locator("g.node.branch .tag").allTextContents()).toContain("branch")
    expect(await page.locator("g.node.root .tag").allTextContents()).toContain("root")
    // What ran and what it wrote; the preview last, after the words that say what the checkpoint is.
    const original = page.locator(`g.node[data-id="${chat.originalHead}"] .label`)
    expect(await original.locator(".id").textContent()).toContain("ran: model")
    expect(await original.locator("tspan").last().textContent()).toBe(`“ai: heard "tell me more" (5 messages)”`)

    // The latest checkpoint is shown: messages as a conversation, with roles.
    await page.locator("#detail .conversation .message").first().waitFor()
    expect(await page.locator("#detail .message .role").first().textContent()).toBe("human")

    // What the thread costs to keep, folded under its total, as `stats <thread>` reports it.
    const stored = await (await call(readOnly, "/api/threads/chat/storage", withToken(readOnly))).json() as any
    expect(stored.total_bytes).toBeGreaterThan(0)
    await page.locator("details#storage summary").waitFor()
    expect(await page.locator("details#storage summary").textContent()).toMatch(/^stored: [\d.]+ (B|kB|MB)$/)
    await page.locator("details#storage summary").click()
    const sections = await page.locator("details#storage tr.section td:first-child").allTextContents()
    expect(sections).toEqual(["checkpoints", "channel values", "shared list pieces", "writes"])
    expect(await page.locator("details#storage th").allTextContents()).toEqual(["", "rows", "stored", "uncompressed"])
    expect(await page.locator("details#storage tr.section").first().locator("td.num").first().textContent()).toBe(
      String(stored.checkpoints.count)
    )

    // Two checkpoints: click one, shift-click another, read the diff.
    await page.locator(`g.node[data-id="${chat.afterFirstTurn}"]`).click()
    await expect.poll(() => page.locator("#detail h3").textContent()).toContain(chat.afterFirstTurn.slice(-12))
    await page.locator(`g.node[data-id="${chat.originalHead}"]`).click({ modifiers: ["Shift"] })
    await page.locator("#diff .change").first().waitFor()
    const diff = await page.locator("#diff").innerText()
    expect(diff).toContain("messages")
    expect(diff).toMatch(/4 appended, 0 removed, 0 edited/)
    expect(diff).toContain("tell me more")
    await mkdir(ARTIFACTS, { recursive: true })
    await page.screenshot({ path: join(ARTIFACTS, "web-inspector.png"), fullPage: true })

    // A new turn appears without a reload (the page polls the history every 2 s).
    const before = await nodes(page).count()
    await chatGraph(saver).invoke({ messages: [new HumanMessage("one more")] }, { configurable: { thread_id: "chat" } })
    await expect.poll(() => nodes(page).count(), { timeout: 8_000 }).toBeGreaterThan(before)

    expect(dialogs).toEqual([])
    expect(errors).toEqual([])
    await page.close()
  })

  it("shows an interrupt and a subgraph's namespace", async () => {
    const { page } = await open(`${readOnly.url}#/thread/approval`)
    await page.locator("g.node.interrupted").first().waitFor()
    expect(await page.locator("g.node.interrupted .tag.interrupt").first().textContent()).toContain("approve?")
    await page.locator("#detail h4.interrupt").waitFor()
    await page.goto(`${readOnly.url}#/thread/nested`)
    await page.locator("svg.history text.ns-label >> text=subgraph child:").first().waitFor()
    expect(await page.locator("svg.history g.namespace").count()).toBe(2)
    // Tied to the root checkpoint that started it, as the CLI says it; each row says what ran and wrote.
    const history = await (await call(readOnly, "/api/threads/nested/history", withToken(readOnly))).json() as any
    const child = history.namespaces[1]
    expect(child.startedAt.checkpoint_id).toBe(child.rows[0].parents[""])
    expect(await page.locator("svg.history text.ns-label").nth(1).textContent()).toContain(
      `started at checkpoint ${child.startedAt.checkpoint_id.slice(-12)} (step ${child.startedAt.step})`
    )
    expect(await page.locator("svg.history g.namespace[data-ns=''] .label").allTextContents()).toContainEqual(
      expect.stringContaining("ran: child")
    )
    await page.close()
  })

  it("shows a tool agent's calls and results, its metadata on demand, and the edit of a call's argument", async () => {
    const { errors, page } = await open(`${readOnly.url}#/thread/tools`)
    const detail = page.locator("#detail")
    await detail.locator(".message .tool-call").first().waitFor()
    // The call the model asked for (as the human edited it): name, arguments, id.
    const call = detail.locator(".message.role-ai .tool-call")
    expect(await call.count()).toBe(1)
    expect(await call.locator(".tool-name").textContent()).toBe("get_weather")
    expect(JSON.parse((await call.locator(".tool-args").textContent())!)).toEqual({ city: "Lyon" })
    expect(await call.locator(".tool-call-id").textContent()).toBe("id call_weather_1")
    // The tool's result: the call it answers, the tool's name, its text.
    const result = detail.locator(".message.role-tool")
    expect(await result.locator(".about").textContent()).toBe("name get_weather, tool_call_id call_weather_1")
    expect(await result.locator(".text").textContent()).toBe("Lyon: 21 degrees, sunny")
    // The model's metadata: folded until asked for.
    const metadata = detail.locator(".message.role-ai details.metadata").first()
    expect(await metadata.locator("pre").isVisible()).toBe(false)
    await metadata.locator("summary").click()
    expect(JSON.parse((await metadata.locator("pre").textContent())!).usage_metadata).toEqual(USAGE)

    // Paused before the tools, then the human's edit: the diff names the argument that changed.
    await page.locator(`g.node[data-id="${tools.paused}"]`).click()
    await expect.poll(() => page.locator("#detail h3").textContent()).toContain(tools.paused.slice(-12))
    await page.locator(`g.node[data-id="${tools.edited}"]`).click({ modifiers: ["Shift"] })
    await page.locator("#diff li.edited").waitFor()
    expect(await page.locator("#diff .status").first().textContent()).toBe("0 appended, 0 removed, 1 edited")
    expect(await page.locator("#diff li.edited .field").allInnerTexts()).toEqual([
      `tool_calls[0].args.city: "Paris" → "Lyon"`
    ])
    await mkdir(ARTIFACTS, { recursive: true })
    await page.screenshot({ path: join(ARTIFACTS, "web-inspector-tools.png"), fullPage: true })
    // A label longer than the drawing (the question's, whatever the font) ends its preview with an ellipsis.
    const { ends, previews, width } = await labelEnds(page)
    for (const end of ends) expect(end).toBeLessThanOrEqual(width)
    expect(previews.some((preview) => preview.endsWith("…”"))).toBe(true)
    expect(errors).toEqual([])
    await page.close()
  })

  it("draws a forest after delete-runs removed the shared trunk: two trees apart, each root marked", async () => {
    await writeForest(saver)
    await Effect.runPromise(
      CheckpointStorage.use((storage) => storage.deleteForRuns([TRUNK_RUN])).pipe(
        Effect.provide(Database.layer(database.url, "write"))
      )
    )
    const { errors, page } = await open(`${readOnly.url}#/thread/forest`)
    await nodes(page).first().waitFor()
    expect(await page.locator("g.node.root").count()).toBe(2)
    expect(await page.locator("g.node.fork-point").count()).toBe(0)
    expect(await page.locator("svg.history line.tree-gap").count()).toBe(1)
    // The second tree is drawn below the gap, and no edge joins the two.
    const [gap] = await page.locator("svg.history line.tree-gap").evaluateAll((lines) =>
      lines.map((line) => Number(line.getAttribute("y1")))
    )
    const ys = await page.locator("svg.history g.node circle").evaluateAll((circles) =>
      circles.map((circle) => Number(circle.getAttribute("cy")))
    )
    expect(ys.filter((y) => y < gap!).length).toBeGreaterThan(0)
    expect(ys.filter((y) => y > gap!).length).toBeGreaterThan(0)
    expect(await page.locator("g.node.root .tag").allTextContents()).toEqual(["root", "root"])
    expect(errors).toEqual([])
    await page.close()
  })

  it("draws 8 lanes of 12 forks of one checkpoint, the other 4 in the overflow column, counted at the fork point", async () => {
    const forkPoint = await putForks(saver, "forks", 12)
    const { errors, page } = await open(`${readOnly.url}#/thread/forks`)
    await nodes(page).first().waitFor()
    expect(await page.locator("g.node.overflow").count()).toBe(4)
    expect(await page.locator("g.node.branch").count()).toBe(11)
    const lanes = await page.locator("svg.history g.node circle").evaluateAll((circles) =>
      new Set(circles.map((circle) => circle.getAttribute("cx"))).size
    )
    expect(lanes).toBe(9)
    expect(await page.locator(`g.node.fork-point[data-id="${forkPoint}"] .tag.folded`).textContent()).toBe(
      "+4 more branches join here"
    )
    expect(await page.locator("g.node.overflow .tag.folded").first().textContent()).toBe(
      `no lane of its own: joins ${forkPoint.slice(-12)} below`
    )
    expect(errors).toEqual([])
    await page.close()
  })

  it("draws the history 500 rows at a time, the rest behind a \"more\" button", async () => {
    await putChain(saver, "long", 620)
    const { errors, page } = await open(`${readOnly.url}#/thread/long`)
    await nodes(page).first().waitFor()
    expect(await nodes(page).count()).toBe(500)
    await page.locator("#graph button.more").click()
    await expect.poll(() => nodes(page).count()).toBe(620)
    expect(await page.locator("#graph button.more").count()).toBe(0)
    // One line: every row below the first has its parent just below it.
    const lanes = await page.locator("svg.history g.node circle").evaluateAll((circles) =>
      new Set(circles.map((circle) => circle.getAttribute("cx"))).size
    )
    expect(lanes).toBe(1)
    expect(await page.locator("g.node.root").count()).toBe(1)
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  it("polls one request at a time, however slow, and asks only for what changed since", async () => {
    const { errors, page } = await open("about:blank")
    let inFlight = 0
    let most = 0
    const asked: Array<string> = []
    // Each history answer held back 3 s: longer than the time between polls.
    await page.route("**/api/threads/chat/history*", async (route) => {
      inFlight++
      most = Math.max(most, inFlight)
      asked.push(route.request().url())
      await new Promise((resolve) => setTimeout(resolve, 3_000))
      try {
        await route.continue()
      } finally {
        inFlight--
      }
    })
    await page.goto(`${readOnly.url}#/thread/chat`)
    await nodes(page).first().waitFor({ timeout: 10_000 })
    await expect.poll(() => asked.length, { timeout: 20_000, interval: 500 }).toBeGreaterThanOrEqual(4)
    expect(most).toBe(1)
    expect(asked.slice(1).every((url) => new URL(url).searchParams.has("since")), asked.join("\n")).toBe(true)

    // Nothing new: the answer says so and carries nothing else.
    const cursor = new URL(asked.at(-1)!).searchParams.get("since")!
    const same = await (await call(readOnly, `/api/threads/chat/history?since=${cursor}`, withToken(readOnly)))
      .json() as any
    expect(same).toEqual({ thread_id: "chat", changed: false, cursor })
    // A new checkpoint: the whole first page again, with a new cursor.
    await chatGraph(saver).invoke({ messages: [new HumanMessage("and again")] }, {
      configurable: { thread_id: "chat" }
    })
    const changed = await (await call(readOnly, `/api/threads/chat/history?since=${cursor}`, withToken(readOnly)))
      .json() as any
    expect(changed.changed).toBe(true)
    expect(changed.cursor).not.toBe(cursor)
    expect(changed.namespaces[0].rows[0].preview).toMatch(/^ai: heard "and again"/)
    await expect.poll(() => page.locator(".label >> text=and again").count(), { timeout: 15_000 })
      .toBeGreaterThan(0)
    expect(most).toBe(1)
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  it("shows hostile text as text and runs none of it", async () => {
    const { dialogs, errors, page } = await open(readOnly.url)
    await page.locator(".thread-row").first().waitFor()
    // A thread id that is markup is listed as text.
    expect(await page.locator("a.thread-link").allTextContents()).toContain(XSS_THREAD)
    await page.goto(`${readOnly.url}#/thread/xss`)
    await page.locator("#detail .message").first().waitFor()
    const texts = await page.locator("#detail .message .text").allTextContents()
    for (const payload of PAYLOADS) expect(texts.join("\n")).toContain(payload)
    await page.locator(`a.thread-link`).count()
    await page.goto(`${readOnly.url}#/thread/${encodeURIComponent(XSS_THREAD)}`)
    await expect.poll(() => page.locator("#thread-id").textContent()).toBe(XSS_THREAD)
    await page.locator("#detail .message").first().waitFor()
    await page.goto(`${readOnly.url}#/thread/chat`)
    await page.locator("#detail .message").first().waitFor()
    // Give anything that could run a moment to do so.
    await page.waitForTimeout(300)
    expect(await page.evaluate("window.__xss")).toBeUndefined()
    expect(await page.locator("main img, main script, a[href^='javascript']").count()).toBe(0)
    expect(dialogs).toEqual([])
    expect(errors).toEqual([])
    await page.close()
  })

  it("shows bidirectional controls and C1 in ids, namespaces, channels, metadata and text as visible escapes", async () => {
    const { errors, page } = await open(readOnly.url)
    await page.locator(".thread-row").first().waitFor()
    const shownId = "bidi\\u{202e}evil\\u{61c}"
    await expect.poll(() => page.locator("a.thread-link").allTextContents()).toContain(shownId)
    // The link still leads to the thread as stored.
    await page.locator("a.thread-link", { hasText: shownId }).click()
    await page.locator("#detail .message").first().waitFor()
    expect(await page.locator("#thread-id").textContent()).toBe(shownId)
    expect(await page.locator("#graph").textContent()).toContain("subgraph sub\\u{2066}ns")
    const channel = page.locator("#detail .channel").filter({ hasText: "notes" })
    expect(await channel.locator("h5").textContent()).toBe("notes\\u{61c}")
    // Values and metadata as JSON, with JSON's own escapes: still the same JSON.
    expect(JSON.parse((await channel.locator("pre").textContent())!)).toEqual({ [BIDI.key]: BIDI.value })
    expect(await channel.locator("pre").textContent()).toContain(`"tag\\u202e": "v\\u061c\\u009b2J"`)
    expect(await page.locator("#detail pre.json").last().textContent()).toContain(`"tag\\u202e": "v\\u061c\\u009b2J"`)
    expect(await page.locator("#detail .message .text").allTextContents()).toEqual(["hello\\u{202e}reversed"])
    // Nothing raw anywhere on the page: list, graph (its tooltips too), panels.
    for (const text of [await page.locator("main").textContent(), await page.locator("#error").textContent()]) {
      expect(text).not.toMatch(RAW)
    }
    expect(errors).toEqual([])
    await page.close()
  })
})

describe("in a browser, with write", () => {
  it("a prune that would remove nothing says so and offers no Confirm; one that would, says how many", async () => {
    await saver.copyThread("chat", "chat-pruned")
    await saver.prune(["chat-pruned"], { strategy: "keep_latest" })
    await saver.copyThread("chat", "chat-whole")
    const { errors, page } = await open(`${writable.url}#/thread/chat-pruned`)
    await page.locator("button >> text=Prune to latest…").click()
    await expect.poll(() => page.locator("#confirm p").textContent()).toContain("nothing to remove")
    expect(await page.locator("#confirm button >> text=Confirm").count()).toBe(0)
    await page.locator("#confirm button >> text=Close").click()
    expect(await page.locator("#confirm").isHidden()).toBe(true)

    const plan = await (await call(writable, "/api/threads/chat-whole/plan?action=keep-latest", withToken(writable)))
      .json() as any
    await page.goto(`${writable.url}#/thread/chat-whole`)
    await nodes(page).first().waitFor()
    await page.locator("button >> text=Prune to latest…").click()
    await expect.poll(() => page.locator("#confirm p").textContent()).toContain(
      `this removes ${plan.removals[0].checkpoints} checkpoint(s)`
    )
    expect(await page.locator("#confirm button >> text=Confirm").count()).toBe(1)
    expect(errors).toEqual([])
    await page.close()
  })
})

describe("100,000 threads", () => {
  const COUNT = 100_000
  let big: Awaited<ReturnType<typeof createDatabase>>
  let served: Served

  beforeAll(async () => {
    big = await createDatabase("web_big")
    await insertThreads(big.url, COUNT, "bulk-")
    served = await serve(big.url)
  }, 120_000)

  afterAll(async () => {
    await served?.close()
    await big?.drop()
  })

  it("lists the first page in under a second, by the API and in the page", async () => {
    let started = performance.now()
    const response = await call(served, "/api/threads", withToken(served))
    const first: any = await response.json()
    const apiMs = performance.now() - started
    expect(first.threads).toHaveLength(50)
    expect(first.threads[0].thread_id).toBe("bulk-000001")

    started = performance.now()
    const again: any = await (await call(served, `/api/threads?after=${first.next}`, withToken(served))).json()
    const nextMs = performance.now() - started
    expect(again.threads[0].thread_id).toBe("bulk-000051")

    const { page } = await open("about:blank")
    started = performance.now()
    await page.goto(served.url)
    await page.locator(".thread-row").nth(49).waitFor()
    const pageMs = performance.now() - started
    // The page's own clock: from the navigation's start to the first page of rows in the document.
    const renderMs = Number(await page.evaluate("document.body.dataset.firstRender"))
    expect(await page.locator(".thread-row").count()).toBe(50)

    started = performance.now()
    await page.click("#more")
    await page.locator(".thread-row").nth(99).waitFor()
    const moreMs = performance.now() - started
    const ids = await page.locator("a.thread-link").allTextContents()
    expect(ids).toEqual(Array.from({ length: 100 }, (_, i) => `bulk-${String(i + 1).padStart(6, "0")}`))

    started = performance.now()
    await page.fill("#prefix", "bulk-09999")
    await expect.poll(() => page.locator(".thread-row").count()).toBe(10)
    const searchMs = performance.now() - started
    await page.close()

    console.log(
      `web inspector over ${COUNT} threads: GET /api/threads ${apiMs.toFixed(0)} ms (first call), next page ` +
        `${nextMs.toFixed(0)} ms; page's first render ${renderMs} ms after navigation start (${
          pageMs.toFixed(0)
        } ms from goto to 50 rows, browser included); "more" ${
          moreMs.toFixed(0)
        } ms; prefix search (incl. 200 ms debounce) ${searchMs.toFixed(0)} ms`
    )
    expect(apiMs).toBeLessThan(1_000)
    expect(renderMs).toBeLessThan(1_000)
  })
})
