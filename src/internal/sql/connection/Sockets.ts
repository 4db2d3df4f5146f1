/**
 * The sockets of one pool, opened here (as `@effect/sql-pg`'s `stream`
 * option) so that the pool can drop them all at once: when a connection
 * answers that the endpoint is read-only (a failover left it on a demoted
 * primary, or DNS sent it to a reader), its neighbours reach the same place.
 * `@effect/sql-pg` takes a closed socket for a lost connection and the pool
 * replaces it on next use; a statement then in flight fails as a lost
 * connection does, and is retried. TLS is negotiated over these sockets by
 * `@effect/sql-pg` as over its own.
 *
 * Each socket keeps an `error` listener for its whole life, so an error that
 * arrives after the client let go of it (a server, a pooler or a load
 * balancer resetting an idle connection) is never an uncaught exception.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import * as Net from "node:net"
import type { Duplex } from "node:stream"

/**
 * Where the sockets connect: a host and port, or a Unix socket directory
 * (a host starting with `/`, as libpq reads it).
 *
 * @since 0.1.0
 */
export interface Endpoint {
  readonly host: string
  readonly port: number
}

const decoded = (value: string) => {
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}

/**
 * The endpoint a URL and explicit fields name, read as `@effect/sql-pg`
 * reads them (explicit fields win; then the URL's `host` and `port`
 * parameters, then its authority; `localhost:5432` by default).
 *
 * @since 0.1.0
 */
export const endpoint = (url: string | undefined, host?: string, port?: number): Endpoint => {
  const parsed = url !== undefined && URL.canParse(url) ? new URL(url) : undefined
  const hostname = parsed?.hostname === undefined || parsed.hostname === ""
    ? undefined
    : parsed.hostname.startsWith("[")
    ? parsed.hostname.slice(1, -1)
    : decoded(parsed.hostname)
  const urlPort = parsed?.searchParams.get("port") ?? (parsed?.port === "" ? undefined : parsed?.port)
  return {
    host: host ?? parsed?.searchParams.get("host") ?? hostname ?? "localhost",
    port: port ?? (urlPort === undefined || urlPort === null ? 5432 : Number(urlPort))
  }
}

/**
 * @since 0.1.0
 */
export interface Sockets {
  /** Opens a socket to the endpoint (the pool's `stream` option). */
  readonly open: () => Duplex
  /** Closes every socket open now; the pool opens new ones as it needs them. */
  readonly closeAll: Effect.Effect<void>
}

const ignore = () => undefined

/**
 * A pool's sockets to `target`.
 *
 * @since 0.1.0
 */
export const make = (target: Endpoint): Sockets => {
  const live = new Set<Net.Socket>()
  return {
    open: () => {
      const socket = target.host.startsWith("/")
        ? Net.connect({ path: `${target.host}/.s.PGSQL.${target.port}` })
        // A statement is one write and then a wait for its answer: Nagle would only hold it back.
        : Net.connect({ host: target.host, port: target.port, noDelay: true })
      socket.on("error", ignore)
      live.add(socket)
      socket.once("close", () => live.delete(socket))
      return socket
    },
    closeAll: Effect.sync(() => {
      for (const socket of live) socket.destroy()
    })
  }
}
