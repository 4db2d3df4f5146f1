/**
 * The server's app: LangGraph's embed server (`createEmbedServer`) over a
 * saver and its thread records, behind this library's guards, with the
 * routes it lacks added in front of it (see `Routes.ts`, `RunRoutes.ts`).
 *
 * In order, a request meets: the `Host` check (a loopback server answers
 * only to loopback names, so a site re-pointed at this machine cannot reach
 * it), CORS, authentication (when there is a handler), the owner check of
 * the thread in its path, then the routes. Errors are answered as LangGraph
 * Platform answers them: JSON `{ detail }`, 404 for what is absent (or not
 * the request's), 422 for a body or path the route cannot take.
 *
 * @since 0.2.0
 */
import { createEmbedServer } from "@langchain/langgraph-api/experimental/embed"
import { type Context, Hono } from "hono"
import { cors } from "hono/cors"
import { HTTPException } from "hono/http-exception"
import type { EffectCheckpointSaver } from "../Saver.ts"
import { authenticate } from "./Auth.ts"
import type { AuthHandler, CorsOptions, Graph, RunLimits } from "./Options.ts"
import * as Routes from "./Routes.ts"
import * as RunRoutes from "./RunRoutes.ts"
import { Registry } from "./Runs.ts"
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
  /** Names the server answers to (`Host`); undefined: any. */
  readonly hosts?: ReadonlySet<string> | undefined
  readonly runs?: RunLimits | undefined
  /**
   * Serves the embed server's thread event protocol (`/threads/:id/commands`,
   * `/threads/:id/stream/events`; default off). Its runs are outside the
   * run registry: every event of a thread's latest run stays buffered, for
   * as long as the process runs.
   */
  readonly protocol?: boolean | undefined
}

/**
 * @since 0.2.0
 */
export interface App {
  readonly fetch: (request: Request) => Response | Promise<Response>
  readonly runs: Registry
  /** Stops every run going on. */
  readonly close: () => Promise<void>
}

/** The routes under `/threads/` that name no thread. */
const collections = new Set(["search", "count", "prune"])

const LOOPBACK_ORIGIN = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/

/** LangGraph Platform's error body. */
const failure = (c: Context, status: number, detail: string) => c.json({ detail }, status as 400)

/** The answer to an error of this library's (by its tag), or of a route. */
const answer = (c: Context, error: unknown): Response => {
  if (error instanceof HTTPException) {
    // The validator's "Malformed JSON" and the like: a body the route cannot take.
    return failure(c, error.status === 400 ? 422 : error.status, error.message || "Request failed")
  }
  const tag = typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : ""
  const message = error instanceof Error ? error.message : String(error)
  switch (tag) {
    case "InvalidInput":
    case "InvalidConfig":
      return failure(c, 422, message)
    case "ThreadNotFound":
    case "CheckpointNotFound":
      return failure(c, 404, message)
    case "ThreadExists":
      return failure(c, 409, message)
    case "StorageFailure":
      return failure(c, 503, message)
    default:
      return failure(c, 500, tag === "" ? "Internal server error" : message)
  }
}

/**
 * Builds the app (nothing listens: see `serve` in `langgraph-checkpoint-effect/server`).
 *
 * @since 0.2.0
 */
export const make = (options: AppOptions): App => {
  const names = Object.keys(options.graphs)
  const runs = new Registry(options.runs)
  const threads = Threads.make(options.saver, runs, names.length === 1 ? names[0] : undefined)
  const embed = createEmbedServer({
    graph: { ...options.graphs },
    threads,
    checkpointer: options.saver
  })
  const app = new Hono()
  app.onError((error, c) => answer(c, error))
  app.use((_, next) => Threads.inRequest(next))
  app.notFound((c) => failure(c, 404, `${c.req.method} ${c.req.path} is not a route of this server`))
  const { hosts } = options
  if (hosts !== undefined) {
    app.use(async (c, next) => {
      const host = (c.req.header("host") ?? "").replace(/:\d+$/, "").replace(/^\[(.*)\]$/, "$1").toLowerCase()
      if (!hosts.has(host)) return failure(c, 421, "This server does not answer to that host name")
      await next()
    })
  }
  const allowed = options.cors
  app.use(cors({
    origin: allowed === undefined
      ? (origin) => (LOOPBACK_ORIGIN.test(origin) ? origin : undefined)
      : typeof allowed.origins === "string"
      ? allowed.origins
      : [...allowed.origins],
    credentials: allowed?.credentials ?? false,
    exposeHeaders: ["content-location", "x-pagination-total"]
  }))
  if (options.auth !== undefined) app.use(authenticate(options.auth))
  // The owner check for every route under a thread, the embed server's too
  // (its event streams never ask the `ThreadSaver`): another user's thread is
  // absent. A thread that does not exist yet passes, to be created as the
  // request's own. A record that cannot be read fails the request: the check
  // never lets one through unchecked.
  const guard = async (c: Context, next: () => Promise<void>) => {
    const thread_id = c.req.param("thread_id")
    if (thread_id !== undefined && !collections.has(thread_id) && options.auth !== undefined) {
      await threads.admit(thread_id)
    }
    await next()
  }
  app.use("/threads/:thread_id", guard)
  app.use("/threads/:thread_id/*", guard)
  if (options.protocol !== true) {
    const off = (c: Context) => failure(c, 404, "The thread event protocol is off on this server (see `protocol`)")
    app.all("/threads/:thread_id/commands", off)
    app.all("/threads/:thread_id/stream/events", off)
  }
  // The embed server's validators answer 400 with zod's issues; LangGraph Platform answers 422.
  app.use(async (c, next) => {
    await next()
    if (c.res.status !== 400 || !(c.res.headers.get("content-type") ?? "").includes("json")) return
    const body = await c.res.clone().json().catch(() => undefined) as { error?: { issues?: unknown } } | undefined
    c.res = failure(c, 422, JSON.stringify(body?.error?.issues ?? body ?? "Invalid request"))
  })
  Routes.register(app, { graphs: names, threads, saver: options.saver, started: new Date() })
  RunRoutes.register(app, {
    embed: (request) => embed.fetch(request),
    runs,
    threads,
    saver: options.saver,
    graphOf: Routes.graphOf(names)
  })
  app.route("/", embed)
  return { fetch: (request) => app.fetch(request), runs, close: () => runs.close() }
}
