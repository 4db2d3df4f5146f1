/**
 * What a request meets before any route: the server's own name (a loopback
 * server answers only to loopback names, so a site re-pointed at this
 * machine by DNS cannot reach it), the pages allowed to call it, and the
 * size of its body.
 *
 * CORS alone only stops a foreign page from reading an answer: a page can
 * still send a "simple" request (a form's POST, a `text/plain` fetch, an
 * image's GET) to a loopback server and have it act. So a request a browser
 * sent for a page the server does not allow (its `Origin`, or
 * `Sec-Fetch-Site` when it sends none) is refused whatever its method, and
 * a body must be JSON: a foreign page can send JSON only after a preflight,
 * which CORS denies. LangGraph's SDK (no `Origin` outside a browser, JSON
 * bodies) and pages of allowed origins are not affected.
 *
 * @since 0.4.0
 */
import type { Context, MiddlewareHandler } from "hono"
import { bodyLimit } from "hono/body-limit"
import { HTTPException } from "hono/http-exception"
import type { CorsOptions } from "../../ServerOptions.ts"
import { isLoopbackOrigin, namesServer, type ServerNames } from "../Loopback.ts"

/**
 * Whether a page of `origin` may call the server: by default pages served
 * from loopback (as agent-chat-ui in development); else those `cors` lists.
 *
 * @since 0.4.0
 */
export const allowsOrigin = (cors: CorsOptions | undefined) => (origin: string): boolean =>
  cors === undefined
    ? isLoopbackOrigin(origin)
    : typeof cors.origins === "string"
    ? cors.origins === "*" || cors.origins === origin
    : cors.origins.includes(origin)

/** LangGraph Platform's error body. */
const refuse = (c: Context, status: 403 | 413 | 415 | 421, detail: string) => c.json({ detail }, status)

/**
 * Only requests naming the server by one of its names (421 otherwise): a
 * loopback server's are the loopback names (`Loopback.loopbackNames`).
 *
 * @since 0.4.0
 */
export const hostIs = (names: ServerNames): MiddlewareHandler => async (c, next) => {
  if (!namesServer(names, c.req.header("host"))) return refuse(c, 421, "This server does not answer to that host name")
  await next()
}

/** Whether a request carries a body: HTTP/1.1 says so by its length or its transfer coding. */
const hasBody = (c: Context) => {
  const length = c.req.header("content-length")
  return (length !== undefined && length !== "0") || c.req.header("transfer-encoding") !== undefined
}

/** How a browser says a request left a page of another site (`Sec-Fetch-Site`). */
const FOREIGN_SITES = new Set(["cross-site", "same-site"])

/**
 * Refuses what a page the server does not allow made a browser send (403),
 * and a body that is not JSON (415). CORS preflights pass: they change
 * nothing, and CORS answers them.
 *
 * @since 0.4.0
 */
export const sameSite = (allowed: (origin: string) => boolean): MiddlewareHandler => async (c, next) => {
  if (c.req.method === "OPTIONS") return next()
  const origin = c.req.header("origin")
  const foreign = origin !== undefined
    ? !allowed(origin)
    : FOREIGN_SITES.has(c.req.header("sec-fetch-site") ?? "")
  if (foreign) return refuse(c, 403, "This server does not take requests from that page (see `cors`)")
  const type = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase()
  if (hasBody(c) && type !== "application/json") {
    return refuse(c, 415, "The request body must be JSON (content-type: application/json)")
  }
  await next()
}

/**
 * The deepest a request's JSON may nest: what the codec stores
 * (`SerializationFailed` beyond). Deeper JSON would only overflow the stack
 * of whatever walks it first.
 *
 * @since 0.4.0
 */
export const MAX_JSON_DEPTH = 500

/** Whether JSON `text` nests containers deeper than `max` (strings skipped; a malformed text is the parser's to refuse). */
export const nestsDeeper = (text: string, max: number): boolean => {
  // Each level takes two characters: a shorter text cannot nest past the limit.
  if (text.length <= 2 * max) return false
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (inString) {
      if (code === 92) i++ // a backslash escapes the next character
      else if (code === 34) inString = false
    } else if (code === 34) inString = true
    else if (code === 91 || code === 123) {
      if (++depth > max) return true
    } else if (code === 93 || code === 125) depth--
  }
  return false
}

/**
 * Bodies of at most `bytes` (413 beyond: refused before they are read when
 * their length is declared, else as soon as they pass it), nested at most
 * {@link MAX_JSON_DEPTH} deep (422 beyond).
 *
 * @since 0.4.0
 */
export const boundedBodies = (bytes: number): MiddlewareHandler => {
  const limit = bodyLimit({
    maxSize: bytes,
    onError: () => {
      throw new HTTPException(413, { message: `The request body is over ${bytes} bytes` })
    }
  })
  return (c, next) =>
    limit(c, async () => {
      if (hasBody(c) && nestsDeeper(await c.req.text(), MAX_JSON_DEPTH)) {
        throw new HTTPException(422, { message: `The request body nests deeper than ${MAX_JSON_DEPTH} levels` })
      }
      await next()
    })
}
