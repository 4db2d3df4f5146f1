/**
 * Who is asking: the server's trust boundary. Every request is
 * authenticated by the user's handler (LangGraph's own `Auth` from
 * `@langchain/langgraph-sdk/auth`, or a plain function), before any route
 * runs; the identity then owns the threads it creates (their metadata
 * `owner`, as LangGraph Platform's own auth examples do) and sees no other.
 *
 * The identity travels with the request in an `AsyncLocalStorage`, so the
 * embed server's routes, which only know the `ThreadSaver`, are confined
 * through it (see `Threads.ts`) without knowing of users.
 *
 * @since 0.2.0
 */
import type { MiddlewareHandler } from "hono"
import { HTTPException } from "hono/http-exception"
import { AsyncLocalStorage } from "node:async_hooks"
import type { AuthHandler } from "../../ServerOptions.ts"

/** The metadata key holding a thread's owner. */
export const OWNER = "owner"

const current = new AsyncLocalStorage<string>()

/** The identity of the request being served, if authentication is on. */
export const identity = (): string | undefined => current.getStore()

/** The callback an `Auth` was given, or the function itself. */
const callbackOf = (handler: AuthHandler): (request: Request) => unknown =>
  typeof handler === "function"
    ? handler
    : (request) => {
      const authenticate = handler["~handlerCache"].authenticate
      if (authenticate === undefined) throw new HTTPException(500, { message: "Auth has no authenticate handler" })
      return authenticate(request)
    }

/** The identity a handler's answer names, or nothing usable. */
const identityOf = (answer: unknown): string | undefined => {
  if (typeof answer === "string") return answer.length > 0 ? answer : undefined
  if (typeof answer !== "object" || answer === null || !("identity" in answer)) return undefined
  const { identity } = answer
  return typeof identity === "string" && identity.length > 0 ? identity : undefined
}

/** A refusal of the handler's as the answer it names (401 unless 403). */
const refusal = (error: unknown): HTTPException => {
  const status = typeof error === "object" && error !== null && "status" in error && error.status === 403 ? 403 : 401
  return new HTTPException(status, { message: status === 403 ? "Forbidden" : "Unauthorized" })
}

/**
 * Middleware authenticating every request (CORS preflights aside: they
 * carry no credentials; and `GET /ok`, the health check a load balancer or
 * Kubernetes asks, which says nothing but that the server answers) and
 * running the rest of it as that identity.
 *
 * @since 0.2.0
 */
export const authenticate = (handler: AuthHandler): MiddlewareHandler => {
  const callback = callbackOf(handler)
  return async (c, next) => {
    if (c.req.method === "OPTIONS" || (c.req.method === "GET" && c.req.path === "/ok")) return next()
    let answer: unknown
    try {
      answer = await callback(c.req.raw)
    } catch (error) {
      throw refusal(error)
    }
    const who = identityOf(answer)
    if (who === undefined) throw refusal(undefined)
    await current.run(who, next)
  }
}

/**
 * Whether the request's identity may see a thread with `metadata`: always
 * without authentication; with it, only the thread's owner.
 *
 * @since 0.2.0
 */
export const mayAccess = (metadata: Readonly<Record<string, unknown>>): boolean => {
  const who = identity()
  return who === undefined || metadata[OWNER] === who
}
