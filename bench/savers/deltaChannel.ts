/**
 * A chat graph of 300 turns, `MessagesValue` against `MessagesDeltaValue`, on both
 * PostgreSQL savers: turns/s, latency and storage table by table.
 */
import { runDeltaChannelGraph, type SaverName, type SchemaName } from "../support/deltaChannel.ts"
import { kib, mib, ms, p50, percentile } from "../support/measure.ts"
import type { Run } from "./context.ts"

export const deltaChannel = async (context: Run): Promise<void> => {
  const { n, databases, sections, goals, measuredStorage, log } = context
  const turns = n(300)
  log(`DeltaChannel chat graph: ${turns} turns, MessagesValue and MessagesDeltaValue, both PostgreSQL savers`)
  const { messageBytes, runs } = await runDeltaChannelGraph(turns, databases)
  const run = (saver: SaverName, schema: SchemaName) => runs.find((r) => r.saver === saver && r.schema === schema)!
  sections.push([
    `### A chat graph of ${turns} turns: \`MessagesValue\` vs \`MessagesDeltaValue\` (\`DeltaChannel\`)`,
    "",
    "| saver | state schema | turns/s | p50 ms | p99 ms | storage MiB | KiB per turn |",
    "|---|---|---:|---:|---:|---:|---:|",
    ...runs.map((r) =>
      `| ${r.saver} | \`${r.schema}\` | ${r.turnsPerSecond.toFixed(1)} | ${ms(p50(r.samples))} | ${
        ms(percentile(r.samples, 99))
      } | ${mib(r.storageBytes)} | ${kib(r.storageBytes / turns)} |`
    ),
    "",
    `A StateGraph (\`StateSchema\` with \`messages\`, one agent node) invoked ${turns} times on one thread, ` +
    `each turn one human message in and one AI message out (${kib(messageBytes)} KiB of messages in all, ` +
    `${(messageBytes / turns).toFixed(0)} B a turn as JSON). The four runs take turns, one invoke each; each ` +
    "has a database of its own, and storage is every table in it after a VACUUM (indexes, TOAST, the thread " +
    "and migration tables included).",
    "",
    "Table by table (the per-turn overhead), bytes per turn with the table's indexes, and its rows:",
    "",
    `| table | ${
      runs.map((r) => `${r.saver === "EffectCheckpointSaver" ? "this library" : "official"}, \`${r.schema}\``).join(
        " | "
      )
    } |`,
    `|---|${runs.map(() => "---:").join("|")}|`,
    ...[...new Set(runs.flatMap((r) => r.tables.map((table) => table.name)))].sort().map((name) =>
      `| ${name} | ${
        runs.map((r) => {
          const table = r.tables.find((t) => t.name === name)
          return table === undefined
            ? ""
            : `${((table.tableBytes + table.indexBytes) / turns).toFixed(0)} B (${table.rows} rows)`
        }).join(" | ")
      } |`
    )
  ].join("\n"))
  const ours = (schema: SchemaName) => run("EffectCheckpointSaver", schema).storageBytes
  const theirs = run("PostgresSaver (official)", "MessagesDeltaValue").storageBytes
  goals.storage = {
    value: `stored ${mib(ours("MessagesValue"))} MiB (\`MessagesValue\`) and ${mib(ours("MessagesDeltaValue"))} MiB ` +
      `(\`MessagesDeltaValue\`) vs the official saver's ${mib(theirs)} MiB (\`MessagesDeltaValue\`)`,
    target: "both < official's",
    met: ours("MessagesValue") < theirs && ours("MessagesDeltaValue") < theirs
  }
  measuredStorage["chat graph, MessagesValue"] = ours("MessagesValue")
  measuredStorage["chat graph, MessagesDeltaValue"] = ours("MessagesDeltaValue")
}
