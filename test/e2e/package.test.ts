/**
 * The published package as a user installs it: `npm pack` gives a tarball
 * that is installed in a separate project next to nothing but LangGraph and
 * LangChain core (and TypeScript for the type checks). Effect, `@effect/sql-pg`
 * and PGlite must arrive through the package's own dependencies and peers.
 * From that project, in child processes, real two-turn graphs run on every
 * connection string, persistent ones continue in a second process, the
 * declarations type-check under NodeNext and Bundler resolution, CommonJS can
 * `require()` every entry, a missing driver package is a typed error that
 * says how to install it, and every TypeScript block of the README and of
 * docs/ type-checks as a user would paste it (and their links resolve).
 */
import { execFile } from "node:child_process"
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join, relative } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createDatabase } from "../../harness/databases.ts"

const root = join(import.meta.dirname, "..", "..")
let base: string | undefined
let project = ""

/** Runs a command; a failure shows the command, its exit code, stderr and stdout. */
const run = async (command: string, args: ReadonlyArray<string>, cwd = project): Promise<string> => {
  try {
    const { stdout } = await promisify(execFile)(command, args, {
      cwd,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
      timeout: 170_000
    })
    return stdout
  } catch (cause) {
    const { code, signal, stdout, stderr } = cause as {
      code?: unknown
      signal?: unknown
      stdout?: string
      stderr?: string
    }
    throw new Error(
      `${command} ${args.join(" ")} failed in ${cwd} (exit ${String(code)}, signal ${String(signal)})\n` +
        `--- stderr ---\n${stderr ?? ""}\n--- stdout ---\n${stdout ?? ""}`,
      { cause }
    )
  }
}

const node = (script: string, ...args: Array<string>) => run(process.execPath, [script, ...args])

/** `graph.js <url> <input>…`: one invoke per input on thread "thread-1", then the thread's message texts. */
const graphScript = `
import { AIMessage, HumanMessage } from "@langchain/core/messages"
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph"
import { EffectCheckpointSaver } from "langgraph-checkpoint-effect"

const [url, ...inputs] = process.argv.slice(2)
const saver = await EffectCheckpointSaver.fromConnString(url)
try {
  const app = new StateGraph(MessagesAnnotation)
    .addNode("answer", (state) => {
      const last = state.messages.at(-1)
      return { messages: [new AIMessage(last.text + " #" + state.messages.length)] }
    })
    .addEdge(START, "answer")
    .addEdge("answer", END)
    .compile({ checkpointer: saver })
  const config = { configurable: { thread_id: "thread-1" } }
  let state
  for (const input of inputs) state = await app.invoke({ messages: [new HumanMessage(input)] }, config)
  console.log(JSON.stringify(state.messages.map((message) => message.text)))
} finally {
  await saver.close()
}
`

/** The same graph from CommonJS, with every entry loaded by `require()`. */
const commonJsScript = `
const { AIMessage, HumanMessage } = require("@langchain/core/messages")
const { END, MessagesAnnotation, START, StateGraph } = require("@langchain/langgraph")
const { EffectCheckpointSaver } = require("langgraph-checkpoint-effect")
const Postgres = require("langgraph-checkpoint-effect/postgres")
const Pglite = require("langgraph-checkpoint-effect/pglite")
const Cockroach = require("langgraph-checkpoint-effect/cockroach")
const Testing = require("langgraph-checkpoint-effect/testing")

const main = async () => {
  const saver = await EffectCheckpointSaver.fromConnString("memory:")
  try {
    const app = new StateGraph(MessagesAnnotation)
      .addNode("answer", (state) => {
        const last = state.messages.at(-1)
        return { messages: [new AIMessage(last.text + " #" + state.messages.length)] }
      })
      .addEdge(START, "answer")
      .addEdge("answer", END)
      .compile({ checkpointer: saver })
    const config = { configurable: { thread_id: "thread-1" } }
    await app.invoke({ messages: [new HumanMessage("hi")] }, config)
    const state = await app.invoke({ messages: [new HumanMessage("there")] }, config)
    console.log(JSON.stringify({
      entries: [typeof Postgres.layer, typeof Pglite.layer, typeof Cockroach.toWireUrl, typeof Testing.runContract],
      messages: state.messages.map((message) => message.text)
    }))
  } finally {
    await saver.close()
  }
}
main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
`

/**
 * Without PGlite installed: the root, the PostgreSQL entry and "memory:"
 * work; "pglite:" rejects with the error it gives.
 */
const missingScript = `
import { CheckpointError, EffectCheckpointSaver } from "langgraph-checkpoint-effect"
import * as Postgres from "langgraph-checkpoint-effect/postgres"

const memory = await EffectCheckpointSaver.fromConnString("memory:")
await memory.close()
try {
  await EffectCheckpointSaver.fromConnString("pglite:")
  console.log(JSON.stringify({ resolved: true }))
} catch (error) {
  console.log(JSON.stringify({
    postgres: typeof Postgres.layer,
    _tag: error._tag,
    name: error.name,
    message: error.message,
    invalidConfig: error instanceof CheckpointError.InvalidConfig
  }))
}
`

/**
 * \`server.js [installed]\`: the server entry. Without its optional peers it
 * loads, and \`serve\` names what to install; with them, a graph is served
 * and a turn runs over LangGraph's HTTP API on the embedded default.
 */
const serverScript = `
import { AIMessage } from "@langchain/core/messages"
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph"
import { serve } from "langgraph-checkpoint-effect/server"

const graph = new StateGraph(MessagesAnnotation)
  .addNode("answer", (state) => ({ messages: [new AIMessage("heard " + state.messages.at(-1).text)] }))
  .addEdge(START, "answer")
  .addEdge("answer", END)
  .compile()
let server
try {
  server = await serve({ graphs: { agent: graph }, database: "pglite:", port: 0 })
} catch (error) {
  console.log(JSON.stringify({ _tag: error._tag, message: error.message }))
  process.exit(0)
}
const call = async (path, body) => {
  const response = await fetch(server.url + path, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  return response.json()
}
const thread = await call("/threads", {})
await call("/threads/" + thread.thread_id + "/runs/wait", {
  assistant_id: "agent",
  input: { messages: [{ type: "human", content: "hi" }] }
})
const state = await call("/threads/" + thread.thread_id + "/state")
console.log(JSON.stringify({ messages: state.values.messages.map((message) => message.content) }))
await server.close()
`

/** Type-checked only: a broken subpath export or declaration file fails it. */
const consumerTs = `
import { AIMessage, HumanMessage } from "@langchain/core/messages"
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph"
import { CheckpointError, CheckpointStorage, EffectCheckpointSaver, Retry } from "langgraph-checkpoint-effect"
import * as Cockroach from "langgraph-checkpoint-effect/cockroach"
import * as Pglite from "langgraph-checkpoint-effect/pglite"
import * as Postgres from "langgraph-checkpoint-effect/postgres"
import { type ContractReport, runContract } from "langgraph-checkpoint-effect/testing"
import { Effect, Layer, Option } from "effect"

type Storage = Layer.Layer<CheckpointStorage.CheckpointStorage, unknown>

export const conversation = async (url: string): Promise<Array<string>> => {
  const checkpointer: EffectCheckpointSaver = await EffectCheckpointSaver.fromConnString(url)
  const app = new StateGraph(MessagesAnnotation)
    .addNode("answer", (state) => ({
      messages: [new AIMessage((state.messages.at(-1)?.text ?? "") + " #" + state.messages.length)]
    }))
    .addEdge(START, "answer")
    .addEdge("answer", END)
    .compile({ checkpointer })
  const state = await app.invoke({ messages: [new HumanMessage("hi")] }, { configurable: { thread_id: "t" } })
  await checkpointer.close()
  return state.messages.map((message) => message.text)
}

export const postgres: Storage = Postgres.layer({ url: "postgres://localhost/db", poolSize: 4 })
export const pglite: Storage = Pglite.layer({ dataDir: "./data" })
export const cockroach: Storage = Cockroach.layer({ url: "cockroachdb://root@localhost:26257/db" })
export const wire: string = Cockroach.toWireUrl("cockroachdb://root@host:26257/db")
export const saver: EffectCheckpointSaver = EffectCheckpointSaver.fromLayer(Pglite.layer(), {
  retry: Retry.defaultPolicy
})
export const stored: Effect.Effect<boolean, CheckpointError.CheckpointError> = CheckpointStorage.CheckpointStorage.use(
  (storage) => storage.getTuple({ thread_id: "t" })
).pipe(Effect.map(Option.isSome), Effect.provide(CheckpointStorage.layerMemory))
export const invalid = (error: unknown): error is CheckpointError.InvalidConfig =>
  error instanceof CheckpointError.InvalidConfig
export const report: Promise<ContractReport> = runContract({ name: "memory", create: () => new MemorySaver(), runs: 1 })
`

const tsconfigs = {
  // Strict, and the declarations themselves checked (skipLibCheck: false).
  "tsconfig.nodenext.json": {
    compilerOptions: {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      strict: true,
      noEmit: true,
      skipLibCheck: false
    },
    files: ["consumer.ts"]
  },
  // The README's blocks, as a user of Node's own module resolution pastes them.
  "tsconfig.readme.json": {
    compilerOptions: {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      strict: true,
      noEmit: true,
      skipLibCheck: true
    },
    include: ["readme"]
  },
  // What bundler templates (Vite) and `tsc --init` give, with the Effect-style exactOptionalPropertyTypes.
  // (skipLibCheck: false with exactOptionalPropertyTypes fails inside @langchain/core's and langsmith's
  // own declarations, so that combination says nothing about this package.)
  "tsconfig.bundler.json": {
    compilerOptions: {
      target: "ES2022",
      module: "ESNext",
      moduleResolution: "Bundler",
      strict: true,
      exactOptionalPropertyTypes: true,
      noEmit: true,
      skipLibCheck: true
    },
    files: ["consumer.ts"]
  }
}

/** The documentation whose TypeScript blocks are type-checked: the README and every guide of docs/. */
const documents = async (): Promise<Array<string>> => [
  "README.md",
  ...(await readdir(join(root, "docs"))).filter((file) => file.endsWith(".md")).sort().map((file) => `docs/${file}`)
]

/**
 * The TypeScript blocks of the README and of docs/, each with the file it
 * is in (`README`, `docs-operations`) and the line it starts on. A block
 * is pasted as a module of its own, next to the user's own code it names
 * (`readmeContext`), but nothing else: what it uses of the package, it
 * imports. A block in another language (`tsx`, `sh`, `sql`) is not checked.
 */
const readmeBlocks = async () =>
  (await Promise.all((await documents()).map(async (document) => {
    const text = await readFile(join(root, document), "utf8")
    return [...text.matchAll(/^```(?:ts|typescript)\n([\s\S]*?)^```/gm)].map((match) => ({
      document: document.replace(/\.md$/, "").replaceAll("/", "-"),
      line: text.slice(0, match.index).split("\n").length + 1,
      code: match[1]!
    }))
  }))).flat()

/** A GitHub heading anchor: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
const anchorOf = (heading: string) => heading.toLowerCase().replace(/[^\p{L}\p{M}\p{N}_\- ]/gu, "").replaceAll(" ", "-")

/** The anchors of a Markdown file's headings (outside code blocks), a repeated one numbered as GitHub does. */
const anchorsOf = (text: string): Set<string> => {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  let fenced = false
  for (const line of text.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced
    const heading = fenced ? undefined : /^#{1,6} (.*)$/.exec(line)?.[1]
    if (heading === undefined) continue
    const anchor = anchorOf(heading)
    const times = seen.get(anchor) ?? 0
    seen.set(anchor, times + 1)
    anchors.add(times === 0 ? anchor : `${anchor}-${times}`)
  }
  return anchors
}

/** What the documentation's blocks leave to the user: their graph and its input, their URL, their saver. */
const readmeContext = `
declare const graph: {
  compile(options: { checkpointer: import("@langchain/langgraph-checkpoint").BaseCheckpointSaver }): {
    invoke(input: unknown, config: import("@langchain/core/runnables").RunnableConfig): Promise<unknown>
  }
}
declare const input: unknown
declare const url: string
declare const MySaver: new() => import("@langchain/langgraph-checkpoint").MemorySaver & { end(): Promise<void> }
`

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "lce-package-"))
  const pack = join(base, "pack")
  project = join(base, "consumer")
  await mkdir(pack)
  await mkdir(project)
  await run("npm", ["pack", "--pack-destination", pack, "--silent"], root)
  const tarball = (await readdir(pack)).find((file) => file.endsWith(".tgz"))
  expect(tarball, "npm pack made no tarball").toBeDefined()
  await writeFile(
    join(project, "package.json"),
    JSON.stringify({ name: "consumer", private: true, type: "module" }, null, 2)
  )
  await run("npm", [
    "install",
    "--prefer-offline",
    "--no-audit",
    "--no-fund",
    join(pack, tarball!),
    "@langchain/langgraph@1.7.3",
    "@langchain/core@1.4.0",
    "typescript@5.9.3"
  ])
  await writeFile(join(project, "graph.js"), graphScript)
  await writeFile(join(project, "main.cjs"), commonJsScript)
  await writeFile(join(project, "missing.js"), missingScript)
  await writeFile(join(project, "server.js"), serverScript)
  await writeFile(join(project, "consumer.ts"), consumerTs)
  await mkdir(join(project, "readme"))
  await writeFile(join(project, "readme", "context.d.ts"), readmeContext)
  for (const block of await readmeBlocks()) {
    await writeFile(join(project, "readme", `${block.document}-line-${block.line}.ts`), `${block.code}\nexport {}\n`)
  }
  for (const [name, config] of Object.entries(tsconfigs)) {
    await writeFile(join(project, name), JSON.stringify(config, null, 2))
  }
}, 240_000)

afterAll(async () => {
  if (base !== undefined) await rm(base, { recursive: true, force: true })
})

const twoTurns = ["hi", "hi #1", "there", "there #3"]
const threeTurns = [...twoTurns, "again", "again #5"]

const conversation = async (url: string, ...inputs: Array<string>): Promise<unknown> =>
  JSON.parse(await node("graph.js", url, ...inputs))

describe("a two-turn graph from the installed package", () => {
  it("memory:", async () => {
    expect(await conversation("memory:", "hi", "there")).toEqual(twoTurns)
  })

  // Each conversation is a Node process of its own (PGlite compiles its WebAssembly in each): on a
  // loaded 2-core machine one takes ~30 s, so these budgets are generous; they guard against hangs.
  it("pglite: (in memory)", async () => {
    expect(await conversation("pglite:", "hi", "there")).toEqual(twoTurns)
  }, 180_000)

  it("pglite:<directory>, continued by a second process, and seen by npx langgraph-checkpoints", async () => {
    const url = `pglite:${join(base!, "pglite-data")}`
    expect(await conversation(url, "hi", "there")).toEqual(twoTurns)
    expect(await conversation(url, "again")).toEqual(threeTurns)
    // The command the package installs, run as a user runs it.
    const threads = JSON.parse(await run("npx", ["--no-install", "langgraph-checkpoints", "threads", url, "--json"]))
    expect(threads).toMatchObject([{ thread_id: "thread-1" }])
    expect(threads[0].checkpoints).toBeGreaterThanOrEqual(6)
    const shown = await run("npx", ["--no-install", "langgraph-checkpoints", "show", url, "thread-1"])
    expect(shown).toContain("again #5")
  }, 180_000)

  it("postgres://, continued by a second process", async () => {
    const database = await createDatabase("package")
    try {
      expect(await conversation(database.url, "hi", "there")).toEqual(twoTurns)
      expect(await conversation(database.url, "again")).toEqual(threeTurns)
    } finally {
      await database.drop()
    }
  }, 180_000)
})

/** tsc's diagnostics for a config, one string per diagnostic (with its continuation lines). */
const typeCheck = async (config: string): Promise<Array<string>> => {
  const tsc = join(project, "node_modules/typescript/bin/tsc")
  const output = await promisify(execFile)(process.execPath, [tsc, "-p", config], {
    cwd: project,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    timeout: 170_000
  }).then(({ stdout, stderr }) => stdout + stderr, (cause: { code?: unknown; stdout?: string; stderr?: string }) => {
    // Diagnostics exit with a code; a signal (timeout, crash) is not a type check.
    if (typeof cause.code !== "number") throw cause
    return `${cause.stdout ?? ""}${cause.stderr ?? ""}`
  })
  return output.split(/\n(?=\S)/).map((diagnostic) => diagnostic.trimEnd()).filter((diagnostic) => diagnostic !== "")
}

describe("the declarations type-check in the consumer", () => {
  it("module NodeNext, strict, skipLibCheck false", async () => {
    // Our /pglite declarations describe the PGlite instance they take structurally: PGlite's own need the
    // Emscripten and NodeJS type packages (TS2503), which a consumer of this package should not have to install.
    expect(await typeCheck("tsconfig.nodenext.json")).toEqual([])
  }, 120_000)

  it("moduleResolution Bundler, strict, exactOptionalPropertyTypes", async () => {
    expect(await typeCheck("tsconfig.bundler.json")).toEqual([])
  }, 120_000)
})

it("every TypeScript block of the README and of docs/ type-checks against the installed package", async () => {
  const blocks = await readmeBlocks()
  expect(blocks.some((block) => block.document === "README")).toBe(true)
  expect(blocks.some((block) => block.document.startsWith("docs-"))).toBe(true)
  // A diagnostic names the file and the line the block starts on: readme/README-line-<n>.ts,
  // readme/docs-<guide>-line-<n>.ts.
  expect(await typeCheck("tsconfig.readme.json")).toEqual([])
}, 120_000)

it("every link between the README and docs/ reaches a file, and a heading of it", async () => {
  const broken: Array<string> = []
  for (const document of await documents()) {
    const text = (await readFile(join(root, document), "utf8")).replace(/^```[\s\S]*?^```/gm, "")
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue
      const [path, anchor] = target!.split("#") as [string, string | undefined]
      const file = path === "" ? document : join(document, "..", path)
      const linked = await readFile(join(root, file), "utf8").catch(() => undefined)
      if (linked === undefined) broken.push(`${document}: ${target} (no file ${file})`)
      else if (anchor !== undefined && !anchorsOf(linked).has(anchor)) {
        broken.push(`${document}: ${target} (no heading)`)
      }
    }
  }
  expect(broken).toEqual([])
})

it("installs only what it uses: no Redis or HTTP client comes with it", async () => {
  // A checkpointer's install should hold no surprise (a peer dependency of @effect/platform-node once
  // brought a Redis client, 15 MB, into every project).
  const present = (name: string) => readdir(join(project, "node_modules", name)).then(() => true, () => false)
  expect({ redis: await present("redis"), "@redis": await present("@redis"), undici: await present("undici") })
    .toEqual({ redis: false, "@redis": false, undici: false })
})

it("loads with require() from CommonJS and runs the memory graph", async () => {
  expect(JSON.parse(await node("main.cjs"))).toEqual({
    entries: ["function", "function", "function", "function"],
    messages: twoTurns
  })
})

it("without @electric-sql/pglite installed, \"pglite:\" rejects with InvalidConfig naming the install command", async () => {
  const installed = join(project, "node_modules/@electric-sql/pglite")
  const moved = join(project, "node_modules/@electric-sql/pglite-moved")
  await rename(installed, moved)
  try {
    const result = JSON.parse(await node("missing.js"))
    expect(result).toMatchObject({
      postgres: "function",
      _tag: "InvalidConfig",
      name: "InvalidConfig",
      invalidConfig: true
    })
    expect(result.message).toContain("\"pglite:\" needs the package @electric-sql/pglite")
    expect(result.message).toContain("npm i @electric-sql/pglite")
  } finally {
    await rename(moved, installed)
  }
})

describe("the server entry, whose peers are optional", () => {
  it("without @langchain/langgraph-api, hono and @hono/node-server: serve rejects naming the install command", async () => {
    expect(JSON.parse(await node("server.js"))).toMatchObject({
      _tag: "InvalidConfig",
      message: expect.stringContaining("npm i @langchain/langgraph-api hono @hono/node-server")
    })
  })

  it("with them installed: a graph served on the embedded default answers a turn", async () => {
    await run("npm", [
      "install",
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      "@langchain/langgraph-api@1.5.1",
      "hono@4.13.5",
      "@hono/node-server@2.1.0"
    ])
    expect(JSON.parse(await node("server.js"))).toEqual({ messages: ["hi", "heard hi"] })
  }, 240_000)
})

/**
 * The declaration files a user's editor and type checker walk, from every
 * entry of `exports`: what the package promises to keep. Relative imports
 * (`from "./x.ts"`, `import("./x.ts")`; declarations keep the sources'
 * `.ts` specifiers) lead to `.d.ts` files beside them.
 */
const declarationClosure = async (pkg: string): Promise<Map<string, number>> => {
  const manifest = JSON.parse(await readFile(join(pkg, "package.json"), "utf8")) as {
    readonly exports: Record<string, string | null | { readonly types?: string }>
  }
  const entries = Object.values(manifest.exports).flatMap((entry) =>
    typeof entry === "object" && entry !== null && entry.types !== undefined ? [join(pkg, entry.types)] : []
  )
  const lines = new Map<string, number>()
  const pending = [...entries]
  while (pending.length > 0) {
    const file = pending.pop()!
    if (lines.has(file)) continue
    const text = await readFile(file, "utf8")
    lines.set(file, text.split("\n").length)
    for (const [, specifier] of text.matchAll(/(?:from\s+|import\(\s*)["'](\.{1,2}\/[^"']+)["']/g)) {
      pending.push(join(dirname(file), specifier!.replace(/\.(?:d\.)?[cm]?[jt]s$/, "") + ".d.ts"))
    }
  }
  return lines
}

/** The public surface: the entry points, the modules they export and the types those name. */
const PUBLIC_FILES = [
  "Checkpoint.d.ts",
  "CheckpointError.d.ts",
  "CheckpointStorage.d.ts",
  "Encryption.d.ts",
  "ExportFormat.d.ts",
  "FormatLevel.d.ts",
  "JsonPlus.d.ts",
  "MemoryDriver.d.ts",
  "MemoryState.d.ts",
  "Metrics.d.ts",
  "Reports.d.ts",
  "Retry.d.ts",
  "Revival.d.ts",
  "Saver.d.ts",
  "Serializer.d.ts",
  "ServerOptions.d.ts",
  "Sharing.d.ts",
  "Snapshot.d.ts",
  "SqlOptions.d.ts",
  "StorageDriver.d.ts",
  "ThreadCrons.d.ts",
  "ThreadRecords.d.ts",
  "ThreadRuns.d.ts",
  "cockroach.d.ts",
  "index.d.ts",
  "pglite.d.ts",
  "postgres.d.ts",
  "server.d.ts",
  "testing/Contract.d.ts",
  "testing/Describe.d.ts",
  "testing/Model.d.ts",
  "testing/Operations.d.ts",
  "testing/Violation.d.ts",
  "testing/index.d.ts"
]

it("declares exactly the public files: no declaration of src/internal/ is reachable from an entry point", async () => {
  const pkg = join(project, "node_modules/langgraph-checkpoint-effect")
  const closure = await declarationClosure(pkg)
  const files = [...closure.keys()].map((file) => relative(join(pkg, "dist"), file)).sort()
  expect(files).toEqual(PUBLIC_FILES)
})

it("closes the internals: a deep import of src/internal/ is refused by the package's exports", async () => {
  const manifest = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as {
    readonly exports: Record<string, unknown>
  }
  expect(manifest.exports["./internal/*"]).toBeNull()
  const attempt = await run(process.execPath, [
    "--input-type=module",
    "-e",
    `import("langgraph-checkpoint-effect/internal/StorageFormat.js").then(() => console.log("loaded"), (error) => console.log(error.code))`
  ])
  expect(attempt.trim()).toBe("ERR_PACKAGE_PATH_NOT_EXPORTED")
})
