/**
 * Generated values as LangGraph would hold them: the contract kit's
 * abstract `Value`s (a large string, a list cut from one fixed sequence, a
 * record of its elements)
 * built into the values a saver stores.
 *
 * @since 0.1.0
 */
import type { Value } from "./Operations.ts"

/**
 * Whether a generated value is the tagged kind `tag`.
 *
 * @since 0.1.0
 */
export const tagged = <T extends "Large" | "List" | "Record">(
  value: Value,
  tag: T
): value is Extract<Value, { readonly _tag: T }> =>
  typeof value === "object" && value !== null && !Array.isArray(value) && "_tag" in value && value._tag === tag

/** Element `i` of the sequence lists are cut from (large enough to be shared): every seventh holds bytes. */
const listElement = (i: number): unknown =>
  i % 7 === 3
    ? { id: i, bytes: new Uint8Array([i, 255 - i, 0]) }
    : { id: i, text: `element ${i} of a list \u{1F600}`.padEnd(80, " ·") }

/** Key `i` of the records: every fourth integer-like, which JavaScript orders before the others. */
const recordKey = (i: number): string => i % 4 === 1 ? String(i) : `file ${i} \u{1F600}.md`

/** The elements of a list or record: the first `length` of the sequence, but the one at `without`. */
const indexesOf = ({ length, without }: { readonly length: number; readonly without: number | null }) =>
  Array.from({ length }, (_, i) => i).filter((i) => i !== without)

/**
 * A generated value as LangGraph would hold it (JSON normalised, large strings and lists built).
 *
 * @since 0.1.0
 */
export const materialize = (value: Value): unknown => {
  if (value instanceof Uint8Array) return new Uint8Array(value)
  if (tagged(value, "Large")) return "x".repeat(Number(value.size))
  if (tagged(value, "List")) return indexesOf(value).map(listElement)
  if (tagged(value, "Record")) return Object.fromEntries(indexesOf(value).map((i) => [recordKey(i), listElement(i)]))
  // Through JSON once: -0 becomes 0, as any JSON store returns it; "__proto__" keys are left out.
  return JSON.parse(JSON.stringify(value, (key, current: unknown) => key === "__proto__" ? undefined : current))
}
