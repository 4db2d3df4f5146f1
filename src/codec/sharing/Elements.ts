/**
 * Encoding elements: an array's values as the pieces a shared list refers
 * to, each one's JSON text and hash, the text reused from an earlier step
 * while its `Trace` is unchanged. Small arrays and arrays of small elements
 * keep the plain encoding, for which a piece would cost more than it saves.
 *
 * @since 0.1.0
 */
import { hashOf, join } from "../StorageFormat.ts"
import { Trace } from "./Trace.ts"

/**
 * Arrays smaller than this serialized, or whose elements are smaller than
 * `MIN_ELEMENT_BYTES` on average, keep the plain encoding: a piece row and
 * its hash would cost more than they save.
 */
const MIN_SHARED_BYTES = 256
const MIN_ELEMENT_BYTES = 64

/**
 * An element as stored: its piece's bytes and hash (as a latin1 string, the
 * form compared and mapped).
 *
 * @since 0.1.0
 */
export interface Element {
  readonly key: string
  readonly bytes: Uint8Array
}

/**
 * A value encoded: `serialized` holds what the plain encoding stores;
 * `shared` holds its elements, to be laid out as a list.
 *
 * @since 0.1.0
 */
export type Encoded =
  | { readonly _tag: "serialized"; readonly type: "json"; readonly bytes: Uint8Array }
  | { readonly _tag: "shared"; readonly elements: ReadonlyArray<Element> }

/**
 * Where a thread stores an element: its plain hash, or (encryption on) a
 * keyed hash of it.
 *
 * @since 0.1.0
 */
export type Address = (element: Element) => string

/**
 * An element stored under its plain hash (encryption off).
 *
 * @since 0.1.0
 */
export const plainAddress: Address = (element) => element.key

/** An element that may deserve a piece of its own: an object, or a long string. */
const worthAPiece = (value: unknown): boolean =>
  typeof value === "object" ? value !== null : typeof value === "string" && value.length >= MIN_ELEMENT_BYTES

/**
 * The encoder of one storage service over `dumpJson`, `JsonPlusSerializer`'s
 * text of a value (it may throw). It answers an array's elements when they
 * can be shared, else the plain bytes when known; `undefined`: let the
 * serializer write it.
 *
 * @since 0.1.0
 */
export const makeEncoder = (dumpJson: (value: unknown) => Uint8Array) => {
  const texts = new WeakMap<object, { readonly trace: Trace; readonly element: Element }>()

  const fresh = (value: unknown): Element | undefined => {
    const bytes = dumpJson(value)
    // Functions and the like serialize to nothing alone, to `null` inside an
    // array. (Cycles and BigInts make `dumpJson` throw: `put` fails.)
    if (bytes.byteLength === 0) return undefined
    return { key: hashOf(bytes), bytes }
  }

  const elementOf = (value: unknown): Element | undefined => {
    if (typeof value !== "object" || value === null) return fresh(value)
    const known = texts.get(value)
    if (known !== undefined && known.trace.matches(value)) return known.element
    const trace = new Trace()
    const traceable = trace.record(value)
    const element = fresh(value)
    if (element !== undefined && traceable) texts.set(value, { trace, element })
    else texts.delete(value)
    return element
  }

  return (value: ReadonlyArray<unknown>): Encoded | undefined => {
    // Numbers, short strings and the like (an embedding, a list of ids) are
    // smaller than a piece's hash and row: not worth serializing one by one.
    if (!value.every(worthAPiece)) return undefined
    const elements: Array<Element> = []
    let size = 2
    for (const item of value) {
      const element = elementOf(item)
      if (element === undefined) return undefined
      elements.push(element)
      size += element.bytes.byteLength + 1
    }
    return size < MIN_SHARED_BYTES || size < MIN_ELEMENT_BYTES * elements.length
      ? { _tag: "serialized", type: "json", bytes: join(elements.map((element) => element.bytes)) }
      : { _tag: "shared", elements }
  }
}
