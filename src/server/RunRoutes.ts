/**
 * The run routes, over `Runs.ts`: they take the place of the embed
 * server's for streaming runs (started here, rejoinable, cancellable) and add
 * those the SDK calls besides (a run's status, a thread's runs, join,
 * wait). Every route first finds the thread as the request may see it
 * (404 otherwise).
 *
 * @since 0.2.0
 */
import type { Context, Hono } from "hono"
import { HTTPException } from "hono/http-exception"
import type { EffectCheckpointSaver } from "../Saver.ts"
import type { Graphs } from "./Graphs.ts"
import { bodyOf } from "./Routes.ts"
import { follow, pump, type Registry, type Run } from "./Runs.ts"
import type { Threads } from "./Threads.ts"

/** Where the runs are started: the embed server's own app. */
export type Fetch = (request: Request) => Response | Promise<Response>

const sse = (body: ReadableStream<Uint8Array>, run: Run) =>
  new Response(body, {
    headers: {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "content-location": `/threads/${run.thread_id}/runs/${run.run_id}`
    }
  })

const runNotFound = (run_id: string) => new HTTPException(404, { message: `Run ${run_id} not found` })

/** What the run routes need. */
interface Deps {
  readonly embed: Fetch
  readonly runs: Registry
  readonly threads: Threads
  readonly saver: EffectCheckpointSaver
  readonly graphs: Graphs
}

/** A run's body as the embed server takes it: its `assistant_id` the id of a served graph (404 otherwise). */
const runBody = (graphs: Graphs, body: Record<string, unknown>): Record<string, unknown> => ({
  ...body,
  assistant_id: graphs.require(body.assistant_id, "Assistant")
})

/** A JSON request to the embed server's `path`, made from `c`'s. */
const toEmbed = (c: Context, path: string, body: unknown, signal?: AbortSignal) =>
  new Request(new URL(path, c.req.url), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    ...(signal === undefined ? {} : { signal })
  })

/**
 * How runs start: one at a time per thread (a second start sees the first's
 * run, or waits behind it), after making room as the run's
 * `multitask_strategy` says, through the embed server.
 */
const starter = (deps: Deps) => {
  const { embed, graphs, runs, saver, threads } = deps
  /** Starts of each thread, one at a time: a second start sees the first's run (or waits behind it). */
  const starting = new Map<string, Promise<unknown>>()
  const oneAtATime = <A>(thread_id: string, start: () => Promise<A>): Promise<A> => {
    const next = (starting.get(thread_id) ?? Promise.resolve()).then(start, start)
    starting.set(thread_id, next)
    const forget = () => {
      if (starting.get(thread_id) === next) starting.delete(thread_id)
    }
    next.then(forget, forget)
    return next
  }

  /** Makes room on the thread as the body's `multitask_strategy` says (409 for `reject`, the default). */
  const makeRoom = async (thread_id: string, strategy: unknown) => {
    const active = runs.active(thread_id)
    if (active === undefined) return
    if (strategy === "enqueue") return void await active.ended
    if (strategy !== "interrupt" && strategy !== "rollback") {
      throw new HTTPException(409, { message: `Thread ${thread_id} is busy with run ${active.run_id}` })
    }
    active.cancel()
    await active.ended
    if (strategy === "rollback") await saver.deleteForRuns([active.run_id])
  }

  /** Starts a run through the embed server: the run, or the embed server's refusal as it gave it. */
  const start = async (c: Context, thread_id: string, given: Record<string, unknown>): Promise<Run | Response> => {
    await threads.find(thread_id)
    const body = runBody(graphs, given)
    return oneAtATime(thread_id, async () => {
      await makeRoom(thread_id, body.multitask_strategy)
      return begin(c, thread_id, body)
    })
  }

  /** The run itself, once the thread has room. */
  const begin = async (c: Context, thread_id: string, body: Record<string, unknown>): Promise<Run | Response> => {
    const controller = new AbortController()
    const response = await embed(toEmbed(c, `/threads/${thread_id}/runs/stream`, body, controller.signal))
    if (!(response.headers.get("content-type") ?? "").startsWith("text/event-stream") || response.body === null) {
      return response
    }
    const run_id = response.headers.get("content-location")?.split("/").at(-1)
    const run = runs.add(run_id, thread_id, body)
    run.signal.addEventListener("abort", () => controller.abort(), { once: true })
    void pump(response.body, run)
    return run
  }
  return start
}

/**
 * Registers the run routes on `app`, ahead of the embed server's.
 *
 * @since 0.2.0
 */
export const register = (app: Hono, deps: Deps): void => {
  const { embed, graphs, runs, saver, threads } = deps
  const start = starter(deps)
  /** The thread's run named in the path, as the request may see it. */
  const runOf = async (c: Context) => {
    const { run_id, thread_id } = c.req.param() as { thread_id: string; run_id: string }
    await threads.find(thread_id)
    const run = runs.get(thread_id, run_id)
    if (run === undefined) throw runNotFound(run_id)
    return run
  }

  /** What `join` and `wait` answer once the run ended: its outcome, else the thread's values now. */
  const outcome = async (c: Context, run: Run) => {
    const held = run.outcome()
    if (held !== undefined) return c.body(held, 200, { "content-type": "application/json" })
    const response = await embed(new Request(new URL(`/threads/${run.thread_id}/state`, c.req.url)))
    if (!response.ok) {
      throw new HTTPException(503, { message: `The state of thread ${run.thread_id} cannot be read now` })
    }
    const state = await response.json() as { readonly values?: unknown }
    return c.json(state.values ?? {})
  }

  // A stateless run (on a thread made for it and deleted after): the embed server's, once its assistant is known.
  app.post(
    "/runs/stream",
    async (c) => embed(toEmbed(c, "/runs/stream", runBody(graphs, await bodyOf(c)), c.req.raw.signal))
  )

  app.post("/threads/:thread_id/runs/stream", async (c) => {
    const body = await bodyOf(c)
    const started = await start(c, c.req.param("thread_id"), body)
    if (started instanceof Response) return started
    return sse(follow(started, 0, body.on_disconnect === "cancel" ? () => started.cancel() : undefined), started)
  })

  app.post("/threads/:thread_id/runs", async (c) => {
    const started = await start(c, c.req.param("thread_id"), await bodyOf(c))
    if (started instanceof Response) return started
    c.header("content-location", `/threads/${started.thread_id}/runs/${started.run_id}`)
    return c.json(started.json())
  })

  app.post("/threads/:thread_id/runs/wait", async (c) => {
    const started = await start(c, c.req.param("thread_id"), await bodyOf(c))
    if (started instanceof Response) return started
    await started.ended
    return outcome(c, started)
  })

  app.get("/threads/:thread_id/runs", async (c) => {
    const thread_id = c.req.param("thread_id")
    await threads.find(thread_id)
    return c.json(runs.ofThread(thread_id).map((run) => run.json()).reverse())
  })

  app.get("/threads/:thread_id/runs/:run_id", async (c) => c.json((await runOf(c)).json()))

  app.get("/threads/:thread_id/runs/:run_id/stream", async (c) => {
    const run = await runOf(c)
    const last = Number(c.req.header("last-event-id") ?? "0")
    const cancelOnDisconnect = c.req.query("cancel_on_disconnect") === "1"
    return sse(
      follow(
        run,
        Number.isSafeInteger(last) && last > 0 ? last : 0,
        cancelOnDisconnect ? () => run.cancel() : undefined
      ),
      run
    )
  })

  app.get("/threads/:thread_id/runs/:run_id/join", async (c) => {
    const run = await runOf(c)
    await run.ended
    return outcome(c, run)
  })

  app.post("/threads/:thread_id/runs/:run_id/cancel", async (c) => {
    const run = await runOf(c)
    const action = c.req.query("action") ?? "interrupt"
    if (action !== "interrupt" && action !== "rollback") {
      throw new HTTPException(422, { message: "action must be interrupt or rollback" })
    }
    run.cancel()
    if (c.req.query("wait") === "1" || action === "rollback") await run.ended
    if (action === "rollback") await saver.deleteForRuns([run.run_id])
    return c.body(null, 204)
  })

  app.delete("/threads/:thread_id/runs/:run_id", async (c) => {
    const run = await runOf(c)
    if (!run.done) throw new HTTPException(409, { message: `Run ${run.run_id} is still running` })
    runs.remove(run)
    return c.body(null, 204)
  })
}
