/**
 * A thread's storage report as the rows both the CLI (`stats <thread>`)
 * and the web page's storage panel show: each section, each channel within
 * the values and the writes, the values' own rows apart from the pieces of
 * their shared lists. Browser-safe (types are its only import): the page's
 * script carries it inlined (`web/Assets.ts`).
 *
 * @since 0.4.0
 */
import type { StorageSection, ThreadStorage } from "../../Reports.ts"

/**
 * A row: what it counts (a section, or a channel within one) and its rows and bytes.
 *
 * @since 0.4.0
 */
export interface StorageRow {
  readonly what: string
  /** A channel within the section above it. */
  readonly channel: boolean
  readonly section: StorageSection
}

/**
 * The rows of a thread's report, in the order shown: checkpoints, the
 * channel values' own rows (the section without its shared pieces) and
 * each channel's, the shared list pieces, the writes and each channel's.
 *
 * @since 0.4.0
 */
export const storageRows = (report: ThreadStorage): ReadonlyArray<StorageRow> => {
  const { channel_values: values, checkpoints, pending_writes: writes } = report
  const section = (what: string, section: StorageSection): StorageRow => ({ what, channel: false, section })
  const channels = (sections: Readonly<Record<string, StorageSection>>) =>
    Object.entries(sections).map(([what, section]): StorageRow => ({ what, channel: true, section }))
  return [
    section("checkpoints", checkpoints),
    section("channel values", {
      count: values.count,
      bytes: values.bytes - values.shared_pieces.bytes,
      raw_bytes: values.raw_bytes - values.shared_pieces.raw_bytes
    }),
    ...channels(values.by_channel),
    section("shared list pieces", values.shared_pieces),
    section("writes", writes),
    ...channels(writes.by_channel)
  ]
}
