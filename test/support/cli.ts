/**
 * The `langgraph-checkpoints` executable as a user runs it: the package is
 * built as `npm run build` builds it (compiled with its own configurations,
 * the executable bundled) into a temporary directory next to a copy of its
 * package.json (the binary reads its version from there) and a link to this
 * repository's node_modules, then run in child processes with
 * `node <dir>/dist/internal/bin/langgraph-checkpoints.js …`. A run never throws on a non-zero
 * exit: the result carries the code and both streams.
 */
import { execFile } from "node:child_process"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, expect } from "vitest"
import { buildPackage } from "../../harness/package.ts"
import { type Lines, spawnLines } from "./children.ts"

export interface CliResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
  /** How long the whole process took, in milliseconds. */
  readonly ms: number
}

export interface RunOptions {
  /** Added to the environment (`DATABASE_URL` is unset unless given here). */
  readonly env?: Readonly<Record<string, string>>
  readonly cwd?: string
  readonly timeout?: number
}

export interface BuiltCli {
  /** The temporary directory holding `dist`, `package.json` and the `node_modules` link. */
  readonly dir: string
  /** The executable package.json's `bin` names, in `dir`. */
  readonly main: string
  /** How long the build took, in milliseconds. */
  readonly buildMs: number
  readonly run: (args: ReadonlyArray<string>, options?: RunOptions) => Promise<CliResult>
  /** Starts a command that keeps running (`web`), its output read line by line. */
  readonly start: (args: ReadonlyArray<string>, options?: Omit<RunOptions, "timeout">) => Lines
  readonly dispose: () => Promise<void>
}

/** The environment of a run: this process's, without `DATABASE_URL`, without colour. */
const environment = (extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env }
  delete env.DATABASE_URL
  delete env.FORCE_COLOR
  return { ...env, NO_COLOR: "1", ...extra }
}

/** Builds the package into a temporary directory (see `buildPackage`); fails with the build's diagnostics when it does. */
export const buildCli = async (): Promise<BuiltCli> => {
  const dir = await mkdtemp(join(tmpdir(), "lce-cli-"))
  const started = performance.now()
  let main: string
  try {
    // As `npm run build` builds, beside package.json and node_modules: the executable package.json's `bin` names.
    main = await buildPackage(dir)
  } catch (cause) {
    const { code, stdout, stderr } = cause as { code?: unknown; stdout?: string; stderr?: string }
    await rm(dir, { recursive: true, force: true })
    throw new Error(
      `the build (tsc -p tsconfig.build.json, tsconfig.page.json, the bundle) failed (exit ${
        String(code)
      }): the CLI does not build\n${String(cause)}\n${stdout ?? ""}${stderr ?? ""}`,
      { cause }
    )
  }
  const buildMs = performance.now() - started

  const run = (args: ReadonlyArray<string>, options: RunOptions = {}): Promise<CliResult> =>
    new Promise((resolve, reject) => {
      const start = performance.now()
      const child = execFile(
        process.execPath,
        [main, ...args],
        {
          cwd: options.cwd ?? dir,
          env: environment(options.env),
          encoding: "utf8",
          maxBuffer: 256 * 1024 * 1024,
          timeout: options.timeout ?? 120_000
        },
        (error, stdout, stderr) => {
          const ms = performance.now() - start
          if (error === null) return resolve({ code: 0, stdout, stderr, ms })
          const { code, signal } = error as { code?: unknown; signal?: unknown }
          // A signal (a timeout, a crash) is not an exit code the CLI chose.
          if (typeof code !== "number") {
            return reject(
              new Error(
                `langgraph-checkpoints ${args.join(" ")}: no exit code (signal ${String(signal)}, ${
                  Math.round(ms)
                } ms)\n--- stderr ---\n${stderr}\n--- stdout ---\n${stdout}`,
                { cause: error }
              )
            )
          }
          resolve({ code, stdout, stderr, ms })
        }
      )
      // Standard input is a pipe, never a terminal: the CLI must not wait for an answer.
      child.stdin?.end()
    })

  const start = (args: ReadonlyArray<string>, options: Omit<RunOptions, "timeout"> = {}) =>
    spawnLines(process.execPath, [main, ...args], { cwd: options.cwd ?? dir, env: environment(options.env) })

  return { dir, main, buildMs, run, start, dispose: () => rm(dir, { recursive: true, force: true }) }
}

/** A result, for an assertion's message: the command's code and both streams. */
export const describeResult = (args: ReadonlyArray<string>, result: CliResult): string =>
  `langgraph-checkpoints ${args.join(" ")} → exit ${result.code} (${
    Math.round(result.ms)
  } ms)\n--- stderr ---\n${result.stderr}\n--- stdout ---\n${result.stdout}`

/**
 * The commands a test runs on the CLI it built: `run` (any outcome), `ok`
 * (must succeed) and `fails` (must exit with `code`, its stderr starting
 * `error: ` after any `warning: ` lines, and an error of exit 1 being one
 * line: no stack, no help).
 */
export const commands = (cli: () => BuiltCli) => {
  const run = (args: ReadonlyArray<string>, options?: RunOptions): Promise<CliResult> => cli().run(args, options)
  const ok = async (args: ReadonlyArray<string>, options?: RunOptions): Promise<CliResult> => {
    const result = await run(args, options)
    expect(result.code, describeResult(args, result)).toBe(0)
    return result
  }
  const fails = async (code: 1 | 2, args: ReadonlyArray<string>, options?: RunOptions): Promise<CliResult> => {
    const result = await run(args, options)
    expect(result.code, describeResult(args, result)).toBe(code)
    // What the library warned of on the way (a connection it retried) comes first, each a line of its own:
    // the CLI's `warning: `, or Effect's logger's in the server `serve` runs.
    const said = result.stderr.replace(/^((warning: |\[[\d:.]+\] WARN )[^\n]*\n)+/, "")
    expect(said, describeResult(args, result)).toMatch(/^error: /)
    if (code === 1) expect(said.trimEnd().split("\n"), describeResult(args, result)).toHaveLength(1)
    return result
  }
  return { run, ok, fails }
}

/**
 * The CLI of a test file: built before its tests, removed after; `built`
 * answers it, and `run`, `ok` and `fails` run commands on it.
 */
export const usingCli = () => {
  let cli: BuiltCli | undefined
  beforeAll(async () => {
    cli = await buildCli()
    console.log(`langgraph-checkpoints built in ${(cli.buildMs / 1000).toFixed(1)} s`)
  }, 180_000)
  afterAll(async () => {
    await cli?.dispose()
  })
  const built = () => cli!
  return { built, ...commands(built) }
}
