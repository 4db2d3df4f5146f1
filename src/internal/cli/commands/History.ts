/**
 * `langgraph-checkpoints history [url] <thread>`: a thread's checkpoints as
 * a tree, forks as branches, each subgraph's namespace under its parent.
 *
 * @since 0.1.0
 */
import { Effect, Option } from "effect"
import { Flag } from "effect/cli"
import type { HistoryPage } from "../../inspector/Inspector.ts"
import * as Tree from "../../inspector/Tree.ts"
import { databaseCommand, json, ns } from "../DatabaseCommand.ts"
import { UsageError } from "../Errors.ts"
import * as Output from "../Output.ts"
import { short, textOf } from "./Text.ts"

const { bold, cyan, dim, green, magenta, red, yellow } = Output.colors

type Namespace = HistoryPage["namespaces"][number]

/** Where a subgraph's namespace hangs: its parent namespace and the checkpoint there that started it. */
const startedAt = ({ parent, startedAt }: Namespace) => {
  const under = `a subgraph under ${parent === "" || parent === null ? "the root" : Output.clean(parent)}`
  if (startedAt === null) return `(${under})`
  return `(${under}, started at checkpoint ${Output.clean(short(startedAt.checkpoint_id))} (step ${
    startedAt.step ?? "?"
  }))`
}

/** One namespace's checkpoints, as a tree drawn in text. */
const printNamespace = (group: Namespace) =>
  Effect.gen(function*() {
    const { name } = group
    const depth = name === "" ? 0 : name.split("|").length
    const indent = "  ".repeat(depth)
    if (name !== "") {
      yield* Output.line(`${indent.slice(2)}${bold(`namespace ${Output.clean(name)}`)} ${dim(startedAt(group))}`)
    }
    for (const { graph, row } of Tree.text(group.rows)) {
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
        entry.nodes.length > 0 ? `ran: ${Output.clean(entry.nodes.join(", "))}` : "",
        entry.preview !== "" ? `"${Output.clean(entry.preview)}"` : "",
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
  flags: {
    ns,
    json,
    limit: Flag.Int("limit").pipe(
      Flag.withDescription("At most this many checkpoints, newest first (default 1000; --json prints all)"),
      Flag.withDefault(1000)
    )
  },
  access: "read",
  description: "A thread's checkpoints as a tree: forks as branches, subgraphs under their parent"
}, (input, { inspector, values: [thread_id] }) =>
  Effect.gen(function*() {
    const checkpoint_ns = Option.getOrUndefined(input.ns)
    if (input.json) {
      return yield* Output.jsonStream(inspector.history(thread_id!, { checkpoint_ns }))
    }
    if (!Number.isSafeInteger(input.limit) || input.limit < 1) {
      return yield* new UsageError({
        command: "history",
        detail: `--limit ${input.limit}: give a positive whole number of checkpoints (default 1000)`
      })
    }
    // Laid out from the ids alone; only the checkpoints printed are read whole.
    const page = yield* inspector.historyPage(thread_id!, { checkpoint_ns, limit: input.limit })
    for (const group of page.namespaces) yield* printNamespace(group)
    if (page.total > input.limit) {
      yield* Output.note(dim(`(first ${input.limit} of ${page.total} checkpoints; more with --limit)`))
    }
  }))
