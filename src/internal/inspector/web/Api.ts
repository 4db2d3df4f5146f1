/**
 * The web inspector's JSON API: what the page asks the `Inspector` for, and
 * (with `write`) the lifecycle actions it asks the `CheckpointStorage` to do.
 * Each route is one entry of a table: its method, its path (`:name` segments
 * are parameters, percent-decoded), whether it writes, and its handler. The
 * app (`App.ts`) puts them in an `HttpRouter` behind the guards and turns
 * what a handler fails with into a status.
 *
 * Values leave as plain JSON (`Values.toPlain`): the page inserts every one
 * as text, never as markup.
 *
 * @since 0.1.0
 */
import { Effect, Schema, Stream } from "effect"
import { type HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { InvalidInput } from "../../../CheckpointError.ts"
import { CheckpointStorage } from "../../../CheckpointStorage.ts"
import type { Label } from "../../../Snapshot.ts"
import { type HistoryEntry, Inspector, type Shown, type ThreadCursor } from "../Inspector.ts"
import * as Steps from "../Steps.ts"
import * as Tree from "../Tree.ts"
import * as Values from "../Values.ts"

/**
 * A route of the API.
 *
 * @since 0.1.0
 */
export interface Route {
  readonly method: "GET" | "POST"
  /** As `HttpRouter` reads it: `:name` captures a segment. */
  readonly path: HttpRouter.PathInput
  /** An action: exists only when the server writes, and takes its token from the header alone. */
  readonly writes: boolean
  readonly handle: (
    params: Readonly<Record<string, string | undefined>>,
    query: URLSearchParams
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, Inspector | CheckpointStorage | Request>
}

type Request = HttpServerRequest.HttpServerRequest

const route = (
  method: Route["method"],
  path: Route["path"],
  handle: Route["handle"],
  writes = false
): Route => ({ method, path, writes, handle })

/** Threads per page unless the page asks for another number (at most `MAX_LIMIT`). */
const PAGE = 50
const MAX_LIMIT = 500

const invalid = (argument: string, detail: string) => new InvalidInput({ operation: "web", argument, detail })

/**
 * Page cursors, opaque to the page: the last thread's activity and id,
 * signed with a random key of this server's. The activity is the
 * database's own text of a time, which the query casts back: only cursors
 * this server gave reach it (another is 400; in the database it would fail
 * as a 500), since no format check here could know the server's `DateStyle`.
 */
const cursors = (key: Uint8Array) => {
  const sign = (payload: string) => createHmac("sha256", key).update(payload).digest("base64url")
  const encode = (cursor: ThreadCursor) => {
    const payload = Buffer.from(JSON.stringify([cursor.activity, cursor.thread_id])).toString("base64url")
    return `${payload}.${sign(payload)}`
  }
  const decode = (text: string): Effect.Effect<ThreadCursor, InvalidInput> =>
    Effect.try({
      try: () => {
        const [payload = "", signature = "", ...rest] = text.split(".")
        const expected = Buffer.from(sign(payload))
        const given = Buffer.from(signature)
        if (rest.length > 0 || given.length !== expected.length || !timingSafeEqual(given, expected)) {
          throw new Error("not signed")
        }
        const [activity, thread_id] = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as [
          unknown,
          unknown
        ]
        if (typeof thread_id !== "string" || typeof activity !== "string") throw new Error("bad cursor")
        return { activity, thread_id }
      },
      catch: () => invalid("after", "not a cursor this server gave")
    })
  return { encode, decode }
}

const limitOf = (text: string | null, page = PAGE, max = MAX_LIMIT): Effect.Effect<number, InvalidInput> => {
  if (text === null || text === "") return Effect.succeed(page)
  const limit = Number(text)
  return Number.isInteger(limit) && limit >= 1 && limit <= max
    ? Effect.succeed(limit)
    : Effect.fail(invalid("limit", `expected a whole number from 1 to ${max}`))
}

const optional = (query: URLSearchParams, name: string) => {
  const value = query.get(name)
  return value === null || value === "" ? undefined : value
}

const required = (query: URLSearchParams, name: string): Effect.Effect<string, InvalidInput> => {
  const value = optional(query, name)
  return value === undefined ? Effect.fail(invalid(name, "missing")) : Effect.succeed(value)
}

const json = (body: unknown, status = 200) => HttpServerResponse.jsonUnsafe(body, { status })

/** History rows per page unless the page asks for another number (at most `MAX_ROWS`). */
const ROWS = 500
const MAX_ROWS = 5000

/**
 * What tells the page its history changed: the newest checkpoint (of any
 * namespace; ids sort by time) and its interrupts, which LangGraph writes
 * after the checkpoint. Opaque to the page.
 */
const historyCursor = (newest: HistoryEntry | undefined) =>
  newest === undefined ? "" : `${newest.checkpoint_id}.${newest.interrupts.length}`

const historyOf = (thread: string, query: URLSearchParams) =>
  Effect.gen(function*() {
    const inspector = yield* Inspector
    const limit = yield* limitOf(query.get("limit"), ROWS, MAX_ROWS)
    const after = optional(query, "after")
    const offset = after === undefined ? 0 : Number(after)
    if (!Number.isInteger(offset) || offset < 0) return yield* invalid("after", "not a cursor this server gave")
    // The cursor first: a checkpoint written while the page is read shows at the next poll. The listing is
    // newest first, read a page at a time: a poll where nothing changed reads its first page alone.
    const newest = yield* inspector.history(thread).pipe(Stream.take(1), Stream.runCollect)
    const since = optional(query, "since")
    if (since !== undefined && after === undefined && newest.length === 1 && historyCursor(newest[0]) === since) {
      return json({ thread_id: thread, changed: false, cursor: since })
    }
    const page = yield* inspector.historyPage(thread, { offset, limit })
    return json({
      thread_id: thread,
      changed: true,
      cursor: historyCursor(newest[0]),
      total: page.total,
      overflowLane: Tree.LANES,
      namespaces: page.namespaces.map(({ rows, ...namespace }) => ({
        ...namespace,
        rows: rows.map(({ entry, ...row }) => ({ ...entry, ...row }))
      })),
      next: offset + limit < page.total ? String(offset + limit) : null
    })
  })

/** What a thread's latest checkpoint wrote, in one line (none when it cannot be read: the list still shows). */
const latestPreview = (thread_id: string) =>
  Inspector.use((inspector) => inspector.checkpoint(thread_id)).pipe(
    Effect.map(({ tuple }) => Steps.preview(tuple.checkpoint, Values.changedChannels(tuple.checkpoint))),
    Effect.orElseSucceed(() => "")
  )

/** A checkpoint as plain data, with the messages of each channel that holds a list of them. */
const shownJson = ({ interrupts, next, tuple }: Shown) => {
  // Own entries whatever a stored channel is named (`__proto__` too).
  const messages = Object.fromEntries(
    Object.entries(tuple.checkpoint.channel_values).flatMap(([channel, value]) => {
      const found = Values.asMessages(value)
      return found === undefined ? [] : [[channel, found] as const]
    })
  )
  return {
    ...Values.toPlain(tuple) as object,
    checkpoint_ns: tuple.config.configurable?.checkpoint_ns ?? "",
    checkpoint_id: tuple.checkpoint.id,
    parent_checkpoint_id: tuple.parentConfig?.configurable?.checkpoint_id ?? null,
    next,
    interrupts: Values.toPlain(interrupts),
    messages
  }
}

const CopyBody = Schema.Struct({ target: Schema.String, replace: Schema.optional(Schema.Boolean) })
const PruneBody = Schema.Struct({ strategy: Schema.Literals(["keep-latest", "delete"]) })
const DeleteBody = Schema.Struct({})

/** What an action would remove, for the page to confirm. */
const planOf = (thread_id: string, action: string) =>
  Inspector.use((inspector) =>
    action === "delete"
      ? inspector.plan.delete([thread_id])
      : action === "keep-latest"
      ? inspector.plan.keepLatest([thread_id], 1)
      : Effect.fail(invalid("action", `expected "delete" or "keep-latest", got "${action}"`))
  )

/**
 * Every route; the server leaves out those that write unless it writes.
 *
 * @since 0.1.0
 */
export const routes = (options: {
  readonly write: boolean
  readonly snapshot?: Label | undefined
}): ReadonlyArray<Route> => {
  const cursor = cursors(randomBytes(32))
  return [
    route(
      "GET",
      "/api/info",
      () =>
        Inspector.use((inspector) =>
          Effect.succeed(json({
            write: options.write,
            layout: inspector.layout,
            // Only when what is served is a snapshot of a PGlite directory (`pid`: its holder, if any).
            ...(options.snapshot === undefined ? {} : {
              snapshot: {
                directory: options.snapshot.directory,
                pid: options.snapshot.pid,
                takenAt: options.snapshot.takenAt.toISOString()
              }
            })
          }))
        )
    ),

    route("GET", "/api/threads", (_, query) =>
      Effect.gen(function*() {
        const limit = yield* limitOf(query.get("limit"))
        const after = optional(query, "after")
        const found = yield* (yield* Inspector).threads({
          limit: limit + 1,
          prefix: optional(query, "prefix"),
          after: after === undefined ? undefined : yield* cursor.decode(after)
        }).pipe(Stream.runCollect)
        const page = found.slice(0, limit)
        const last = page.at(-1)
        // What tells threads apart at a glance (server-made ones are bare UUIDs): what their latest step wrote.
        const latest = yield* Effect.forEach(page, (thread) => latestPreview(thread.thread_id), { concurrency: 4 })
        return json({
          threads: page.map((thread, i) => ({ ...thread, preview: latest[i] })),
          next: found.length > limit && last !== undefined ? cursor.encode(last.cursor) : null
        })
      })),

    route("GET", "/api/threads/:thread/history", ({ thread }, query) => historyOf(thread!, query)),

    route(
      "GET",
      "/api/threads/:thread/checkpoints/:ref",
      ({ ref, thread }, query) =>
        Inspector.use((inspector) => inspector.checkpoint(thread!, ref!, { checkpoint_ns: optional(query, "ns") }))
          .pipe(
            Effect.map((shown) => json(shownJson(shown)))
          )
    ),

    route("GET", "/api/threads/:thread/diff", ({ thread }, query) =>
      Effect.gen(function*() {
        const [a, b] = [yield* required(query, "a"), yield* required(query, "b")]
        const found = yield* (yield* Inspector).diff(thread!, a, b)
        return json({
          a: { checkpoint_id: found.a.tuple.checkpoint.id, metadata: Values.toPlain(found.a.tuple.metadata) },
          b: { checkpoint_id: found.b.tuple.checkpoint.id, metadata: Values.toPlain(found.b.tuple.metadata) },
          channels: Values.toPlain(found.channels)
        })
      })),

    // Where the thread's bytes are, as stored (the report `stats <thread>` prints).
    route(
      "GET",
      "/api/threads/:thread/storage",
      ({ thread }) => Effect.map(CheckpointStorage.use((storage) => storage.threadStorage(thread!)), json)
    ),

    route("GET", "/api/threads/:thread/plan", ({ thread }, query) =>
      required(query, "action").pipe(
        Effect.flatMap((action) => planOf(thread!, action)),
        Effect.map((removals) => json({ removals }))
      )),

    route("POST", "/api/threads/:thread/copy", ({ thread }) =>
      Effect.gen(function*() {
        const body = yield* HttpServerRequest.schemaBodyJson(CopyBody)
        if (body.target === "") return yield* invalid("target", "empty")
        yield* (yield* CheckpointStorage).copyThread(thread!, body.target, { replace: body.replace ?? false })
        return json({ copied: thread, to: body.target })
      }), true),

    route("POST", "/api/threads/:thread/prune", ({ thread }) =>
      Effect.gen(function*() {
        const body = yield* HttpServerRequest.schemaBodyJson(PruneBody)
        const removals = yield* planOf(thread!, body.strategy)
        yield* (yield* CheckpointStorage).prune([thread!], {
          strategy: body.strategy === "delete" ? "delete" : "keep_latest"
        })
        return json({ pruned: thread, removals })
      }), true),

    route("POST", "/api/threads/:thread/delete", ({ thread }) =>
      Effect.gen(function*() {
        yield* HttpServerRequest.schemaBodyJson(DeleteBody)
        const removals = yield* planOf(thread!, "delete")
        yield* (yield* CheckpointStorage).deleteThread(thread!)
        return json({ deleted: thread, removals })
      }), true)
  ]
}
