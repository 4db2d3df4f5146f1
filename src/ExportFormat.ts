/**
 * The export file: threads as JSON Lines, exactly as stored.
 *
 * **When to use**
 *
 * To move threads between processes, databases or backends: `encode` the
 * rows `CheckpointStorage.exportThread` reads, write the lines to a file;
 * later `decode` the file's lines and give each thread to `importThread`.
 * Both are streams, so a large export never has to fit in memory whole (only
 * one thread at a time does).
 *
 * **Details**
 *
 * The first line is a header, `{"format":"langgraph-checkpoints","version":1,
 * "exported_at":"2025-01-01T00:00:00.000Z"}`. Then, for each thread, a
 * `thread` line and one line per row of it, each with a `kind`:
 *
 * ```jsonl
 * {"kind":"thread","thread_id":"t1","last_activity":"2025-01-01T00:00:00.000Z"}
 * {"kind":"checkpoint","checkpoint_ns":"","checkpoint_id":"1ef…","parent_checkpoint_id":"1ee…","checkpoint":{"v":4,…},"metadata":"{\"source\":\"loop\",…}"}
 * {"kind":"blob","checkpoint_ns":"","channel":"messages","version":"3.42","type":"shared","bytes":"q83v…","base":{"version":"2.17","keep":4}}
 * {"kind":"write","checkpoint_ns":"","checkpoint_id":"1ef…","task_id":"…","task_path":"…","idx":0,"channel":"log","type":"json","bytes":"WyJ…"}
 * {"kind":"piece","hash":"3q2+7w…","bytes":"eyJ…"}
 * ```
 *
 * The fields are those of the driver's rows (`CheckpointRow`, `BlobRow`,
 * `WriteRow`, `Piece`), the thread id on the `thread` line only; bytes are
 * base64, `checkpoint` is the stored header and `metadata` the stored JSON
 * text. Nothing is decoded or encoded again on the way: values stay in the
 * serializer's typed bytes, shared lists stay lists of pieces, and sealed
 * (encrypted) rows stay sealed.
 *
 * Decoding reads untrusted input: every line goes through a Schema and comes
 * out as plain data (a `__proto__` key is an own key like any other). A file
 * that is not an export, a version newer than this library reads, a line
 * that does not decode or a row before any `thread` line fails with
 * `InvalidInput` naming the line; so does a thread whose rows `importThread`
 * would refuse (see `ThreadCheck`: parent links that loop or name a
 * checkpoint the file does not hold, a value nested deeper than `put`
 * accepts, a row twice, …), naming the line of the row at fault.
 *
 * Bounds come before parsing: a line longer than `MAX_LINE_LENGTH`
 * characters (`decodeText` stops reading it there, before it is one string)
 * or nested deeper than `MAX_LINE_DEPTH` (a linear scan, `depthOf`) is
 * `InvalidInput` naming the line, never a runaway string or a stack overflow
 * of whatever walks the parsed value. No line this library writes comes near
 * either: values travel as base64 text, and a line's own nesting is a few
 * levels.
 *
 * @since 0.1.0
 */
import { Clock, Effect, Schema, Stream } from "effect"
import { Name } from "./Checkpoint.ts"
import { formatIssue, InvalidInput } from "./CheckpointError.ts"
import * as ThreadCheck from "./internal/lifecycle/ThreadCheck.ts"
import { depthOf } from "./JsonPlus.ts"
import { MAX_DEPTH } from "./Revival.ts"
import type { CheckpointRow, ThreadRows } from "./StorageDriver.ts"

/**
 * What the header's `format` says.
 *
 * @since 0.1.0
 */
export const FORMAT = "langgraph-checkpoints"

/**
 * The version of the format this library writes, and the newest it reads.
 *
 * @since 0.1.0
 */
export const VERSION = 1

/**
 * The longest line `decode` and `decodeText` read unless told otherwise, in
 * characters: 256 Mi, a row holding a value of about 190 MiB (as base64),
 * well under the longest string JavaScript holds.
 *
 * @since 0.1.0
 */
export const MAX_LINE_LENGTH = 256 * 1024 * 1024

/**
 * The deepest nesting of a line (its arrays and objects), as deep as `put`
 * lets a value nest: a row's own fields are a few levels, values are bytes.
 *
 * @since 0.1.0
 */
export const MAX_LINE_DEPTH = MAX_DEPTH

/**
 * What decoding takes: `maxLineLength`, the longest line (default
 * `MAX_LINE_LENGTH`).
 *
 * @since 0.1.0
 */
export interface DecodeOptions {
  readonly maxLineLength?: number | undefined
}

/**
 * The first line of a file.
 *
 * @since 0.1.0
 */
export const Header = Schema.Struct({
  format: Schema.Literal(FORMAT),
  version: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)),
  exported_at: Schema.String
})

const Id = Name.check(Schema.isNonEmpty())
const Bytes = Schema.Uint8ArrayFromBase64

/**
 * Every line after the header: a thread, or one of its rows.
 *
 * @since 0.1.0
 */
export const Line = Schema.Union([
  Schema.Struct({
    kind: Schema.Literal("thread"),
    thread_id: Id,
    last_activity: Schema.DateFromString
  }),
  Schema.Struct({
    kind: Schema.Literal("checkpoint"),
    checkpoint_ns: Name,
    checkpoint_id: Id,
    parent_checkpoint_id: Schema.optional(Id),
    /** The header as stored; the service decodes it when it reads the checkpoint. */
    checkpoint: Schema.Unknown,
    metadata: Schema.String
  }),
  Schema.Struct({
    kind: Schema.Literal("blob"),
    checkpoint_ns: Name,
    channel: Name,
    version: Name,
    type: Name,
    bytes: Schema.optional(Bytes),
    base: Schema.optional(Schema.Struct({ version: Name, keep: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)) }))
  }),
  Schema.Struct({
    kind: Schema.Literal("write"),
    checkpoint_ns: Name,
    checkpoint_id: Id,
    task_id: Name,
    task_path: Name,
    idx: Schema.Int,
    channel: Name,
    type: Name,
    bytes: Bytes
  }),
  Schema.Struct({ kind: Schema.Literal("piece"), hash: Bytes, bytes: Bytes })
]).annotate({ expected: `a line of kind "thread", "checkpoint", "blob", "write" or "piece"` })

/**
 * @since 0.1.0
 */
export type Line = typeof Line.Type

const HeaderJson = Schema.fromJsonString(Header)
const LineJson = Schema.fromJsonString(Line)
const encodeLine = (line: Line) => Schema.encodeSync(LineJson)(line)

/**
 * A stream of threads' rows as the lines of a file, each ending with a
 * newline, the header first.
 *
 * @since 0.1.0
 */
export const encode = <E, R>(threads: Stream.Stream<ThreadRows, E, R>): Stream.Stream<string, E, R> =>
  Stream.unwrap(Effect.map(Clock.currentTimeMillis, (now) =>
    Stream.succeed(
      Schema.encodeSync(HeaderJson)({ format: FORMAT, version: VERSION, exported_at: new Date(now).toISOString() })
    ).pipe(
      Stream.concat(Stream.flatMap(threads, (rows) => Stream.fromIterable(linesOf(rows).map(encodeLine)))),
      Stream.map((text) => `${text}\n`)
    )))

/** A thread's lines, its rows in the order `decode` gathers them. */
const linesOf = (rows: ThreadRows): Array<Line> => [
  { kind: "thread", thread_id: rows.thread_id, last_activity: rows.last_activity },
  ...rows.checkpoints.map(({ thread_id: _, ...row }): Line => ({ kind: "checkpoint", ...row })),
  ...rows.blobs.map((blob): Line => ({
    kind: "blob",
    ...blob,
    base: blob.base === undefined ? undefined : { version: blob.base.version, keep: blob.base.keep }
  })),
  ...rows.writes.map((write): Line => ({ kind: "write", ...write })),
  ...rows.pieces.map((piece): Line => ({ kind: "piece", ...piece }))
]

/** A thread being gathered from its lines, with the line of each row. */
interface Gathering {
  readonly thread_id: string
  readonly last_activity: Date
  readonly checkpoints: Array<CheckpointRow>
  readonly blobs: Array<ThreadRows["blobs"][number]>
  readonly writes: Array<ThreadRows["writes"][number]>
  readonly pieces: Array<ThreadRows["pieces"][number]>
  /** The line of the thread. */
  readonly line: number
  /** The line of each row, by kind, in order. */
  readonly lines: { readonly [K in ThreadCheck.RowKind]: Array<number> }
}

type Row = Exclude<Line, { readonly kind: "thread" }>

/** Where each kind of row goes in its thread. */
const gather: { readonly [K in Row["kind"]]: (thread: Gathering, row: Extract<Row, { readonly kind: K }>) => void } = {
  checkpoint: (thread, { kind: _, ...row }) =>
    thread.checkpoints.push({
      ...row,
      thread_id: thread.thread_id,
      parent_checkpoint_id: row.parent_checkpoint_id,
      checkpoint: row.checkpoint as CheckpointRow["checkpoint"]
    }),
  blob: (thread, { kind: _, ...blob }) => thread.blobs.push({ ...blob, bytes: blob.bytes, base: blob.base }),
  write: (thread, { kind: _, ...write }) => thread.writes.push(write),
  piece: (thread, { kind: _, ...piece }) => thread.pieces.push(piece)
}

const invalidLine = (line: number, detail: string) =>
  new InvalidInput({ operation: "import", argument: `line ${line}`, detail })

/** The header line, or why the file is not one this library reads. */
const decodeHeader = (text: string, line: number) =>
  Schema.decodeUnknownEffect(HeaderJson)(text).pipe(
    Effect.mapError((error) =>
      invalidLine(line, `not a ${FORMAT} export: the first line must be its header (${formatIssue(error.issue)})`)
    ),
    Effect.filterOrFail(
      (header) => header.version <= VERSION,
      (header) =>
        invalidLine(
          line,
          `made by a newer version of langgraph-checkpoint-effect (format version ${header.version}; ` +
            `this one reads up to ${VERSION}): upgrade it to import this file`
        )
    )
  )

interface State {
  readonly header: boolean
  readonly thread: Gathering | undefined
}

/** A thread whose last row was read: its rows, or the line of the row that makes them no thread. */
const complete = ({ blobs, checkpoints, last_activity, line, lines, pieces, thread_id, writes }: Gathering) => {
  const rows: ThreadRows = { thread_id, last_activity, checkpoints, blobs, writes, pieces }
  const problem = ThreadCheck.check(rows)
  return problem === undefined
    ? Effect.succeed(rows)
    : Effect.fail(
      invalidLine(problem.at === undefined ? line : lines[problem.at.kind][problem.at.index]!, problem.detail)
    )
}

/** The state after a line, and the threads it completed. */
const next = Effect.fnUntraced(function*(state: State, done?: Gathering) {
  return [state, done === undefined ? [] : [yield* complete(done)]] as readonly [State, ReadonlyArray<ThreadRows>]
})

const tooLong = (line: number, maxLength: number) =>
  invalidLine(line, `longer than ${maxLength} characters, more than an export's line holds`)

/** Why a line is refused before it is parsed: too long, or nested too deep. */
const unbounded = (text: string, line: number, maxLength: number): InvalidInput | undefined => {
  if (text.length > maxLength) return tooLong(line, maxLength)
  // Depth never exceeds the length: only long lines need the scan.
  if (text.length > MAX_LINE_DEPTH && depthOf(text) > MAX_LINE_DEPTH) {
    return invalidLine(line, `nests deeper than ${MAX_LINE_DEPTH} levels, more than an export's line holds`)
  }
  return undefined
}

/** Reads one line (`undefined`: the end of the file). */
const step = Effect.fnUntraced(function*(state: State, numbered: readonly [text: string, index: number] | undefined) {
  if (numbered === undefined) {
    if (!state.header) return yield* invalidLine(1, `not a ${FORMAT} export: the file is empty`)
    return yield* next(state, state.thread)
  }
  const [text, index] = numbered
  const line = index + 1
  if (!state.header) {
    yield* decodeHeader(text, line)
    return yield* next({ header: true, thread: undefined })
  }
  const row = yield* Schema.decodeUnknownEffect(LineJson)(text).pipe(
    Effect.mapError((error) => invalidLine(line, formatIssue(error.issue)))
  )
  if (row.kind === "thread") {
    const { kind: _, ...thread } = row
    const gathering: Gathering = {
      ...thread,
      checkpoints: [],
      blobs: [],
      writes: [],
      pieces: [],
      line,
      lines: { checkpoint: [], blob: [], write: [], piece: [] }
    }
    return yield* next({ header: true, thread: gathering }, state.thread)
  }
  if (state.thread === undefined) return yield* invalidLine(line, `a ${row.kind} row before any thread line`)
  const add = gather[row.kind] as (thread: Gathering, row: Row) => void
  add(state.thread, row)
  state.thread.lines[row.kind].push(line)
  return yield* next(state)
})

/**
 * The threads of a file, from its lines (with or without their line breaks;
 * blank lines are skipped), each as soon as its last row is read.
 *
 * @since 0.1.0
 */
export const decode = <E, R>(
  lines: Stream.Stream<string, E, R>,
  options: DecodeOptions = {}
): Stream.Stream<ThreadRows, InvalidInput | E, R> =>
  lines.pipe(
    Stream.zipWithIndex,
    Stream.filter(([text]) => text.trim() !== ""),
    Stream.mapEffect((numbered) => {
      const refused = unbounded(numbered[0], numbered[1] + 1, options.maxLineLength ?? MAX_LINE_LENGTH)
      return refused === undefined ? Effect.succeed(numbered) : Effect.fail(refused)
    }),
    // The end, so the last thread is sent and an empty file is refused.
    Stream.concat(Stream.succeed(undefined)),
    Stream.mapAccumEffect((): State => ({ header: false, thread: undefined }), step)
  )

/** A line being read: its pieces so far and their length, and its number. */
interface Splitting {
  pieces: Array<string>
  length: number
  line: number
}

/**
 * Text split at line breaks (`\n`, `\r\n`), as `Stream.splitLines` splits
 * it, except that a line growing past `maxLength` (and its `\r`) fails at
 * once, naming it: it is never joined into one string. (`decode` checks the
 * exact length of each line.)
 *
 * @since 0.1.0
 */
export const splitLines =
  (maxLength: number = MAX_LINE_LENGTH) =>
  <E, R>(text: Stream.Stream<string, E, R>): Stream.Stream<string, InvalidInput | E, R> =>
    text.pipe(
      Stream.mapAccumEffect(
        (): Splitting => ({ pieces: [], length: 0, line: 1 }),
        (state, chunk) => {
          const lines: Array<string> = []
          for (let from = 0; from <= chunk.length;) {
            const end = chunk.indexOf("\n", from)
            const piece = chunk.slice(from, end === -1 ? chunk.length : end)
            state.length += piece.length
            if (state.length > maxLength + 1) return Effect.fail(tooLong(state.line, maxLength))
            if (piece !== "") state.pieces.push(piece)
            if (end === -1) break
            const line = state.pieces.join("")
            lines.push(line.endsWith("\r") ? line.slice(0, -1) : line)
            state.pieces = []
            state.length = 0
            state.line++
            from = end + 1
          }
          return Effect.succeed([state, lines] as const)
        },
        { onHalt: (state) => state.pieces.length === 0 ? [] : [state.pieces.join("")] }
      )
    )

/**
 * The threads of a file from its text, in chunks as read (`splitLines`,
 * then `decode`).
 *
 * @since 0.1.0
 */
export const decodeText = <E, R>(
  text: Stream.Stream<string, E, R>,
  options: DecodeOptions = {}
): Stream.Stream<ThreadRows, InvalidInput | E, R> =>
  decode(splitLines(options.maxLineLength ?? MAX_LINE_LENGTH)(text), options)
