/**
 * `langgraph-checkpoints prune [url] <thread…>`: shrinks threads to each
 * namespace's latest checkpoint and what reading it needs (`--keep-latest`,
 * see `lifecycle/Prune.ts`) or removes them (`--delete`). The dry run counts
 * what goes by the same plan.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { Flag } from "effect/cli"
import { databaseCommand, lifecycleAccess, lifecycleFlags } from "../DatabaseCommand.ts"
import { UsageError } from "../Errors.ts"
import { destructive } from "./Destructive.ts"

/**
 * The `prune` command.
 *
 * @since 0.1.0
 */
export const prune = databaseCommand("prune", {
  metavar: "[url] <thread…>",
  names: ["<thread>"],
  rest: true,
  flags: {
    keepLatest: Flag.Boolean("keep-latest").pipe(
      Flag.withDefault(false),
      Flag.withDescription(
        "Keep each namespace's latest checkpoint (and the ancestors its DeltaChannels are rebuilt from, if any)"
      )
    ),
    delete: Flag.Boolean("delete").pipe(Flag.withDefault(false), Flag.withDescription("Remove the threads")),
    ...lifecycleFlags
  },
  access: lifecycleAccess,
  description: "Shrinks threads to their latest checkpoints (--keep-latest) or removes them (--delete)"
}, (input, { inspector, storage, values }) =>
  Effect.gen(function*() {
    if (input.keepLatest === input.delete) {
      return yield* new UsageError({ command: "prune", detail: "give exactly one of --keep-latest and --delete" })
    }
    const plan = input.delete ? yield* inspector.plan.delete(values) : yield* inspector.plan.keepLatest(values, 1)
    const strategy = input.delete ? "delete" : "keep_latest"
    yield* destructive("prune", input, plan, { each: (thread_id) => storage.prune([thread_id], { strategy }) })
  }))
