/**
 * `langgraph-checkpoints upgrade-format [url]`: raises the database's storage
 * format level, the last step of a rolling deploy (see Upgrading in the
 * README). Safe to repeat; `--dry-run` says where the database is and what
 * raising it would do.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { Flag } from "effect/cli"
import type { FormatReport } from "../../../CheckpointStorage.ts"
import { NEWEST_LEVEL } from "../../../FormatLevel.ts"
import { databaseCommand, json, migrate } from "../DatabaseCommand.ts"
import * as Output from "../Output.ts"

const describe = (report: FormatReport) =>
  `storage format level ${report.level}${
    report.raised === undefined
      ? ""
      : ` (raised by langgraph-checkpoint-effect ${
        Output.clean(report.raised.release)
      } at ${report.raised.at.toISOString()})`
  }; this release reads and writes levels up to ${report.supported}`

/**
 * The `upgrade-format` command.
 *
 * @since 0.1.0
 */
export const upgradeFormat = databaseCommand("upgrade-format", {
  metavar: "[url]",
  names: [],
  flags: {
    level: Flag.Int("level").pipe(
      Flag.withDescription(`The level to raise the database to (default ${NEWEST_LEVEL}, the newest)`),
      Flag.optional
    ),
    dryRun: Flag.Boolean("dry-run").pipe(
      Flag.withDefault(false),
      Flag.withDescription("Say where the database is; change nothing")
    ),
    json,
    migrate
  },
  access: (input) => input.dryRun ? "read" : input.migrate ? "migrate" : "write",
  description: "Raises the storage format level once every process runs this release (safe to repeat)"
}, (input, { storage }) =>
  Effect.gen(function*() {
    const before = yield* storage.formatLevel()
    const target = input.level._tag === "Some" ? input.level.value : before.supported
    if (input.dryRun) {
      if (input.json) return yield* Output.json({ ...before, target })
      yield* Output.line(describe(before))
      return yield* Output.line(
        before.level >= target ? `nothing to do for level ${target}` : `would raise it to level ${target}`
      )
    }
    const after = yield* storage.upgradeFormat(target)
    if (input.json) return yield* Output.json({ ...after, before: before.level })
    yield* Output.line(
      before.level >= after.level ? `already at level ${after.level}` : `raised ${before.level} → ${after.level}`
    )
    yield* Output.line(describe(after))
  }))
