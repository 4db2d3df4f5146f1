/**
 * A LangGraph server on your own database: compiled graphs served over
 * LangGraph Platform's HTTP API, so LangGraph's own clients
 * (`@langchain/langgraph-sdk`, its React `useStream`, agent-chat-ui) talk to
 * threads stored by this library, on any backend.
 *
 * ```ts
 * import { serve } from "langgraph-checkpoint-effect/server"
 * const server = await serve({ graphs: { agent: graph }, database: "pglite:.data/agent" })
 * console.log(server.url) // paste into agent-chat-ui, or `new Client({ apiUrl })`
 * ```
 *
 * Built on `createEmbedServer` from `@langchain/langgraph-api` (with `hono`
 * and `@hono/node-server`, optional peer dependencies: install them to use
 * this entry point; nothing else in the package loads them). See "Serving
 * threads to LangGraph's clients" in the README for what it implements.
 *
 * @since 0.2.0
 */
import type { AddressInfo } from "node:net"
import { InvalidConfig } from "./CheckpointError.ts"
import { LOOPBACK_HOSTS, loopbackNames, urlHost } from "./internal/Loopback.ts"
import { explainMissing } from "./internal/MissingPackage.ts"
import { EffectCheckpointSaver, type SaverOptions } from "./Saver.ts"
import type { AuthHandler, CorsOptions, Graph, RunLimits } from "./ServerOptions.ts"

export type { Authenticated, AuthHandler, CorsOptions, Graph as CompiledGraph, RunLimits } from "./ServerOptions.ts"

/** The optional peer dependencies, loaded when a server starts: a missing one is named with its install command. */
const load = async () => {
  try {
    return {
      App: await import("./internal/server/App.ts"),
      Engine: await import("./internal/server/Engine.ts"),
      Graphs: await import("./internal/server/Graphs.ts"),
      node: await import("@hono/node-server")
    }
  } catch (cause) {
    throw explainMissing(
      cause,
      "serve",
      (missing) => `the server needs the package ${missing}: npm i @langchain/langgraph-api hono @hono/node-server`
    ) ?? cause
  }
}

/**
 * @since 0.2.0
 */
export interface ServerOptions {
  /** The graphs to serve, by graph id (each is also an assistant of that id). Compile them without a checkpointer. */
  readonly graphs: Readonly<Record<string, Graph>>
  /** The saver to store threads with; closed with the server only if the server opened it. */
  readonly checkpointer?: EffectCheckpointSaver | undefined
  /** Or a connection string to open one (`pglite:<dir>`, `postgres://…`, `cockroachdb://…`, `memory:`). */
  readonly database?: string | undefined
  /** Options of the saver opened from `database`. */
  readonly saverOptions?: SaverOptions | undefined
  /**
   * Authenticates every request (LangGraph's `Auth`, or a function); each
   * identity then sees only the threads it created. Required to listen on
   * anything but loopback.
   */
  readonly auth?: AuthHandler | undefined
  /** Which web pages may call the server (default: pages served from loopback). */
  readonly cors?: CorsOptions | undefined
  /** Default `127.0.0.1`. */
  readonly host?: string | undefined
  /** Default 2024 (LangGraph's); 0 for any free port. */
  readonly port?: number | undefined
  /** What is kept of each run for its readers. */
  readonly runs?: RunLimits | undefined
  /** The largest request body taken, in bytes (default 10 MiB): larger ones are refused with 413 before they are read. */
  readonly maxBodyBytes?: number | undefined
  /**
   * Serves the embed server's thread event protocol too (default off: its
   * runs are not bounded, see "Runs" in the README).
   */
  readonly protocol?: boolean | undefined
  /**
   * How this server joins the others on its database as a runner of their
   * cluster (PostgreSQL and CockroachDB; see "Replicas" in docs/serving.md):
   * the address they reach it at (default 127.0.0.1 and a free port, enough
   * for replicas on one machine), and where it listens.
   */
  readonly cluster?: ClusterOptions | undefined
}

/**
 * How a server joins its database's cluster.
 *
 * @since 0.4.0
 */
export interface ClusterOptions {
  /** The address other replicas reach this one at: its host (or IP) and port (default a free one). */
  readonly advertise?: { readonly host: string; readonly port?: number | undefined } | undefined
  /** Where to listen for them (default: the advertised host and port). */
  readonly listen?: { readonly host: string; readonly port: number } | undefined
  /** The database the cluster lives in, when the server was given a `checkpointer` (default `database`). */
  readonly database?: string | undefined
}

/**
 * A server listening.
 *
 * @since 0.2.0
 */
export interface LangGraphServer {
  /** Where it listens, e.g. `http://127.0.0.1:2024`. */
  readonly url: string
  readonly checkpointer: EffectCheckpointSaver
  /** The assistants it serves: one per graph, its id and the assistant's UUID. */
  readonly assistants: ReadonlyArray<{ readonly graph_id: string; readonly assistant_id: string }>
  /** The app without the listener (for tests, or to mount elsewhere). */
  readonly fetch: (request: Request) => Response | Promise<Response>
  /** Stops listening and every run going on; closes the saver if the server opened it. */
  readonly close: () => Promise<void>
}

/**
 * Serves `graphs` over LangGraph's HTTP API.
 *
 * **Details**
 *
 * Bound to loopback unless `host` says otherwise, and then only with an
 * `auth` handler (`InvalidConfig` without one). A loopback server answers
 * only requests naming it by a loopback name, so a web site cannot reach it
 * by re-pointing its own name at this machine.
 *
 * @since 0.2.0
 */
export const serve = async (options: ServerOptions): Promise<LangGraphServer> => {
  const host = options.host ?? "127.0.0.1"
  const loopback = LOOPBACK_HOSTS.has(host)
  if (!loopback && options.auth === undefined) {
    throw new InvalidConfig({
      operation: "serve",
      detail: `serving on ${host} (beyond this machine) needs an auth handler: pass \`auth\`, ` +
        "or serve on 127.0.0.1 behind a proxy that authenticates"
    })
  }
  if (Object.keys(options.graphs).length === 0) {
    throw new InvalidConfig({ operation: "serve", detail: "give the server at least one graph to serve" })
  }
  const { App, Engine, Graphs, node } = await load()
  const owned = options.checkpointer === undefined
  const database = options.checkpointer === undefined ? options.database ?? "pglite:.data/langgraph" : undefined
  const checkpointer = options.checkpointer ??
    await EffectCheckpointSaver.fromConnString(database!, options.saverOptions)
  /** Whatever was opened goes when the server fails to start: a port in use leaves no database held. */
  const undo = async (app?: { readonly close: () => Promise<void> }) => {
    await app?.close().catch(() => undefined)
    if (owned) await checkpointer.close().catch(() => undefined)
  }
  const app = await Engine.placeOf(options.cluster?.database ?? database, options.cluster).then((cluster) =>
    App.make({
      graphs: options.graphs,
      saver: checkpointer,
      auth: options.auth,
      cors: options.cors,
      names: loopbackNames(host),
      runs: options.runs,
      maxBodyBytes: options.maxBodyBytes,
      protocol: options.protocol,
      cluster
    })
  ).catch(async (error: unknown) => {
    await undo()
    throw error
  })
  const server = await new Promise<ReturnType<typeof node.serve>>((resolve, reject) => {
    const listening = node.serve(
      { fetch: app.fetch, hostname: host, port: options.port ?? 2024 },
      () => resolve(listening)
    )
    listening.once("error", reject)
  }).catch(async (error: unknown) => {
    await undo(app)
    throw error
  })
  const address = server.address() as AddressInfo
  const url = `http://${urlHost(address.address)}:${address.port}`
  return {
    url,
    checkpointer,
    assistants: Object.keys(options.graphs).map((graph_id) => ({
      graph_id,
      assistant_id: Graphs.assistantId(graph_id)
    })),
    fetch: app.fetch,
    close: async () => {
      await app.close()
      await new Promise<void>((resolve) => {
        if ("closeAllConnections" in server) server.closeAllConnections()
        server.close(() => resolve())
      })
      if (owned) await checkpointer.close()
    }
  }
}
