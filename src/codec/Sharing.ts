/**
 * Structural sharing: the storage encoding that writes each step's new
 * information once instead of the whole state again.
 *
 * A channel value or pending write that is an array (above all `messages`)
 * is stored as a *list*: the hashes of its elements, each element's bytes
 * being a *piece* stored once per thread and found by its hash. A list may
 * extend a *base*, a list stored at another version of the same channel:
 * its first `keep` entries are the base's, so a step that appends one
 * message stores one hash, not the whole array. Bases are at most two deep:
 * a full list every ~n^⅔ new entries, a list extending it every ~n^⅓, and
 * each step's list extending that, so an n-element thread stores about
 * 3·n^⅓ hashes per step and a read follows at most two bases.
 *
 * Exactness: a piece is the element's text as `JsonPlusSerializer` writes
 * it, and `JsonPlusSerializer` writes an array as `[` + its elements' texts
 * joined by `,` + `]`, so a read rebuilds the very bytes the plain encoding
 * would have stored. Arrays this cannot hold for (functions and other
 * values JSON writes as nothing, another serializer) keep the plain
 * encoding, and so do small arrays and arrays of small elements (numbers,
 * ids, an embedding), for which a piece would cost more than it saves.
 *
 * Speed: an element's text is reused from an earlier step only when a trace
 * of everything its serialization reads (each object's class; a plain
 * object's or array's enumerable properties, deeply; what a LangChain
 * message's `toJSON` reads) is unchanged, so an element mutated in place is
 * serialized again. Objects whose serialization could read state a trace
 * cannot see (a `Date`, bytes, any other class or `toJSON`) are serialized
 * at every step. (Assumed, as JSON itself does not promise it: a `toJSON`
 * answers the same whatever key the element is found under.)
 *
 * @since 0.1.0
 */
import { Serializable } from "@langchain/core/load/serializable"
import { BaseMessage } from "@langchain/core/messages"
import { Context } from "effect"
import type { BlobRow, Piece, SharedBase } from "../StorageDriver.ts"
import { BASE_DEPTH, hashOf, join, packHashes, pieceOf, SHARED, unpackHashes } from "./StorageFormat.ts"

/** The storage format, as it was exported here before it had a module of its own. */
export {
  BASE_DEPTH,
  distinct,
  HASH_BYTES,
  hashOf,
  LIST_TYPES,
  pieceKey,
  references,
  SEALED_SUFFIX,
  SHARED
} from "./StorageFormat.ts"

/**
 * Arrays smaller than this serialized, or whose elements are smaller than
 * `MIN_ELEMENT_BYTES` on average, keep the plain encoding: a piece row and
 * its hash would cost more than they save.
 */
const MIN_SHARED_BYTES = 256
const MIN_ELEMENT_BYTES = 64
/** Lists remembered per process, for the next step of their channel. */
const REMEMBERED_LISTS = 1000
/**
 * The bytes of pieces kept in memory: what a read need not fetch again.
 * Oldest first out.
 */
const CACHED_PIECE_BYTES = 64 * 1024 * 1024

/**
 * Whether storage services write shared lists (default `true`). Turn it off
 * to keep every value in the plain encoding LangGraph's own savers read;
 * shared lists already stored keep reading back either way.
 *
 * @since 0.1.0
 */
export const Enabled = Context.Reference<boolean>("langgraph-checkpoint-effect/Sharing/Enabled", {
  defaultValue: () => true
})

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

/** A list's base, with the bases it extends in turn. */
interface Base {
  readonly version: string
  readonly keep: number
  readonly base: Base | undefined
}

/** The bases of a list, nearest first. */
const chainOf = (base: Base | undefined): Array<Base> => base === undefined ? [] : [base, ...chainOf(base.base)]

/** A list as last written or read: what the next step of its channel extends. */
interface List {
  readonly version: string
  readonly base: Base | undefined
  /** Its entries' hashes (the elements' own strings when written here: compared by identity first). */
  readonly keys: ReadonlyArray<string>
}

/**
 * A value encoded: `serialized` holds what the plain encoding stores;
 * `shared` holds its elements, to be laid out as a list.
 */
export type Encoded =
  | { readonly _tag: "serialized"; readonly type: "json"; readonly bytes: Uint8Array }
  | { readonly _tag: "shared"; readonly elements: ReadonlyArray<Element> }

/** A channel's list, laid out against what its channel stored before. */
export interface Laid {
  readonly blob: BlobRow
  /** Pieces to send: the entries the previous list did not have. */
  readonly pieces: ReadonlyArray<Piece>
  /** Versions of the channel whose blobs hold the other entries' pieces. */
  readonly requires: ReadonlyArray<string>
  readonly list: List
}

/**
 * Where a thread stores an element: its plain hash, or (encryption on) a
 * keyed hash of it.
 *
 * @since 0.1.0
 */
export type Address = (element: Element) => string

const plainAddress: Address = (element) => element.key

/**
 * Whether a LangChain message serializes through `Serializable.toJSON`,
 * whose reads a trace follows.
 */
const isTraceableMessage = (value: object): value is BaseMessage =>
  value instanceof BaseMessage &&
  value.toJSON === Serializable.prototype.toJSON &&
  typeof value.lc_kwargs === "object" && value.lc_kwargs !== null &&
  Object.getPrototypeOf(value.lc_kwargs) === Object.prototype

/**
 * Every value JSON serialization of an element reads, depth first: each
 * object's class, then a plain object's or array's enumerable properties in
 * order, or what a LangChain message's `toJSON` reads. Recorded when an
 * element is first serialized, then walked again at each later step and
 * compared as it goes: equal traces mean equal text.
 */
class Trace {
  readonly values: Array<unknown> = []
  private at = 0
  private recording = true

  /** Records `value`'s trace; false when serialization could read something a trace cannot see. */
  record(value: object): boolean {
    try {
      return this.walk(value, 0)
    } catch {
      return false
    }
  }

  /** Whether `value` still has the recorded trace. */
  matches(value: object): boolean {
    this.recording = false
    this.at = 0
    try {
      return this.walk(value, 0) && this.at === this.values.length
    } catch {
      return false
    }
  }

  private see(value: unknown): boolean {
    if (this.recording) {
      this.values.push(value)
      return true
    }
    return this.values[this.at++] === value
  }

  private walk(value: unknown, depth: number): boolean {
    if (typeof value !== "object" || value === null) return this.see(value)
    if (depth > 64) return false
    const proto: unknown = Object.getPrototypeOf(value)
    if (!this.see(proto)) return false
    if (Array.isArray(value)) {
      if (proto !== Array.prototype || !this.see(value.length)) return false
      for (let i = 0; i < value.length; i++) if (!this.walk(value[i], depth + 1)) return false
      return this.see(undefined)
    }
    if (proto !== Object.prototype && proto !== null) {
      // A LangChain message (the only class recorded): what `Serializable.toJSON`
      // reads, that is each key of `lc_kwargs` and its value, taken from the
      // message itself when it has that key. Its class's own answers are fixed.
      if (this.recording && !isTraceableMessage(value)) return false
      const message = value as BaseMessage
      if (!this.see(Object.hasOwn(message, "toJSON")) || !this.see(message.lc_serializable)) return false
      if (!this.walk(message.lc_namespace, depth + 1)) return false
      const kwargs = message.lc_kwargs
      if (!this.see(Object.getPrototypeOf(kwargs))) return false
      for (const key in kwargs) {
        const read = key in message ? (message as unknown as Record<string, unknown>)[key] : kwargs[key]
        if (!this.see(key) || !this.walk(read, depth + 1)) return false
      }
      return this.see(Trace)
    }
    if (!this.see("toJSON" in value) || (this.recording && "toJSON" in value)) return false
    for (const key in value) {
      if (!this.see(key) || !this.walk((value as Record<string, unknown>)[key], depth + 1)) return false
    }
    // Ends the object, so that a property added at its end is seen.
    return this.see(Trace)
  }
}

/** A stored list's entries: its base's first `keep`, then its own; a string saying what is wrong. */
const entriesOf = (
  row: { readonly bytes: Uint8Array | undefined; readonly base?: SharedBase | undefined },
  depth: number
): Array<string> | string => {
  const own = unpackHashes(row.bytes ?? new Uint8Array())
  if (own === undefined) return "its list is not a whole number of hashes"
  if (row.base === undefined) return own
  if (depth === BASE_DEPTH) return "its bases are deeper than this library writes"
  const base = row.base.list === undefined
    ? undefined
    : entriesOf({ bytes: row.base.list, base: row.base.base }, depth + 1)
  if (base === undefined) return `its base (version ${row.base.version}) is missing`
  if (typeof base === "string") return base
  if (base.length < row.base.keep) return `its base (version ${row.base.version}) is shorter than it keeps`
  return [...base.slice(0, row.base.keep), ...own]
}

const baseOf = (base: SharedBase | undefined): Base | undefined =>
  base && { version: base.version, keep: base.keep, base: baseOf(base.base) }

/** An element that may deserve a piece of its own: an object, or a long string. */
const worthAPiece = (value: unknown): boolean =>
  typeof value === "object" ? value !== null : typeof value === "string" && value.length >= MIN_ELEMENT_BYTES

const listKey = (thread_id: string, checkpoint_ns: string, channel: string) =>
  JSON.stringify([thread_id, checkpoint_ns, channel])

/**
 * The encoder and decoder of one storage service. `dumpJson` is
 * `JsonPlusSerializer`'s text of a value (it may throw); without it (another
 * serializer) values keep the plain encoding, and shared lists stored
 * earlier still read back.
 *
 * @since 0.1.0
 */
export const make = (dumpJson: ((value: unknown) => Uint8Array) | undefined) => {
  const texts = new WeakMap<object, { readonly trace: Trace; readonly element: Element }>()
  const lists = new Map<string, List>()

  const fresh = (value: unknown): Element | undefined => {
    const bytes = dumpJson!(value)
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

  /**
   * Encodes an array: its elements when they can be shared, else the plain
   * bytes when known. `undefined`: let the serializer write it.
   */
  const encode = (value: ReadonlyArray<unknown>): Encoded | undefined => {
    // Numbers, short strings and the like (an embedding, a list of ids) are
    // smaller than a piece's hash and row: not worth serializing one by one.
    if (dumpJson === undefined || !value.every(worthAPiece)) return undefined
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

  /**
   * Pieces this process wrote or read, by key. A key is its bytes' hash
   * (plain or keyed), so an entry is never stale; pieces read are kept only
   * when their bytes match their hash or their seal, so a damaged row of one
   * thread never feeds another.
   */
  const cache = new Map<string, Uint8Array>()
  let cachedBytes = 0

  const cachePiece = (key: string, bytes: Uint8Array) => {
    if (cache.has(key)) return
    cache.set(key, bytes)
    cachedBytes += bytes.byteLength
    for (const [oldest, evicted] of cache) {
      if (cachedBytes <= CACHED_PIECE_BYTES) break
      cache.delete(oldest)
      cachedBytes -= evicted.byteLength
    }
  }

  const remember = (key: string, list: List) => {
    lists.delete(key)
    lists.set(key, list)
    if (lists.size > REMEMBERED_LISTS) lists.delete(lists.keys().next().value!)
  }

  /**
   * Lays a channel's elements out against the list its channel last stored
   * (`fresh`: against nothing, sending every piece).
   */
  const layOut = (
    location: { readonly thread_id: string; readonly checkpoint_ns: string },
    channel: string,
    version: string,
    elements: ReadonlyArray<Element>,
    options: { readonly fresh: boolean; readonly address?: Address | undefined }
  ): Laid => {
    const address = options.address ?? plainAddress
    const keys = elements.map(address)
    const known = options.fresh ? undefined : lists.get(listKey(location.thread_id, location.checkpoint_ns, channel))
    const previous = known?.version === version ? undefined : known
    const n = elements.length
    let common = 0
    if (previous !== undefined) {
      const max = Math.min(previous.keys.length, n)
      while (common < max && previous.keys[common] === keys[common]) common++
    }
    // The lists the new one may extend: the previous one and its bases, each
    // agreeing with the new elements up to where the chain still does. A list
    // one base deep may hold up to n^(2/3) own entries, two deep n^(1/3); of
    // those that fit, the one leaving the fewest own entries wins.
    const limits = [Infinity, Math.max(16, Math.ceil(n ** (2 / 3))), Math.max(16, Math.ceil(n ** (1 / 3)))]
    let base: Base | undefined
    let keep = 0
    let agreed = common
    // Each base's `keep` is how far it agrees with the list extending it.
    const candidates = previous === undefined
      ? []
      : [{ version: previous.version, keep: common, base: previous.base }, ...chainOf(previous.base)]
    for (const candidate of candidates) {
      agreed = Math.min(agreed, candidate.keep)
      const depth = chainOf(candidate.base).length + 1
      const fits = depth <= BASE_DEPTH && agreed > 0 && n - agreed <= limits[depth]!
      if (fits && (base === undefined || agreed > keep)) {
        base = candidate
        keep = agreed
      }
    }
    elements.forEach((element, i) => cachePiece(keys[i]!, element.bytes))
    return {
      blob: {
        channel,
        version,
        type: SHARED,
        bytes: packHashes(keys.slice(keep)),
        base: base && { version: base.version, keep }
      },
      pieces: elements.slice(common).map((element, i) => pieceOf(keys[common + i]!, element.bytes)),
      // The previous list and its bases hold every piece not sent.
      requires: candidates.map((candidate) => candidate.version),
      list: {
        version,
        base: base && { version: base.version, keep, base: base.base },
        keys
      }
    }
  }

  /** A pending write's elements as a list of its own (writes are short: no base). */
  const writeList = (elements: ReadonlyArray<Element>, address: Address = plainAddress) => {
    const keys = elements.map(address)
    elements.forEach((element, i) => cachePiece(keys[i]!, element.bytes))
    return {
      type: SHARED,
      bytes: packHashes(keys),
      pieces: elements.map((element, i) => pieceOf(keys[i]!, element.bytes))
    }
  }

  /**
   * The `json` bytes of a stored list, from the pieces read with it (keyed
   * by {@link pieceKey}); a string saying what is wrong when they do not
   * make one (`unreadable`: why pieces read with it could not be used).
   */
  const decode = (
    row: { readonly bytes: Uint8Array | undefined; readonly base?: SharedBase | undefined },
    pieces: ReadonlyMap<string, Uint8Array>,
    remembering?: {
      readonly thread_id: string
      readonly checkpoint_ns: string
      readonly channel: string
      readonly version: string
    },
    unreadable?: ReadonlyMap<string, string>
  ): Uint8Array | string => {
    const entries = entriesOf(row, 0)
    if (typeof entries === "string") return entries
    const texts: Array<Uint8Array> = []
    for (const key of entries) {
      const bytes = pieces.get(key) ?? cache.get(key)
      if (bytes === undefined) return `a piece it refers to ${unreadable?.get(key) ?? "is missing"}`
      texts.push(bytes)
    }
    if (remembering !== undefined) {
      remember(listKey(remembering.thread_id, remembering.checkpoint_ns, remembering.channel), {
        version: remembering.version,
        base: baseOf(row.base),
        keys: entries
      })
    }
    return join(texts)
  }

  /**
   * The hashes (back to back) of the pieces of a namespace's remembered
   * lists that this process has: a read of the thread need not fetch them
   * (see `StorageDriver.getTuple`); `decode` finds them here.
   */
  const knownPieces = (location: { readonly thread_id: string; readonly checkpoint_ns: string }): Uint8Array => {
    const prefix = JSON.stringify([location.thread_id, location.checkpoint_ns]).slice(0, -1) + ","
    const known: Array<string> = []
    for (const [key, list] of lists) {
      if (key.startsWith(prefix)) { for (const entry of list.keys) if (cache.has(entry)) known.push(entry) }
    }
    return packHashes(known)
  }

  /**
   * Keeps the pieces a read returned whose bytes match their hash, or all
   * when `authenticated` (opened under their address, see `Sealing`).
   */
  const keepRead = (pieces: ReadonlyMap<string, Uint8Array>, authenticated = false) => {
    for (const [key, bytes] of pieces) {
      if (!cache.has(key) && (authenticated || hashOf(bytes) === key)) cachePiece(key, bytes)
    }
  }

  return {
    encode,
    layOut,
    writeList,
    decode,
    knownPieces,
    keepRead,
    /** Records the lists a stored checkpoint wrote, for the next step to extend. */
    stored: (location: { readonly thread_id: string; readonly checkpoint_ns: string }, laid: ReadonlyArray<Laid>) => {
      for (const { blob, list } of laid) {
        remember(listKey(location.thread_id, location.checkpoint_ns, blob.channel), list)
      }
    }
  }
}

/**
 * @since 0.1.0
 */
export type Sharing = ReturnType<typeof make>
