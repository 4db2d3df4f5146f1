/**
 * What the codec's rooms (`Encode`, `Open`, `Decode`) share, built once per
 * storage service: the serializer, the JSON metadata and shared lists are
 * written in, structural sharing, and sealing when `Encryption` is provided;
 * with the helpers every room needs (a thread's key, a corrupted row, a
 * piece no longer held).
 *
 * @since 0.1.0
 */
import { Data, Effect, Option } from "effect"
import { CorruptedCheckpoint, IncompatibleFormat, InvalidConfig } from "../../CheckpointError.ts"
import { Encryption } from "../../Encryption.ts"
import { type FormatLevel, levelOf, LEVELS } from "../../FormatLevel.ts"
import * as Revival from "../../Revival.ts"
import * as Serializer from "../../Serializer.ts"
import * as SharingEnabled from "../../Sharing.ts"
import { COMPRESSED, DERIVED, FRAMED, HEADER_WITHOUT_ID, RECORD } from "../StorageFormat.ts"
import * as Sealing from "./Sealing.ts"
import { isLaterFrame } from "./sealing/Frames.ts"
import * as Sharing from "./Sharing.ts"

/** The levels of the encodings written once the store is raised to them. */
const FRAMED_LEVEL = levelOf(FRAMED)!
const DERIVED_LEVEL = levelOf(DERIVED)!
const HEADER_LEVEL = levelOf(HEADER_WITHOUT_ID)!
const COMPRESSED_LEVEL = levelOf(COMPRESSED)!
const RECORD_LEVEL = levelOf(RECORD)!

/**
 * The codec's parts.
 *
 * @since 0.1.0
 */
export interface Parts {
  /** The values' serializer. */
  readonly serializer: Serializer.SerializerService
  /** Metadata and shared lists are JSON text whatever serializer the values use. */
  readonly json: Serializer.JsonFormat
  /** Structural sharing of arrays, with what this process remembers of each thread's lists. */
  readonly sharing: Sharing.Sharing
  /** Sealing rows for their place; `undefined` without `Encryption`. */
  readonly sealing: Sealing.Sealing | undefined
  /** The storage format levels this process writes (the store's) and reads (up to `supported`). */
  readonly format: Pick<FormatLevel, "level" | "supported">
  /** Whether a checkpoint's header is written without its id (`StorageFormat.HEADER_WITHOUT_ID`). */
  readonly headerWithoutId: () => boolean
  /** Whether values and pieces are written compressed where that pays (`StorageFormat.COMPRESSED`). */
  readonly compressing: () => boolean
}

/**
 * The parts over the `Serializer`, `Sharing.Enabled` and (optional)
 * `Encryption` in context.
 *
 * @since 0.1.0
 */
export const make = Effect.fnUntraced(function*(format: Pick<FormatLevel, "level" | "supported">) {
  const serializer = yield* Serializer.Serializer
  const encryption = yield* Effect.serviceOption(Encryption)
  const json = serializer.json ?? Serializer.Serializer.defaultValue().json!
  const sealing = Option.isSome(encryption) ? Sealing.make(encryption.value) : undefined
  const shares = serializer.json !== undefined && (yield* SharingEnabled.Enabled)
  const sharing = Sharing.make(
    // An element of a shared list is one level below its list, of a framed list two.
    shares ? (value, below) => json.dump(value, Revival.MAX_DEPTH - below) : undefined,
    {
      framing: () => format.level() >= FRAMED_LEVEL,
      // A sealed piece is opaque to the database, which follows a derived piece to its base: every one is whole.
      deriving: () => sealing === undefined && format.level() >= DERIVED_LEVEL,
      records: () => format.level() >= RECORD_LEVEL
    }
  )
  const parts: Parts = {
    serializer,
    json,
    sharing,
    sealing,
    format,
    // Without sharing a store stays one LangGraph's own savers read, whose header has its id.
    headerWithoutId: () => shares && format.level() >= HEADER_LEVEL,
    // As its header: without sharing, values stay what LangGraph's own savers read.
    compressing: () => shares && format.level() >= COMPRESSED_LEVEL
  }
  return parts
})

/**
 * The key a thread's new rows are sealed under (none without encryption),
 * or why there is none.
 *
 * @since 0.1.0
 */
export const keyOf = (
  sealing: Sealing.Sealing | undefined,
  operation: string,
  thread_id: string
): Sealing.ThreadKey | undefined | InvalidConfig => {
  const key = sealing?.threadKey(thread_id)
  return typeof key === "string" ? new InvalidConfig({ operation, detail: `thread "${thread_id}": ${key}` }) : key
}

/**
 * A checkpoint that cannot be read, and why.
 *
 * @since 0.1.0
 */
export const corrupted = (place: Sealing.CheckpointPlace, detail: string): CorruptedCheckpoint =>
  new CorruptedCheckpoint({
    thread_id: place.thread_id,
    checkpoint_ns: place.checkpoint_ns,
    checkpoint_id: place.checkpoint_id,
    detail
  })

/**
 * What a read named as held (a piece, a walk's seed: the driver left its
 * bytes out) and this process no longer holds when it decodes the answer:
 * its memory moved on in between. Not damage, and never the caller's to
 * see: the service reads again naming nothing (see `CheckpointStorage`),
 * and only a `CorruptedCheckpoint` says a row is damaged.
 *
 * @since 0.1.0
 */
export class NotHeld extends Data.TaggedError("NotHeld")<{
  readonly place: Sealing.CheckpointPlace
  readonly detail: string
}> {
  /** What it says of an answer to a read that named nothing: the driver left out bytes it was not asked to. */
  get corrupted(): CorruptedCheckpoint {
    return corrupted(this.place, `${this.detail}, though the read named nothing`)
  }
}

/**
 * A row in an encoding this process does not read (`levelOf`: of a newer
 * release, or of a level above `supported`); `undefined` for one it reads.
 *
 * @since 0.1.0
 */
export const unreadable = (
  format: Pick<FormatLevel, "supported">,
  place: Sealing.CheckpointPlace,
  type: string
): IncompatibleFormat | undefined => {
  const level = levelOf(type)
  if (level !== undefined && level <= format.supported) return undefined
  return new IncompatibleFormat({
    operation: "read",
    encoding: type,
    level,
    supported: format.supported,
    release: level === undefined ? undefined : LEVELS[level - 1]?.since,
    at: { thread_id: place.thread_id, checkpoint_ns: place.checkpoint_ns, checkpoint_id: place.checkpoint_id }
  })
}

/**
 * A checkpoint whose rows did not open or decode, and why: `CorruptedCheckpoint`,
 * unless what failed is a frame of a later format (a newer release's, see
 * `Frames.isLaterFrame`), which is `IncompatibleFormat`.
 *
 * @since 0.1.0
 */
export const unopened = (
  format: Pick<FormatLevel, "supported">,
  place: Sealing.CheckpointPlace,
  detail: string
): CorruptedCheckpoint | IncompatibleFormat =>
  isLaterFrame(detail)
    ? new IncompatibleFormat({
      operation: "read",
      encoding: "a later frame format",
      supported: format.supported,
      at: { thread_id: place.thread_id, checkpoint_ns: place.checkpoint_ns, checkpoint_id: place.checkpoint_id }
    })
    : corrupted(place, detail)

/**
 * JSON text, as `TextDecoder` reads it.
 *
 * @since 0.1.0
 */
export const utf8 = new TextDecoder()
