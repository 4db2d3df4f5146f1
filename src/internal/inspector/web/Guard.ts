/**
 * The web inspector's guards, as `HttpRouter` middleware: the token on every
 * request (global, so that even an unknown route answers 401), the stricter
 * rule for actions (the token from the header alone, a JSON body), and the
 * security headers on every answer.
 *
 * @since 0.1.0
 */
import { Cause, Effect, Option } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { isHttpServerError } from "effect/http/HttpServerError"
import { createHash, timingSafeEqual } from "node:crypto"

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

/**
 * The header the page sends its token in.
 *
 * @since 0.1.0
 */
export const TOKEN_HEADER = "x-inspector-token"

/**
 * A request's URL, resolved (its path normalized) against a base that is never fetched.
 *
 * @since 0.1.0
 */
export const urlOf = (request: HttpServerRequest.HttpServerRequest): URL =>
  new URL(request.url, "http://inspector.invalid")

/**
 * An error answer: a JSON body with its message.
 *
 * @since 0.1.0
 */
export const error = (status: number, message: string): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.jsonUnsafe({ error: message }, { status })

/**
 * The token as the guards compare it: hashed, so that every comparison is of
 * the same length and takes the same time.
 *
 * @since 0.1.0
 */
export const digest = (text: string): Buffer => createHash("sha256").update(text).digest()

/** `given` is the token, compared in constant time. */
const matches = (expected: Buffer, given: string | null | undefined) =>
  typeof given === "string" && timingSafeEqual(expected, digest(given))

const decodes = (path: string) => {
  try {
    decodeURIComponent(path)
    return true
  } catch {
    return false
  }
}

const isRouteNotFound = (cause: Cause.Cause<unknown>) => {
  const failure = Cause.findErrorOption(cause)
  return Option.isSome(failure) && isHttpServerError(failure.value) && failure.value.reason._tag === "RouteNotFound"
}

/**
 * Every request: the token (in the header or the URL) or 401, a path that
 * decodes or 400, a route or 404; the security headers on every answer. The
 * router sees the path as the URL standard resolves it.
 *
 * @since 0.1.0
 */
export const everyRequest = (expected: Buffer) =>
  HttpRouter.middleware((effect) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const url = urlOf(request)
      if (!matches(expected, request.headers[TOKEN_HEADER]) && !matches(expected, url.searchParams.get("token"))) {
        return error(401, "a valid token is required: open the URL the command printed")
      }
      if (!decodes(url.pathname)) return error(400, "malformed path")
      return yield* effect.pipe(
        Effect.provideService(HttpServerRequest.HttpServerRequest, request.modify({ url: url.pathname + url.search })),
        Effect.catchCause((cause) =>
          isRouteNotFound(cause) ? Effect.succeed(error(404, "not found")) : Effect.failCause(cause)
        )
      )
    }).pipe(Effect.map(HttpServerResponse.setHeaders(securityHeaders))), { global: true })

/**
 * An action: the token in the header (a link or a cross-site form can only
 * put it in the URL) or 403, a JSON body (which such a form cannot send) or 415.
 *
 * @since 0.1.0
 */
export const action = (expected: Buffer) =>
  HttpRouter.middleware((effect) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      if (!matches(expected, request.headers[TOKEN_HEADER])) {
        return error(403, `actions take the token in the ${TOKEN_HEADER} header`)
      }
      if (!(request.headers["content-type"] ?? "").toLowerCase().startsWith("application/json")) {
        return error(415, "actions take a JSON body")
      }
      return yield* effect
    })
  )
