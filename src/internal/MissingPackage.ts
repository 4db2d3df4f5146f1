/**
 * A package the program needs and cannot find: a driver's peer left out,
 * the server's optional peers not installed, a pruned install. Both the
 * saver's connection strings and the server's entry load such packages
 * only when asked to, and answer a missing one with an `InvalidConfig`
 * that names it and how to install it, not a raw module-not-found error.
 *
 * @since 0.4.0
 */
import { InvalidConfig } from "../CheckpointError.ts"

/**
 * The package a module-not-found error names (ESM: "Cannot find package
 * 'x'", CommonJS: "Cannot find module 'x'"), without a subpath; `undefined`
 * for any other error, or a relative or absolute path (a file of the
 * program, not a package to install).
 *
 * @since 0.4.0
 */
export const missingPackage = (cause: unknown): string | undefined => {
  if (!(cause instanceof Error) || !("code" in cause)) return undefined
  if (cause.code !== "ERR_MODULE_NOT_FOUND" && cause.code !== "MODULE_NOT_FOUND") return undefined
  const specifier = /Cannot find (?:package|module) '([^']+)'/.exec(cause.message)?.[1]
  if (specifier === undefined || specifier.startsWith(".") || specifier.startsWith("/")) return undefined
  // The package of a specifier: "@scope/name" or "name", without a subpath.
  return specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/")
}

/**
 * `cause` as the `InvalidConfig` of `operation` when it is a missing
 * package (`detail` says what needs it and how to install it), else
 * `undefined`: the caller rethrows what it does not explain.
 *
 * @since 0.4.0
 */
export const explainMissing = (
  cause: unknown,
  operation: string,
  detail: (missing: string) => string
): InvalidConfig | undefined => {
  const missing = missingPackage(cause)
  return missing === undefined ? undefined : new InvalidConfig({ operation, detail: detail(missing) })
}
