/**
 * The CLI run: the arguments parsed by `effect/cli` over Node's platform,
 * and the exit code set from the outcome (0 done; 1 an error, printed as
 * one line; 2 a usage error, printed with the command's help on a terminal,
 * else with where the help is). Loaded by
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
import { Cause, Effect, Exit, Layer, Logger } from "effect"
import { CliError, CliOutput, Command } from "effect/cli"
import { inspect } from "node:util"
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
 * Whether a refusal shows the whole help: on a terminal, where the person
 * reads it; elsewhere (a script's log, CI) one line says where it is, so
 * the refusal stays the last thing said.
 */
const helpShown = () => process.stdout.isTTY === true

/** Where the help of the command `path` names (from the executable's name) is, in one line. */
const helpPointer = (path: ReadonlyArray<string>) => `usage: ${path.join(" ")} --help\n`

/** effect/cli's presenter, with a refusal off a terminal as its errors and the pointer to the help. */
const presenter: CliOutput.Presenter = {
  present: (event) =>
    event._tag !== "InvalidInvocation" || helpShown()
      ? CliOutput.defaultPresenter.present(event)
      : Effect.sync(() =>
        process.stderr.write(`${formatter.formatErrors(event.errors)}\n${helpPointer(event.commandPath)}`)
      )
}

/** What the loggers of the library say (a retried connection, a retention warning), as the CLI's lines. */
const logger = Logger.make<unknown, void>(({ logLevel, message }) => {
  const text = (Array.isArray(message) ? message : [message])
    .map((part) => typeof part === "string" ? part : inspect(part, { depth: 4, breakLength: Infinity }))
    .join(" ")
  process.stderr.write(`${logLevel === "Warn" ? "warning" : logLevel.toLowerCase()}: ${oneLine(text)}\n`)
})

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
        // Usage: the one line, then the command's help (or where it is).
        return helpShown()
          ? Effect.sync(() => process.stderr.write(`error: ${oneLine(error)}\n\n`)).pipe(
            Effect.andThen(Command.runWith(root, { version })([error.command, "--help"]).pipe(Effect.ignore)),
            Effect.as(2)
          )
          : Effect.sync(() =>
            process.stderr.write(`error: ${oneLine(error)}\n${helpPointer(["langgraph-checkpoints", error.command])}`)
          ).pipe(
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
          CliOutput.layer(formatter),
          CliOutput.layerPresenter(presenter),
          Logger.layer([logger])
        )
      )
    )
  )
  NodeRuntime.runMain(program, { disableErrorReporting: true })
}
