/**
 * Operations as the lines of a reproduction script: what a failure report
 * shows, one readable line per step.
 *
 * @since 0.1.0
 */
import { names, type Operation, type Value } from "./Operations.ts"
import { tagged } from "./Values.ts"

const describeValue = (value: Value): string => {
  const text = value instanceof Uint8Array
    ? `Uint8Array(${value.length})`
    : tagged(value, "Large")
    ? `"x" x ${String(value.size)}`
    : tagged(value, "List")
    ? `list(${value.length}${value.without === null ? "" : ` without ${value.without}`})`
    : tagged(value, "Record")
    ? `record(${value.length}${value.without === null ? "" : ` without ${value.without}`})`
    : JSON.stringify(value)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

const describeWrites = (writes: ReadonlyArray<{ readonly channel: number; readonly value: Value }>) =>
  `[${writes.map((w) => `${names.writeChannels[w.channel]}: ${describeValue(w.value)}`).join(", ")}]`

/**
 * One operation as a line of a reproduction script.
 *
 * @since 0.1.0
 */
export const describe = (operation: Operation): string => {
  const at = (target: number | "last") => target === "last" ? "the last checkpoint" : `checkpoint #${target}`
  const thread = (i: number) => JSON.stringify(names.threads[i])
  const ns = (i: number) => JSON.stringify(names.namespaces[i])
  switch (operation._tag) {
    case "Put":
      return `put thread ${thread(operation.thread)} ns ${ns(operation.ns)} after ${operation.parent} ` +
        `set {${
          operation.changes.map((c) =>
            `${names.channels[c.channel]}: ${c.value === null ? "<none>" : describeValue(c.value)}`
          ).join(", ")
        }}` +
        (operation.metadata.length === 0
          ? ""
          : ` metadata {${
            operation.metadata.map((m) => `${names.metadataKeys[m.key]}: ${JSON.stringify(m.value)}`).join(", ")
          }}`)
    case "PutWrites":
      return `putWrites to ${at(operation.target)} task ${names.tasks[operation.task]} path ${
        JSON.stringify(names.taskPaths[operation.path])
      } ` +
        describeWrites(operation.writes) + (operation.again === null ? "" : `, then ${describeWrites(operation.again)}`)
    case "GetTuple":
      return `getTuple thread ${thread(operation.thread)} ns ${ns(operation.ns)} ${
        operation.target === "latest" ? "latest" : operation.target === "last" ? "last put" : `#${operation.target}`
      }`
    case "List":
      return `list thread ${operation.thread === "any" ? "any" : thread(operation.thread)} ns ${
        operation.ns === "any" ? "any" : ns(operation.ns)
      }` +
        `${operation.before === null ? "" : ` before ${at(operation.before)}`}${
          operation.limit === null ? "" : ` limit ${operation.limit}`
        }` +
        `${
          operation.filter === null
            ? ""
            : ` filter ${names.metadataKeys[operation.filter.key]}=${JSON.stringify(operation.filter.value)}`
        }`
    case "DeleteThread":
      return `deleteThread ${thread(operation.thread)}`
    case "DeltaHistory":
      return `getDeltaChannelHistory of ${at(operation.target)} for [${
        operation.channels.map((c) => names.channels[c]).join(", ")
      }]`
    case "CopyThread":
      return `copyThread ${thread(operation.thread)} to ${thread(operation.target)}${
        operation.replace ? " (replace)" : ""
      }`
    case "Prune":
      return `prune ${thread(operation.thread)} ${operation.strategy}`
    case "DeleteForRuns":
      return `deleteForRuns of the runs of ${operation.of.map(at).join(", ") || "no checkpoint"}${
        operation.unknown ? " and an unknown run" : ""
      }`
    case "Concurrent":
      return `at once, on ${at(operation.target)}: ` +
        operation.writers.map((w, i) => `task ${names.tasks[w.task]}#${i} writes ${describeWrites(w.writes)}`).join(
          "; "
        ) +
        (operation.siblings.length === 0 ? "" : `; ${operation.siblings.length} sibling checkpoint(s)`)
  }
}
