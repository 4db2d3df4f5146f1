/**
 * The answers to `--version` and `--help` alone, printed exactly as
 * `effect/cli` prints them for the command tree in `Cli.ts`, without
 * loading it: loading the commands (Effect, LangChain's serializer, the
 * platform) takes most of a second, and these two answers need none of it.
 * `test/unit/help.test.ts` checks the text against what `effect/cli` prints,
 * with and without colours.
 *
 * @since 0.1.0
 */

/** The styles `effect/cli`'s formatter uses, on or off. */
const styles = (colors: boolean) => {
  const style = (code: number) => (text: string) => colors ? `\x1b[${code}m${text}\x1b[0m` : text
  return { bold: style(1), dim: style(2), green: style(32), cyan: style(36) }
}

/**
 * Whether `effect/cli` colours its output here: its `TerminalCapabilities`
 * read from the process (`TERM=dumb` and `NO_COLOR` turn colours off,
 * `FORCE_COLOR` on, else a terminal on stdout).
 */
const canColor = (): boolean => {
  const { NO_COLOR, FORCE_COLOR, TERM } = process.env
  if (TERM === "dumb" || (NO_COLOR !== undefined && NO_COLOR !== "")) return false
  const forcing = FORCE_COLOR !== undefined && FORCE_COLOR !== "" && FORCE_COLOR !== "0" &&
    FORCE_COLOR.toLowerCase() !== "false"
  return forcing || process.stdout.isTTY === true
}

const name = "langgraph-checkpoints"

/** The global flags `effect/cli` adds to every command: names, value, description. */
const globalFlags: ReadonlyArray<readonly [ReadonlyArray<string>, string | undefined, string]> = [
  [["--help", "-h"], undefined, "Show help information"],
  [["--version", "-v"], undefined, "Show version information"],
  [["--wizard"], undefined, "Start wizard mode for a command"],
  [
    ["--completions"],
    "<bash|zsh|fish|powershell|sh|pwsh>",
    "Print shell completion script (choices: bash, zsh, fish, powershell, sh, pwsh)"
  ],
  [
    ["--log-level"],
    "<all|trace|debug|info|warn|warning|error|fatal|none>",
    "Sets the minimum log level (choices: all, trace, debug, info, warn, warning, error, fatal, none)"
  ]
]

/** `Cli.ts`'s description and subcommands, in its order. */
const description =
  "Inspect, export and clean LangGraph checkpoints: pglite:<dir>, postgres://… or cockroachdb://… (default DATABASE_URL)"
const subcommands: ReadonlyArray<readonly [string, string]> = [
  ["threads", "One row per thread, newest activity first"],
  ["history", "A thread's checkpoints as a tree: forks as branches, subgraphs under their parent"],
  ["show", "A checkpoint (the latest by default): values, pending writes, next nodes, metadata"],
  ["diff", "Channel by channel, what changed from checkpoint a to b"],
  ["export", "Threads as a JSON Lines file: every namespace, the whole chain, values and writes, exact"],
  ["import", "Writes exported threads back (existing threads are refused unless --replace)"],
  ["copy", "Copies a whole thread (every namespace, the whole chain) to a new thread id"],
  ["prune", "Shrinks threads to their latest checkpoints (--keep-latest) or removes them (--delete)"],
  ["delete", "Removes whole threads"],
  ["delete-runs", "Removes the checkpoints the given runs wrote, in every thread"],
  ["retention", "Deletes inactive threads and trims long ones"],
  ["stats", "Rows and bytes per table, and what structural sharing saves; or where a thread's bytes are"],
  ["upgrade-format", "Raises the storage format level once every process runs this release (safe to repeat)"],
  [
    "upgrade-pglite",
    "Carries a PGlite directory an earlier release's engine wrote over to this release's (the old one is kept)"
  ],
  ["web", "Serves a local web page to browse threads, their history as a graph, states and diffs"],
  ["serve", "Serves graphs over LangGraph's HTTP API (the SDK, useStream, agent-chat-ui) on this database"]
]

/** `effect/cli`'s two-column table: the left column padded to its widest cell plus 4, at most `cap`. */
const table = (
  rows: ReadonlyArray<{ readonly left: string; readonly width: number; readonly right: string }>,
  cap = Infinity
) => {
  const column = Math.min(Math.max(...rows.map((row) => row.width)) + 4, cap)
  return rows.map((row) => `  ${row.left}${" ".repeat(Math.max(column - row.width, 1))}${row.right}`)
}

/**
 * The root help, as `langgraph-checkpoints --help` prints it.
 *
 * @since 0.1.0
 */
export const rootHelp = (colors: boolean = canColor()): string => {
  const { bold, cyan, dim, green } = styles(colors)
  return [
    bold("DESCRIPTION"),
    `  ${description}`,
    "",
    bold("USAGE"),
    `  ${cyan(`${name} <subcommand> [flags]`)}`,
    "",
    bold("GLOBAL FLAGS"),
    ...table(globalFlags.map(([names, value, right]) => ({
      left: names.map(green).join(", ") + (value === undefined ? "" : ` ${dim(value)}`),
      width: names.join(", ").length + (value === undefined ? 0 : value.length + 1),
      right
    }))),
    "",
    bold("SUBCOMMANDS"),
    ...table(subcommands.map(([command, right]) => ({ left: cyan(command), width: command.length, right })), 20)
  ].join("\n") + "\n"
}

/**
 * The version line, as `langgraph-checkpoints --version` prints it.
 *
 * @since 0.1.0
 */
export const versionLine = (version: string, colors: boolean = canColor()): string => {
  const { bold, dim } = styles(colors)
  return `${bold(name)} ${dim("v")}${bold(version)}\n`
}
