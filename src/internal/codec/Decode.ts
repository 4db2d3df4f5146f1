/**
 * The codec's read side: opened rows back to values. Shared lists are
 * reassembled from their pieces, then read under safe revival (`Revival`):
 * a record-shaped value that is not allowed stays inert data, counted in the
 * tally (see `Report`), and never fails a read. Answers LangGraph's tuple of
 * a checkpoint, and the delta histories of channels along a parent chain.
 * What a read named as held and this process no longer holds fails it as
 * `NotHeld`, never as `CorruptedCheckpoint`, which is damage.
 *
 * @since 0.1.0
 */
import {
  type Checkpoint,
  compareWritesSortKeys,
  maxChannelVersion,
  TASKS,
  writesSortKey
} from "@langchain/langgraph-checkpoint"
import { Effect, Schema } from "effect"
import {
  CheckpointHeader,
  CheckpointMetadata,
  type CheckpointTuple,
  configOf,
  type DeltaChannelHistory,
  type StoredWrite
} from "../../Checkpoint.ts"
import { type CorruptedCheckpoint, formatIssue, type IncompatibleFormat } from "../../CheckpointError.ts"
import { levelOf } from "../../FormatLevel.ts"
import * as Serializer from "../../Serializer.ts"
import type { BlobRow, CheckpointRow, StoredCheckpoint, WriteRow } from "../../StorageDriver.ts"
import {
  DERIVED,
  header,
  HEADER_WITHOUT_ID,
  isDerived,
  isList,
  RECORD,
  record,
  references,
  unframe,
  unpackHashes,
  withoutId
} from "../StorageFormat.ts"
import { noPieces, type Open, type Pieces } from "./Open.ts"
import { corrupted, NotHeld, type Parts, unopened, unreadable } from "./Parts.ts"
import { newTally, report, type Tally } from "./Report.ts"
import type { CheckpointPlace } from "./Sealing.ts"
import * as Sharing from "./Sharing.ts"
import * as Walks from "./Walks.ts"

/** The pieces a decoding finds: those read, opened, and the hashes (back to back) of those the read named as held. */
interface Found extends Pieces {
  readonly named: Uint8Array
}

const nothingFound: Found = { ...noPieces, named: Walks.nothing.pieces }

/**
 * Where a stored checkpoint's pending sends are: on its parent, as writes,
 * for a checkpoint older than LangGraph's format 4; `undefined` for any
 * other. Read from the header as stored, before anything is decoded.
 */
const sendsFrom = ({ row }: StoredCheckpoint): CheckpointPlace | undefined => {
  const v: unknown = (row.checkpoint as { readonly v?: unknown } | null)?.v
  return typeof v === "number" && v < 4 && row.parent_checkpoint_id !== undefined
    ? { thread_id: row.thread_id, checkpoint_ns: row.checkpoint_ns, checkpoint_id: row.parent_checkpoint_id }
    : undefined
}

/** The level derived pieces belong to: a process pinned below it does not read them. */
const DERIVED_LEVEL = levelOf(DERIVED)!

const sortWrites = (writes: ReadonlyArray<WriteRow>): Array<WriteRow> =>
  writes
    .map((write) => ({ write, key: writesSortKey(write.task_path, write.task_id, write.idx) }))
    .sort((a, b) => compareWritesSortKeys(a.key, b.key))
    .map(({ write }) => write)

/** Loading opened rows' values, metadata and writes, over the codec's parts. */
const loading = ({ format, json, sealing, serializer, sharing }: Parts) => {
  /** Reads JSON under safe revival, adding what stayed inert to the tally. */
  const readJson = (
    row: CheckpointRow,
    what: string,
    bytes: Uint8Array | string | ReadonlyArray<Uint8Array>,
    tally: Tally
  ) =>
    Effect.try({
      try: () => {
        const revived = json.read(bytes)
        tally.inert += revived.inert
        return revived.value
      },
      catch: (cause) =>
        corrupted(row, `${what} does not deserialize: ${new Serializer.SerializerError({ cause }).message}`)
    })

  /**
   * A piece found nowhere: one that did not open is damage, and so is one
   * the read did not name (storage lost it); one it named, memory let go.
   */
  const missing = (row: CheckpointRow, what: string, key: string, pieces: Found) => {
    const wrong = pieces.unreadable.get(key)
    if (wrong === undefined && unpackHashes(pieces.named)?.includes(key) === true) {
      return new NotHeld({ place: row, detail: `${what}: a piece the read named is no longer held` })
    }
    return unopened(format, row, `${what}: a piece it refers to ${wrong ?? "is missing"}`)
  }

  /** A checkpoint's header; one without its id is of level 3, which a process pinned below it does not read. */
  const decodeHeader = (row: CheckpointRow) => {
    const newer = withoutId(row.checkpoint) ? unreadable(format, row, HEADER_WITHOUT_ID) : undefined
    return newer !== undefined ? Effect.fail(newer) : Schema.decodeUnknownEffect(CheckpointHeader)(header(row)).pipe(
      Effect.mapError((error) => corrupted(row, `checkpoint: ${formatIssue(error.issue)}`)),
      // A header is its row's: one naming another checkpoint was moved or edited.
      Effect.filterOrFail(
        (decoded) => decoded.id === row.checkpoint_id,
        (decoded) => corrupted(row, `checkpoint: its header is that of checkpoint ${JSON.stringify(decoded.id)}`)
      )
    )
  }

  /** Reads a stored value; a shared list is first rebuilt from its pieces. */
  const load = (
    row: CheckpointRow,
    what: string,
    stored: Pick<BlobRow, "type" | "bytes" | "base">,
    pieces: Found,
    tally: Tally,
    remembering?: { readonly channel: string; readonly version: string; readonly recognize: boolean }
  ): Effect.Effect<unknown, CorruptedCheckpoint | IncompatibleFormat | NotHeld> => {
    // An encoding of a newer release, or of a level above this process's, is not damage: say so.
    const newer = unreadable(format, row, stored.type)
    if (newer !== undefined) return Effect.fail(newer)
    if (isList(stored.type)) {
      const decoded = sharing.decode(row.thread_id, stored, pieces.readable)
      if (typeof decoded === "string") return Effect.fail(unopened(format, row, `${what}: ${decoded}`))
      if ("missing" in decoded) return Effect.fail(missing(row, what, decoded.missing, pieces))
      const derivedNewer = format.supported < DERIVED_LEVEL && decoded.stored.some(isDerived)
        ? unreadable(format, row, DERIVED)
        : undefined
      if (derivedNewer !== undefined) return Effect.fail(derivedNewer)
      // A framed list and a record are read as their whole text; a list's pieces are parsed one by one.
      const text = stored.type === Sharing.FRAMED
        ? unframe(decoded.texts)
        : stored.type === RECORD
        ? record(decoded.texts)
        : decoded.texts
      if (typeof text === "string") return Effect.fail(corrupted(row, `${what}: ${text}`))
      const read = readJson(row, what, text, tally)
      if (remembering === undefined) return read
      const place = { ...row, channel: remembering.channel, version: remembering.version }
      sharing.remember(place, decoded)
      if (!remembering.recognize) return read
      const inert = tally.inert
      return read.pipe(
        // Values left inert are written again as the serializer writes them (escaped), not as read.
        Effect.map((value) => {
          if (tally.inert === inert) sharing.recognize(place, value, decoded, sealing === undefined)
          return value
        })
      )
    }
    const bytes = stored.bytes ?? new Uint8Array()
    if (serializer.json !== undefined && stored.type === "json") return readJson(row, what, bytes, tally)
    return serializer.load({ type: stored.type, bytes }).pipe(
      Effect.mapError((error) => corrupted(row, `${what} does not deserialize: ${error.message}`))
    )
  }

  const decodeMetadata = (row: CheckpointRow, tally: Tally) =>
    readJson(row, "metadata", row.metadata, tally).pipe(
      Effect.flatMap(Schema.decodeUnknownEffect(CheckpointMetadata)),
      Effect.mapError((error) =>
        Schema.isSchemaError(error) ? corrupted(row, `metadata: ${formatIssue(error.issue)}`) : error
      )
    )

  const loadWrites = (row: CheckpointRow, writes: ReadonlyArray<WriteRow>, pieces: Found, tally: Tally) =>
    Effect.forEach(
      sortWrites(writes),
      (write) =>
        load(row, `write ${write.idx} of task ${write.task_id}`, write, pieces, tally).pipe(
          Effect.map((value): StoredWrite => [write.task_id, write.channel, value])
        )
    )

  /**
   * The stored value of each channel at the header's version. `remember`:
   * the lists read are what the thread's next put extends; `recognize`:
   * their items too (see `Sharing.recognize`).
   */
  const loadChannelValues = (
    row: CheckpointRow,
    header: CheckpointHeader,
    blobs: ReadonlyArray<BlobRow>,
    pieces: Found,
    tally: Tally,
    remember = false,
    recognize = false
  ) =>
    Effect.forEach(
      blobs.filter((blob) => blob.type !== "empty" && String(header.channel_versions[blob.channel]) === blob.version),
      (blob) =>
        load(row, `channel "${blob.channel}"`, blob, pieces, tally, remember ? { ...blob, recognize } : undefined).pipe(
          Effect.map((value) => [blob.channel, value] as const)
        )
    )

  return { decodeHeader, decodeMetadata, loadWrites, loadChannelValues }
}

/**
 * The read side over the codec's parts and its opening.
 *
 * @since 0.1.0
 */
export const make = (parts: Parts, { keepRead, open, openWrites }: Open) => {
  const { decodeHeader, decodeMetadata, loadChannelValues, loadWrites } = loading(parts)

  /**
   * A stored checkpoint as LangGraph's tuple. `remember`: what a `getTuple`
   * reads is what the thread's next put extends, and its pieces are kept;
   * `recognize`: a read of the latest checkpoint, which a graph's next step
   * writes again with one more item (its items' texts are learned);
   * `named`: the pieces the read named as held; `sends`: the writes read
   * where `sendsFrom` said, for a checkpoint that needs them.
   */
  const decodeTuple = Effect.fnUntraced(function*(
    stored: StoredCheckpoint,
    options: {
      readonly remember: boolean
      readonly recognize?: boolean | undefined
      readonly named?: Uint8Array | undefined
      readonly sends?: ReadonlyArray<WriteRow> | undefined
    }
  ) {
    const tally = newTally()
    const opened = yield* open(stored, tally)
    const { blobs, row, writes } = opened
    if (options.remember) keepRead(row.thread_id, opened.pieces)
    const pieces: Found = { ...opened.pieces, named: options.named ?? nothingFound.named }
    const header = yield* decodeHeader(row)
    const checkpoint: Checkpoint = {
      ...header,
      channel_values: Object.fromEntries(
        yield* loadChannelValues(row, header, blobs, pieces, tally, options.remember, options.recognize)
      )
    }
    if (options.sends !== undefined && row.parent_checkpoint_id !== undefined) {
      const parent = { ...row, checkpoint_id: row.parent_checkpoint_id }
      const sends = yield* loadWrites(row, yield* openWrites(parent, options.sends, tally), nothingFound, tally)
      const versions = Object.values(checkpoint.channel_versions)
      checkpoint.channel_values[TASKS] = sends.map(([, , value]) => value)
      checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : 1
    }
    const tuple: CheckpointTuple = {
      config: configOf(row.thread_id, row.checkpoint_ns, row.checkpoint_id),
      checkpoint,
      metadata: (yield* decodeMetadata(row, tally)) as CheckpointTuple["metadata"] & {},
      pendingWrites: yield* loadWrites(row, writes, pieces, tally)
    }
    if (row.parent_checkpoint_id !== undefined) {
      tuple.parentConfig = configOf(row.thread_id, row.checkpoint_ns, row.parent_checkpoint_id)
    }
    yield* report(row, tally)
    return tuple
  })

  const walks = Walks.make()

  /**
   * A walk's checkpoint with every blob's bytes: those the driver left out
   * (this process named them) from memory; when one left memory meanwhile,
   * `NotHeld`, and the walk is run again.
   */
  const withSeeds = (stored: StoredCheckpoint) => {
    if (stored.blobs.length === 0) return Effect.succeed(stored)
    const blobs: Array<BlobRow> = []
    for (const blob of stored.blobs) {
      const whole = walks.fill(stored.row, blob)
      if (whole === undefined) {
        return Effect.fail(
          new NotHeld({ place: stored.row, detail: `channel "${blob.channel}": its value left memory since the walk` })
        )
      }
      blobs.push(whole)
    }
    return Effect.succeed({ ...stored, blobs })
  }

  /**
   * For each of `wanted`, the writes along `chain` (ancestors, nearest
   * first) back to the nearest checkpoint that stored a value for it, oldest
   * first, and that value as the seed. `named`: what the walk named as held.
   */
  const deltaHistory = Effect.fnUntraced(function*(
    chain: ReadonlyArray<StoredCheckpoint>,
    wanted: ReadonlyArray<string>,
    named: Walks.Known
  ) {
    // Collected newest first, reversed at the end.
    const collected = new Map(wanted.map((channel) => [channel, [] as Array<StoredWrite>]))
    const seeded = new Map<string, unknown>()
    const remaining = new Set(wanted)
    // The pieces the walk's rows refer to: the next walk need not fetch them.
    const read = new Set<string>()
    // A page's checkpoints share one map of pieces: kept once.
    const kept = new Set<ReadonlyMap<string, Uint8Array>>()
    for (const stored of chain) {
      if (remaining.size === 0) break
      const tally = newTally()
      const opened = yield* open(yield* withSeeds(stored), tally, { metadata: false })
      const { blobs, row, writes } = opened
      if (!kept.has(opened.pieces.readable)) {
        kept.add(opened.pieces.readable)
        keepRead(row.thread_id, opened.pieces)
      }
      const pieces: Found = { ...opened.pieces, named: named.pieces }
      const wantedWrites = writes.filter((write) => remaining.has(write.channel))
      for (const write of wantedWrites) for (const key of references(write)) read.add(key)
      const stepWrites = yield* loadWrites(row, wantedWrites, pieces, tally)
      for (const write of stepWrites.reverse()) collected.get(write[1])?.push(write)
      // Most of a walk's checkpoints store no value of its channels: their header is not needed.
      if (blobs.some((blob) => remaining.has(blob.channel))) {
        for (const blob of blobs) for (const key of references(blob)) read.add(key)
        const header = yield* decodeHeader(row)
        for (const [channel, value] of yield* loadChannelValues(row, header, blobs, pieces, tally)) {
          if (!remaining.has(channel)) continue
          seeded.set(channel, value)
          remaining.delete(channel)
        }
      }
      yield* report(row, tally)
    }
    const nearest = chain[0]
    if (nearest !== undefined) walks.walked(nearest.row, read)
    return Object.fromEntries(wanted.map((channel): [string, DeltaChannelHistory] => {
      const writes = (collected.get(channel) ?? []).reverse()
      return [channel, seeded.has(channel) ? { writes, seed: seeded.get(channel) } : { writes }]
    }))
  })

  /** What a walk of a namespace need not fetch: the seeds this process holds, the pieces its last walk read. */
  const knownToWalk = (location: { readonly thread_id: string; readonly checkpoint_ns: string }) =>
    walks.known(location)

  return { sendsFrom, decodeTuple, deltaHistory, knownToWalk }
}
