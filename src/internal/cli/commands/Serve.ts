/**
 * `langgraph-checkpoints serve <module>:<export> [--db url]`: a compiled
 * graph served over LangGraph's HTTP API (see `langgraph-checkpoint-effect/server`),
 * on the embedded default (PGlite in `.data/langgraph`) or any database.
 * Prints the URL to give agent-chat-ui or the SDK's `Client`, then what it
 * serves (each graph and its assistant's UUID, the database, its password
 * masked), and serves until interrupted (Ctrl-C: "stopping…", "stopped").
 * A database that cannot be opened is named in words, as every command
 * names it.
 *
 * The server entry and its optional peer dependencies
 * (`@langchain/langgraph-api`, `hono`, `@hono/node-server`) are loaded only
 * here, from the package's own files (`PackageFiles`: the same from the
 * source tree, the compiled one and the CLI's bundle), so every other
 * command works without them.
 *
 * @since 0.2.0
 */
import { Effect } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { execFile } from "node:child_process"
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"
import type { StorageFailure } from "../../../CheckpointError.ts"
import type { AuthHandler, Graph } from "../../../ServerOptions.ts"
import * as ConnectionString from "../../ConnectionString.ts"
import { LOOPBACK_HOSTS } from "../../Loopback.ts"
import { fromSource, packageFile } from "../../PackageFiles.ts"
import { CommandError, UsageError } from "../Errors.ts"
import * as Output from "../Output.ts"
import * as Unreachable from "../Unreachable.ts"

/**
 * The server entry's `serve` as this command calls it: the entry is loaded
 * only when the command runs, with its peers (`langgraph-checkpoint-effect/server`'s
 * `serve` is checked against it in the CLI's tests).
 */
export type Serve = (options: {
  readonly graphs: Readonly<Record<string, Graph>>
  readonly database: string
  readonly host: string
  readonly port: number
  readonly auth?: AuthHandler | undefined
  readonly cluster?: {
    readonly advertise: { readonly host: string; readonly port?: number | undefined }
    readonly listen: { readonly host: string; readonly port: number }
  } | undefined
}) => Promise<{
  readonly url: string
  readonly assistants: ReadonlyArray<{ readonly graph_id: string; readonly assistant_id: string }>
  readonly close: () => Promise<void>
}>

interface ServerModule {
  readonly serve: Serve
}

const isStorageFailure = (cause: unknown): cause is StorageFailure =>
  typeof cause === "object" && cause !== null && (cause as { readonly _tag?: unknown })._tag === "StorageFailure"

/** The server entry, compiled or not, as this module is (not bundled: its peers are the installation's). */
const loadServer = Effect.tryPromise({
  try: () => import(packageFile(fromSource ? "server.ts" : "server.js").href) as Promise<ServerModule>,
  catch: (cause) =>
    new CommandError({
      detail: `the server needs @langchain/langgraph-api, hono and @hono/node-server installed ` +
        `(npm install @langchain/langgraph-api hono @hono/node-server): ${String(cause)}`
    })
})

/** `path/to/module.ts:export` (default export `fallback`), read. */
const spec = (argument: string, fallback = "graph") => {
  const at = argument.lastIndexOf(":")
  // A Windows drive letter (`C:\…`) is not an export name.
  return at > 1 ? { path: argument.slice(0, at), name: argument.slice(at + 1) } : { path: argument, name: fallback }
}

/** Why `name` of the module at `path` is not a graph to serve, and what would be. */
const notAGraph = (path: string, name: string, loaded: Record<string, unknown>) => {
  const found = loaded[name]
  // A `StateGraph` not compiled yet: it has `compile`, and no `getState`.
  if (typeof found === "object" && found !== null && "compile" in found) {
    return `\`${name}\` of ${path} is a graph not compiled yet: export \`${name}.compile()\``
  }
  const graphs = Object.keys(loaded).filter((key) => {
    const value = loaded[key]
    return typeof value === "object" && value !== null && "getState" in value
  })
  return `${path} has no compiled graph exported as \`${name}\` (${
    graphs.length === 0 ? "it exports none" : `it exports ${graphs.map((key) => `\`${key}\``).join(", ")}`
  }: name one as ${path}:<export>)`
}

/**
 * Where a syntax error is: Node's `import()` does not say, but Node running
 * the file prints it (`file:///…:line`, the source, a caret under the
 * column) before any of the module graph runs.
 */
const syntaxErrorAt = (path: string) =>
  Effect.promise(() =>
    new Promise<string | undefined>((done) =>
      execFile(process.execPath, [resolve(path)], { timeout: 10_000 }, (_, __, stderr) => {
        const lines = stderr.split("\n")
        const at = lines.findIndex((line) => /^(?:file:\/\/)?[^:]*[/\\].*:\d+$/.test(line))
        if (at < 0) return done(undefined)
        const caret = lines.slice(at + 1).find((line) => /^ *\^+ *$/.test(line))
        const where = lines[at]!.replace(/^file:\/\//, "")
        done(caret === undefined ? where : `${where}:${caret.indexOf("^") + 1}`)
      })
    )
  )

/** Why the module at `path` could not be loaded, in words (never the CLI's own files, which the import names). */
const cannotLoad = (path: string, cause: unknown) =>
  Effect.gen(function*() {
    const { code, name, message } = cause as { code?: unknown; name?: unknown; message?: unknown }
    const why = code === "ERR_MODULE_NOT_FOUND" && typeof message === "string" &&
        message.startsWith(`Cannot find module '${resolve(path)}'`)
      ? "there is no such file"
      : code === "ERR_UNKNOWN_FILE_EXTENSION" && /\.[cm]?ts$/.test(path)
      ? `Node ${process.version} does not run TypeScript: use Node 22.18 or later, or serve the compiled .js`
      : name === "SyntaxError"
      ? `${String(message)}${yield* Effect.map(syntaxErrorAt(path), (at) => at === undefined ? "" : ` at ${at}`)}`
      : String(cause)
    return yield* new CommandError({ detail: `cannot load ${path}: ${why}` })
  })

/** The module at `path`, loaded. */
const loadModule = (path: string) =>
  Effect.tryPromise({
    try: () => import(pathToFileURL(resolve(path)).href) as Promise<Record<string, unknown>>,
    catch: (cause) => cause
  }).pipe(Effect.catch((cause) => cannotLoad(path, cause)))

/** The compiled graph `argument` names. */
const loadGraph = (argument: string) =>
  Effect.gen(function*() {
    const { name, path } = spec(argument)
    const loaded = yield* loadModule(path)
    const graph = loaded[name]
    if (typeof graph !== "object" || graph === null || !("getState" in graph)) {
      return yield* new UsageError({ command: "serve", detail: notAGraph(path, name, loaded) })
    }
    return { id: name, graph: graph as Graph }
  })

/** The authentication handler `argument` names: a function, or LangGraph's `Auth`. */
const loadAuth = (argument: string) =>
  Effect.gen(function*() {
    const { name, path } = spec(argument, "auth")
    const loaded = yield* loadModule(path)
    const handler = loaded[name]
    if (
      typeof handler !== "function" && !(typeof handler === "object" && handler !== null && "~handlerCache" in handler)
    ) {
      return yield* new UsageError({
        command: "serve",
        detail: `${path} has no authentication handler exported as \`${name}\` (LangGraph's Auth, or a function ` +
          "of the request answering an identity)"
      })
    }
    return handler as AuthHandler
  })

/** `host[:port]`, read (`[v6]:port` too). */
const addressOf = (text: string) => {
  const found = /^(?:\[([^\]]+)\]|([^:]+))(?::(\d+))?$/.exec(text)
  const port = found?.[3] === undefined ? undefined : Number(found[3])
  return found === null || (port !== undefined && port > 65535)
    ? Effect.fail(new UsageError({ command: "serve", detail: "--advertise must be host[:port]" }))
    : Effect.succeed({ host: found[1] ?? found[2]!, port })
}

/**
 * The `serve` command.
 *
 * @since 0.2.0
 */
export const serve = Command.make("serve", {
  graphs: Argument.String("graph").pipe(
    Argument.withMetavar("<module>:<export>"),
    Argument.withDescription("The compiled graph to serve, e.g. ./src/agent.ts:graph (repeat for more)"),
    Argument.variadic({ min: 1 })
  ),
  db: Flag.String("db").pipe(
    Flag.withDescription(
      "The database (pglite:<dir>, postgres://…, cockroachdb://…; default DATABASE_URL, else pglite:.data/langgraph)"
    ),
    Flag.optional
  ),
  host: Flag.String("host").pipe(
    Flag.withDescription(
      "Listen on this address (default 127.0.0.1: this machine only; another needs --auth)"
    ),
    Flag.withDefault("127.0.0.1")
  ),
  port: Flag.Int("port").pipe(
    Flag.withDescription("Listen on this port (default 2024, LangGraph's)"),
    Flag.withDefault(2024)
  ),
  auth: Flag.String("auth").pipe(
    Flag.withMetavar("<module>:<export>"),
    Flag.withDescription(
      "The authentication handler, LangGraph's Auth or a function of the request (each identity then sees only " +
        "its own threads; needed to serve beyond this machine)"
    ),
    Flag.optional
  ),
  advertise: Flag.String("advertise").pipe(
    Flag.withDescription(
      "The address other replicas reach this one at, host[:port] (PostgreSQL and CockroachDB; default 127.0.0.1 " +
        "and a free port: replicas on one machine need nothing)"
    ),
    Flag.optional
  )
}, (input) =>
  Effect.gen(function*() {
    if (input.port < 0 || input.port > 65535) {
      return yield* new UsageError({ command: "serve", detail: "--port must be from 0 to 65535" })
    }
    if (!LOOPBACK_HOSTS.has(input.host) && input.auth._tag === "None") {
      return yield* new UsageError({
        command: "serve",
        detail: `--host ${input.host} serves beyond this machine, which needs an authentication handler: ` +
          "--auth <module>:<export> (or keep 127.0.0.1 behind a proxy that authenticates)"
      })
    }
    const auth = input.auth._tag === "Some" ? yield* loadAuth(input.auth.value) : undefined
    const loaded = yield* Effect.forEach(input.graphs, loadGraph)
    const graphs = Object.fromEntries(loaded.map(({ graph, id }) => [id, graph]))
    const server = yield* loadServer
    const database = input.db._tag === "Some" ? input.db.value : process.env.DATABASE_URL || "pglite:.data/langgraph"
    const advertise = input.advertise._tag === "Some" ? yield* addressOf(input.advertise.value) : undefined
    const running = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          server.serve({
            graphs,
            database,
            host: input.host,
            port: input.port,
            ...(auth === undefined ? {} : { auth }),
            ...(advertise === undefined
              ? {}
              : { cluster: { advertise, listen: { host: "0.0.0.0", port: advertise.port ?? 0 } } })
          }),
        catch: (cause) =>
          // By its tag: the server entry may be another copy of the package's modules than this bundle's.
          isStorageFailure(cause)
            ? Unreachable.word(database, cause)
            : new CommandError({ detail: cause instanceof Error ? cause.message : String(cause) })
      }),
      (running) =>
        Output.line("stopping…").pipe(
          Effect.andThen(Effect.promise(() => running.close())),
          Effect.andThen(Output.line("stopped"))
        )
    )
    yield* Output.line(Output.clean(running.url))
    for (const { assistant_id, graph_id } of running.assistants) {
      yield* Output.line(Output.clean(`serving graph ${graph_id} (assistant ${assistant_id})`))
    }
    // A PGlite directory is this process's while it serves: say so, and what others can do meanwhile.
    const held = database.startsWith("pglite:") ? " (held by this process: other processes read snapshots of it)" : ""
    yield* Output.line(Output.clean(`threads in ${ConnectionString.redact(database)}${held}`))
    return yield* Effect.never
  }).pipe(Effect.scoped)).pipe(
    Command.withDescription(
      "Serves graphs over LangGraph's HTTP API (the SDK, useStream, agent-chat-ui) on this database"
    )
  )
