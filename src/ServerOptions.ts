/**
 * What a server is configured with, as its users type it: the graphs it
 * serves, which pages may call it, who is asking, and how much of each run
 * it keeps. Apart from the modules that act on them (`App`, `Auth`, `Runs`),
 * so that `langgraph-checkpoint-effect/server`'s declarations name these and
 * nothing of the app.
 *
 * @since 0.2.0
 */
import type { createEmbedServer } from "@langchain/langgraph-api/experimental/embed"
import type { Auth } from "@langchain/langgraph-sdk/auth"

/**
 * A compiled graph, as the embed server takes it.
 *
 * @since 0.2.0
 */
export type Graph = Parameters<typeof createEmbedServer>[0]["graph"][string]

/**
 * Which web pages may call the server from a browser.
 *
 * @since 0.2.0
 */
export interface CorsOptions {
  /** Origins allowed (`"*"` for any). */
  readonly origins: string | ReadonlyArray<string>
  /** Whether browsers may send cookies and credentials (not with `"*"`). */
  readonly credentials?: boolean | undefined
}

/**
 * What an authentication handler answers for a request it accepts: an
 * identity, or a user with one. Throwing (LangGraph's `HTTPException` with
 * 401 or 403, or any error: 401) refuses the request.
 *
 * @since 0.2.0
 */
export type Authenticated = string | { readonly identity: string; readonly [key: string]: unknown }

/**
 * An authentication handler: LangGraph's `Auth` (its `authenticate`
 * callback runs; `on` authorization callbacks are not), or a function of the
 * request.
 *
 * @since 0.2.0
 */
export type AuthHandler =
  | Auth
  | ((request: Request) => Authenticated | Promise<Authenticated>)

/**
 * How much of a run the server keeps for its readers.
 *
 * @since 0.2.0
 */
export interface RunLimits {
  /** Events kept per run (default 10,000). */
  readonly maxEvents?: number | undefined
  /** Bytes of event data kept per run (UTF-8; default 4 MiB). */
  readonly maxBytes?: number | undefined
  /** Finished runs kept for status and rejoining, per server (default 1,000). */
  readonly keepFinished?: number | undefined
  /** Bytes of the logs of finished runs kept, per server (default 64 MiB): the oldest go first. */
  readonly keepFinishedBytes?: number | undefined
}
