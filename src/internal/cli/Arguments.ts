/**
 * What every command takes the same way: the database (a connection string
 * first, else `DATABASE_URL`) and its positional arguments. The errors that
 * decide the exit code live in `Errors.ts`.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { Argument } from "effect/cli"
import { existsSync, statSync } from "node:fs"
import { join } from "node:path"
import * as ConnectionString from "../ConnectionString.ts"
import * as Database from "./Database.ts"
import { UsageError } from "./Errors.ts"
import * as Output from "./Output.ts"

/** What a path on disk is to the command line: a PGlite database, another directory, or nothing. */
const onDisk = (path: string): "pglite" | "directory" | "none" => {
  try {
    if (!statSync(path).isDirectory()) return "none"
    // Every PostgreSQL data directory, PGlite's too, holds its version in PG_VERSION.
    return existsSync(join(path, "PG_VERSION")) ? "pglite" : "directory"
  } catch {
    return "none"
  }
}

/**
 * The connection string and the remaining arguments. A directory that
 * holds a PGlite database is taken as `pglite:<directory>`, prefix or not;
 * any other directory given where the database goes is explained, not
 * taken for a thread id.
 *
 * @since 0.1.0
 */
export const database = (
  command: string,
  args: ReadonlyArray<string>
): Effect.Effect<readonly [string, ReadonlyArray<string>], UsageError> =>
  Effect.suspend(() => {
    const first = args[0]
    if (first !== undefined && ConnectionString.looksLikeOne(first)) {
      return Effect.succeed([first, args.slice(1)] as const)
    }
    const found = first === undefined ? "none" : onDisk(first)
    if (found === "pglite") return Effect.succeed([`pglite:${first}`, args.slice(1)] as const)
    const url = process.env.DATABASE_URL
    if (url !== undefined && url !== "") return Effect.succeed([url, args] as const)
    return Effect.fail(
      new UsageError({
        command,
        detail: found === "directory"
          ? `no database: the directory "${Output.clean(first!)}" holds no PGlite database ` +
            `(a PGlite database is given as pglite:<directory>; this one has no PG_VERSION)`
          : "no database: give a connection string first (pglite:<directory>, postgres://…, cockroachdb://…), " +
            "or set DATABASE_URL"
      })
    )
  })

/** An argument as an error quotes it: a connection string in the wrong place with its credentials masked. */
const shown = (argument: string) =>
  ConnectionString.looksLikeOne(argument) ? ConnectionString.redact(argument) : argument

/**
 * A command's positional arguments: the database first when it is a
 * connection string, then the command's own (`metavar` says which).
 *
 * @since 0.1.0
 */
export const positional = (metavar: string) =>
  Argument.String("args").pipe(
    Argument.withMetavar(metavar),
    Argument.withDescription("The database first (pglite:<dir>, postgres://…, cockroachdb://…; default DATABASE_URL)"),
    Argument.variadic()
  )

/**
 * The database and the command's arguments, `names` of them (`[name]`:
 * optional); with `rest`, any number past the last.
 *
 * @since 0.1.0
 */
export const withArgs = (command: string, args: ReadonlyArray<string>, names: ReadonlyArray<string>, rest = false) =>
  database(command, args).pipe(Effect.flatMap(([url, values]) => {
    const required = names.filter((name) => !name.startsWith("["))
    if (values.length < required.length || (!rest && values.length > names.length)) {
      return Effect.fail(
        new UsageError({
          command,
          detail: values.length < required.length
            ? `missing ${required.slice(values.length).join(" ")}`
            : `unexpected argument "${Output.clean(shown(values[names.length]!))}"`
        })
      )
    }
    return Effect.succeed({ url, values })
  }))

/**
 * Runs a command's work with the database its arguments name.
 *
 * @since 0.1.0
 */
export const inDatabase =
  (command: string, args: ReadonlyArray<string>, access: Database.Access) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    database(command, args).pipe(Effect.flatMap(([url]) => Effect.provide(effect, Database.layer(url, access))))
