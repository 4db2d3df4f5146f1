/**
 * The codec's write side: a checkpoint as its row and its values' blobs and
 * pieces, a task's writes as rows, a `list` filter as JSON. Values go
 * through the serializer, arrays through structural sharing (`Sharing`),
 * metadata as JSON whatever serializer the values use (so `list` can filter
 * on it); with `Encryption`, every row is sealed for its place (`Sealing`).
 *
 * @since 0.1.0
 */
import { type Checkpoint, WRITES_IDX_MAP } from "@langchain/langgraph-checkpoint"
import { Effect } from "effect"
import type { Location } from "../Checkpoint.ts"
import { InvalidInput, SerializationFailed } from "../CheckpointError.ts"
import type { BlobRow, CheckpointRow, Piece, PutShared, WriteRow } from "../StorageDriver.ts"
import { keyOf, type Parts, utf8 } from "./Parts.ts"
import type * as Sealing from "./Sealing.ts"
import type * as Serializer from "./Serializer.ts"
import * as Sharing from "./Sharing.ts"

/**
 * A checkpoint's values as the driver stores them: blobs, the pieces their
 * shared lists add and the blobs holding the pieces they refer to (what
 * `StorageDriver.put` takes), and the lists laid out (what the thread's next
 * put extends, once stored).
 *
 * @since 0.1.0
 */
export interface Layout extends PutShared {
  readonly blobs: ReadonlyArray<BlobRow>
  readonly laid: ReadonlyArray<Sharing.Laid>
}

/**
 * A checkpoint encoded: its row, and its values laid out against what their
 * channels stored before.
 *
 * @since 0.1.0
 */
export interface EncodedCheckpoint {
  readonly row: CheckpointRow
  readonly layout: Layout
  /** The same values laid out against nothing, every piece sent: for when what `layout` extends went missing. */
  readonly afresh: () => Layout
}

/** A changed channel's value, encoded: the serializer's bytes, or an array's elements for a shared list. */
type EncodedValue =
  & { readonly channel: string; readonly version: string }
  & (
    | { readonly _tag: "serialized" } & Serializer.Serialized
    | Sharing.SharedValue
  )

/**
 * The writes of one batch with their positions, keeping only the last write
 * to each special channel: those share one storage key per task, and the
 * last one is the one that counts.
 */
const lastSpecialWrites = (writes: ReadonlyArray<readonly [string, unknown]>) =>
  writes.flatMap(([channel, value], index) =>
    Object.hasOwn(WRITES_IDX_MAP, channel) && writes.findLastIndex(([other]) => other === channel) !== index
      ? []
      : [[channel, value, index] as const]
  )

/**
 * The blobs of a checkpoint's values: shared lists laid out against what
 * their channels stored before (against nothing when `fresh`), sealed when
 * encryption is on.
 */
const layOut = (
  { sealing, sharing }: Parts,
  key: Sealing.ThreadKey | undefined,
  row: CheckpointRow,
  values: ReadonlyArray<EncodedValue>,
  fresh: boolean
): Layout => {
  const laid: Array<Sharing.Laid> = []
  const blobs = values.map((value): BlobRow => {
    if (value._tag === "serialized") {
      return { channel: value.channel, version: value.version, type: value.type, bytes: value.bytes }
    }
    const list = sharing.layOut(row, value.channel, value.version, value, { fresh, address: key?.address })
    laid.push(list)
    return list.blob
  })
  const pieces = Sharing.distinct(laid.flatMap(({ pieces }) => pieces))
  return {
    blobs: key === undefined
      ? blobs
      : blobs.map((blob) => sealing!.sealBlob(key, row.thread_id, row.checkpoint_ns, blob)),
    laid,
    pieces: key === undefined ? pieces : pieces.map((piece) => sealing!.sealPiece(key, piece)),
    requires: laid.flatMap(({ blob, requires }) => requires.map((version) => ({ channel: blob.channel, version })))
  }
}

/**
 * The write side over the codec's parts.
 *
 * @since 0.1.0
 */
export const make = (parts: Parts) => {
  const { json, sealing, serializer, sharing } = parts
  const dump = (operation: string, path: string, value: unknown) =>
    serializer.dump(value).pipe(Effect.mapError(({ cause }) => new SerializationFailed({ operation, path, cause })))

  /** An array (or a value framing one) as shared elements when sharing can hold it, else the serializer's bytes. */
  const encode = Effect.fnUntraced(function*(operation: string, path: string, value: unknown) {
    if (typeof value === "object" && value !== null) {
      const encoded = yield* Effect.try({
        try: () => sharing.encode(value),
        catch: (cause) => new SerializationFailed({ operation, path, cause })
      })
      if (encoded !== undefined) return encoded
    }
    return { _tag: "serialized", ...(yield* dump(operation, path, value)) } as const
  })

  /**
   * The changed channels' values. A channel left without a value gets none:
   * a version with no blob reads as no value (LangGraph's savers store an
   * `empty` row for it, which reads the same and costs a row per step).
   */
  const encodeValues = (checkpoint: Checkpoint, versions: Readonly<Record<string, string | number>>) =>
    Effect.forEach(Object.entries(versions), ([channel, version]) => {
      const value = Object.hasOwn(checkpoint.channel_values, channel) ? checkpoint.channel_values[channel] : undefined
      if (value === undefined) return Effect.succeed([])
      return encode("put", `channel_values.${channel}`, value).pipe(
        Effect.map((encoded): Array<EncodedValue> => [{ channel, version: String(version), ...encoded }])
      )
    }).pipe(Effect.map((values) => values.flat()))

  /** A checkpoint's row: its metadata as JSON, sealed but for the plaintext keys when encryption is on. */
  const encodeRow = (key: Sealing.ThreadKey | undefined, row: Omit<CheckpointRow, "metadata">, metadata: unknown) =>
    Effect.try({
      try: () => utf8.decode(json.dump(metadata)),
      catch: (cause) => new SerializationFailed({ operation: "put", path: "metadata", cause })
    }).pipe(Effect.map((text): CheckpointRow => {
      const plain: CheckpointRow = { ...row, metadata: text }
      return key === undefined ? plain : { ...row, metadata: sealing!.sealMetadata(key, plain, text) }
    }))

  /** A checkpoint put at `location` (whose `checkpoint_id` is its parent), its thread's key found once. */
  const encodeCheckpoint = Effect.fnUntraced(function*(
    location: Location,
    checkpoint: Checkpoint,
    metadata: unknown,
    versions: Readonly<Record<string, string | number>>
  ) {
    const values = yield* encodeValues(checkpoint, versions)
    const key = yield* keyOf(sealing, "put", location.thread_id)
    const row = yield* encodeRow(key, {
      thread_id: location.thread_id,
      checkpoint_ns: location.checkpoint_ns,
      checkpoint_id: checkpoint.id,
      parent_checkpoint_id: location.checkpoint_id,
      checkpoint: {
        v: checkpoint.v,
        id: checkpoint.id,
        ts: checkpoint.ts,
        channel_versions: checkpoint.channel_versions,
        versions_seen: checkpoint.versions_seen
      }
    }, metadata)
    const encoded: EncodedCheckpoint = {
      row,
      layout: layOut(parts, key, row, values, false),
      afresh: () => layOut(parts, key, row, values, true)
    }
    return encoded
  })

  /** A task's writes against a checkpoint as rows, with the pieces their shared lists need. */
  const encodeWrites = Effect.fnUntraced(function*(
    checkpoint: Sealing.CheckpointPlace,
    writes: ReadonlyArray<readonly [string, unknown]>,
    task: { readonly task_id: string; readonly task_path: string }
  ) {
    const key = yield* keyOf(sealing, "putWrites", checkpoint.thread_id)
    const encoded = yield* Effect.forEach(
      lastSpecialWrites(writes),
      ([channel, value, index]) =>
        encode("putWrites", `writes[${index}] (channel "${channel}")`, value).pipe(
          Effect.map((stored) => {
            const { bytes, pieces, type } = stored._tag === "shared"
              ? sharing.writeList(checkpoint.thread_id, stored, key?.address)
              : { ...stored, pieces: [] }
            const idx = Object.hasOwn(WRITES_IDX_MAP, channel) ? WRITES_IDX_MAP[channel]! : index
            const row: WriteRow = { ...task, idx, channel, type, bytes }
            return { row: key === undefined ? row : sealing!.sealWrite(key, checkpoint, row), pieces }
          })
        )
    )
    const pieces = Sharing.distinct(encoded.flatMap(({ pieces }): ReadonlyArray<Piece> => pieces))
    return {
      rows: encoded.map(({ row }) => row),
      pieces: key === undefined ? pieces : pieces.map((piece) => sealing!.sealPiece(key, piece))
    }
  })

  /** A `list` filter: each value as the JSON text metadata stores it as. */
  const encodeFilter = (filter: Readonly<Record<string, unknown>>) =>
    Effect.forEach(
      Object.entries(filter),
      ([name, value]) =>
        sealing !== undefined && !sealing.plaintextMetadata.has(name) ?
          Effect.fail(
            new InvalidInput({
              operation: "list",
              argument: "filter",
              detail: `metadata key "${name}" is encrypted, so it cannot be filtered on (filterable: ${
                [...sealing.plaintextMetadata].join(", ") || "none"
              }; see plaintextMetadata)`
            })
          ) :
          Effect.try({
            try: () => [name, utf8.decode(json.dump(value))] as const,
            catch: () => new InvalidInput({ operation: "list", argument: "filter", detail: `${name} is not JSON` })
          })
    )

  return { encodeCheckpoint, encodeWrites, encodeFilter }
}
