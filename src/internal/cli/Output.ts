/**
 * How the command writes: aligned tables (`cli-table3`) and colour
 * (`picocolors`) on a terminal, plain text when piped, JSON on request, a
 * progress bar (`cli-progress`) for long work on a terminal.
 *
 * Stored text comes from users and tools: before it reaches a terminal,
 * every control character (an escape sequence could rewrite the screen or
 * the clipboard) and bidirectional control is shown as a visible escape,
 * as `../Visible.ts` writes them.
 *
 * @since 0.1.0
 */
import { SingleBar } from "cli-progress"
import Table from "cli-table3"
import { Effect, Stream } from "effect"
import pc from "picocolors"
import * as Visible from "../Visible.ts"

const isTerminal = process.stdout.isTTY === true

/**
 * Colours when writing to a terminal that wants them (`NO_COLOR` unset);
 * none when piped.
 *
 * @since 0.1.0
 */
export const colors = pc.createColors(isTerminal && process.env.NO_COLOR === undefined)

/**
 * Text from the database, safe to print: control characters, line breaks
 * and bidirectional controls become visible escapes (`Visible.escape`).
 *
 * @since 0.1.0
 */
export const clean: (text: string) => string = Visible.escape

/**
 * At most `max` characters of `text` (cleaned), with how much was cut.
 *
 * @since 0.1.0
 */
export const cut = (text: string, max: number | undefined): string => {
  const safe = clean(text)
  return max === undefined || safe.length <= max ? safe : `${safe.slice(0, max)}… (${safe.length - max} more)`
}

/**
 * Writes a line to standard output.
 *
 * @since 0.1.0
 */
export const line = (text = "") => Effect.sync(() => void process.stdout.write(`${text}\n`))

/**
 * Writes a line about the output (a trailer, a hint) to standard error, so
 * that what a pipe reads from standard output is the data alone.
 *
 * @since 0.1.0
 */
export const note = (text: string) => Effect.sync(() => void process.stderr.write(`${text}\n`))

/**
 * JSON text made safe for a terminal and still the same JSON: DEL, the C1
 * controls, line separators and bidirectional controls, which
 * `JSON.stringify` leaves raw, written as `\uXXXX` escapes
 * (`Visible.escapeJson`).
 *
 * @since 0.1.0
 */
export const safeJson: (text: string) => string = Visible.escapeJson

/**
 * Writes a value as JSON (see {@link safeJson}).
 *
 * @since 0.1.0
 */
export const json = (value: unknown) => line(safeJson(JSON.stringify(value, null, 2)))

/**
 * Writes a stream's elements as one JSON array, as `json` would print the
 * array, an element at a time: a long stream is never held whole.
 *
 * @since 0.1.0
 */
export const jsonStream = <A, E, R>(elements: Stream.Stream<A, E, R>) =>
  Effect.gen(function*() {
    let first = true
    yield* Stream.runForEach(elements, (element) =>
      Effect.sync(() => {
        const text = safeJson(JSON.stringify(element, null, 2)).replaceAll("\n", "\n  ")
        process.stdout.write(`${first ? "[\n" : ",\n"}  ${text}`)
        first = false
      }))
    yield* line(first ? "[]" : "\n]")
  })

/**
 * A table: bordered and aligned on a terminal; tab-separated when piped, one
 * row a line (so `cut` and `awk` work on it).
 *
 * @since 0.1.0
 */
export const table = (head: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) =>
  Effect.sync(() => {
    if (!isTerminal) {
      process.stdout.write([head, ...rows].map((row) => row.join("\t")).join("\n") + "\n")
      return
    }
    const out = new Table({ head: head.map((cell) => colors.bold(cell)), style: { head: [], border: [] } })
    out.push(...rows.map((row) => [...row]))
    process.stdout.write(out.toString() + "\n")
  })

/**
 * A progress bar over `total` items on standard error, when it is a
 * terminal; `tick` advances it. Removed when the scope closes.
 *
 * @since 0.1.0
 */
export const progress = (label: string, total: number) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      if (process.stderr.isTTY !== true || total < 2) return { tick: () => {} }
      const bar = new SingleBar({
        format: `${label} {bar} {value}/{total} threads`,
        stream: process.stderr,
        clearOnComplete: true,
        hideCursor: true
      })
      bar.start(total, 0)
      return { tick: () => bar.increment(), bar }
    }),
    (handle) => Effect.sync(() => "bar" in handle && handle.bar?.stop())
  )

/**
 * A byte count for people.
 *
 * @since 0.1.0
 */
export const bytes = (n: number): string => {
  const units = ["B", "kB", "MB", "GB", "TB"]
  let value = n
  let unit = 0
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000
    unit++
  }
  return unit === 0 ? `${n} B` : `${value.toFixed(value < 10 ? 2 : 1)} ${units[unit]}`
}
