/**
 * `langgraph-checkpoints show [url] <thread> [checkpoint]`: a checkpoint
 * (the latest by default) made readable: its values, pending writes, next
 * nodes, interrupts and metadata.
 *
 * @since 0.1.0
 */
import { Effect, Option } from "effect"
import { Flag } from "effect/cli"
import type { Shown } from "../../inspector/Inspector.ts"
import * as Values from "../../inspector/Values.ts"
import { databaseCommand, json, ns } from "../DatabaseCommand.ts"
import * as Output from "../Output.ts"
import { messageLines, short, textOf } from "./Text.ts"

const { bold, cyan, dim, red, yellow } = Output.colors

const printChannels = (channelValues: Record<string, unknown>, max: number | undefined, metadata: boolean) =>
  Effect.gen(function*() {
    yield* Output.line(bold("channels"))
    for (const [channel, value] of Object.entries(channelValues).sort(([a], [b]) => a.localeCompare(b))) {
      const messages = Values.asMessages(value)
      if (messages === undefined) {
        yield* Output.line(`  ${cyan(Output.clean(channel))}: ${textOf(value, max)}`)
        continue
      }
      yield* Output.line(`  ${cyan(Output.clean(channel))}: ${messages.length} messages`)
      for (const message of messages) {
        const [first, ...rest] = messageLines(message, max, { metadata, style: bold })
        yield* Output.line(`    ${first}`)
        for (const detail of rest) yield* Output.line(`    ${dim(detail)}`)
      }
    }
  })

const printShown = (
  thread_id: string,
  { interrupts, next, tuple }: Shown,
  max: number | undefined,
  messageMetadata: boolean
) =>
  Effect.gen(function*() {
    const ns = tuple.config.configurable?.checkpoint_ns ?? ""
    const metadata: Record<string, unknown> = tuple.metadata ?? {}
    yield* Output.line(
      `${bold("thread")} ${Output.clean(thread_id)}  ${bold("checkpoint")} ${
        yellow(Output.clean(tuple.checkpoint.id))
      }${ns === "" ? "" : `  ${bold("namespace")} ${Output.clean(ns)}`}`
    )
    yield* Output.line(
      `step ${String(metadata.step ?? "?")}  source ${Output.clean(String(metadata.source ?? "?"))}  ${
        Output.clean(String(tuple.checkpoint.ts))
      }${
        tuple.parentConfig?.configurable?.checkpoint_id === undefined
          ? ""
          : `  parent ${short(String(tuple.parentConfig.configurable.checkpoint_id))}`
      }`
    )
    if (next.length > 0) yield* Output.line(`${bold("next")}: ${Output.clean(next.join(", "))}`)
    for (const interrupt of interrupts) yield* Output.line(red(`${bold("interrupt")}: ${textOf(interrupt, max)}`))
    yield* printChannels(tuple.checkpoint.channel_values, max, messageMetadata)
    const writes = tuple.pendingWrites ?? []
    if (writes.length > 0) {
      yield* Output.line(bold("pending writes"))
      for (const [task, channel, value] of writes) {
        yield* Output.line(`  ${dim(short(task))} ${cyan(Output.clean(channel))}: ${textOf(value, max)}`)
      }
    }
    yield* Output.line(`${bold("metadata")}: ${textOf(metadata, max)}`)
  })

/**
 * The `show` command.
 *
 * @since 0.1.0
 */
export const show = databaseCommand("show", {
  metavar: "[url] <thread> [checkpoint]",
  names: ["<thread>", "[checkpoint]"],
  flags: {
    ns,
    full: Flag.Boolean("full").pipe(Flag.withDefault(false), Flag.withDescription("Do not cut long values")),
    metadata: Flag.Boolean("metadata").pipe(
      Flag.withDefault(false),
      Flag.withDescription("Show each message's usage, response metadata and additional kwargs")
    ),
    json
  },
  access: "read",
  description: "A checkpoint (the latest by default): values, pending writes, next nodes, metadata"
}, (input, { inspector, values: [thread_id, ref] }) =>
  Effect.gen(function*() {
    const shown = yield* inspector.checkpoint(thread_id!, ref, { checkpoint_ns: Option.getOrUndefined(input.ns) })
    if (input.json) {
      return yield* Output.json({
        // Each message whole, in LangChain's serialized form: what `load` revives.
        ...Values.toJson(shown.tuple) as object,
        next: shown.next,
        interrupts: Values.toJson(shown.interrupts)
      })
    }
    yield* printShown(thread_id!, shown, input.full ? undefined : 200, input.metadata)
  }))
