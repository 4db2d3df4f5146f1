/**
 * libpq's TLS parameters of a connection URL, as the wire client's TLS
 * options. `@effect/sql-pg` reads `sslmode` alone and ignores the rest (as
 * libpq ignores unknown parameters); managed PostgreSQL and CockroachDB
 * clusters hand out URLs like
 * `…?sslmode=verify-full&sslrootcert=ca.crt&options=--cluster%3Dname`, whose
 * CA file would then be silently dropped. Here:
 *
 * - `sslrootcert` (a file, or `system`) is the CA the server is verified
 *   against; `sslcert` and `sslkey` are a client certificate and its key;
 * - `sslmode=verify-full` checks the chain and the host name, `verify-ca`
 *   the chain only; `require`, `prefer` and `allow` keep `@effect/sql-pg`'s
 *   behaviour (TLS with the certificate verified, which is stricter than
 *   libpq's `require`: give `sslrootcert` for a private CA);
 * - parameters this cannot honour (`sslcrl`, `sslpassword`, …) are an
 *   `InvalidConfig`, not ignored;
 * - `options` (e.g. CockroachDB Serverless' `--cluster=…` routing) is sent
 *   by `@effect/sql-pg` itself.
 *
 * @since 0.1.0
 */
import { Effect, Redacted } from "effect"
import { readFileSync } from "node:fs"
import { InvalidConfig } from "../../../CheckpointError.ts"
import type { TlsOptions } from "../../../SqlOptions.ts"

/** libpq's TLS parameters that have no equivalent here. */
const unsupported = ["sslcrl", "sslcrldir", "sslpassword", "sslcertmode", "sslkeylogfile", "requiressl"]

const invalid = (detail: string) => new InvalidConfig({ operation: "connect", detail })

const readFile = (parameter: string, path: string) =>
  Effect.try({
    try: () => readFileSync(path),
    catch: (cause) =>
      invalid(`${parameter}: cannot read "${path}": ${cause instanceof Error ? cause.message : String(cause)}`)
  })

/**
 * The TLS options a URL's parameters ask for; `undefined` when it names no
 * certificate and no verification mode beyond what `@effect/sql-pg` reads.
 *
 * @since 0.1.0
 */
export const fromUrl = (
  url: string | Redacted.Redacted
): Effect.Effect<TlsOptions | undefined, InvalidConfig> =>
  Effect.gen(function*() {
    const text = Redacted.isRedacted(url) ? Redacted.value(url) : url
    const parsed = URL.canParse(text) ? new URL(text) : undefined
    if (parsed === undefined) return undefined
    const parameters = parsed.searchParams
    const named = unsupported.filter((name) => parameters.has(name))
    if (named.length > 0) return yield* invalid(`${named.join(", ")}: not supported; use the \`ssl\` option instead`)
    const mode = parameters.get("sslmode")
    const root = parameters.get("sslrootcert")
    const cert = parameters.get("sslcert")
    const key = parameters.get("sslkey")
    if (mode === "disable" || (root === null && cert === null && key === null && mode !== "verify-ca")) {
      return undefined
    }
    if ((cert === null) !== (key === null)) return yield* invalid("sslcert and sslkey go together")
    return {
      ...(root === null || root === "system" ? {} : { ca: yield* readFile("sslrootcert", root) }),
      ...(cert === null || key === null
        ? {}
        : { cert: yield* readFile("sslcert", cert), key: yield* readFile("sslkey", key) }),
      // verify-ca: the chain is checked, the name is not.
      ...(mode === "verify-ca" ? { checkServerIdentity: () => undefined } : {})
    }
  })
