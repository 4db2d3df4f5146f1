/**
 * The codec between the storage service and its drivers: decoded values on
 * one side, rows and bytes on the other. One pipeline every driver shares,
 * as effect's `MessageStorage.make` sits over `makeEncoded`; `make` only
 * composes its rooms:
 *
 * - `Parts`: the serializer, JSON, structural sharing (`Sharing`) and, with
 *   `Encryption` provided, sealing (`Sealing`), built once;
 * - `Encode`: checkpoints, writes, `list` filters and resealed threads as
 *   rows;
 * - `Reseal`: a whole thread's rows sealed for another place;
 * - `Open`: read rows opened (unsealed) before anything else looks at them;
 * - `Decode`: opened rows back to values under safe revival (`Revival`);
 * - `Report`: what a read left inert or read without a seal, on the span and
 *   in the metrics.
 *
 * @since 0.1.0
 */
import type { Checkpoint } from "@langchain/langgraph-checkpoint"
import { Effect } from "effect"
import type { CheckpointTuple, DeltaChannelHistory, Location } from "../../Checkpoint.ts"
import {
  CorruptedCheckpoint,
  type IncompatibleFormat,
  InvalidConfig,
  type InvalidInput,
  type SerializationFailed
} from "../../CheckpointError.ts"
import type { CheckpointRow, Piece, StoredCheckpoint, ThreadRows, WriteRow } from "../../StorageDriver.ts"
import * as Decode from "./Decode.ts"
import * as Encode from "./Encode.ts"
import * as Open from "./Open.ts"
import * as Parts from "./Parts.ts"
import type * as Sealing from "./Sealing.ts"
import type * as Walks from "./Walks.ts"

export type { EncodedCheckpoint, Layout } from "./Encode.ts"
export { NotHeld } from "./Parts.ts"

/**
 * The codec of one storage service: what `CheckpointStorage` asks of it,
 * each member one step of an operation. Values in, rows out on the write
 * side (`encode*`, then `remember` once stored); rows in, values out on the
 * read side (`decodeTuple`, `deltaHistory`), with what the thread's next
 * step needs remembered in between. A read that named what this process
 * holds (`knownPieces`, `knownToWalk`) and finds it gone fails as
 * `NotHeld`, for the service to read again naming nothing.
 *
 * @since 0.1.0
 */
export interface Codec {
  /** Whether rows are sealed (`Encryption` was provided). */
  readonly encrypted: boolean
  /** Metadata keys stored in plain text, which `list` can filter on (`undefined` without encryption: all). */
  readonly plaintextMetadata: ReadonlySet<string> | undefined
  /** A checkpoint put at `location` (whose `checkpoint_id` is its parent) as its row and its values' layout. */
  readonly encodeCheckpoint: (
    location: Location,
    checkpoint: Checkpoint,
    metadata: unknown,
    versions: Readonly<Record<string, string | number>>
  ) => Effect.Effect<Encode.EncodedCheckpoint, SerializationFailed | InvalidConfig>
  /** Records the lists a stored checkpoint laid out: what its thread's next put extends. */
  readonly remember: (row: CheckpointRow, layout: Encode.Layout) => void
  /** A task's writes against a checkpoint as rows, with the pieces their shared lists add. */
  readonly encodeWrites: (
    checkpoint: Sealing.CheckpointPlace,
    writes: ReadonlyArray<readonly [string, unknown]>,
    task: { readonly task_id: string; readonly task_path: string }
  ) => Effect.Effect<
    { readonly rows: ReadonlyArray<WriteRow>; readonly pieces: ReadonlyArray<Piece> },
    SerializationFailed | InvalidConfig
  >
  /** A `list` filter: each value as the JSON text metadata stores it as. */
  readonly encodeFilter: (
    filter: Readonly<Record<string, unknown>>
  ) => Effect.Effect<Array<readonly [string, string]>, InvalidInput>
  /** The hashes (back to back) of the pieces this process holds for a namespace: what a read need not fetch. */
  readonly knownPieces: (location: { readonly thread_id: string; readonly checkpoint_ns: string }) => Uint8Array
  /**
   * Where a stored checkpoint's pending sends are to be read before it is
   * decoded (the writes of `TASKS` there): its parent, for a checkpoint
   * older than LangGraph's format 4, which kept them there; `undefined`
   * for any other.
   */
  readonly sendsFrom: (stored: StoredCheckpoint) => Sealing.CheckpointPlace | undefined
  /**
   * A stored checkpoint as LangGraph's tuple (`remember`: keep what the
   * thread's next put extends; `recognize`: and its lists' items, for a read
   * of the latest checkpoint; `named`: the `knownPieces` the read named;
   * `sends`: the writes read where `sendsFrom` said).
   */
  readonly decodeTuple: (
    stored: StoredCheckpoint,
    options: {
      readonly remember: boolean
      readonly recognize?: boolean | undefined
      readonly named?: Uint8Array | undefined
      readonly sends?: ReadonlyArray<WriteRow> | undefined
    }
  ) => Effect.Effect<CheckpointTuple, CorruptedCheckpoint | IncompatibleFormat | Parts.NotHeld>
  /** What a delta-history walk of a namespace need not fetch: seeds this process holds, pieces its last walk read. */
  readonly knownToWalk: (
    location: { readonly thread_id: string; readonly checkpoint_ns: string }
  ) => Walks.Known
  /**
   * Each wanted channel's writes along an ancestor chain (nearest first) back to its stored value, the seed.
   * `NotHeld` when a seed or piece the walk `named` (see `knownToWalk`) is no longer held.
   */
  readonly deltaHistory: (
    chain: ReadonlyArray<StoredCheckpoint>,
    wanted: ReadonlyArray<string>,
    named: Walks.Known
  ) => Effect.Effect<Record<string, DeltaChannelHistory>, CorruptedCheckpoint | IncompatibleFormat | Parts.NotHeld>
  /** A thread's rows for `target`: a copy, or the same thread under its current key. */
  readonly reseal: (
    operation: string,
    rows: ThreadRows,
    target: string
  ) => Effect.Effect<ThreadRows, InvalidConfig | CorruptedCheckpoint>
  /** Whether a thread's rows are all sealed under its current key (always, without encryption). */
  readonly isCurrent: (rows: ThreadRows) => boolean
}

/**
 * The codec of one storage service, over the `Serializer`,
 * `Sharing.Enabled` and (optional) `Encryption` in context.
 *
 * **When to use**
 *
 * `CheckpointStorage.make` builds one per service; call it yourself only to
 * encode or decode rows outside the service (a tool reading a driver's rows
 * as values, say).
 *
 * **Details**
 *
 * Writing: values through the serializer, arrays through structural sharing
 * (`Sharing`), metadata as JSON whatever serializer the values use, so
 * `list` can filter on it; with `Encryption`, rows sealed for their place
 * (`Sealing`). Reading: rows opened first, shared lists reassembled from
 * their pieces, then safe revival (`Revival`): a record-shaped value that is
 * not allowed stays inert data, counted on the operation's span
 * (`checkpoint.inert_records` events) and in `Metrics.inertRecords`, and never
 * fails a read.
 *
 * **Gotchas**
 *
 * A codec remembers, per process, what its threads' lists were and up to
 * 64 MiB of their pieces: `put` extends those lists and `getTuple` leaves
 * those pieces unfetched. It is correct without that memory (a list is laid
 * out afresh when its base went missing, a read runs again fetching every
 * piece), only slower; so share one codec per storage, as the service does.
 *
 * @since 0.1.0
 */
export const make: (format: Parts.Parts["format"]) => Effect.Effect<Codec> = Effect.fnUntraced(function*(
  format: Parts.Parts["format"]
) {
  const parts = yield* Parts.make(format)
  const { sealing, sharing } = parts
  const encode = Encode.make(parts)
  const decode = Decode.make(parts, Open.make(parts))
  return {
    encrypted: sealing !== undefined,
    plaintextMetadata: sealing?.plaintextMetadata,
    ...encode,
    remember: (row, layout) => sharing.stored(row, layout.laid),
    knownPieces: sharing.knownPieces,
    ...decode,
    reseal: reseal(sealing),
    isCurrent: (rows) => sealing?.isCurrent(rows) ?? true
  }
})

/**
 * A whole thread's rows sealed anew: for a copy under another thread id (a
 * seal binds a row to its thread), or the same thread under its current key
 * (`reencrypt`). Without encryption only the thread id changes.
 */
const reseal = (sealing: Sealing.Sealing | undefined) =>
  Effect.fnUntraced(function*(operation: string, rows: ThreadRows, target: string) {
    if (sealing === undefined) {
      return { ...rows, thread_id: target, checkpoints: rows.checkpoints.map((row) => ({ ...row, thread_id: target })) }
    }
    const key = Parts.keyOf(sealing, operation, target)
    if (key instanceof InvalidConfig) return yield* key
    const resealed = sealing.reseal(rows, target)
    return typeof resealed === "string"
      ? yield* new CorruptedCheckpoint({
        thread_id: rows.thread_id,
        checkpoint_ns: "",
        checkpoint_id: "",
        detail: resealed
      })
      : resealed
  })
