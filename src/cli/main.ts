#!/usr/bin/env node
/**
 * The `langgraph-checkpoints` executable. Exit codes: 0 done; 1 an error,
 * printed as one line; 2 a usage error, printed with the command's help.
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
import { CliError, Command } from "effect/cli"
import { createRequire } from "node:module"
import { UsageError } from "./Arguments.ts"
import { root } from "./Cli.ts"

const { version } = createRequire(import.meta.url)("../../package.json") as { readonly version: string }

const args = process.argv.slice(2)

/** An error as one line: its message, without a stack or line breaks. */
const oneLine = (error: unknown) =>
  (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, " ").trim()

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
      Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeStdio.layer, NodeTerminal.layer)
    )
  )
)

NodeRuntime.runMain(program, { disableErrorReporting: true })
