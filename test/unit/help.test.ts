/**
 * `--version` and `--help` are answered before the CLI loads (`Help.ts`):
 * their text must be what `effect/cli` prints for the command tree, with
 * and without colours. A command added or reworded in `Cli.ts` fails here
 * until `Help.ts` says the same.
 */
import { NodeFileSystem, NodePath, NodeStdio, NodeTerminal } from "@effect/platform-node-shared"
import { Effect, Layer } from "effect"
import { Command, TerminalCapabilities } from "effect/cli"
import { ChildProcessSpawner } from "effect/process"
import { TestConsole } from "effect/testing"
import { describe, expect, it } from "vitest"
import { root } from "../../src/internal/cli/Cli.ts"
import { rootHelp, versionLine } from "../../src/internal/cli/Help.ts"

/** What `effect/cli` prints for `args`, colours on or off. */
const printed = (args: ReadonlyArray<string>, canColor: boolean) =>
  Effect.runPromise(
    Command.runWith(root, { version: "1.2.3" })(args).pipe(
      Effect.andThen(TestConsole.logLines),
      Effect.map((lines) => lines.map((line) => `${String(line)}\n`).join("")),
      Effect.provideService(TerminalCapabilities.TerminalCapabilities, {
        canColor,
        canAnimate: false,
        canPrompt: false
      }),
      Effect.provide(Layer.mergeAll(
        TestConsole.layer,
        NodeFileSystem.layer,
        NodePath.layer,
        NodeStdio.layer,
        NodeTerminal.layer,
        Layer.succeed(ChildProcessSpawner.ChildProcessSpawner, ChildProcessSpawner.make(() => Effect.die("unused")))
      ))
    )
  )

describe("the answers main.ts gives without the CLI", () => {
  for (const colors of [false, true]) {
    it(`--help and --version are effect/cli's, colours ${colors ? "on" : "off"}`, async () => {
      expect(rootHelp(colors)).toBe(await printed(["--help"], colors))
      expect(rootHelp(colors)).toBe(await printed(["-h"], colors))
      expect(versionLine("1.2.3", colors)).toBe(await printed(["--version"], colors))
      expect(versionLine("1.2.3", colors)).toBe(await printed(["-v"], colors))
    })
  }
})
