/**
 * This machine's own names, which both HTTP faces (the LangGraph server and
 * the web inspector) bind to by default and answer to: a server on one of
 * them is reachable only from this machine, and only by these names.
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
