/**
 * The web inspector's server: a local page over the `Inspector` (and, with
 * `write`, the `CheckpointStorage`'s lifecycle actions), on Effect's HTTP
 * server for Node.
 *
 * It is made for one person on their own machine, and guards against the
 * rest of it and against the web:
 *
 * - It binds `127.0.0.1` unless told otherwise (another host is warned about
 *   on stderr).
 * - Every request carries a random token (`?token=` on the page's URL, then
 *   the `x-inspector-token` header on the page's API calls), compared in
 *   constant time; without it every route, even an unknown one, answers 401.
 *   No other site can read the token: no cross-origin header is ever sent.
 * - Actions (copy, prune, delete) exist only with `write`, and take the token
 *   from the header alone and a JSON body: a cross-site form or link cannot
 *   send either.
 * - Every response forbids inline scripts and styles, framing, other
 *   origins and caching (`Content-Security-Policy`, `no-store`), and the page
 *   inserts every value as text: what a message says can never run.
 *
 * The app is `effect/http`'s, served by `node:http` through its web handler
 * (`@effect/platform-node`'s server would make every install of this
 * library pull in a Redis client, a peer dependency of that package).
 *
 * @since 0.1.0
 */
import { Cause, Effect, Option, type Scope } from "effect"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { ServeError } from "effect/http/HttpServerError"
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Readable } from "node:stream"
import type { CheckpointStorage } from "../CheckpointStorage.ts"
import type { Inspector } from "../inspector/Inspector.ts"
import type { Label } from "../pglite/Snapshot.ts"
import { type Route, routes } from "./Api.ts"
import * as Assets from "./Assets.ts"

/**
 * @since 0.1.0
 */
export interface Options {
  /** Where to listen: `127.0.0.1` unless given. */
  readonly host?: string | undefined
  /** `0` (the default): a free port. */
  readonly port?: number | undefined
  /** Enables the lifecycle actions. */
  readonly write?: boolean | undefined
  /** The token to require (a random one unless given). */
  readonly token?: string | undefined
  /** What is served is a snapshot of a database another process holds (the page says so). */
  readonly snapshot?: Label | undefined
}

/**
 * A server listening.
 *
 * @since 0.1.0
 */
export interface Running {
  /** The page, with the token: what to open. */
  readonly url: string
  readonly token: string
  readonly host: string
  readonly port: number
}

/**
 * The headers every response carries.
 *
 * @since 0.1.0
 */
export const securityHeaders = {
  "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin"
} as const

/** The header the page sends its token in. */
export const TOKEN_HEADER = "x-inspector-token"

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"])

const digest = (text: string) => createHash("sha256").update(text).digest()

/** `given` is the token, compared in constant time (both hashed to the same length first). */
const matches = (expected: Buffer, given: string | undefined) =>
  given !== undefined && timingSafeEqual(expected, digest(given))

const error = (status: number, message: string) => HttpServerResponse.jsonUnsafe({ error: message }, { status })

/** What a handler failed with, as a status. */
const statusOf = (cause: unknown): number => {
  const tag = typeof cause === "object" && cause !== null && "_tag" in cause ? cause._tag : undefined
  switch (tag) {
    case "ThreadNotFound":
      return 404
    case "ThreadExists":
      return 409
    case "InvalidInput":
    case "SchemaError":
    case "HttpServerError":
      return 400
    default:
      return 500
  }
}

const messageOf = (cause: unknown) =>
  cause instanceof Error ? cause.message : typeof cause === "string" ? cause : "internal error"

/** The route `method` and `segments` name, with its parameters. */
const find = (table: ReadonlyArray<Route>, method: string, segments: ReadonlyArray<string>) => {
  let pathMatched = false
  for (const candidate of table) {
    if (candidate.path.length !== segments.length) continue
    const params: Record<string, string> = {}
    const same = candidate.path.every((part, i) => {
      if (part.startsWith(":")) {
        params[part.slice(1)] = segments[i]!
        return true
      }
      return part === segments[i]
    })
    if (!same) continue
    pathMatched = true
    if (candidate.method === method || (method === "HEAD" && candidate.method === "GET")) {
      return { route: candidate, params } as const
    }
  }
  return pathMatched ? "method" as const : undefined
}

/**
 * The request handler: token, then static assets or an API route.
 *
 * @since 0.1.0
 */
export const app = (
  options: { readonly token: string; readonly write: boolean; readonly snapshot?: Label | undefined }
) => {
  const expected = digest(options.token)
  const table = routes(options).filter((candidate) => options.write || !candidate.writes)
  const page = Assets.page(options.token)
  const assets: Record<string, HttpServerResponse.HttpServerResponse> = {
    "/": HttpServerResponse.text(page, { contentType: "text/html; charset=utf-8" }),
    "/app.js": HttpServerResponse.text(Assets.script, { contentType: "text/javascript; charset=utf-8" }),
    "/app.css": HttpServerResponse.text(Assets.style, { contentType: "text/css; charset=utf-8" })
  }

  return Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const url = new URL(request.url, "http://inspector.invalid")
    const header = request.headers[TOKEN_HEADER]
    const fromQuery = url.searchParams.get("token") ?? undefined
    if (!matches(expected, header) && !matches(expected, fromQuery)) {
      return error(401, "a valid token is required: open the URL the command printed")
    }
    const asset = assets[url.pathname]
    if (asset !== undefined) {
      return request.method === "GET" || request.method === "HEAD" ? asset : error(405, "method not allowed")
    }
    let segments: Array<string>
    try {
      segments = url.pathname.split("/").filter((segment) => segment !== "").map(decodeURIComponent)
    } catch {
      return error(400, "malformed path")
    }
    const found = find(table, request.method, segments)
    if (found === undefined) return error(404, "not found")
    if (found === "method") return error(405, "method not allowed")
    if (found.route.writes) {
      if (!matches(expected, header)) {
        return error(403, `actions take the token in the ${TOKEN_HEADER} header`)
      }
      if (!(request.headers["content-type"] ?? "").toLowerCase().startsWith("application/json")) {
        return error(415, "actions take a JSON body")
      }
    }
    return yield* found.route.handle(found.params, url.searchParams).pipe(
      Effect.catchCause((cause) => {
        const failure = Cause.findErrorOption(cause)
        return Option.isSome(failure)
          ? Effect.succeed(error(statusOf(failure.value), messageOf(failure.value)))
          : Effect.logError("web inspector: a request failed", cause).pipe(Effect.as(error(500, "internal error")))
      })
    )
  }).pipe(
    Effect.map(HttpServerResponse.setHeaders(securityHeaders))
  )
}

/** A `node:http` request as a web one (its body streamed, for the methods that have one). */
const toWebRequest = (incoming: IncomingMessage): Request => {
  const headers = new Headers()
  for (let i = 0; i < incoming.rawHeaders.length; i += 2) {
    headers.append(incoming.rawHeaders[i]!, incoming.rawHeaders[i + 1]!)
  }
  const method = incoming.method ?? "GET"
  const body = method === "GET" || method === "HEAD" ? null : Readable.toWeb(incoming) as ReadableStream<Uint8Array>
  return new Request(new URL(incoming.url ?? "/", "http://inspector.invalid"), {
    method,
    headers,
    body,
    duplex: "half"
  } as RequestInit)
}

/** Answers one request through the web handler (which turns every failure into a response). */
const respond = (handler: (request: Request) => Promise<Response>, incoming: IncomingMessage, out: ServerResponse) =>
  handler(toWebRequest(incoming))
    .then(async (response) => {
      const body = Buffer.from(await response.arrayBuffer())
      out.writeHead(response.status, Object.fromEntries(response.headers))
      out.end(body)
    })
    .catch(() => {
      if (!out.headersSent) out.writeHead(500, securityHeaders)
      out.end()
    })

/** A `node:http` server on `host` and `port` serving `handler`, closed with the scope. */
const listen = (handler: (request: Request) => Promise<Response>, host: string, port: number) =>
  Effect.acquireRelease(
    Effect.callback<Server, ServeError>((resume) => {
      const server = createServer((incoming, out) => void respond(handler, incoming, out))
      server.once("error", (cause) => resume(Effect.fail(new ServeError({ cause }))))
      server.listen(port, host, () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.callback<void>((resume) => {
        server.close(() => resume(Effect.void))
        // The page polls with keep-alive: its idle connections would hold `close` open.
        server.closeAllConnections()
      })
  )

/**
 * Starts the server; it stops when the scope closes.
 *
 * @since 0.1.0
 */
export const start = (
  options: Options = {}
): Effect.Effect<Running, ServeError, Scope.Scope | Inspector | CheckpointStorage> =>
  Effect.gen(function*() {
    const host = options.host ?? "127.0.0.1"
    const token = options.token ?? randomBytes(24).toString("base64url")
    if (!LOOPBACK.has(host)) {
      yield* Effect.sync(() =>
        process.stderr.write(
          `warning: listening on ${host}, not only this machine: anyone who can reach it and has the URL ` +
            `can read every checkpoint${options.write === true ? " and delete threads" : ""}\n`
        )
      )
    }
    const services = yield* Effect.context<Inspector | CheckpointStorage>()
    const handler = HttpEffect.toWebHandler(
      Effect.provideContext(app({ token, write: options.write === true, snapshot: options.snapshot }), services)
    )
    const server = yield* listen(handler, host, options.port ?? 0)
    const { port } = server.address() as AddressInfo
    const shown = host.includes(":") ? `[${host}]` : host
    return { url: `http://${shown}:${port}/?token=${token}`, token, host, port }
  })
