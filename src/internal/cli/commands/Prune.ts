/**
 * `langgraph-checkpoints prune [url] <thread…>` (or `--all`): shrinks
 * threads to each namespace's latest checkpoint and what reading it needs
 * (`--keep-latest`, see `lifecycle/Prune.ts`) or removes them (`--delete`).
 * The dry run counts what goes by the same plan.
 *
 * @since 0.1.0
 */
import { Effect, Stream } from "effect"
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
  metavar: "[url] <thread…> | --all",
  names: ["[thread]"],
  rest: true,
  flags: {
    keepLatest: Flag.Boolean("keep-latest").pipe(
      Flag.withDefault(false),
      Flag.withDescription(
        "Keep each namespace's latest checkpoint (and the ancestors its DeltaChannels are rebuilt from, if any)"
      )
    ),
    delete: Flag.Boolean("delete").pipe(Flag.withDefault(false), Flag.withDescription("Remove the threads")),
    all: Flag.Boolean("all").pipe(Flag.withDefault(false), Flag.withDescription("Every thread the database holds")),
    ...lifecycleFlags
  },
  access: lifecycleAccess,
  description: "Shrinks threads to their latest checkpoints (--keep-latest) or removes them (--delete)"
}, (input, { inspector, storage, values }) =>
  Effect.gen(function*() {
    if (input.keepLatest === input.delete) {
      return yield* new UsageError({ command: "prune", detail: "give exactly one of --keep-latest and --delete" })
    }
    if (input.all === (values.length > 0)) {
      return yield* new UsageError({
        command: "prune",
        detail: input.all ? "give thread ids or --all, not both" : "missing <thread> (or --all for every thread)"
      })
    }
    const ids = input.all
      ? yield* inspector.threads().pipe(Stream.map((thread) => thread.thread_id), Stream.runCollect)
      : values
    const plan = input.delete ? yield* inspector.plan.delete(ids) : yield* inspector.plan.keepLatest(ids, 1)
    const strategy = input.delete ? "delete" : "keep_latest"
    yield* destructive("prune", input, plan, { each: (thread_id) => storage.prune([thread_id], { strategy }) })
  }))
