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
 * - A request must name the server as printed in its `Host` header (421
 *   otherwise): a site whose name an attacker re-points at this machine (DNS
 *   rebinding) is refused before the token is even looked at. A server bound
 *   to every interface (`0.0.0.0`, `::`) is reached under names it cannot
 *   know, and checks the token alone.
 * - Every response forbids inline scripts and styles, framing, other
 *   origins and caching (`Content-Security-Policy`, `no-store`), and the page
 *   inserts every value as text: what a message says can never run.
 *
 * The app (`Router.ts`) is an `effect/http` router, served by `node:http`
 * through its web handler (`@effect/platform-node`'s server would make every
 * install of this library pull in a Redis client, a peer dependency of that
 * package).
 *
 * @since 0.1.0
 */
import { Effect, type Scope } from "effect"
import { HttpEffect, HttpRouter } from "effect/http"
import { ServeError } from "effect/http/HttpServerError"
import { randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Readable } from "node:stream"
import type { CheckpointStorage } from "../../../CheckpointStorage.ts"
import type { Label } from "../../../Snapshot.ts"
import { LOOPBACK_HOSTS, namesServer, printedAddress, urlHost } from "../../Loopback.ts"
import type { Inspector } from "../Inspector.ts"
import { securityHeaders } from "./Guard.ts"
import * as Router from "./Router.ts"

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

export { securityHeaders, TOKEN_HEADER } from "./Guard.ts"

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

/** Whether a request's `Host` names this server as printed (any name, when bound to every interface). */
const namesThisServer = (incoming: IncomingMessage, host: string, port: number) => {
  const names = printedAddress(host, port)
  return names === undefined || namesServer(names, incoming.headers.host)
}

/** 421: the request was meant for another server name. */
const misdirected = (out: ServerResponse) => {
  out.writeHead(421, { ...securityHeaders, "content-type": "application/json" })
  out.end(JSON.stringify({ error: "this server answers only to the address it printed" }))
}

/** A `node:http` server on `host` and `port` serving `handler`, closed with the scope. */
const listen = (handler: (request: Request) => Promise<Response>, host: string, port: number) =>
  Effect.acquireRelease(
    Effect.callback<Server, ServeError>((resume) => {
      const server = createServer((incoming, out) =>
        namesThisServer(incoming, host, (server.address() as AddressInfo).port)
          ? void respond(handler, incoming, out)
          : misdirected(out)
      )
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
    if (!LOOPBACK_HOSTS.has(host)) {
      yield* Effect.sync(() =>
        process.stderr.write(
          `warning: listening on ${host}, not only this machine: anyone who can reach it and has the URL ` +
            `can read every checkpoint${options.write === true ? " and delete threads" : ""}\n`
        )
      )
    }
    const services = yield* Effect.context<Inspector | CheckpointStorage>()
    const app = yield* HttpRouter.toHttpEffect(
      Router.layer({ token, write: options.write === true, snapshot: options.snapshot })
    ).pipe(Effect.provideService(HttpRouter.RouterConfig, Router.routerConfig))
    const handler = HttpEffect.toWebHandler(Effect.provideContext(app, services))
    const server = yield* listen(handler, host, options.port ?? 0)
    const { port } = server.address() as AddressInfo
    return { url: `http://${urlHost(host)}:${port}/?token=${token}`, token, host, port }
  })
