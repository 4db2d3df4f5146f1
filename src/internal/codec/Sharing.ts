/**
 * Structural sharing: the storage encoding that writes each step's new
 * information once instead of the whole state again. This module is its
 * face, a short `make` over its rooms: encoding elements
 * (`sharing/Elements.ts`, with `sharing/Trace.ts`), laying a list against
 * its base and reading one back (`sharing/Layout.ts`, pure), and what is
 * kept in memory between steps (`sharing/Caches.ts`). Its switch, the one
 * part a user sets, is `SharingEnabled.ts` (the package's `Sharing`).
 *
 * A channel value or pending write that is an array (above all `messages`)
 * is stored as a *list*: the hashes of its elements, each element's bytes
 * being a *piece* stored once per thread and found by its hash. A list may
 * extend a *base*, a list stored at another version of the same channel, at
 * most two deep (see `sharing/Layout.ts`). A value written as one array
 * inside some text (a `DeltaSnapshot`, a graph's input `{ messages: [...] }`)
 * is a *framed* list: a piece holding the text around the array, then the
 * array's elements (see `StorageFormat.FRAMED`).
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
 * of everything its serialization reads is unchanged (see
 * `sharing/Trace.ts`), so an element mutated in place is serialized again.
 *
 * @since 0.1.0
 */
import type { ThreadNamespace } from "../../Checkpoint.ts"
import type { Piece } from "../../StorageDriver.ts"
import { compose, derived, hashOf, pieceKey } from "../StorageFormat.ts"
import { makeListMemory, makePieceCache } from "./sharing/Caches.ts"
import {
  type Address,
  type Allowed,
  type Derived,
  type DumpJson,
  type Element,
  type Encoded,
  makeEncoder
} from "./sharing/Elements.ts"
import * as Layout from "./sharing/Layout.ts"

/** The storage format, as it was exported here before it had a module of its own. */
export {
  BASE_DEPTH,
  distinct,
  FRAMED,
  HASH_BYTES,
  hashOf,
  LIST_TYPES,
  pieceKey,
  references,
  SEALED_SUFFIX,
  SHARED
} from "../StorageFormat.ts"

/** Elements and lists, as they were exported here before they had rooms of their own. */
export type { Address, Allowed, DumpJson, Element, Encoded } from "./sharing/Elements.ts"
export type { Laid } from "./sharing/Layout.ts"

/**
 * Where a channel's list is stored: its namespace, channel and version.
 *
 * @since 0.1.0
 */
export interface ListPlace {
  readonly thread_id: string
  readonly checkpoint_ns: string
  readonly channel: string
  readonly version: string
}

/**
 * A stored list decoded: its entries' texts (joined, the `json` bytes the
 * plain encoding would have stored), and the list as the next step of its
 * channel would extend it.
 *
 * @since 0.1.0
 */
export interface Decoded {
  /** Its stored type, `SHARED` or `FRAMED` (whose first entry is its frame). */
  readonly type: string
  readonly keys: ReadonlyArray<string>
  /** Each entry's text, in order: reads parse them one by one. */
  readonly texts: ReadonlyArray<Uint8Array>
  /** Each entry's piece as stored: its text, or a derived piece of another. */
  readonly stored: ReadonlyArray<Uint8Array>
  readonly base: Layout.Base | undefined
}

/**
 * A piece a stored list refers to that neither this process nor the read
 * holds, by key.
 *
 * @since 0.1.0
 */
export interface Missing {
  readonly missing: string
}

/**
 * A value encoded as a list: its stored type and elements.
 *
 * @since 0.1.0
 */
export type SharedValue = Extract<Encoded, { readonly _tag: "shared" }>

/**
 * The structural sharing of one storage service: encoding on the way in,
 * decoding on the way out, and what it keeps between steps.
 *
 * @since 0.1.0
 */
export interface Sharing {
  /** A value's elements when they can be shared, else its plain bytes; `undefined`: the serializer writes it. */
  readonly encode: (value: unknown) => Encoded | undefined
  /** A channel's list laid out against its last list stored or read (`fresh`: against nothing). */
  readonly layOut: (
    location: ThreadNamespace,
    channel: string,
    version: string,
    list: SharedValue,
    options: { readonly fresh: boolean; readonly address?: Address | undefined }
  ) => Layout.Laid
  /** A pending write's list (of `thread_id`) as a list of its own, with its pieces. */
  readonly writeList: (
    thread_id: string,
    list: SharedValue,
    address?: Address
  ) => { readonly type: string; readonly bytes: Uint8Array; readonly pieces: ReadonlyArray<Piece> }
  /**
   * A stored list's bytes from the pieces its thread's rows hold, the first
   * piece found nowhere, or what is wrong; records nothing. A piece this
   * process kept for the thread (its bytes proven to match its key) is taken
   * before one read with the list.
   */
  readonly decode: (
    thread_id: string,
    row: Layout.StoredList & { readonly type: string },
    pieces: ReadonlyMap<string, Uint8Array>
  ) => Decoded | Missing | string
  /** Records a list read, for the next step of its channel to extend. */
  readonly remember: (place: ListPlace, decoded: Decoded) => void
  /**
   * Takes each item of `value`, the list read back at `place`, as
   * serializing to its piece, so the next put need not serialize them
   * again. Each is learned under the hash of its bytes, never under the key
   * the row stored it by (a row can be forged): `plainKeys` (encryption off,
   * keys are plain hashes) lets a key stand where the piece kept for the
   * thread under it is those very bytes, already proven. Only the first read since the channel's last put
   * does: reading again without writing (polling a thread's state) costs
   * nothing more, and a put follows the read in a graph's step. Call after
   * `remember`.
   */
  readonly recognize: (place: ListPlace, value: unknown, decoded: Decoded, plainKeys: boolean) => void
  /** Records the lists a stored checkpoint wrote, for the next step to extend. */
  readonly stored: (location: ThreadNamespace, laid: ReadonlyArray<Layout.Laid>) => void
  /** The hashes of the kept pieces of a namespace's remembered lists: a read need not fetch them. */
  readonly knownPieces: (location: ThreadNamespace) => Uint8Array
  /** Keeps, for `thread_id`, the pieces its read returned whose bytes match their hash (all when `authenticated`, see `Sealing`). */
  readonly keepRead: (thread_id: string, pieces: ReadonlyMap<string, Uint8Array>, authenticated?: boolean) => void
}

/**
 * An element read back, as the next put stores it: under the key it was
 * read by when the piece kept for the thread under that key is the very
 * piece it was read from (already proven, a plain hash: encryption off),
 * a derived piece with its base (both kept, so both proven); else under the
 * hash of its text, a piece of its own.
 */
const learned = (
  held: ReadonlyMap<string, Uint8Array>,
  plainKeys: boolean,
  key: string,
  text: Uint8Array,
  stored: Uint8Array
): Element => {
  if (plainKeys && held.get(key) === stored) {
    if (stored === text) return { key, bytes: text }
    const derivation = heldDerivation(held, key, stored)
    if (derivation !== undefined) return { key: hashOf(text), bytes: text, derived: derivation }
  }
  return { key: hashOf(text), bytes: text }
}

/** The derived piece `piece` (kept under `key`) with its base, when the base is `held`; else `undefined`. */
const heldDerivation = (held: ReadonlyMap<string, Uint8Array>, key: string, piece: Uint8Array): Derived | undefined => {
  const from = derived(piece)
  const base = typeof from === "object" ? held.get(from.base) : undefined
  return typeof from === "object" && base !== undefined
    ? { key, piece, base: { key: from.base, bytes: base } }
    : undefined
}

/**
 * The encoder and decoder of one storage service. `dumpJson` is
 * `JsonPlusSerializer`'s text of a value some levels down (see `DumpJson`);
 * without it (another serializer) values keep the plain encoding, and
 * shared lists stored earlier still read back. `allowed`: what the store's
 * format level lets it write now (framed lists, derived pieces).
 *
 * @since 0.1.0
 */
export const make = (
  dumpJson: DumpJson | undefined,
  allowed: Allowed = { framing: () => true, deriving: () => true, records: () => true }
): Sharing => {
  const encoder = dumpJson === undefined ? undefined : makeEncoder(dumpJson, allowed)
  const cache = makePieceCache()
  const lists = makeListMemory()

  /**
   * Keeps a thread's pieces of `elements` from `from` on, under their `keys`
   * (computed from their bytes), and which derived pieces hold which texts.
   */
  const keep = (thread_id: string, elements: ReadonlyArray<Element>, keys: ReadonlyArray<string>, from = 0) => {
    for (let i = from; i < elements.length; i++) {
      const element = elements[i]!
      for (const piece of Layout.piecesOf(keys[i]!, element)) cache.add(thread_id, pieceKey(piece.hash), piece.bytes)
      if (keys[i] === element.derived?.key) cache.derive(thread_id, element.key, keys[i]!)
    }
  }

  /**
   * The elements as a thread stores them, under their keys: under
   * `address`'s (encryption on); else its text where the thread holds a
   * plain piece of it, else a derived piece the thread holds of it, or the
   * one it may be, else its text. (One pass: a put of a long thread asks
   * for every element.)
   */
  const stored = (thread_id: string, elements: ReadonlyArray<Element>, address: Address | undefined) => {
    if (address !== undefined) return { elements, keys: elements.map(address) }
    const held = cache.of(thread_id)
    const resolved: Array<Element> = []
    const keys: Array<string> = []
    for (const element of elements) {
      const as = held.has(element.key) ? plain(element) : derivedIn(thread_id, held, element) ?? element
      resolved.push(as)
      keys.push(as.derived?.key ?? as.key)
    }
    return { elements: resolved, keys }
  }

  /** An element as its plain piece. */
  const plain = (element: Element): Element =>
    element.derived === undefined ? element : { ...element, derived: undefined }

  /** An element as the derived piece the thread holds of it, with its base; `undefined` when it holds none. */
  const derivedIn = (thread_id: string, held: ReadonlyMap<string, Uint8Array>, element: Element) => {
    const key = cache.derivedOf(thread_id, element.key)
    const piece = key === undefined ? undefined : held.get(key)
    const derivation = key === undefined || piece === undefined ? undefined : heldDerivation(held, key, piece)
    return derivation === undefined ? undefined : { ...element, derived: derivation }
  }

  /**
   * An entry's text and how it is stored: from the thread's kept pieces
   * (proven when kept), else from the read's (`pieces`); a derived piece
   * with its base from either. What is missing is named by the entry's key
   * (a read that names a derived piece as held leaves out its base too).
   */
  const entry = (
    held: ReadonlyMap<string, Uint8Array>,
    pieces: ReadonlyMap<string, Uint8Array>,
    key: string
  ): { readonly text: Uint8Array; readonly stored: Uint8Array } | Missing | string => {
    const stored = held.get(key) ?? pieces.get(key)
    if (stored === undefined) return { missing: key }
    const from = derived(stored)
    if (from === undefined) return { text: stored, stored }
    if (typeof from === "string") return from
    const base = held.get(from.base) ?? pieces.get(from.base)
    if (base === undefined) return { missing: key }
    const text = compose(from, base)
    return typeof text === "string" ? text : { text, stored }
  }

  return {
    encode: (value) => encoder?.encode(value),
    layOut: (location, channel, version, list, options) => {
      const { elements, keys } = stored(location.thread_id, list.elements, options.address)
      const known = options.fresh ? undefined : lists.get(location, channel)
      const laid = Layout.layOut(list.type, channel, version, elements, keys, known)
      // The pieces it sends, the last elements': the list it extends kept the others when it was stored or read.
      keep(location.thread_id, elements, keys, laid.had)
      return laid
    },
    writeList: (thread_id, list, address) => {
      const { elements, keys } = stored(thread_id, list.elements, address)
      keep(thread_id, elements, keys)
      return Layout.ownList(list.type, elements, keys)
    },
    decode: (thread_id, row, pieces) => {
      const keys = Layout.entriesOf(row)
      if (typeof keys === "string") return keys
      const texts: Array<Uint8Array> = []
      const stored: Array<Uint8Array> = []
      const held = cache.of(thread_id)
      for (const key of keys) {
        const found = entry(held, pieces, key)
        if (typeof found === "string" || "missing" in found) return found
        texts.push(found.text)
        stored.push(found.stored)
      }
      return { type: row.type, keys, texts, stored, base: Layout.baseOf(row.base) }
    },
    remember: (place, { base, keys, type }) => {
      const previous = lists.get(place, place.channel)
      // The same version read again keeps whether its items were recognized.
      const recognized = previous?.version === place.version ? previous.recognized : undefined
      lists.set(place, place.channel, { type, version: place.version, base, keys, recognized })
    },
    recognize: (place, value, { keys, stored: pieces, texts }, plainKeys) => {
      const list = lists.get(place, place.channel)
      if (encoder === undefined || list?.recognized === true || !Array.isArray(value) || value.length !== keys.length) {
        return
      }
      if (list !== undefined) lists.set(place, place.channel, { ...list, recognized: true })
      const held = cache.of(place.thread_id)
      encoder.learn(
        value,
        texts.map((bytes, i) => {
          const element = learned(held, plainKeys, keys[i]!, bytes, pieces[i]!)
          if (element.derived !== undefined) cache.derive(place.thread_id, element.key, element.derived.key)
          return element
        })
      )
    },
    stored: (location, laid) => {
      for (const { blob, list } of laid) lists.set(location, blob.channel, list)
    },
    knownPieces: (location) => {
      const held = cache.of(location.thread_id)
      return lists.known(location, (key) => held.has(key))
    },
    keepRead: (thread_id, pieces, authenticated = false) => {
      const held = cache.of(thread_id)
      // By key, then `get`: what is held already is never read (decompressed) again.
      for (const key of pieces.keys()) {
        if (held.has(key)) continue
        const bytes = pieces.get(key)
        if (bytes !== undefined && (authenticated || hashOf(bytes) === key)) cache.add(thread_id, key, bytes)
      }
    }
  }
}
