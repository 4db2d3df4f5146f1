/**
 * A database the command could not open, worded for a person: which
 * database, and why in plain words (refused, no such host, the login or the
 * database refused by the server), instead of the storage error's
 * `connect: storage failed after 17 attempts: PgConnection: …`.
 *
 * Only failures to reach or log in to the server are reworded; any other
 * storage failure keeps its own message.
 *
 * @since 0.1.0
 */
import { SqlError } from "effect/sql"
import type { StorageFailure } from "../../CheckpointError.ts"
import * as Retry from "../../Retry.ts"
import { CommandError } from "./Errors.ts"

/** The messages along a cause chain (an `SqlError`'s reason included). */
const chain = (value: unknown): Array<{ readonly message?: unknown }> => {
  const found: Array<{ readonly message?: unknown }> = []
  let current: unknown = value
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    const link = current as { readonly message?: unknown; readonly cause?: unknown }
    found.push(link)
    const reason = (current as { readonly reason?: unknown }).reason
    current = link.cause ?? (typeof reason === "object" && reason !== null ? reason : undefined)
  }
  return found
}

/**
 * `error` worded for a person when it is a failure to reach the database
 * `url` names (or to log in to it); else `error` itself.
 *
 * @since 0.1.0
 */
export const word = (url: string, error: StorageFailure): CommandError | StorageFailure => {
  const sentence = SqlError.isSqlError(error.cause) ? Retry.cannotOpen(url, error.cause) : undefined
  if (sentence === undefined) return error
  const links = chain(error.cause)
  // The innermost message is what the socket or the server said ("role "x" does not exist").
  const said = links.map((link) => link.message).findLast((message) => typeof message === "string")
  const attempts = error.attempts !== undefined && error.attempts > 1 ? `; tried ${error.attempts} times` : ""
  return new CommandError({
    detail: `${sentence}${
      typeof said === "string" && said !== ""
        ? ` (${said}${attempts})`
        : attempts === ""
        ? ""
        : ` (${attempts.slice(2)})`
    }`
  })
}
