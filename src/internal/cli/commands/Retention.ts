/**
 * `langgraph-checkpoints retention [url]`: deletes threads inactive for
 * `--inactive-for` and trims the rest to `--keep-last` checkpoints per
 * namespace; a thread whose parent links loop is left as it is, and named
 * (`skipped: …`).
 *
 * @since 0.1.0
 */
import { Duration, Effect, Option } from "effect"
import { Flag } from "effect/cli"
import type { CheckpointError } from "../../../CheckpointError.ts"
import type { RetentionPlan } from "../../inspector/Inspector.ts"
import { databaseCommand, lifecycleAccess, lifecycleFlags } from "../DatabaseCommand.ts"
import { UsageError } from "../Errors.ts"
import * as Output from "../Output.ts"
import { destructive } from "./Destructive.ts"

type Skipped = RetentionPlan["skipped"][number]

/** `90d`, `12h`, `30m`, `2w`, `45s`; not 0, which would take every thread for inactive. */
const parseDuration = (text: string): Duration.Duration | undefined => {
  const match = /^(\d+)\s*(s|m|h|d|w)$/.exec(text.trim())
  if (match === null || Number(match[1]) === 0) return undefined
  const unit =
    { s: "seconds", m: "minutes", h: "hours", d: "days", w: "weeks" }[match[2] as "s" | "m" | "h" | "d" | "w"]
  return Duration.fromInputUnsafe(`${match[1]} ${unit}` as Duration.Input)
}

/** The policy the flags give, or the usage error they are. */
const policyOf = (input: { readonly inactiveFor: Option.Option<string>; readonly keepLast: Option.Option<number> }) => {
  const inactiveText = Option.getOrUndefined(input.inactiveFor)
  const inactiveFor = inactiveText === undefined ? undefined : parseDuration(inactiveText)
  const keepLast = Option.getOrUndefined(input.keepLast)
  const wrong = (detail: string) => Effect.fail(new UsageError({ command: "retention", detail }))
  if (inactiveText !== undefined && inactiveFor === undefined) {
    return wrong(`--inactive-for "${inactiveText}": expected e.g. 90d`)
  }
  if (inactiveFor === undefined && keepLast === undefined) return wrong("give --inactive-for, --keep-last or both")
  if (keepLast !== undefined && keepLast < 1) return wrong("--keep-last must be at least 1")
  return Effect.succeed({ inactiveFor, keepLast })
}

/**
 * The `retention` command.
 *
 * @since 0.1.0
 */
export const retention = databaseCommand("retention", {
  metavar: "[url]",
  names: [],
  flags: {
    inactiveFor: Flag.String("inactive-for").pipe(
      Flag.withDescription("Delete threads without activity for this long (90d, 12h, 2w…)"),
      Flag.optional
    ),
    keepLast: Flag.Int("keep-last").pipe(
      Flag.withDescription(
        "Keep this many newest checkpoints per namespace (and the ancestors their DeltaChannels are rebuilt from, if any)"
      ),
      Flag.optional
    ),
    ...lifecycleFlags
  },
  access: lifecycleAccess,
  description: "Deletes inactive threads and trims long ones"
}, (input, { inspector, storage }) =>
  Effect.gen(function*() {
    const { inactiveFor, keepLast } = yield* policyOf(input)
    const plan = yield* inspector.plan.retention({ inactiveFor, keepLast })
    const whole = new Set(plan.removals.filter((removal) => removal.whole).map((removal) => removal.thread_id))
    // Threads whose parent links loop are left as they are: named, planned or found by the run itself.
    let ran: ReadonlyArray<Skipped> = []
    yield* destructive<CheckpointError, never>("retention", input, plan.removals, {
      each: (thread_id) => whole.has(thread_id) ? storage.deleteThread(thread_id) : Effect.void,
      all: keepLast === undefined ? undefined : storage.applyRetention({ keepLast }).pipe(
        Effect.map((report) => void (ran = report.skipped))
      )
    })
    const planned = new Set(plan.skipped.map((skipped) => skipped.thread_id))
    yield* Effect.forEach(
      [...plan.skipped, ...ran.filter((skipped) => !planned.has(skipped.thread_id))],
      (skipped) => Output.line(`skipped: ${Output.clean(skipped.detail)}`),
      { discard: true }
    )
  }))
