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
import { InvalidConfig } from "../CheckpointError.ts"
import { escape } from "./Visible.ts"

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
 * any credentials masked ({@link redact}), safe to print.
 *
 * @since 0.1.0
 */
export class UnsupportedScheme extends Data.TaggedError("UnsupportedScheme")<{ readonly redacted: string }> {
  override get message(): string {
    return escape(`unsupported connection string "${this.redacted}"`)
  }
}

/**
 * The parameters whose value is a secret, as libpq names them: `password`,
 * and `sslpassword` (the client key's passphrase). The paths beside them
 * (`passfile`, `sslkey`, `sslcert`, `sslrootcert`) name where a secret is,
 * not the secret, and stay.
 */
const SECRET_PARAMETERS: ReadonlySet<string> = new Set(["password", "sslpassword"])

/**
 * A parameter's name as a URL's query means it (`+` a space, `%XX` decoded),
 * lower-cased; `undefined` when it does not decode.
 */
const parameterName = (raw: string): string | undefined => {
  try {
    return decodeURIComponent(raw.replaceAll("+", " ")).trim().toLowerCase()
  } catch {
    return undefined
  }
}

type Span = readonly [start: number, end: number]

/**
 * The values of a URL's query parameters that are secret, or whose name
 * does not decode. Any `?` after the first separates parameters too: a
 * password holding a raw `?` moves the query's start.
 */
const queryValues = (text: string): Array<Span> => {
  const spans: Array<Span> = []
  const query = text.indexOf("?")
  if (query < 0) return spans
  const pair = /[^?&]+/g
  pair.lastIndex = query + 1
  for (let found = pair.exec(text); found !== null; found = pair.exec(text)) {
    const equals = found[0].indexOf("=")
    if (equals < 0) continue
    const name = parameterName(found[0].slice(0, equals))
    if (name === undefined || SECRET_PARAMETERS.has(name)) {
      spans.push([found.index + equals + 1, found.index + found[0].length])
    }
  }
  return spans
}

/**
 * The secret values of libpq's `keyword=value` form (`host=h password=x`,
 * a value maybe quoted), wherever they are; in a URL a value ends at `&`.
 */
const keywordValues = (text: string, inUrl: boolean): Array<Span> =>
  Array.from(
    text.matchAll(
      inUrl
        ? /\b(?:ssl)?password\s*=\s*('(?:[^'\\]|\\.)*'?|[^\s&]*)/gi
        : /\b(?:ssl)?password\s*=\s*('(?:[^'\\]|\\.)*'?|\S*)/gi
    ),
    (found): Span => [found.index + found[0].length - found[1]!.length, found.index + found[0].length]
  )

/**
 * The string with its credentials masked, safe to print in a message: the
 * whole user information of a `scheme://user:password@host` (the user name
 * too: some providers put a token or a tenant there, and in a malformed
 * string which part is the password is a guess), and the values of the
 * `password` and `sslpassword` parameters, in a URL's query or in libpq's
 * `keyword=value` form. Each masked run is `***`.
 *
 * The user information ends at the LAST `@` of the string: a password may
 * hold a raw `@`, `/`, `?` or `#`, so an `@` further on (in a query value)
 * masks the host as well; in a string that is no `scheme://` URL, everything
 * before the last `@` is masked. A parameter whose name does not decode is
 * masked. Unsure means masked.
 *
 * @since 0.1.0
 */
export const redact = (url: string): string => {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0] ?? ""
  const rest = url.slice(scheme.length)
  const inUrl = scheme !== ""
  const hidden = new Uint8Array(rest.length)
  hidden.fill(1, 0, Math.max(0, rest.lastIndexOf("@")))
  for (const [start, end] of [...(inUrl ? queryValues(rest) : []), ...keywordValues(rest, inUrl)]) {
    hidden.fill(1, start, end)
  }
  let out = scheme
  for (let i = 0; i < rest.length; i++) {
    if (hidden[i] === 0) out += rest[i]
    else if (i === 0 || hidden[i - 1] === 0) out += "***"
  }
  return out
}

/**
 * A text (an error message, a parse error quoting an argument) with the
 * credentials of every connection string in it masked: each `scheme://…`
 * run as {@link redact} masks it, and every `password=` value.
 *
 * @since 0.4.0
 */
export const redactIn = (text: string): string =>
  text
    .replace(/[a-z][a-z0-9+.-]*:\/\/[^\s"'`]+/gi, redact)
    .replace(/\b((?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'?|[^\s&"'`]+)/gi, "$1***")

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
