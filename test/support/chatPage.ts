/**
 * The chat page of `test/support/chatPage/` (React 19 and the LangGraph
 * SDK's `useStream`) for the server's browser tests: bundled once per
 * process with rolldown, served from a loopback HTTP server of its own, and
 * opened in a browser on a LangGraph server's URL.
 *
 * The page is on another origin than the server it talks to: the server
 * must answer CORS preflights (`content-type` and `last-event-id` request
 * headers; GET, POST, PATCH, DELETE) and expose `Content-Location`, where
 * the SDK reads a new run's id.
 */
import { copyFile, mkdtemp, readFile } from "node:fs/promises"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { extname, join, normalize, sep } from "node:path"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { build } from "rolldown"

const SOURCE = join(import.meta.dirname, "chatPage")

let built: Promise<string> | undefined

/** Bundles the page into a temporary directory (once per process) and answers the directory. */
export const buildChatPage = (): Promise<string> => {
  built ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), "lce-chat-page-"))
    await build({
      input: join(SOURCE, "main.tsx"),
      platform: "browser",
      logLevel: "warn",
      transform: { jsx: "react-jsx", define: { "process.env.NODE_ENV": JSON.stringify("production") } },
      onLog: (level, log, handler) => {
        // An import left unresolved would fail in the browser: refuse it here.
        if (log.code === "UNRESOLVED_IMPORT") throw new Error(`the chat page's bundle: ${log.message}`)
        // The SDK's React modules start with "use client", which means nothing to one browser bundle.
        if (log.code === "MODULE_LEVEL_DIRECTIVE") return
        handler(level, log)
      },
      output: { dir, format: "esm", entryFileNames: "main.js", codeSplitting: false, minify: true }
    })
    await copyFile(join(SOURCE, "index.html"), join(dir, "index.html"))
    return dir
  })()
  return built
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".map": "application/json"
}

/** A static server of `dir` on loopback, unref'd so it never keeps the process alive. */
const serveDirectory = (dir: string): Promise<Server> =>
  new Promise((resolve, reject) => {
    const server = createServer((request, response) => {
      const path = new URL(request.url ?? "/", "http://page").pathname
      const file = normalize(join(dir, path === "/" ? "index.html" : decodeURIComponent(path)))
      if (!file.startsWith(dir + sep) || request.method !== "GET") {
        response.writeHead(404).end()
        return
      }
      readFile(file).then(
        (body) => {
          response.writeHead(200, {
            "content-type": TYPES[extname(file)] ?? "application/octet-stream",
            "cache-control": "no-store"
          }).end(body)
        },
        () => response.writeHead(404).end()
      )
    })
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      server.unref()
      resolve(server)
    })
  })

let served: Promise<string> | undefined

/** The URL the built page is served at (one server per process). */
export const chatPageUrl = (): Promise<string> => {
  served ??= buildChatPage().then(serveDirectory).then((server) =>
    `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  )
  return served
}

export interface ChatPageOptions {
  /** The LangGraph server's URL, e.g. `http://127.0.0.1:PORT`. */
  readonly api: string
  /** A thread to open; without it the page creates one on the first message. */
  readonly thread?: string
}

/** Opens the chat page in a new page of `browser` (or of a context of its), talking to `api` (the `agent` assistant). */
export const openChatPage = async (browser: Browser | BrowserContext, options: ChatPageOptions): Promise<Page> => {
  const url = new URL(await chatPageUrl())
  url.searchParams.set("api", options.api)
  if (options.thread !== undefined) url.searchParams.set("thread", options.thread)
  const page = await browser.newPage()
  await page.goto(url.toString())
  await page.getByTestId("status").waitFor()
  return page
}
