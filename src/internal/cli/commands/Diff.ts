/**
 * `langgraph-checkpoints diff [url] <thread> <a> <b>`: channel by channel,
 * what changed from checkpoint a to b (messages as appended, removed and
 * edited).
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type * as Values from "../../inspector/Values.ts"
import { databaseCommand, json } from "../DatabaseCommand.ts"
import * as Output from "../Output.ts"
import { fieldChange, messageLines, speaker, textOf } from "./Text.ts"

const { cyan, green, red, yellow } = Output.colors

const printChange = (change: Values.ChannelDiff) =>
  Effect.gen(function*() {
    const name = cyan(Output.clean(change.channel))
    switch (change.change) {
      case "added":
        return yield* Output.line(`${name}: ${green("added")} ${textOf(change.after, 200)}`)
      case "removed":
        return yield* Output.line(`${name}: ${red("removed")} ${textOf(change.before, 200)}`)
      case "changed":
        return yield* Output.line(`${name}: changed ${textOf(change.before, 100)} → ${textOf(change.after, 100)}`)
      case "messages":
        yield* Output.line(
          `${name}: ${change.appended.length} appended, ${change.removed.length} removed, ${change.edited.length} edited`
        )
        for (const message of change.appended) {
          for (const [i, line] of messageLines(message, 200).entries()) {
            yield* Output.line(green(`${i === 0 ? "  + " : "    "}${line}`))
          }
        }
        for (const message of change.removed) {
          for (const [i, line] of messageLines(message, 200).entries()) {
            yield* Output.line(red(`${i === 0 ? "  - " : "    "}${line}`))
          }
        }
        // An edit, field by field: what changed inside the message.
        for (const { after, fields } of change.edited) {
          for (const field of fields) {
            yield* Output.line(yellow(`  ~ ${speaker(after, true)}: ${fieldChange(field, 90)}`))
          }
        }
    }
  })

/**
 * The `diff` command.
 *
 * @since 0.1.0
 */
export const diff = databaseCommand("diff", {
  metavar: "[url] <thread> <a> <b>",
  names: ["<thread>", "<a>", "<b>"],
  flags: { json },
  access: "read",
  description: "Channel by channel, what changed from checkpoint a to b"
}, (input, { inspector, values: [thread_id, a, b] }) =>
  Effect.gen(function*() {
    const { channels } = yield* inspector.diff(thread_id!, a!, b!)
    if (input.json) return yield* Output.json(channels)
    if (channels.length === 0) return yield* Output.line("no channel differs")
    for (const change of channels) yield* printChange(change)
  }))
