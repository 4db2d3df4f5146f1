/**
 * The web inspector's router: the page's files and the API's routes in an
 * `HttpRouter`, behind the guards (`Guard.ts`). A path served under another
 * method answers 405; what a handler fails with becomes a status.
 *
 * @since 0.1.0
 */
import { Cause, Effect, Layer, Option } from "effect"
import { HttpMethod, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { httpStatus } from "../../../CheckpointError.ts"
import type { Label } from "../../../Snapshot.ts"
import { type Route, routes } from "./Api.ts"
import * as Assets from "./Assets.ts"
import * as Guard from "./Guard.ts"

/**
 * What a handler failed with, as a status: what this library's errors mean
 * over HTTP (`httpStatus`: an id with a NUL is `InvalidConfig` from the
 * storage, `InvalidInput` from the inspector, both 400; what is absent 404;
 * a storage that cannot be reached 503), a request the router or a schema
 * cannot take 400, anything else 500.
 *
 * @since 0.4.0
 */
export const statusOf = (cause: unknown): number => {
  const declared = httpStatus(cause)
  if (declared !== undefined) return declared
  const tag = typeof cause === "object" && cause !== null && "_tag" in cause ? cause._tag : undefined
  return tag === "SchemaError" || tag === "HttpServerError" ? 400 : 500
}

const messageOf = (cause: unknown) =>
  cause instanceof Error ? cause.message : typeof cause === "string" ? cause : "internal error"

/**
 * A failure as an answer: its status and message; a defect is logged and answers 500.
 *
 * @since 0.4.0
 */
export const failed = (cause: Cause.Cause<unknown>) => {
  const failure = Cause.findErrorOption(cause)
  return Option.isSome(failure)
    ? Effect.succeed(Guard.error(statusOf(failure.value), messageOf(failure.value)))
    : Effect.logError("web inspector: a request failed", cause).pipe(Effect.as(Guard.error(500, "internal error")))
}

/** An API route in the router: its parameters and query passed in, its failures answered. */
const toRoute = (entry: Route) =>
  HttpRouter.route(
    entry.method,
    entry.path,
    Effect.gen(function*() {
      const params = yield* HttpRouter.params
      const request = yield* HttpServerRequest.HttpServerRequest
      return yield* entry.handle(params, Guard.urlOf(request).searchParams)
    }).pipe(Effect.catchCause(failed))
  )

/** 405 for every method a served path does not answer (`HEAD` is `GET`'s). */
const methodNotAllowed = (served: ReadonlyArray<{ readonly method: string; readonly path: HttpRouter.PathInput }>) => {
  const byPath = new Map<HttpRouter.PathInput, Set<string>>()
  for (const { method, path } of served) byPath.set(path, (byPath.get(path) ?? new Set()).add(method))
  return [...byPath].flatMap(([path, methods]) =>
    [...HttpMethod.all]
      .filter((method) => !methods.has(method) && !(method === "HEAD" && methods.has("GET")))
      .map((method) => HttpRouter.route(method, path, Guard.error(405, "method not allowed")))
  )
}

/** The page's three files. */
const files = (token: string) => [
  HttpRouter.route(
    "GET",
    "/",
    HttpServerResponse.text(Assets.page(token), { contentType: "text/html; charset=utf-8" })
  ),
  HttpRouter.route(
    "GET",
    "/app.js",
    HttpServerResponse.text(Assets.script(), { contentType: "text/javascript; charset=utf-8" })
  ),
  HttpRouter.route("GET", "/app.css", HttpServerResponse.text(Assets.style, { contentType: "text/css; charset=utf-8" }))
]

/**
 * How the router matches: exactly as written (the API's paths are lower case),
 * and parameters of any length (thread ids have no limit).
 *
 * @since 0.1.0
 */
export const routerConfig = { caseSensitive: true, maxParamLength: Number.MAX_SAFE_INTEGER } as const

/**
 * The app as router layers; the actions exist only with `write`.
 *
 * @since 0.1.0
 */
export const layer = (
  options: { readonly token: string; readonly write: boolean; readonly snapshot?: Label | undefined }
) => {
  const expected = Guard.digest(options.token)
  const table = routes(options).filter((entry) => options.write || !entry.writes)
  const pages = files(options.token)
  return Layer.mergeAll(
    HttpRouter.addAll([...pages, ...table.filter((entry) => !entry.writes).map(toRoute)]),
    HttpRouter.addAll(table.filter((entry) => entry.writes).map(toRoute)).pipe(
      Layer.provide(Guard.action(expected).layer)
    ),
    HttpRouter.addAll(methodNotAllowed([...pages, ...table])),
    Guard.everyRequest(expected)
  )
}
