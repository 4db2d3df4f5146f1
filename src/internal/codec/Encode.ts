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
import type { Location } from "../../Checkpoint.ts"
import { InvalidConfig, InvalidInput, SerializationFailed } from "../../CheckpointError.ts"
import type * as Serializer from "../../Serializer.ts"
import type { BlobRow, CheckpointRow, Piece, PutShared, WriteRow } from "../../StorageDriver.ts"
import { compress, COMPRESSED, isDerived, pieceKey } from "../StorageFormat.ts"
import { keyOf, type Parts, utf8 } from "./Parts.ts"
import type * as Sealing from "./Sealing.ts"
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

/** A value's encoding: the serializer's bytes, or an array's elements for a shared list. */
type Body = { readonly _tag: "serialized" } & Serializer.Serialized | Sharing.SharedValue

/** A changed channel's value, encoded. */
type EncodedValue = { readonly channel: string; readonly version: string } & Body

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

/** A serialized value as stored: `json` text compressed where that pays (`compressing`), else as it is. */
const compressedValue = <A extends { readonly type: string; readonly bytes: Uint8Array | undefined }>(
  compressing: boolean,
  value: A
): A => {
  if (!compressing || value.type !== "json" || value.bytes === undefined) return value
  const bytes = compress(value.bytes)
  return bytes === undefined ? value : { ...value, type: COMPRESSED, bytes }
}

/** New pieces as stored (see {@link makePieceCompressor}). */
type PieceCompressor = (compressing: boolean, pieces: ReadonlyArray<Piece>) => ReadonlyArray<Piece>

/** How many bytes of compressed pieces a {@link makePieceCompressor} keeps (as their texts' hashes, oldest out first). */
const REMEMBERED_BYTES = 8 * 1024 * 1024

/**
 * New pieces as stored: compressed where that pays (`compressing`), unless
 * derived (a few bytes already) or about to be sealed (a sealed thread's
 * pieces stay whole, see `StorageFormat.COMPRESSED_PIECE`); its hash stays
 * its text's. What each text compressed to is remembered by its hash: a
 * pending write's list sends every piece it names at each put (a record a
 * node returns whole, every step), and the same text compresses the same.
 */
const makePieceCompressor = (): PieceCompressor => {
  const remembered = new Map<string, Uint8Array | null>()
  let bytes = 0
  const compressed = (piece: Piece): Uint8Array | undefined => {
    const key = pieceKey(piece.hash)
    const known = remembered.get(key)
    if (known !== undefined) return known ?? undefined
    const made = compress(piece.bytes)
    remembered.set(key, made ?? null)
    bytes += key.length + (made?.byteLength ?? 0)
    for (const [old, value] of remembered) {
      if (bytes <= REMEMBERED_BYTES) break
      remembered.delete(old)
      bytes -= old.length + (value?.byteLength ?? 0)
    }
    return made
  }
  return (compressing, pieces) =>
    !compressing ? pieces : pieces.map((piece) => {
      const bytes = isDerived(piece.bytes) ? undefined : compressed(piece)
      return bytes === undefined ? piece : { hash: piece.hash, bytes }
    })
}

/**
 * The blobs of a checkpoint's values: shared lists laid out against what
 * their channels stored before (against nothing when `fresh`), compressed
 * where that pays, sealed when encryption is on.
 */
const layOut = (
  { compressing, sealing, sharing }: Parts,
  compressedPieces: PieceCompressor,
  key: Sealing.ThreadKey | undefined,
  row: CheckpointRow,
  values: ReadonlyArray<EncodedValue>,
  fresh: boolean
): Layout => {
  const laid: Array<Sharing.Laid> = []
  const compresses = compressing()
  const blobs = values.map((value): BlobRow => {
    if (value._tag === "serialized") {
      return compressedValue(compresses, {
        channel: value.channel,
        version: value.version,
        type: value.type,
        bytes: value.bytes
      })
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
    pieces: key === undefined
      ? compressedPieces(compresses, pieces)
      : pieces.map((piece) => sealing!.sealPiece(key, piece)),
    requires: laid.flatMap(({ blob, requires }) => requires.map((version) => ({ channel: blob.channel, version })))
  }
}

/** What encoding threw: a `SerializationFailed` it says, anything else a defect. */
const failedWith = (error: unknown): Effect.Effect<never, SerializationFailed> =>
  error instanceof SerializationFailed ? Effect.fail(error) : Effect.die(error)

/**
 * The write side over the codec's parts.
 *
 * Encoding is synchronous work (serializing, hashing, laying lists out), so
 * it is done in one pass, without an effect per value: only a serializer
 * that cannot write at once (a LangGraph `SerializerProtocol`, whose
 * `dumpsTyped` answers a promise) makes the values it alone can write wait
 * for its effect.
 *
 * @since 0.1.0
 */
export const make = (parts: Parts) => {
  const { compressing, json, sealing, serializer, sharing } = parts
  const compressedPieces = makePieceCompressor()
  const failed = (operation: string, path: string) => (cause: unknown) =>
    new SerializationFailed({ operation, path, cause })

  /**
   * A value's body when it can be had at once: an array (or a value framing
   * one) as shared elements when sharing can hold it, else the serializer's
   * bytes; `undefined` when only the serializer's effect can write it.
   * Throws `SerializationFailed`.
   */
  const bodyNow = (operation: string, path: () => string, value: unknown): Body | undefined => {
    try {
      if (typeof value === "object" && value !== null) {
        const shared = sharing.encode(value)
        if (shared !== undefined) return shared
      }
      const serialized = serializer.dumpNow?.(value)
      return serialized === undefined ? undefined : { _tag: "serialized", ...serialized }
    } catch (cause) {
      throw failed(operation, path())(cause)
    }
  }

  /** The bodies of `values` (`path(i)` names the i-th in an error), at once where they can be. */
  const bodies = (
    operation: string,
    path: (i: number) => string,
    values: ReadonlyArray<unknown>
  ): Effect.Effect<ReadonlyArray<Body>, SerializationFailed> => {
    const now: Array<Body | undefined> = []
    try {
      for (let i = 0; i < values.length; i++) now.push(bodyNow(operation, () => path(i), values[i]))
    } catch (error) {
      return failedWith(error)
    }
    if (!now.includes(undefined)) return Effect.succeed(now as Array<Body>)
    return Effect.forEach(
      values,
      (value, i) =>
        now[i] !== undefined ? Effect.succeed(now[i]) : serializer.dump(value).pipe(
          Effect.mapBoth({
            onFailure: ({ cause }) => failed(operation, path(i))(cause),
            onSuccess: (serialized): Body => ({ _tag: "serialized", ...serialized })
          })
        )
    )
  }

  /** A checkpoint's row: its metadata as JSON, sealed but for the plaintext keys when encryption is on. Throws. */
  const encodeRow = (key: Sealing.ThreadKey | undefined, row: Omit<CheckpointRow, "metadata">, metadata: unknown) => {
    let text: string
    try {
      text = utf8.decode(json.dump(metadata))
    } catch (cause) {
      throw failed("put", "metadata")(cause)
    }
    const plain: CheckpointRow = { ...row, metadata: text }
    return key === undefined ? plain : { ...row, metadata: sealing!.sealMetadata(key, plain, text) }
  }

  /**
   * A checkpoint put at `location` (whose `checkpoint_id` is its parent),
   * its thread's key found once. Only the channels named in `versions`
   * with a value are stored: a version with no blob reads as no value
   * (LangGraph's savers store an `empty` row for it, which reads the same
   * and costs a row per step).
   */
  const encodeCheckpoint = (
    location: Location,
    checkpoint: Checkpoint,
    metadata: unknown,
    versions: Readonly<Record<string, string | number>>
  ): Effect.Effect<EncodedCheckpoint, SerializationFailed | InvalidConfig> => {
    const key = keyOf(sealing, "put", location.thread_id)
    if (key instanceof InvalidConfig) return Effect.fail(key)
    const changed: Array<readonly [channel: string, version: string, value: unknown]> = []
    for (const [channel, version] of Object.entries(versions)) {
      const value = Object.hasOwn(checkpoint.channel_values, channel) ? checkpoint.channel_values[channel] : undefined
      if (value !== undefined) changed.push([channel, String(version), value])
    }
    const encoded = bodies("put", (i) => `channel_values.${changed[i]![0]}`, changed.map(([, , value]) => value))
    return Effect.flatMap(encoded, (encoded) => {
      try {
        const values = encoded.map((body, i): EncodedValue => ({
          channel: changed[i]![0],
          version: changed[i]![1],
          ...body
        }))
        const row = encodeRow(key, {
          thread_id: location.thread_id,
          checkpoint_ns: location.checkpoint_ns,
          checkpoint_id: checkpoint.id,
          parent_checkpoint_id: location.checkpoint_id,
          checkpoint: {
            v: checkpoint.v,
            ...(parts.headerWithoutId() ? {} : { id: checkpoint.id }),
            ts: checkpoint.ts,
            channel_versions: checkpoint.channel_versions,
            versions_seen: checkpoint.versions_seen
          }
        }, metadata)
        const written = Object.entries(versions).map(([channel, version]) => [channel, String(version)] as const)
        return Effect.succeed({
          row,
          layout: { ...layOut(parts, compressedPieces, key, row, values, false), written },
          afresh: () => ({ ...layOut(parts, compressedPieces, key, row, values, true), written })
        })
      } catch (error) {
        return failedWith(error)
      }
    })
  }

  /** A task's writes against a checkpoint as rows, with the pieces their shared lists need. */
  const encodeWrites = (
    checkpoint: Sealing.CheckpointPlace,
    writes: ReadonlyArray<readonly [string, unknown]>,
    task: { readonly task_id: string; readonly task_path: string }
  ): Effect.Effect<
    { readonly rows: ReadonlyArray<WriteRow>; readonly pieces: ReadonlyArray<Piece> },
    SerializationFailed | InvalidConfig
  > => {
    const key = keyOf(sealing, "putWrites", checkpoint.thread_id)
    if (key instanceof InvalidConfig) return Effect.fail(key)
    const kept = lastSpecialWrites(writes)
    const encoded = bodies(
      "putWrites",
      (i) => `writes[${kept[i]![2]}] (channel "${kept[i]![0]}")`,
      kept.map(([, value]) => value)
    )
    return Effect.map(encoded, (encoded) => {
      const compresses = compressing()
      const rows: Array<WriteRow> = []
      const pieces: Array<Piece> = []
      encoded.forEach((body, i) => {
        const [channel, , index] = kept[i]!
        const stored = body._tag === "shared"
          ? sharing.writeList(checkpoint.thread_id, body, key?.address)
          : { ...compressedValue(compresses, { type: body.type, bytes: body.bytes }), pieces: [] }
        const { bytes, type } = stored
        pieces.push(...stored.pieces)
        const idx = Object.hasOwn(WRITES_IDX_MAP, channel) ? WRITES_IDX_MAP[channel]! : index
        const row: WriteRow = { ...task, idx, channel, type, bytes }
        rows.push(key === undefined ? row : sealing!.sealWrite(key, checkpoint, row))
      })
      const distinct = Sharing.distinct(pieces)
      return {
        rows,
        pieces: key === undefined
          ? compressedPieces(compresses, distinct)
          : distinct.map((piece) => sealing!.sealPiece(key, piece))
      }
    })
  }

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
