/**
 * agent-chat-ui as a newcomer gets it without cloning anything: the Vite
 * template of `create-agent-chat-app`, installed from the npm registry,
 * built once and kept in `node_modules/.cache` (a later run reuses it), and
 * served from a loopback port, as `npm run dev` would serve it.
 *
 * The template is a workspace of a web app and LangGraph agents of its own;
 * only the web app is kept and installed on its own, as docs/serving.md
 * says to.
 */
import { execFile } from "node:child_process"
import { existsSync } from "node:fs"
import { cp, mkdtemp, readFile, rm } from "node:fs/promises"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { extname, join, normalize } from "node:path"
import { promisify } from "node:util"

/** The template's version: a newer one is a deliberate change here. */
export const VERSION = "0.1.6"

const run = promisify(execFile)

const root = join(import.meta.dirname, "..", "..")
const cache = join(root, "node_modules", ".cache", `agent-chat-ui-${VERSION}`)

/** `npx create-agent-chat-app`'s Vite template, installed and built, in `cache`; its `dist` returned. */
export const prepare = async (): Promise<string> => {
  const dist = join(cache, "dist")
  if (existsSync(join(dist, "index.html"))) return dist
  const scratch = await mkdtemp(join(tmpdir(), "lce-agent-chat-ui-"))
  try {
    await run("npx", [
      "-y",
      `create-agent-chat-app@${VERSION}`,
      "--yes",
      "--project-name",
      "app",
      "--package-manager",
      "npm",
      "--install-deps",
      "false",
      "--framework",
      "vite",
      "--include-agent",
      "react"
    ], { cwd: scratch, timeout: 300_000 })
    await rm(cache, { recursive: true, force: true })
    await cp(join(scratch, "app", "apps", "web"), cache, { recursive: true })
    await run("npm", ["install", "--no-audit", "--no-fund"], { cwd: cache, timeout: 600_000 })
    await run(join(cache, "node_modules", ".bin", "vite"), ["build"], { cwd: cache, timeout: 300_000 })
    return dist
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}

const types: Record<string, string> = {
  ".html": "text/html",
  ".js": "text/javascript",
  ".css": "text/css",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2"
}

/** `dist` served on a loopback port (any other path is the page, as a single-page app's host answers). */
export const host = async (dist: string) => {
  const server = createServer((request, response) => {
    const path = normalize(new URL(request.url ?? "/", "http://x").pathname).replace(/^(\.\.[/\\])+/, "")
    const file = join(dist, path)
    const found = path !== "/" && file.startsWith(dist) && existsSync(file) ? file : join(dist, "index.html")
    readFile(found).then((body) => {
      response.writeHead(200, { "content-type": types[extname(found)] ?? "application/octet-stream" })
      response.end(body)
    }, () => response.writeHead(500).end())
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}
