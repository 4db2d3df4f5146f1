/**
 * `langgraph-checkpoints upgrade-pglite <dir>`: carries a PGlite directory
 * an older engine wrote (an earlier release's) over to this release's, the
 * old directory kept beside it (see `pglite/Upgrade.ts`). What an
 * `IncompatibleDirectory` error tells its reader to run. Safe to repeat.
 *
 * @since 0.4.0
 */
import { Effect } from "effect"
import { Argument, Command } from "effect/cli"
import * as Upgrade from "../../pglite/Upgrade.ts"
import { json } from "../DatabaseCommand.ts"
import * as Output from "../Output.ts"

/**
 * The `upgrade-pglite` command.
 *
 * @since 0.4.0
 */
export const upgradePglite = Command.make("upgrade-pglite", {
  directory: Argument.String("directory").pipe(
    Argument.withMetavar("<dir>"),
    Argument.withDescription("The PGlite data directory (pglite:<dir> or the directory itself)")
  ),
  json
}, (input) =>
  Effect.gen(function*() {
    const report = yield* Upgrade.upgrade(input.directory.replace(/^pglite:/, ""))
    if (input.json) return yield* Output.json(report)
    if (!report.upgraded) {
      return yield* Output.line(
        `${Output.clean(report.directory)} is already on PostgreSQL ${report.postgres}: nothing to do`
      )
    }
    const counts = Object.entries(report.rows).map(([table, rows]) => `${table} ${rows}`).join(", ")
    yield* Output.line(
      `upgraded ${Output.clean(report.directory)} from PostgreSQL ${report.from} to ${report.to} (${counts})`
    )
    yield* Output.line(
      `the old directory is kept at ${Output.clean(report.kept)}: remove it once you no longer need it`
    )
  })).pipe(
    Command.withDescription(
      "Carries a PGlite directory an earlier release's engine wrote over to this release's (the old one is kept)"
    )
  )
