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

const { bold, cyan, dim, green, red, yellow } = Output.colors

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
    const heads = new Set(rows.filter((row) => row.head).map((row) => row.entry.checkpoint_id))
    const latest = rows[0]?.entry.checkpoint_id
    for (const { entry, graph } of Tree.text(rows)) {
      if (entry === undefined) {
        yield* Output.line(`${indent}${graph}`)
        continue
      }
      const parts = [
        yellow(short(entry.checkpoint_id)),
        entry.checkpoint_id === latest ? green("(head)") : heads.has(entry.checkpoint_id) ? cyan("(fork)") : "",
        `step ${entry.step ?? "?"}`,
        Output.clean(entry.source ?? ""),
        entry.next.length > 0 ? `next: ${Output.clean(entry.next.join(", "))}` : "",
        entry.interrupts.length > 0 ? red(`interrupt: ${textOf(entry.interrupts, 60)}`) : "",
        entry.changed.length > 0 ? dim(`changed: ${Output.cut(entry.changed.join(", "), 80)}`) : ""
      ]
      yield* Output.line(`${indent}${graph} ${parts.filter((part) => part !== "").join("  ")}`)
    }
  })

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
