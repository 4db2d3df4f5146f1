/**
 * What every command over a database shares: its positional arguments (the
 * database first when that is a connection string, see `Arguments`), the
 * database opened for what the command does, the inspector and the storage
 * over it, and the flags several commands take the same way.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { CheckpointStorage } from "../../CheckpointStorage.ts"
import { Inspector } from "../inspector/Inspector.ts"
import { inDatabase, positional, withArgs } from "./Arguments.ts"
import type * as Database from "./Database.ts"

/**
 * `--json`: print JSON instead of text.
 *
 * @since 0.1.0
 */
export const json = Flag.Boolean("json").pipe(
  Flag.withDefault(false),
  Flag.withDescription("Print JSON instead of text")
)

/**
 * `--ns`: only one checkpoint namespace.
 *
 * @since 0.1.0
 */
export const ns = Flag.String("ns").pipe(Flag.withDescription("Only this checkpoint namespace"), Flag.optional)

/**
 * `--migrate`: a writing command may migrate a database LangGraph's own
 * saver wrote.
 *
 * @since 0.1.0
 */
export const migrate = Flag.Boolean("migrate").pipe(
  Flag.withDefault(false),
  Flag.withDescription("Allow migrating a database LangGraph's own saver wrote to this library's schema")
)

/**
 * The flags of the commands that remove checkpoints: `--dry-run`, `--yes`
 * and `--migrate`.
 *
 * @since 0.1.0
 */
export const lifecycleFlags = {
  dryRun: Flag.Boolean("dry-run").pipe(
    Flag.withDefault(false),
    Flag.withDescription("Say what would be removed; change nothing")
  ),
  yes: Flag.Boolean("yes").pipe(
    Flag.withDefault(false),
    Flag.withAlias("y"),
    Flag.withDescription("Do not ask for confirmation")
  ),
  migrate
}

/**
 * How a removing command opens the database: read-only for a dry run.
 *
 * @since 0.1.0
 */
export const lifecycleAccess = (input: { readonly dryRun: boolean; readonly migrate: boolean }): Database.Access =>
  input.dryRun ? "read" : input.migrate ? "migrate" : "write"

/**
 * How a writing command opens the database.
 *
 * @since 0.1.0
 */
export const writeAccess = (input: { readonly migrate: boolean }): Database.Access =>
  input.migrate ? "migrate" : "write"

/**
 * What a command's work gets besides its flags.
 *
 * @since 0.1.0
 */
export interface Opened {
  /** The command's own positional arguments, after the database. */
  readonly values: ReadonlyArray<string>
  readonly inspector: Inspector["Service"]
  readonly storage: CheckpointStorage["Service"]
}

/**
 * A command over a database, declared.
 *
 * @since 0.1.0
 */
export interface DatabaseCommandSpec<Flags extends Command.Command.Config> {
  /** How the help names the positional arguments, e.g. `"[url] <thread>"`. */
  readonly metavar: string
  /** The command's own arguments (`[name]`: optional). */
  readonly names: ReadonlyArray<string>
  /** Any number of arguments past the last name. */
  readonly rest?: boolean | undefined
  readonly flags: Flags
  /** What the command does to the database, from its flags. */
  readonly access: Database.Access | ((input: Command.Command.Config.Infer<Flags>) => Database.Access)
  readonly description: string
}

/**
 * A command over the database its arguments name: opened for the command's
 * `access` before `work` runs with its flags, its own arguments, the
 * inspector and the storage (checked in that order, so a database that
 * cannot be opened is reported before a missing argument, as it always was).
 *
 * @since 0.1.0
 */
export const databaseCommand = <Name extends string, const Flags extends Command.Command.Config, E, R>(
  name: Name,
  spec: DatabaseCommandSpec<Flags>,
  work: (input: Command.Command.Config.Infer<Flags>, opened: Opened) => Effect.Effect<void, E, R>
) =>
  Command.make(name, { args: positional(spec.metavar), ...spec.flags }, (parsed) => {
    // `effect/cli` infers the config's value per key; spread over a generic `Flags` it cannot say so itself.
    const input = parsed as unknown as Command.Command.Config.Infer<Flags> & { readonly args: ReadonlyArray<string> }
    const access = typeof spec.access === "function" ? spec.access(input) : spec.access
    return Effect.gen(function*() {
      const { values } = yield* withArgs(name, input.args, spec.names, spec.rest)
      const opened: Opened = { values, inspector: yield* Inspector, storage: yield* CheckpointStorage }
      return yield* work(input, opened)
    }).pipe(inDatabase(name, input.args, access))
  }).pipe(Command.withDescription(spec.description))
