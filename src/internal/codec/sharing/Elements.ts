/**
 * Encoding elements: an array's values as the pieces a shared list refers
 * to, each one's JSON text and hash, the text reused from an earlier step
 * while its `Trace` is unchanged. Small arrays and arrays of small elements
 * keep the plain encoding, for which a piece would cost more than it saves.
 * A value written as one array inside some text (a `DeltaSnapshot`, a
 * graph's input `{ messages: [...] }`) is a framed list: its frame, then the
 * array's elements.
 *
 * @since 0.1.0
 */
import { DeltaSnapshot } from "@langchain/langgraph-checkpoint"
import { derive, FRAMED, framed, frameOf, hashOf, join, owned, RECORD, record, SHARED } from "../../StorageFormat.ts"
import { Trace } from "./Trace.ts"

/**
 * Arrays smaller than this serialized, or whose elements are smaller than
 * `MIN_ELEMENT_BYTES` on average, keep the plain encoding: a piece row and
 * its hash would cost more than they save.
 */
const MIN_SHARED_BYTES = 256
const MIN_ELEMENT_BYTES = 64

/**
 * An element as stored: its text, and its hash (as a latin1 string, the
 * form compared and mapped), the key of the piece holding the text. It may
 * be stored as a derived piece of another element instead (`derived`), when
 * its thread holds no piece of its text yet (see `Sharing.layOut`).
 *
 * @since 0.1.0
 */
export interface Element {
  readonly key: string
  readonly bytes: Uint8Array
  readonly derived?: Derived | undefined
}

/**
 * An element as a derived piece (see `StorageFormat.derive`): its key and
 * bytes, and the element it is written against, a plain piece stored with it.
 *
 * @since 0.3.0
 */
export interface Derived {
  readonly key: string
  readonly piece: Uint8Array
  readonly base: Element
}

/**
 * A value encoded: `serialized` holds what the plain encoding stores;
 * `shared` holds its elements, to be laid out as a list of `type` (a framed
 * list's first element is its frame).
 *
 * @since 0.1.0
 */
export type Encoded =
  | { readonly _tag: "serialized"; readonly type: "json"; readonly bytes: Uint8Array }
  | {
    readonly _tag: "shared"
    readonly type: typeof SHARED | typeof FRAMED | typeof RECORD
    readonly elements: ReadonlyArray<Element>
  }

/**
 * Where a thread stores an element: its plain hash, or (encryption on) a
 * keyed hash of it.
 *
 * @since 0.1.0
 */
export type Address = (element: Element) => string

const decoder = new TextDecoder()

/** `value` as a plain object written as its own keys in order; `undefined` for any other. */
const plainFields = (value: object): Record<string, unknown> | undefined => {
  const prototype: unknown = Object.getPrototypeOf(value)
  // Only a plain object is written as its own keys in order; JSON writes one
  // with an `lc` key escaped, a `Send` and one with `toJSON` as something else.
  if (prototype !== Object.prototype && prototype !== null) return undefined
  const fields = value as Record<string, unknown>
  if (Object.hasOwn(fields, "lc") || fields.lg_name === "Send" || typeof fields.toJSON === "function") return undefined
  return fields
}

/** The array `value` is written around, and the value with that array empty; `undefined`: not such a value. */
const framing = (value: object): { readonly items: Array<unknown>; readonly empty: unknown } | undefined => {
  if (value instanceof DeltaSnapshot) {
    return Array.isArray(value.value) ? { items: value.value, empty: new DeltaSnapshot([]) } : undefined
  }
  const fields = plainFields(value)
  if (fields === undefined) return undefined
  const last = Object.keys(fields).at(-1)
  if (last === undefined) return undefined
  const items = fields[last]
  return Array.isArray(items) ? { items, empty: { ...fields, [last]: [] } } : undefined
}

/** Whether `count` elements of `size` bytes in all deserve a list rather than the plain encoding. */
const worthSharing = (size: number, count: number): boolean =>
  size >= MIN_SHARED_BYTES && size >= MIN_ELEMENT_BYTES * count

/** An element that may deserve a piece of its own: an object, or a long string. */
const worthAPiece = (value: unknown): boolean =>
  typeof value === "object" ? value !== null : typeof value === "string" && value.length >= MIN_ELEMENT_BYTES

/**
 * `JsonPlusSerializer`'s text of a value that sits `below` levels under the
 * stored value's top (an element of a list: 1; of a framed list's array: 2),
 * so that the value as a whole nests no deeper than a read accepts. It may
 * throw, saying why.
 *
 * @since 0.1.0
 */
export type DumpJson = (value: unknown, below: number) => Uint8Array

/**
 * What an encoder may write now, the store's format level allowing it:
 * framed lists (level 2), derived pieces (level 3, and never sealed),
 * record lists (level 4).
 *
 * @since 0.3.0
 */
export interface Allowed {
  readonly framing: () => boolean
  readonly deriving: () => boolean
  readonly records: () => boolean
}

/**
 * The encoder of one storage service over `dumpJson`. `encode` answers an
 * array's elements when they can be shared, else the plain bytes when known;
 * `undefined`: let the serializer write it. `learn` takes the texts of an
 * array read back. An element that changed in place since its text was
 * last known (a message LangGraph gave an id after its task wrote it) is a
 * derived piece of that text when `allowed.deriving()` and it is small.
 *
 * @since 0.1.0
 */
export const makeEncoder = (
  dumpJson: DumpJson,
  allowed: Allowed = { framing: () => true, deriving: () => true, records: () => true }
) => {
  /** An element's text, kept while its trace holds; written for `below` levels down or less deep. */
  interface Known {
    readonly trace: Trace
    readonly element: Element
    readonly below: number
  }
  // Weak: keyed by the caller's values (LangGraph's messages), each text goes with its value.
  const texts = new WeakMap<object, Known>()
  /**
   * The last array encoded or read whose first item is the key (held weakly), and what was known
   * of each of its items. LangGraph hands the saver a new array at every
   * step holding the same objects, so an item found at the same position
   * takes that position's text as its candidate without a lookup. A
   * candidate is only that: its trace decides (a trace that holds means the
   * same text, whatever object it was recorded on).
   */
  const lastRuns = new WeakMap<
    object,
    { readonly items: ReadonlyArray<unknown>; readonly known: Array<Known | undefined> }
  >()

  /** Records an array encoded or read, under its first item when that is an object. */
  const setRun = (items: ReadonlyArray<unknown>, known: Array<Known | undefined>) => {
    const first = items[0]
    if (typeof first === "object" && first !== null) lastRuns.set(first, { items, known })
  }

  /** `element` as `value`'s text while `trace` holds. */
  const keep = (value: object, trace: Trace, element: Element, below: number): Known => {
    const kept = { trace, element, below }
    texts.set(value, kept)
    return kept
  }

  const fresh = (value: unknown, below: number): Element | undefined => {
    const bytes = dumpJson(value, below)
    // Functions and the like serialize to nothing alone, to `null` inside an
    // array. (Cycles and BigInts make `dumpJson` throw: `put` fails.)
    if (bytes.byteLength === 0) return undefined
    return { key: hashOf(bytes), bytes }
  }

  /**
   * `element`, which may be stored as a derived piece of `known`'s text when
   * that is always stored as a plain piece (a derived one is never a base)
   * and the derived piece is small.
   */
  const derivedFrom = (known: Known | undefined, element: Element): Element => {
    const base = known?.element
    if (base === undefined || base.derived !== undefined || !allowed.deriving()) return element
    const piece = derive(base, element.bytes)
    return piece === undefined ? element : { ...element, derived: { key: hashOf(piece), piece, base } }
  }

  /** An object's element, its text reused while `known`'s trace holds; what is known of it afterwards. */
  const objectElement = (value: object, known: Known | undefined, below: number): Known | Element | undefined => {
    if (known !== undefined && known.below >= below && known.trace.matches(value)) return known
    const trace = new Trace()
    const traceable = trace.record(value)
    const written = fresh(value, below)
    if (written === undefined || !traceable) {
      texts.delete(value)
      return written
    }
    return keep(value, trace, derivedFrom(known, written), below)
  }

  /** An array `below - 1` levels under the stored value's top, its elements `below`. */
  const encodeArray = (value: ReadonlyArray<unknown>, below: number): Encoded | undefined => {
    // Numbers, short strings and the like (an embedding, a list of ids) are
    // smaller than a piece's hash and row: not worth serializing one by one.
    if (!value.every(worthAPiece)) return undefined
    const first = value[0]
    const last = typeof first === "object" && first !== null ? lastRuns.get(first) : undefined
    const elements: Array<Element> = []
    const known: Array<Known | undefined> = []
    let size = 2
    for (let i = 0; i < value.length; i++) {
      const item = value[i]
      let element: Element | undefined
      if (typeof item === "object" && item !== null) {
        const found = objectElement(item, last?.items[i] === item ? last.known[i] : texts.get(item), below)
        if (found !== undefined && "trace" in found) {
          known[i] = found
          element = found.element
        } else {
          element = found
        }
      } else {
        element = fresh(item, below)
      }
      if (element === undefined) return undefined
      elements.push(element)
      size += element.bytes.byteLength + 1
    }
    setRun(value, known)
    return !worthSharing(size, elements.length)
      ? { _tag: "serialized", type: "json", bytes: join(elements.map((element) => element.bytes)) }
      : { _tag: "shared", type: SHARED, elements }
  }

  /**
   * A value written as its array inside the text of the value with that
   * array empty (`…[]}`): the frame, then the array's elements; small arrays
   * keep the plain encoding, written whole from the array's bytes.
   */
  const encodeFramed = (value: object): Encoded | undefined => {
    if (!allowed.framing()) return undefined
    const found = framing(value)
    if (found === undefined) return undefined
    const inner = encodeArray(found.items, 2)
    if (inner === undefined) return undefined
    const text = decoder.decode(dumpJson(found.empty, 0))
    if (!text.endsWith("[]}")) return undefined
    const [before, after] = [text.slice(0, -3), "}"]
    if (inner._tag === "serialized") return { ...inner, bytes: framed(before, inner.bytes, after) }
    const frame = frameOf(before, after)
    return { _tag: "shared", type: FRAMED, elements: [{ key: hashOf(frame), bytes: frame }, ...inner.elements] }
  }

  /**
   * A plain object whose values are objects or long strings as its entries,
   * `"key":value` each (a record list); small ones keep the plain encoding.
   * An entry's text is that of a one-key object of it without its braces: a
   * plain object's text is `{` + its entries' texts joined by `,` + `}`.
   */
  const encodeRecord = (value: object): Encoded | undefined => {
    if (!allowed.records()) return undefined
    const fields = plainFields(value)
    if (fields === undefined) return undefined
    const keys = Object.keys(fields)
    if (keys.length === 0 || !keys.every((key) => worthAPiece(fields[key]))) return undefined
    const elements: Array<Element> = []
    let size = 2
    for (const key of keys) {
      const text = dumpJson({ [key]: fields[key] }, 0)
      // A value JSON writes as nothing (a function) leaves `{}`: the serializer writes the record.
      if (text.byteLength <= 2) return undefined
      const bytes = text.subarray(1, -1)
      elements.push({ key: hashOf(bytes), bytes })
      size += bytes.byteLength + 1
    }
    return !worthSharing(size, elements.length)
      ? { _tag: "serialized", type: "json", bytes: record(elements.map((element) => element.bytes)) }
      : { _tag: "shared", type: RECORD, elements }
  }

  /** `value` as shared elements when it is an array, a framed one or a record and sharing holds it; else see {@link Encoded}. */
  const encode = (value: unknown): Encoded | undefined =>
    Array.isArray(value)
      ? encodeArray(value, 1)
      : typeof value === "object" && value !== null
      ? encodeFramed(value) ?? encodeRecord(value)
      : undefined

  /**
   * Learns the texts of an array read back: `elements[i]` is the stored
   * text `items[i]` was revived from. A read value holds new objects, which
   * the thread's next put hands back with one more item; their stored texts
   * are taken as known (traced now, so an edit made before that put is seen)
   * instead of serializing every one again.
   */
  const learn = (items: ReadonlyArray<unknown>, elements: ReadonlyArray<Element>): void => {
    const known: Array<Known | undefined> = []
    items.forEach((item, i) => {
      if (typeof item !== "object" || item === null) return
      const trace = new Trace()
      if (!trace.record(item)) return
      const element = elements[i]!
      // Kept as long as the item lives: its own bytes, not the read's buffer.
      const bytes = owned(element.bytes)
      known[i] = keep(item, trace, bytes === element.bytes ? element : { key: element.key, bytes }, 1)
    })
    setRun(items, known)
  }

  return { encode, learn }
}
