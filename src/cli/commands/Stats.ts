/**
 * `langgraph-checkpoints stats [url]`: rows and bytes per table, and what
 * structural sharing saves.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { databaseCommand, json } from "../DatabaseCommand.ts"
import * as Output from "../Output.ts"

/**
 * The `stats` command.
 *
 * @since 0.1.0
 */
export const stats = databaseCommand("stats", {
  metavar: "[url]",
  names: [],
  flags: { json },
  access: "read",
  description: "Rows and bytes per table, and what structural sharing saves"
}, (input, { inspector }) =>
  Effect.gen(function*() {
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
