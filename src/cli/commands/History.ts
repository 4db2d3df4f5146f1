/**
 * `langgraph-checkpoints history [url] <thread>`: a thread's checkpoints as
 * a tree, forks as branches, each subgraph's namespace under its parent.
 *
 * @since 0.1.0
 */
import { Effect, Option, Stream } from "effect"
import type { HistoryEntry } from "../../inspector/Inspector.ts"
import * as Tree from "../../inspector/Tree.ts"
import { databaseCommand, json, ns } from "../DatabaseCommand.ts"
import * as Output from "../Output.ts"
import { short, textOf } from "./Text.ts"

const { bold, cyan, dim, green, magenta, red, yellow } = Output.colors

/** A namespace's parent: `a:1|b:2` is under `a:1`, `a:1` under the root. */
const parentNamespace = (name: string) => name.includes("|") ? name.slice(0, name.lastIndexOf("|")) : ""

/** One namespace's checkpoints, as a tree drawn in text. */
const printNamespace = (name: string, entries: ReadonlyArray<HistoryEntry>) =>
  Effect.gen(function*() {
    const depth = name === "" ? 0 : name.split("|").length
    const indent = "  ".repeat(depth)
    if (name !== "") {
      yield* Output.line(
        `${indent.slice(2)}${bold(`namespace ${Output.clean(name)}`)} ${
          dim(`(a subgraph under ${parentNamespace(name) === "" ? "the root" : Output.clean(parentNamespace(name))})`)
        }`
      )
    }
    const rows = Tree.layout(
      entries.filter((entry) => entry.checkpoint_ns === name),
      (entry) => entry.checkpoint_id,
      (entry) => entry.parent_checkpoint_id
    )
    for (const { graph, row } of Tree.text(rows)) {
      if (row === undefined) {
        yield* Output.line(graph === "" ? "" : `${indent}${graph}`)
        continue
      }
      const { entry } = row
      const parts = [
        yellow(short(entry.checkpoint_id)),
        ...row.labels.map((label) => labelColor[label](`(${label})`)),
        `step ${entry.step ?? "?"}`,
        Output.clean(entry.source ?? ""),
        entry.next.length > 0 ? `next: ${Output.clean(entry.next.join(", "))}` : "",
        entry.interrupts.length > 0 ? red(`interrupt: ${textOf(entry.interrupts, 60)}`) : "",
        entry.changed.length > 0 ? dim(`changed: ${Output.cut(entry.changed.join(", "), 80)}`) : "",
        row.overflow && entry.parent_checkpoint_id !== undefined
          ? dim(`(no lane of its own: joins ${Output.clean(short(entry.parent_checkpoint_id))} below)`)
          : "",
        row.folded > 0 ? dim(`+${row.folded} more branches join here`) : ""
      ]
      yield* Output.line(`${indent}${graph} ${parts.filter((part) => part !== "").join("  ")}`)
    }
  })

const labelColor: Record<Tree.Label, (text: string) => string> = {
  head: green,
  branch: cyan,
  "fork point": magenta,
  root: dim
}

/**
 * The `history` command.
 *
 * @since 0.1.0
 */
export const history = databaseCommand("history", {
  metavar: "[url] <thread>",
  names: ["<thread>"],
  flags: { ns, json },
  access: "read",
  description: "A thread's checkpoints as a tree: forks as branches, subgraphs under their parent"
}, (input, { inspector, values: [thread_id] }) =>
  Effect.gen(function*() {
    const entries = yield* inspector.history(thread_id!, { checkpoint_ns: Option.getOrUndefined(input.ns) }).pipe(
      Stream.runCollect
    )
    if (input.json) return yield* Output.json(entries)
    const namespaces = [...new Set(entries.map((entry) => entry.checkpoint_ns))].sort()
    for (const name of namespaces) yield* printNamespace(name, entries)
  }))
