/**
 * The cron routes, as LangGraph's API has them (the embed server has
 * none): a cron on a thread or stateless, searched, counted, updated and
 * deleted. A cron's record is the storage's (`ThreadCrons`), its ticks the
 * cluster's (`Crons.ts`): a cron created or updated here sets its next tick
 * there. With authentication, a cron belongs to its creator (its metadata
 * `owner`, as a thread's) and no other identity sees it.
 *
 * @since 0.4.0
 */
import { v7 as uuidv7 } from "@langchain/core/utils/uuid"
import type { Hono } from "hono"
import { HTTPException } from "hono/http-exception"
import type { CronRecord } from "../../CheckpointStorage.ts"
import type { EffectCheckpointSaver } from "../../Saver.ts"
import { identity, mayAccess, OWNER } from "./Auth.ts"
import { nextTick } from "./Crons.ts"
import type { Engine } from "./Engine.ts"
import type { Graphs } from "./Graphs.ts"
import { isObject } from "./Json.ts"
import { bodyOf } from "./Routes.ts"
import type { Threads } from "./Threads.ts"

/** A cron's own fields in a request's body; the rest is the body of the runs it starts. */
const CRON_FIELDS = new Set(["schedule", "timezone", "end_time", "enabled", "on_run_completed", "assistant_id"])

const unprocessable = (message: string) => new HTTPException(422, { message })

/** A cron as LangGraph's API answers it. */
const json = (cron: CronRecord) => ({
  cron_id: cron.cron_id,
  assistant_id: cron.assistant_id,
  thread_id: cron.thread_id ?? null,
  on_run_completed: cron.on_run_completed,
  end_time: cron.end_time?.toISOString() ?? null,
  schedule: cron.schedule,
  timezone: cron.timezone ?? null,
  created_at: cron.created_at.toISOString(),
  updated_at: cron.updated_at.toISOString(),
  payload: cron.payload,
  user_id: typeof cron.metadata[OWNER] === "string" ? cron.metadata[OWNER] : null,
  next_run_date: cron.next_run_date?.toISOString() ?? null,
  metadata: cron.metadata,
  enabled: cron.enabled
})

/** The metadata a body gives (422 unless an object), owned by the request's identity when there is one. */
const ownedMetadata = (metadata: unknown): Record<string, unknown> => {
  if (metadata !== undefined && metadata !== null && !isObject(metadata)) {
    throw unprocessable("metadata must be an object")
  }
  const who = identity()
  return { ...(isObject(metadata) ? metadata : {}), ...(who === undefined ? {} : { [OWNER]: who }) }
}

const endTimeOf = (value: unknown): Date | undefined => {
  if (value === undefined || value === null) return undefined
  const date = typeof value === "string" ? new Date(value) : undefined
  if (date === undefined || Number.isNaN(date.getTime())) throw unprocessable("end_time must be an ISO 8601 date")
  return date
}

/** What runs a cron's `next_run_date` is: its next tick from now, if enabled. */
const scheduled = (cron: Omit<CronRecord, "next_run_date">): CronRecord => {
  const next = cron.enabled ? nextTick(cron, Date.now()) : undefined
  return { ...cron, next_run_date: next === undefined ? undefined : new Date(next) }
}

/** What the cron routes need. */
interface Deps {
  readonly engine: Engine
  readonly threads: Threads
  readonly saver: EffectCheckpointSaver
  readonly graphs: Graphs
}

/**
 * Registers the cron routes on `app`, ahead of the embed server's.
 *
 * @since 0.4.0
 */
export const register = (app: Hono, deps: Deps): void => {
  const { engine, graphs, saver, threads } = deps

  /** Stores the cron and sets its next tick (after: a tick finds the cron it fires). */
  const store = async (cron: CronRecord) => {
    await saver.putCron(cron)
    if (cron.next_run_date !== undefined) await engine.schedule(cron.cron_id, cron.next_run_date.getTime())
    return json(cron)
  }

  /** The cron named in the path, as the request may see it. */
  const cronOf = async (cron_id: string) => {
    const cron = await saver.getCron(cron_id)
    if (cron === undefined || !mayAccess(cron.metadata)) {
      throw new HTTPException(404, { message: `Cron ${cron_id.slice(0, 200)} not found` })
    }
    return cron
  }

  const create = async (body: Record<string, unknown>, thread_id?: string) => {
    if (thread_id !== undefined) await threads.find(thread_id)
    const assistant_id = graphs.require(body.assistant_id, "Assistant")
    const { enabled, on_run_completed } = body
    if (enabled !== undefined && typeof enabled !== "boolean") throw unprocessable("enabled must be a boolean")
    if (on_run_completed !== undefined && on_run_completed !== "delete" && on_run_completed !== "keep") {
      throw unprocessable("on_run_completed must be delete or keep")
    }
    const now = new Date()
    return store(scheduled({
      cron_id: uuidv7(),
      thread_id,
      assistant_id,
      schedule: body.schedule as string,
      timezone: (body.timezone ?? undefined) as string | undefined,
      end_time: endTimeOf(body.end_time),
      enabled: enabled ?? true,
      on_run_completed: on_run_completed ?? "delete",
      payload: Object.fromEntries(Object.entries(body).filter(([key]) => !CRON_FIELDS.has(key))),
      metadata: ownedMetadata(body.metadata),
      created_at: now,
      updated_at: now
    }))
  }

  app.post(
    "/threads/:thread_id/runs/crons",
    async (c) => c.json(await create(await bodyOf(c), c.req.param("thread_id")))
  )

  app.post("/runs/crons", async (c) => c.json(await create(await bodyOf(c))))

  /** The crons a search or count body selects, the request's own only. */
  const search = async (body: Record<string, unknown>) => {
    const { assistant_id, enabled, limit, offset, thread_id } = body
    if (enabled !== undefined && enabled !== null && typeof enabled !== "boolean") {
      throw unprocessable("enabled must be a boolean")
    }
    if (thread_id !== undefined && thread_id !== null && typeof thread_id !== "string") {
      throw unprocessable("thread_id must be a string")
    }
    const graph_id = assistant_id === undefined || assistant_id === null ? undefined : graphs.resolve(assistant_id)
    return {
      none: graph_id === undefined && assistant_id !== undefined && assistant_id !== null,
      query: {
        metadata: ownedMetadata(body.metadata),
        ...(typeof thread_id === "string" ? { thread_id } : {}),
        ...(graph_id === undefined ? {} : { assistant_id: graph_id }),
        ...(typeof enabled === "boolean" ? { enabled } : {}),
        ...(typeof limit === "number" ? { limit } : {}),
        ...(typeof offset === "number" ? { offset } : {})
      }
    }
  }

  app.post("/runs/crons/search", async (c) => {
    const { none, query } = await search(await bodyOf(c))
    const page = none ? { crons: [], total: 0 } : await saver.searchCrons({ limit: 10, ...query })
    c.header("x-pagination-total", String(page.total))
    return c.json(page.crons.map(json))
  })

  app.post("/runs/crons/count", async (c) => {
    const { none, query } = await search(await bodyOf(c))
    return c.json(none ? 0 : (await saver.searchCrons({ ...query, limit: 0 })).total)
  })

  app.patch("/runs/crons/:cron_id", async (c) => {
    const cron = await cronOf(c.req.param("cron_id"))
    const body = await bodyOf(c)
    const given = (key: string) => body[key] !== undefined && body[key] !== null
    const { enabled, on_run_completed } = body
    if (given("enabled") && typeof enabled !== "boolean") throw unprocessable("enabled must be a boolean")
    if (given("on_run_completed") && on_run_completed !== "delete" && on_run_completed !== "keep") {
      throw unprocessable("on_run_completed must be delete or keep")
    }
    const runFields = Object.entries(body).filter(([key, value]) => !CRON_FIELDS.has(key) && value !== undefined)
    // A new chain of ticks from now; the old one's next tick finds another date in the record, and stops.
    return c.json(
      await store(scheduled({
        ...cron,
        schedule: given("schedule") ? body.schedule as string : cron.schedule,
        timezone: given("timezone") ? body.timezone as string : cron.timezone,
        end_time: given("end_time") ? endTimeOf(body.end_time) : cron.end_time,
        enabled: given("enabled") ? enabled as boolean : cron.enabled,
        on_run_completed: given("on_run_completed") ? on_run_completed as "delete" | "keep" : cron.on_run_completed,
        payload: { ...cron.payload, ...Object.fromEntries(runFields) },
        metadata: given("metadata") ? ownedMetadata(body.metadata) : cron.metadata,
        updated_at: new Date()
      }))
    )
  })

  app.delete("/runs/crons/:cron_id", async (c) => {
    const cron = await cronOf(c.req.param("cron_id"))
    await saver.deleteCron(cron.cron_id)
    return c.body(null, 204)
  })
}
