/**
 * This machine's own names, which both HTTP faces (the LangGraph server and
 * the web inspector) bind to by default and answer to: a server on one of
 * them is reachable only from this machine, and only by these names. And
 * the `Host` check both make of every request (DNS rebinding: a site whose
 * name an attacker re-points at this machine reaches a loopback server
 * under that name, and is refused by it).
 *
 * @since 0.4.0
 */

/**
 * The host names of the loopback interface.
 *
 * @since 0.4.0
 */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(["127.0.0.1", "::1", "localhost"])

const LOOPBACK_ORIGIN = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/

/**
 * Whether a web page's origin is served from this machine.
 *
 * @since 0.4.0
 */
export const isLoopbackOrigin = (origin: string): boolean => LOOPBACK_ORIGIN.test(origin)

/**
 * Addresses that bind every interface: the names a client uses for a server
 * on them cannot be known.
 *
 * @since 0.4.0
 */
const EVERY_INTERFACE: ReadonlySet<string> = new Set(["0.0.0.0", "::", "[::]"])

/**
 * A host as a URL writes it (an IPv6 address in brackets).
 *
 * @since 0.4.0
 */
export const urlHost = (host: string): string => host.includes(":") && !host.startsWith("[") ? `[${host}]` : host

/**
 * What a `Host` header names: its host (lower case, an IPv6 address without
 * its brackets) and its port, if it has one; `undefined` for a header that
 * is no `host[:port]`.
 *
 * @since 0.4.0
 */
export const hostOf = (
  header: string | undefined
): { readonly name: string; readonly port: number | undefined } | undefined => {
  const found = /^(?:\[([^\]]*)\]|([^:[\]]*))(?::(\d+))?$/.exec(header ?? "")
  return found === null
    ? undefined
    : { name: (found[1] ?? found[2]!).toLowerCase(), port: found[3] === undefined ? undefined : Number(found[3]) }
}

/**
 * The names a server answers to: one of `names`, and `port` when given.
 *
 * @since 0.4.0
 */
export interface ServerNames {
  readonly names: ReadonlySet<string>
  readonly port?: number | undefined
}

/**
 * The web inspector's names: exactly the address it printed (its host, its
 * port). One bound to every interface is reached under names it cannot
 * know (`undefined`: no check; the token guards it).
 *
 * @since 0.4.0
 */
export const printedAddress = (host: string, port: number): ServerNames | undefined =>
  EVERY_INTERFACE.has(host) ? undefined : { names: new Set([hostOf(urlHost(host))?.name ?? host]), port }

/**
 * The LangGraph server's names: any loopback name, on any port, when bound
 * to loopback (LangGraph's clients say `localhost` as often as
 * `127.0.0.1`); any name otherwise (`undefined`: a server beyond this
 * machine authenticates every request).
 *
 * @since 0.4.0
 */
export const loopbackNames = (host: string): ServerNames | undefined =>
  LOOPBACK_HOSTS.has(host) ? { names: LOOPBACK_HOSTS } : undefined

/**
 * Whether a request's `Host` header names the server (each face answers
 * 421 otherwise).
 *
 * @since 0.4.0
 */
export const namesServer = (server: ServerNames, header: string | undefined): boolean => {
  const named = hostOf(header)
  return named !== undefined && server.names.has(named.name) &&
    (server.port === undefined || named.port === server.port)
}
