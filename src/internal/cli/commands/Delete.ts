/**
 * `langgraph-checkpoints delete [url] <thread…>`: removes whole threads.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { databaseCommand, lifecycleAccess, lifecycleFlags } from "../DatabaseCommand.ts"
import { destructive } from "./Destructive.ts"

/**
 * The `delete` command.
 *
 * @since 0.1.0
 */
export const deleteCommand = databaseCommand("delete", {
  metavar: "[url] <thread…>",
  names: ["<thread>"],
  rest: true,
  flags: lifecycleFlags,
  access: lifecycleAccess,
  description: "Removes whole threads"
}, (input, { inspector, storage, values }) =>
  Effect.gen(function*() {
    const plan = yield* inspector.plan.delete(values)
    yield* destructive("delete", input, plan, { each: (thread_id) => storage.deleteThread(thread_id) })
  }))
