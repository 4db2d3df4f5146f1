/**
 * The export file's bounds (issue 36): a line nested thousands deep (the
 * header, a row) or longer than the line bound is an `InvalidInput` naming
 * its line, found before the line is parsed, and before an endless line is
 * ever one string; what this library writes stays well inside both.
 */
import { Cause, Effect, Exit, Option, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { InvalidInput } from "../../src/CheckpointError.ts"
import * as ExportFormat from "../../src/ExportFormat.ts"

const header = JSON.stringify({ format: "langgraph-checkpoints", version: 1, exported_at: "2025-01-01T00:00:00.000Z" })
const threadLine = JSON.stringify({ kind: "thread", thread_id: "t", last_activity: "2025-01-01T00:00:00.000Z" })
const checkpointLine = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    kind: "checkpoint",
    checkpoint_ns: "",
    checkpoint_id: "a",
    checkpoint: { v: 4, id: "a", ts: "2025-01-01T00:00:00.000Z", channel_versions: {}, versions_seen: {}, ...extra },
    metadata: "{}"
  })

const arrays = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`
const objects = (depth: number) => `${`{"a":`.repeat(depth)}1${"}".repeat(depth)}`

/** The typed error a decoding fails with (a defect, such as a stack overflow, fails the test). */
const refusal = async (threads: Stream.Stream<unknown, InvalidInput>) => {
  const exit = await Effect.runPromiseExit(Stream.runCollect(threads))
  if (Exit.isSuccess(exit)) throw new Error("decoded")
  const error = Cause.findErrorOption(exit.cause)
  if (Option.isNone(error)) throw new Error(`not a typed error: ${Cause.pretty(exit.cause)}`)
  expect(error.value).toBeInstanceOf(InvalidInput)
  return error.value
}

describe("nesting", () => {
  const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, number]> = [
    ["a header nested 6,000 deep in a key of its own", [header.replace("}", `,"x":${arrays(6000)}}`)], 1],
    ["a header whose format is nested 6,000 deep", [`{"format":${objects(6000)}}`], 1],
    ["a header that is 100,000 arrays", [arrays(100_000)], 1],
    ["a thread line nested 6,000 deep", [header, threadLine.replace("}", `,"x":${objects(6000)}}`)], 2],
    // What reached the SQL driver, whose JSON.stringify of the header overflowed the stack.
    ["a checkpoint header nested 6,000 deep", [
      header,
      threadLine,
      checkpointLine().replace(`"v":4`, `"v":4,"x":${objects(6000)}`)
    ], 3]
  ]
  for (const [what, lines, line] of cases) {
    it(`${what} is InvalidInput naming line ${line}`, async () => {
      const error = await refusal(ExportFormat.decode(Stream.fromIterable(lines)))
      expect(error.message).toBe(
        `import: invalid line ${line}: nests deeper than ${ExportFormat.MAX_LINE_DEPTH} levels, more than an export's line holds`
      )
    })
  }

  it("a line as deep as the bound is read", async () => {
    // The line's own object and the checkpoint: 2 levels besides the value.
    const value = JSON.parse(objects(ExportFormat.MAX_LINE_DEPTH - 2)) as unknown
    const [rows] = await Effect.runPromise(
      Stream.runCollect(ExportFormat.decode(Stream.make(header, threadLine, checkpointLine({ x: value }))))
    )
    expect(rows?.checkpoints).toHaveLength(1)
    const deeper = JSON.parse(objects(ExportFormat.MAX_LINE_DEPTH - 1)) as unknown
    const error = await refusal(ExportFormat.decode(Stream.make(header, threadLine, checkpointLine({ x: deeper }))))
    expect(error.message).toMatch(/^import: invalid line 3: nests deeper/)
  })
})

describe("length", () => {
  const maxLineLength = 1000
  const tooLong = (line: number) =>
    `import: invalid line ${line}: longer than ${maxLineLength} characters, more than an export's line holds`

  it("a line longer than the bound is InvalidInput naming it, read as lines or as text", async () => {
    const long = checkpointLine({ x: "y".repeat(maxLineLength) })
    const lines = [header, "", threadLine, long]
    expect((await refusal(ExportFormat.decode(Stream.fromIterable(lines), { maxLineLength }))).message).toBe(
      tooLong(4)
    )
    // As text in chunks that cut lines anywhere, and with CRLF line breaks.
    const text = lines.map((line) => `${line}\r\n`).join("")
    const chunks = Array.from({ length: Math.ceil(text.length / 7) }, (_, i) => text.slice(i * 7, i * 7 + 7))
    expect((await refusal(ExportFormat.decodeText(Stream.fromIterable(chunks), { maxLineLength }))).message).toBe(
      tooLong(4)
    )
  })

  it("a line that never ends fails once it passes the bound: it is never one string", async () => {
    const endless = Stream.make(`${header}\n${threadLine}\n`).pipe(
      Stream.concat(Stream.forever(Stream.make("x".repeat(64))))
    )
    expect((await refusal(ExportFormat.decodeText(endless, { maxLineLength }))).message).toBe(tooLong(3))
  })

  it("lines within the bound read as Stream.splitLines reads them, CRLF or LF, with or without a last break", async () => {
    const lines = [header, threadLine, checkpointLine()]
    for (const text of [lines.join("\n"), `${lines.join("\n")}\n`, `${lines.join("\r\n")}\r\n`]) {
      const chunks = Array.from({ length: Math.ceil(text.length / 5) }, (_, i) => text.slice(i * 5, i * 5 + 5))
      const split = await Effect.runPromise(
        Stream.runCollect(ExportFormat.splitLines(maxLineLength)(Stream.fromIterable(chunks)))
      )
      expect(split).toEqual(lines)
      const [rows] = await Effect.runPromise(Stream.runCollect(ExportFormat.decodeText(Stream.fromIterable(chunks))))
      expect(rows?.checkpoints.map((row) => row.checkpoint_id)).toEqual(["a"])
    }
    expect(ExportFormat.MAX_LINE_LENGTH).toBe(256 * 1024 * 1024)
  })
})
