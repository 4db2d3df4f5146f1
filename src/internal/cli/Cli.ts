/**
 * `langgraph-checkpoints`: the inspector's commands, with `effect/cli`,
 * assembled. Each command is a file of its own in `commands/`, declared
 * over `DatabaseCommand`.
 *
 * Each command takes the database as its first argument when that argument
 * is a connection string (`pglite:<dir>`, `postgres://…`,
 * `cockroachdb://…`), else from `DATABASE_URL`. Reading commands never
 * change the database; destructive ones say what they would do with
 * `--dry-run`, ask on a terminal, and need `--yes` otherwise.
 *
 * @since 0.1.0
 */
import { Command } from "effect/cli"
import { copy } from "./commands/Copy.ts"
import { deleteCommand } from "./commands/Delete.ts"
import { deleteRuns } from "./commands/DeleteRuns.ts"
import { diff } from "./commands/Diff.ts"
import { exportCommand } from "./commands/Export.ts"
import { history } from "./commands/History.ts"
import { importCommand } from "./commands/Import.ts"
import { prune } from "./commands/Prune.ts"
import { retention } from "./commands/Retention.ts"
import { serve } from "./commands/Serve.ts"
import { show } from "./commands/Show.ts"
import { stats } from "./commands/Stats.ts"
import { threads } from "./commands/Threads.ts"
import { upgradeFormat } from "./commands/UpgradeFormat.ts"
import { upgradePglite } from "./commands/UpgradePglite.ts"
import { web } from "./commands/Web.ts"

/**
 * The command tree.
 *
 * @since 0.1.0
 */
export const root = Command.make("langgraph-checkpoints").pipe(
  Command.withDescription(
    "Inspect, export and clean LangGraph checkpoints: pglite:<dir>, postgres://… or cockroachdb://… (default DATABASE_URL)"
  ),
  Command.withSubcommands([
    threads,
    history,
    show,
    diff,
    exportCommand,
    importCommand,
    copy,
    prune,
    deleteCommand,
    deleteRuns,
    retention,
    stats,
    upgradeFormat,
    upgradePglite,
    web,
    serve
  ])
)
