/**
 * `langgraph-checkpoints stats [url] [thread]`: rows and bytes per table,
 * and what structural sharing saves; given a thread, where its bytes are
 * (`CheckpointStorage.threadStorage`): checkpoints, channel values by
 * channel and the pieces of shared lists, writes by channel.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type { ThreadStorage } from "../../../CheckpointStorage.ts"
import { storageRows } from "../../inspector/StorageRows.ts"
import { databaseCommand, json } from "../DatabaseCommand.ts"
import * as Output from "../Output.ts"

/**
 * The `stats` command.
 *
 * @since 0.1.0
 */
export const stats = databaseCommand("stats", {
  metavar: "[url] [thread]",
  names: ["[thread]"],
  flags: { json },
  access: "read",
  description: "Rows and bytes per table, and what structural sharing saves; or where a thread's bytes are"
}, (input, { inspector, storage, values }) =>
  Effect.gen(function*() {
    const thread = values[0]
    if (thread !== undefined) return yield* threadReport(yield* storage.threadStorage(thread), input.json)
    const found = yield* inspector.stats
    if (input.json) return yield* Output.json(found)
    const disk = (name: string) => found.onDisk?.[name] === undefined ? "" : Output.bytes(found.onDisk[name]!)
    yield* Output.table(["table", "rows", "stored", "on disk"], [
      ["threads", String(found.threads), "", disk("checkpoint_threads")],
      ["checkpoints", String(found.checkpoints), Output.bytes(found.stored.checkpoints), disk("checkpoints")],
      ["blobs", String(found.blobs), Output.bytes(found.stored.blobs), disk("checkpoint_blobs")],
      ["writes", String(found.writes), Output.bytes(found.stored.writes), disk("checkpoint_writes")],
      ["pieces", String(found.pieces), Output.bytes(found.stored.pieces), disk("checkpoint_pieces")]
    ])
    if (found.sharing !== undefined) {
      yield* Output.line(
        `structural sharing: shared lists take ${Output.bytes(found.sharing.stored)} where whole values would take ~${
          Output.bytes(found.sharing.whole)
        } (${(found.sharing.whole / Math.max(1, found.sharing.stored)).toFixed(1)}× less)`
      )
    }
  }))

/** A thread's storage report: one row per section, then one per channel, largest first. */
const threadReport = (report: ThreadStorage, asJson: boolean) => {
  if (asJson) return Output.json(report)
  return Output.table([`thread ${Output.clean(report.thread_id)}`, "rows", "stored", "uncompressed"], [
    ...storageRows(report).map(({ channel, section, what }) => [
      channel ? `  ${Output.clean(what)}` : what,
      String(section.count),
      Output.bytes(section.bytes),
      Output.bytes(section.raw_bytes)
    ]),
    ["total", "", Output.bytes(report.total_bytes), Output.bytes(report.total_raw_bytes)]
  ])
}
