/**
 * `langgraph-checkpoints delete-runs [url] <run_id…>`: removes the
 * checkpoints the given runs wrote (metadata `run_id`), in every thread.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { databaseCommand, lifecycleAccess, lifecycleFlags } from "../DatabaseCommand.ts"
import { destructive } from "./Destructive.ts"

/**
 * The `delete-runs` command.
 *
 * @since 0.1.0
 */
export const deleteRuns = databaseCommand("delete-runs", {
  metavar: "[url] <run_id…>",
  names: ["<run_id>"],
  rest: true,
  flags: lifecycleFlags,
  access: lifecycleAccess,
  description: "Removes the checkpoints the given runs wrote, in every thread"
}, (input, { inspector, storage, values }) =>
  Effect.gen(function*() {
    const plan = yield* inspector.plan.deleteRuns(values)
    yield* destructive("delete-runs", input, plan, { all: storage.deleteForRuns(values) })
  }))
