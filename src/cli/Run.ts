/**
 * The CLI run: the arguments parsed by `effect/cli` over Node's platform,
 * and the exit code set from the outcome (0 done; 1 an error, printed as
 * one line; 2 a usage error, printed with the command's help). Loaded by
 * `main.ts` only when a command needs it.
 *
 * @since 0.1.0
 */
import {
  NodeChildProcessSpawner,
  NodeFileSystem,
  NodePath,
  NodeRuntime,
  NodeStdio,
  NodeTerminal
} from "@effect/platform-node-shared"
import { Cause, Effect, Exit, Layer } from "effect"
import { CliError, CliOutput, Command } from "effect/cli"
import * as ConnectionString from "../ConnectionString.ts"
import { root } from "./Cli.ts"
import { UsageError } from "./Errors.ts"
import * as Output from "./Output.ts"

/**
 * An error as one line: its message, without a stack or line breaks, no
 * password in it, and escaped (errors quote ids and types read from the
 * database or a file).
 */
const oneLine = (error: unknown) =>
  Output.clean(
    ConnectionString.redactIn(error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, " ").trim()
  )

/** effect/cli's formatter, but its errors (which quote the argument they could not parse) never show a password. */
const formatter: CliOutput.Formatter = (() => {
  const plain = CliOutput.defaultFormatter()
  return {
    ...plain,
    formatError: (error) => ConnectionString.redactIn(plain.formatError(error)),
    formatErrors: (errors) => ConnectionString.redactIn(plain.formatErrors(errors))
  }
})()

/**
 * Runs the command `args` name and sets `process.exitCode`.
 *
 * @since 0.1.0
 */
export const run = (args: ReadonlyArray<string>, version: string): void => {
  const program = Command.runWith(root, { version })(args).pipe(
    Effect.exit,
    Effect.flatMap((exit) => {
      if (Exit.isSuccess(exit)) return Effect.succeed(0)
      const error = Cause.squash(exit.cause)
      if (error instanceof UsageError) {
        // Usage: the one line, then the command's help.
        return Effect.sync(() => process.stderr.write(`error: ${oneLine(error)}\n\n`)).pipe(
          Effect.andThen(Command.runWith(root, { version })([error.command, "--help"]).pipe(Effect.ignore)),
          Effect.as(2)
        )
      }
      // effect/cli has printed its own parse errors with the help.
      if (CliError.isCliError(error)) return Effect.succeed(2)
      return Effect.sync(() => process.stderr.write(`error: ${oneLine(error)}\n`)).pipe(Effect.as(1))
    }),
    Effect.flatMap((code) => Effect.sync(() => void (process.exitCode = code))),
    // What effect/cli needs of Node (what @effect/platform-node's NodeServices gathers).
    Effect.provide(
      Layer.provideMerge(
        NodeChildProcessSpawner.layer,
        Layer.mergeAll(
          NodeFileSystem.layer,
          NodePath.layer,
          NodeStdio.layer,
          NodeTerminal.layer,
          CliOutput.layer(formatter)
        )
      )
    )
  )
  NodeRuntime.runMain(program, { disableErrorReporting: true })
}
