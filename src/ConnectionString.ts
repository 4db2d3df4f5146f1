/**
 * Connection strings, parsed once: which backend a string names and what
 * its driver needs of it. The adapter (`EffectCheckpointSaver.fromConnString`),
 * the CockroachDB layers and the command line all read them here; each then
 * decides which backends it serves (the command line opens no memory store).
 *
 * Pure: nothing is opened or loaded here.
 *
 * @since 0.1.0
 */
import { Data, Result } from "effect"
import { InvalidConfig } from "./CheckpointError.ts"

/**
 * A parsed connection string.
 *
 * - `Memory`: `memory:`, checkpoints kept in this process.
 * - `Pglite`: `pglite:` (an embedded database in memory, `dataDir`
 *   undefined) or `pglite:<directory>` / `pglite://<directory>`.
 * - `Postgres`: `postgres://…` or `postgresql://…`, passed on as given.
 * - `Cockroach`: `cockroachdb://…` or `cockroach://…`; `url` is the
 *   `postgres://` form the wire client reads.
 *
 * @since 0.1.0
 */
export type ConnectionString =
  | { readonly _tag: "Memory"; readonly scheme: string }
  | { readonly _tag: "Pglite"; readonly scheme: string; readonly dataDir: string | undefined }
  | { readonly _tag: "Postgres"; readonly scheme: string; readonly url: string }
  | { readonly _tag: "Cockroach"; readonly scheme: string; readonly url: string }

/**
 * A string whose scheme no backend serves. `redacted` is the string with
 * any credentials masked, safe to print.
 *
 * @since 0.1.0
 */
export class UnsupportedScheme extends Data.TaggedError("UnsupportedScheme")<{ readonly redacted: string }> {
  override get message(): string {
    return `unsupported connection string "${this.redacted}"`
  }
}

/**
 * The string with the credentials of a `scheme://user:password@host` masked.
 *
 * @since 0.1.0
 */
export const redact = (url: string): string => url.replace(/\/\/[^@/]*@/, "//***@")

/**
 * A `cockroachdb://` (or `cockroach://`) URL in the `postgres://` form the
 * wire client reads; any other string unchanged.
 *
 * @since 0.1.0
 */
export const toWireUrl = (url: string): string => url.replace(/^cockroach(db)?:\/\//i, "postgres://")

/**
 * Whether a command-line argument is a connection string (`scheme://…`, or
 * `pglite:<dir>`) rather than, say, a thread id such as `user:42`.
 *
 * @since 0.1.0
 */
export const looksLikeOne = (argument: string): boolean => /^([a-z][a-z0-9+.-]*:\/\/|pglite:)/i.test(argument)

/**
 * Parses a connection string. The scheme is case-insensitive.
 *
 * @since 0.1.0
 */
export const parse = (url: string): Result.Result<ConnectionString, UnsupportedScheme> => {
  const scheme = url.slice(0, url.indexOf(":") + 1).toLowerCase()
  switch (scheme) {
    case "memory:":
      return Result.succeed({ _tag: "Memory", scheme })
    case "pglite:": {
      const dataDir = url.slice("pglite:".length).replace(/^\/\//, "")
      return Result.succeed({ _tag: "Pglite", scheme, dataDir: dataDir === "" ? undefined : dataDir })
    }
    case "postgres:":
    case "postgresql:":
      return Result.succeed({ _tag: "Postgres", scheme, url })
    case "cockroachdb:":
    case "cockroach:":
      return Result.succeed({ _tag: "Cockroach", scheme, url: toWireUrl(url) })
  }
  return Result.fail(new UnsupportedScheme({ redacted: redact(url) }))
}

/**
 * An {@link UnsupportedScheme} as the `InvalidConfig` of `operation`, saying
 * which strings it accepts.
 *
 * @since 0.1.0
 */
export const unsupported = (operation: string, error: UnsupportedScheme, expected: string): InvalidConfig =>
  new InvalidConfig({ operation, detail: `${error.message}: expected ${expected}` })
