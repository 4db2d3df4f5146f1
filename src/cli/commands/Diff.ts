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
import { textOf } from "./Text.ts"

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
          yield* Output.line(green(`  + ${Output.clean(message.role)}: ${Output.cut(message.text, 200)}`))
        }
        for (const message of change.removed) {
          yield* Output.line(red(`  - ${Output.clean(message.role)}: ${Output.cut(message.text, 200)}`))
        }
        for (const { after, before } of change.edited) {
          yield* Output.line(
            yellow(`  ~ ${Output.clean(after.role)}: ${Output.cut(before.text, 90)} → ${Output.cut(after.text, 90)}`)
          )
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
