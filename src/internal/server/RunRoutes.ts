/**
 * The run routes, over the engine (`Engine.ts`): they take the place of
 * the embed server's for runs on a thread (started as cluster work,
 * rejoinable, cancellable, from any replica) and add those the SDK calls
 * besides (a run's status, a thread's runs, join, wait, delete). Every
 * route first finds the thread as the request may see it (404 otherwise);
 * a run's record comes from the database, its events from the runner that
 * executes it.
 *
 * @since 0.2.0
 */
import type { Context, Hono } from "hono"
import { HTTPException } from "hono/http-exception"
import type { RunRecord } from "../../CheckpointStorage.ts"
import type { EffectCheckpointSaver } from "../../Saver.ts"
import type { Engine } from "./Engine.ts"
import type { Graphs } from "./Graphs.ts"
import { objectOf } from "./Json.ts"
import { bodyOf } from "./Routes.ts"
import type { Threads } from "./Threads.ts"

/** Where stateless runs go: the embed server's own app. */
export type Fetch = (request: Request) => Response | Promise<Response>

/**
 * A run as LangGraph's API answers it.
 *
 * @since 0.2.0
 */
export interface RunJson {
  readonly run_id: string
  readonly thread_id: string
  readonly assistant_id: string
  readonly created_at: string
  readonly updated_at: string
  readonly status: RunRecord["status"]
  readonly metadata: Record<string, unknown>
  readonly multitask_strategy: string
}

const json = (run: RunRecord): RunJson => ({
  run_id: run.run_id,
  thread_id: run.thread_id,
  assistant_id: run.assistant_id,
  created_at: run.created_at.toISOString(),
  updated_at: run.updated_at.toISOString(),
  status: run.status,
  metadata: run.metadata,
  multitask_strategy: run.multitask_strategy
})

const location = (run: { readonly thread_id: string; readonly run_id: string }) =>
  `/threads/${run.thread_id}/runs/${run.run_id}`

const sse = (body: ReadableStream<Uint8Array>, run: RunRecord) =>
  new Response(body, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "content-location": location(run) }
  })

const runNotFound = (run_id: string) => new HTTPException(404, { message: `Run ${run_id} not found` })

/** What the run routes need. */
interface Deps {
  readonly embed: Fetch
  readonly engine: Engine
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
 * Registers the run routes on `app`, ahead of the embed server's.
 *
 * @since 0.2.0
 */
export const register = (app: Hono, deps: Deps): void => {
  const { embed, engine, graphs, saver, threads } = deps

  /** Starts a run on the thread as its body says (409 while another runs, for `reject`, the default). */
  const start = async (thread_id: string, given: Record<string, unknown>): Promise<RunRecord> => {
    await threads.find(thread_id)
    const body = runBody(graphs, given)
    const strategy = typeof body.multitask_strategy === "string" ? body.multitask_strategy : "reject"
    const started = await engine.start({
      thread_id,
      assistant_id: body.assistant_id as string,
      body,
      multitask_strategy: strategy,
      metadata: objectOf(body.metadata)
    })
    if ("busy" in started) {
      throw new HTTPException(409, { message: `Thread ${thread_id} is busy with run ${started.busy}` })
    }
    return started.run
  }

  /** The thread's run named in the path, as the request may see it. */
  const runOf = async (c: Context) => {
    const { run_id, thread_id } = c.req.param() as { thread_id: string; run_id: string }
    await threads.find(thread_id)
    const run = await saver.getRun(thread_id, run_id)
    if (run === undefined) throw runNotFound(run_id)
    return run
  }

  /** What `join` and `wait` answer once the run ended: its outcome, else the thread's values now. */
  const outcome = async (c: Context, run: RunRecord) => {
    const held = await engine.outcome(run.thread_id, run.run_id)
    if (held !== undefined) return c.body(held, 200, { "content-type": "application/json" })
    await engine.ended(run.thread_id, run.run_id)
    const response = await embed(new Request(new URL(`/threads/${run.thread_id}/state`, c.req.url)))
    if (!response.ok) {
      throw new HTTPException(503, { message: `The state of thread ${run.thread_id} cannot be read now` })
    }
    return c.json(objectOf(await response.json()).values ?? {})
  }

  // A stateless run (on a thread made for it and deleted after), in this process: the embed server's.
  app.post(
    "/runs/stream",
    async (c) => embed(toEmbed(c, "/runs/stream", runBody(graphs, await bodyOf(c)), c.req.raw.signal))
  )

  app.post("/threads/:thread_id/runs/stream", async (c) => {
    const body = await bodyOf(c)
    const run = await start(c.req.param("thread_id"), body)
    const onCancel = body.on_disconnect === "cancel" ? () => void engine.cancel(run.thread_id, run.run_id) : undefined
    return sse(engine.events(run.thread_id, run.run_id, 0, onCancel), run)
  })

  app.post("/threads/:thread_id/runs", async (c) => {
    const run = await start(c.req.param("thread_id"), await bodyOf(c))
    c.header("content-location", location(run))
    return c.json(json(run))
  })

  app.post("/threads/:thread_id/runs/wait", async (c) => {
    const run = await start(c.req.param("thread_id"), await bodyOf(c))
    return outcome(c, run)
  })

  app.get("/threads/:thread_id/runs", async (c) => {
    const thread_id = c.req.param("thread_id")
    await threads.find(thread_id)
    const limit = Number(c.req.query("limit") ?? "10")
    const offset = Number(c.req.query("offset") ?? "0")
    const status = c.req.query("status")
    const runs = await saver.listRuns(thread_id, {
      limit: Number.isSafeInteger(limit) ? Math.min(Math.max(limit, 0), 1000) : 10,
      offset: Number.isSafeInteger(offset) ? Math.max(offset, 0) : 0,
      ...(status === undefined ? {} : { status: status as RunRecord["status"] })
    })
    return c.json(runs.map(json))
  })

  app.get("/threads/:thread_id/runs/:run_id", async (c) => c.json(json(await runOf(c))))

  app.get("/threads/:thread_id/runs/:run_id/stream", async (c) => {
    const run = await runOf(c)
    const last = Number(c.req.header("last-event-id") ?? "0")
    const onCancel = c.req.query("cancel_on_disconnect") === "1"
      ? () => void engine.cancel(run.thread_id, run.run_id)
      : undefined
    return sse(
      engine.events(run.thread_id, run.run_id, Number.isSafeInteger(last) && last > 0 ? last : 0, onCancel),
      run
    )
  })

  app.get("/threads/:thread_id/runs/:run_id/join", async (c) => outcome(c, await runOf(c)))

  app.post("/threads/:thread_id/runs/:run_id/cancel", async (c) => {
    const run = await runOf(c)
    const action = c.req.query("action") ?? "interrupt"
    if (action !== "interrupt" && action !== "rollback") {
      throw new HTTPException(422, { message: "action must be interrupt or rollback" })
    }
    await engine.cancel(run.thread_id, run.run_id)
    if (c.req.query("wait") === "1" || action === "rollback") await engine.ended(run.thread_id, run.run_id)
    if (action === "rollback") await saver.deleteForRuns([run.run_id])
    return c.body(null, 204)
  })

  app.delete("/threads/:thread_id/runs/:run_id", async (c) => {
    const run = await runOf(c)
    if (run.status === "pending" || run.status === "running") {
      throw new HTTPException(409, { message: `Run ${run.run_id} is still running` })
    }
    await saver.deleteRun(run.thread_id, run.run_id)
    return c.body(null, 204)
  })
}
