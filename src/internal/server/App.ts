/**
 * The server's app: LangGraph's embed server (`createEmbedServer`) over a
 * saver and its thread records, behind this library's guards, with the
 * routes it lacks added in front of it (see `Routes.ts`, `RunRoutes.ts`).
 *
 * In order, a request meets: the `Host` check (a loopback server answers
 * only to loopback names), CORS, the page check (a browser's request for a
 * page the server does not allow is refused, and bodies are JSON), the body
 * limit, authentication (when there is a handler), the owner check of the
 * thread in its path, then the routes. Errors are answered as LangGraph
 * Platform answers them: JSON `{ detail }`, with the status each of this
 * library's errors declares (`httpStatus`, as the web inspector answers
 * too): 404 for what is absent (or not the request's), 409 for a conflict,
 * 503 when the storage cannot be reached (without saying where it is);
 * but 422, not 400, for a body or path the route cannot take
 * (`platformStatus`).
 *
 * @since 0.2.0
 */
import { createEmbedServer } from "@langchain/langgraph-api/experimental/embed"
import { type Context, Hono } from "hono"
import { cors } from "hono/cors"
import { HTTPException } from "hono/http-exception"
import { httpStatus } from "../../CheckpointError.ts"
import type { EffectCheckpointSaver } from "../../Saver.ts"
import type { AuthHandler, CorsOptions, Graph, RunLimits } from "../../ServerOptions.ts"
import type { ServerNames } from "../Loopback.ts"
import { escape } from "../Visible.ts"
import { authenticate } from "./Auth.ts"
import * as CronRoutes from "./CronRoutes.ts"
import * as Engine from "./Engine.ts"
import * as Graphs from "./Graphs.ts"
import * as Guards from "./Guards.ts"
import * as Left from "./Left.ts"
import * as Protocol from "./Protocol.ts"
import * as Routes from "./Routes.ts"
import * as RunRoutes from "./RunRoutes.ts"
import * as Threads from "./Threads.ts"

/**
 * @since 0.2.0
 */
export interface AppOptions {
  readonly graphs: Readonly<Record<string, Graph>>
  readonly saver: EffectCheckpointSaver
  readonly auth?: AuthHandler | undefined
  /** Default: pages served from loopback (`http://localhost:*`, `http://127.0.0.1:*`), as agent-chat-ui in development. */
  readonly cors?: CorsOptions | undefined
  /** Names the server answers to (`Host`; see `Loopback.loopbackNames`); undefined: any. */
  readonly names?: ServerNames | undefined
  readonly runs?: RunLimits | undefined
  /** The largest request body taken, in bytes (default 10 MiB): 413 beyond. */
  readonly maxBodyBytes?: number | undefined
  /**
   * Serves the embed server's thread event protocol (`/threads/:id/commands`,
   * `/threads/:id/stream/events`; default off). Its runs are outside the
   * run registry: every event of a thread's latest run stays buffered, for
   * as long as the process runs.
   */
  readonly protocol?: boolean | undefined
  /** Where the runs' cluster lives (default: this process alone). */
  readonly cluster?: Engine.ClusterPlace | undefined
}

/**
 * @since 0.2.0
 */
export interface App {
  readonly fetch: (request: Request) => Response | Promise<Response>
  /** Stops this process's runner: its runs go on elsewhere, or (alone) end. */
  readonly close: () => Promise<void>
}

/** The routes `POST /threads/<name>` that name no thread. */
const collections = new Set(["search", "count", "prune"])

/** The default of `maxBodyBytes`. */
const MAX_BODY_BYTES = 10 * 1024 * 1024

/** LangGraph Platform's error body. */
const failure = (c: Context, status: number, detail: string) => c.json({ detail }, status as 400)

/**
 * The one place the server's statuses part from the errors' own
 * (`httpStatus`, which the web inspector answers with): LangGraph Platform
 * answers a request it cannot take 422, not 400.
 *
 * @since 0.4.0
 */
export const platformStatus = (status: number): number => status === 400 ? 422 : status

/**
 * What a client did wrong by the names LangGraph (its errors' names) and
 * LangChain (their `lc_error_code`) give it: a state update naming no node,
 * a message of no known type, an input the graph cannot take. (This
 * library's own errors say what they mean themselves: `httpStatus`.)
 */
const CLIENT_MISTAKES: ReadonlySet<unknown> = new Set([
  "InvalidUpdateError",
  "EmptyInputError",
  "StateGraphInputError",
  "MESSAGE_COERCION_FAILURE"
])

/** The names an error goes by. */
const namesOf = (error: unknown): ReadonlyArray<unknown> =>
  typeof error === "object" && error !== null
    ? [(error as { _tag?: unknown })._tag, (error as Error).name, (error as { lc_error_code?: unknown }).lc_error_code]
    : []

/** Why the server failed a request (500, 503), for the operator's line: the answer keeps it back. */
const failedBecause = new WeakMap<Request, string>()

/**
 * One line on stderr per request answered with an error status, so that an
 * operator sees a 503 when the database goes down (with the reason the
 * client is not told) and a client's 4xx.
 */
const logFailures = async (c: Context, next: () => Promise<void>) => {
  await next()
  if (c.res.status < 400) return
  const because = failedBecause.get(c.req.raw)
  process.stderr.write(
    `${escape(`${c.req.method} ${c.req.path}`)} ${c.res.status}${because === undefined ? "" : `: ${because}`}\n`
  )
}

/**
 * The status the server answers an error with: a route's own
 * (`HTTPException`), what this library's errors mean (by their tag or name:
 * `httpStatus`), 400 for LangGraph's client mistakes (each as LangGraph
 * Platform answers it: `platformStatus`), 500 for anything else.
 *
 * @since 0.4.0
 */
export const statusOf = (error: unknown): number => {
  if (error instanceof HTTPException) return platformStatus(error.status)
  const names = namesOf(error)
  const declared = names.map((name) => httpStatus({ _tag: name })).find((status) => status !== undefined)
  if (declared !== undefined) return platformStatus(declared)
  return names.some((name) => CLIENT_MISTAKES.has(name)) ? platformStatus(400) : 500
}

/**
 * The answer to an error (its status: `statusOf`). What the server failed
 * at (500, 503) is answered without its detail, which goes to the
 * operator's line: storage errors name hosts, ports and SQL.
 *
 * @since 0.4.0
 */
export const answer = (c: Context, error: unknown): Response => {
  const status = statusOf(error)
  if (error instanceof HTTPException) {
    // The validator's "Malformed JSON" and the like: a body the route cannot take.
    return failure(c, status, error.message || "Request failed")
  }
  const message = error instanceof Error ? error.message : String(error)
  if (status < 500) return failure(c, status, message)
  failedBecause.set(c.req.raw, status === 503 ? message : (error as Error)?.stack ?? message)
  return status === 503
    ? failure(c, 503, "The storage cannot be reached now: try again later")
    : failure(c, 500, "Internal server error")
}

/**
 * Builds the app (nothing listens: see `serve` in `langgraph-checkpoint-effect/server`).
 *
 * @since 0.2.0
 */
export const make = async (options: AppOptions): Promise<App> => {
  const graphs = Graphs.make(options.graphs)
  // Bound below: a deleted thread's protocol session goes with it.
  let protocol: Protocol.Protocol | undefined
  const threads = Threads.make(options.saver, graphs, (thread_id) => protocol?.drop(thread_id))
  const embed = createEmbedServer({ graph: graphs.lookup, threads, checkpointer: options.saver })
  const engine = await Engine.make({
    saver: options.saver,
    // Each of the engine's requests reads its thread once, as a client's does.
    embed: (request) => Threads.inRequest(() => embed.fetch(request)),
    left: Left.make(graphs, options.saver),
    runs: options.runs,
    place: options.cluster ?? { _tag: "Local" }
  })
  const app = new Hono()
  app.onError((error, c) => answer(c, error))
  app.use(logFailures)
  app.use((_, next) => Threads.inRequest(next))
  app.notFound((c) => failure(c, 404, `${c.req.method} ${c.req.path} is not a route of this server`))
  if (options.names !== undefined) app.use(Guards.hostIs(options.names))
  const allowed = Guards.allowsOrigin(options.cors)
  app.use(cors({
    origin: (origin) => (allowed(origin) ? origin : undefined),
    credentials: options.cors?.credentials ?? false,
    exposeHeaders: ["content-location", "x-pagination-total"]
  }))
  app.use(Guards.sameSite(allowed))
  app.use(Guards.boundedBodies(options.maxBodyBytes ?? MAX_BODY_BYTES))
  if (options.auth !== undefined) {
    app.use(authenticate(options.auth))
    // The owner check for every route under a thread, the embed server's too
    // (its event streams never ask the `ThreadSaver`): another user's thread
    // is absent. A thread that does not exist yet passes, to be created as
    // the request's own. A record that cannot be read fails the request: the
    // check never lets one through unchecked. Only the collection routes
    // themselves (`POST /threads/search`, …) name no thread.
    // (The pattern matches `/threads/<id>` itself too.)
    app.use("/threads/:thread_id/*", async (c, next) => {
      const thread_id = c.req.param("thread_id")
      const collection = c.req.method === "POST" && c.req.path === `/threads/${thread_id}` && collections.has(thread_id)
      if (!collection) await threads.admit(thread_id)
      await next()
    })
  }
  if (options.protocol === true) {
    protocol = Protocol.make(graphs, threads, options.saver)
    app.post("/threads/:thread_id/commands", protocol.handle)
    app.post("/threads/:thread_id/stream/events", protocol.handle)
  } else {
    const off = (c: Context) => failure(c, 404, "The thread event protocol is off on this server (see `protocol`)")
    app.all("/threads/:thread_id/commands", off)
    app.all("/threads/:thread_id/stream/events", off)
  }
  // The embed server's validators answer 400 with zod's issues; LangGraph Platform answers 422.
  app.use(async (c, next) => {
    await next()
    if (c.res.status !== 400 || !(c.res.headers.get("content-type") ?? "").includes("json")) return
    const body = await c.res.clone().json().catch(() => undefined) as { error?: { issues?: unknown } } | undefined
    c.res = failure(c, platformStatus(400), JSON.stringify(body?.error?.issues ?? body ?? "Invalid request"))
  })
  Routes.register(app, { graphs, threads, saver: options.saver, started: new Date() })
  RunRoutes.register(app, { embed: (request) => embed.fetch(request), engine, threads, saver: options.saver, graphs })
  CronRoutes.register(app, { engine, threads, saver: options.saver, graphs })
  app.route("/", embed)
  return { fetch: (request) => app.fetch(request), close: () => engine.close() }
}
