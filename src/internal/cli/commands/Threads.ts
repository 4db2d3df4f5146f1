/**
 * `langgraph-checkpoints threads [url]`: one row per thread, newest
 * activity first.
 *
 * @since 0.1.0
 */
import { Effect, Option, Stream } from "effect"
import { Flag } from "effect/cli"
import { databaseCommand, json } from "../DatabaseCommand.ts"
import { UsageError } from "../Errors.ts"
import * as Output from "../Output.ts"
import { date } from "./Text.ts"

const { dim, red } = Output.colors

/**
 * The `threads` command.
 *
 * @since 0.1.0
 */
export const threads = databaseCommand("threads", {
  metavar: "[url]",
  names: [],
  flags: {
    limit: Flag.Int("limit").pipe(Flag.withDescription("At most this many threads (default 50)"), Flag.withDefault(50)),
    prefix: Flag.String("prefix").pipe(Flag.withDescription("Only threads whose id starts with this"), Flag.optional),
    json
  },
  access: "read",
  description: "One row per thread, newest activity first"
}, (input, { inspector }) =>
  Effect.gen(function*() {
    if (!Number.isSafeInteger(input.limit) || input.limit < 1) {
      return yield* new UsageError({
        command: "threads",
        detail: `--limit ${input.limit}: give a positive whole number of threads (default 50)`
      })
    }
    const found = yield* inspector.threads({
      limit: input.limit,
      prefix: Option.getOrUndefined(input.prefix)
    }).pipe(Stream.runCollect)
    if (input.json) return yield* Output.json(found)
    if (found.length === 0) return yield* Output.line("no threads")
    yield* Output.table(
      ["thread", "namespaces", "checkpoints", "step", "last activity", "interrupts"],
      found.map((thread) => [
        Output.clean(thread.thread_id),
        Output.cut(thread.namespaces.map((name) => name === "" ? "(root)" : name).join(", "), 60),
        String(thread.checkpoints),
        thread.latest_step === undefined ? "" : String(thread.latest_step),
        date(thread.last_activity),
        thread.interrupts > 0 ? red(String(thread.interrupts)) : ""
      ])
    )
    if (found.length === input.limit) yield* Output.note(dim(`(first ${input.limit}; more with --limit)`))
  }))
