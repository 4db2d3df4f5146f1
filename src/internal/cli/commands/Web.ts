/**
 * `langgraph-checkpoints web [url]`: the inspector as a local web page.
 * Prints one line, the page's URL with its token, and serves until
 * interrupted (Ctrl-C). Read-only unless `--write`. A PGlite directory it
 * only reads is served from a snapshot (the holder's, or one it copies while
 * no application runs there), so the application can start while the page
 * is open; the page says so (`--write` is refused on a directory another
 * process holds, see `Database`).
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { Flag } from "effect/cli"
import * as Server from "../../inspector/web/Server.ts"
import * as Database from "../Database.ts"
import { databaseCommand } from "../DatabaseCommand.ts"
import { UsageError } from "../Errors.ts"
import * as Output from "../Output.ts"

/**
 * The `web` command.
 *
 * @since 0.1.0
 */
export const web = databaseCommand("web", {
  metavar: "[url]",
  names: [],
  flags: {
    host: Flag.String("host").pipe(
      Flag.withDescription("Listen on this address (default 127.0.0.1: this machine only)"),
      Flag.withDefault("127.0.0.1")
    ),
    port: Flag.Int("port").pipe(Flag.withDescription("Listen on this port (default: a free one)"), Flag.withDefault(0)),
    write: Flag.Boolean("write").pipe(
      Flag.withDefault(false),
      Flag.withDescription("Enable copy, prune and delete in the page (each confirmed there)")
    ),
    migrate: Flag.Boolean("migrate").pipe(
      Flag.withDefault(false),
      Flag.withDescription("With --write: allow migrating a database LangGraph's own saver wrote")
    )
  },
  access: (input) => !input.write ? "browse" : input.migrate ? "migrate" : "write",
  description: "Serves a local web page to browse threads, their history as a graph, states and diffs"
}, (input) =>
  Effect.gen(function*() {
    if (input.port < 0 || input.port > 65535) {
      return yield* new UsageError({ command: "web", detail: "--port must be from 0 to 65535" })
    }
    const { snapshot } = yield* Database.Source
    const running = yield* Server.start({ host: input.host, port: input.port, write: input.write, snapshot })
    yield* Output.line(Output.clean(running.url))
    return yield* Effect.never
  }).pipe(Effect.scoped))
