/**
 * The list layout, pure: how a channel's list is stored against the list
 * its channel stored before, and how a stored list's entries are read back.
 *
 * A list may extend a *base*, a list stored at another version of the same
 * channel: its first `keep` entries are the base's, so a step that appends
 * one message stores one hash, not the whole array. Bases are at most two
 * deep (`BASE_DEPTH`): a full list every ~n^⅔ new entries, a list extending
 * it every ~n^⅓, and each step's list extending that, so an n-element
 * thread stores about 3·n^⅓ hashes per step and a read follows at most two
 * bases.
 *
 * @since 0.1.0
 */
import type { BlobRow, Piece, SharedBase } from "../../../StorageDriver.ts"
import { BASE_DEPTH, packHashes, pieceOf, unpackHashes } from "../../StorageFormat.ts"
import type { Element } from "./Elements.ts"

/**
 * A list's base, with the bases it extends in turn.
 *
 * @since 0.1.0
 */
export interface Base {
  readonly version: string
  readonly keep: number
  readonly base: Base | undefined
}

/**
 * A list as last written or read: what the next step of its channel extends.
 *
 * @since 0.1.0
 */
export interface List {
  /** Its stored type (`SHARED` or `FRAMED`): a list extends only lists of its own type. */
  readonly type: string
  readonly version: string
  readonly base: Base | undefined
  /** Its entries' hashes (the elements' own strings when written here: compared by identity first). */
  readonly keys: ReadonlyArray<string>
  /** Read since its channel's last put, and its items recognized then (see `Sharing.recognize`). */
  readonly recognized?: boolean | undefined
}

/**
 * A channel's list, laid out against what its channel stored before.
 *
 * @since 0.1.0
 */
export interface Laid {
  readonly blob: BlobRow
  /** Pieces to send: those of the entries the previous list did not have. */
  readonly pieces: ReadonlyArray<Piece>
  /** How many of the first entries the previous list had (their pieces are not sent). */
  readonly had: number
  /** Versions of the channel whose blobs hold the other entries' pieces. */
  readonly requires: ReadonlyArray<string>
  readonly list: List
}

/**
 * The pieces that store an element under `key`: its derived piece and the
 * plain piece that one is written against (sent again, so that it is there
 * whatever removed what stored it before), when `key` is the derived
 * piece's; else its text (see `Element`).
 *
 * @since 0.3.0
 */
export const piecesOf = (key: string, element: Element): Array<Piece> =>
  key === element.derived?.key
    ? [pieceOf(key, element.derived.piece), pieceOf(element.derived.base.key, element.derived.base.bytes)]
    : [pieceOf(key, element.bytes)]

/** The bases of a list, nearest first. */
const chainOf = (base: Base | undefined): Array<Base> => base === undefined ? [] : [base, ...chainOf(base.base)]

/**
 * Lays a channel's elements (stored under `keys`, one per element) out as a
 * list of `type` against `known`, the list its channel last stored or read
 * (`undefined`: against nothing, sending every piece; a list at the same
 * version or of another type is no base).
 *
 * @since 0.1.0
 */
export const layOut = (
  type: string,
  channel: string,
  version: string,
  elements: ReadonlyArray<Element>,
  keys: ReadonlyArray<string>,
  known: List | undefined
): Laid => {
  const previous = known?.version === version || known?.type !== type ? undefined : known
  const n = elements.length
  let common = 0
  if (previous !== undefined) {
    const max = Math.min(previous.keys.length, n)
    while (common < max && previous.keys[common] === keys[common]) common++
  }
  // The lists the new one may extend: the previous one and its bases, each
  // agreeing with the new elements up to where the chain still does. A list
  // one base deep may hold up to n^(2/3) own entries, two deep n^(1/3) (at
  // least 4: a short list is laid out again for little); of those that fit,
  // the one leaving the fewest own entries wins.
  const limits = [Infinity, Math.max(4, Math.ceil(n ** (2 / 3))), Math.max(4, Math.ceil(n ** (1 / 3)))]
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
  return {
    blob: {
      channel,
      version,
      type,
      bytes: packHashes(keys.slice(keep)),
      base: base && { version: base.version, keep }
    },
    pieces: elements.slice(common).flatMap((element, i) => piecesOf(keys[common + i]!, element)),
    had: common,
    // The previous list and its bases hold every piece not sent.
    requires: candidates.map((candidate) => candidate.version),
    list: {
      type,
      version,
      base: base && { version: base.version, keep, base: base.base },
      keys
    }
  }
}

/**
 * A pending write's elements (stored under `keys`) as a list of `type` of
 * its own: writes are short, so no base.
 *
 * @since 0.1.0
 */
export const ownList = (type: string, elements: ReadonlyArray<Element>, keys: ReadonlyArray<string>) => ({
  type,
  bytes: packHashes(keys),
  pieces: elements.flatMap((element, i) => piecesOf(keys[i]!, element))
})

/**
 * A stored list as read: its own hashes, and its bases' when a read brought
 * them.
 *
 * @since 0.1.0
 */
export interface StoredList {
  readonly bytes: Uint8Array | undefined
  readonly base?: SharedBase | undefined
}

/**
 * A stored list's entries: its base's first `keep`, then its own; a string
 * saying what is wrong.
 *
 * @since 0.1.0
 */
export const entriesOf = (row: StoredList, depth = 0): Array<string> | string => {
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

/**
 * A stored list's bases, as a list remembers them.
 *
 * @since 0.1.0
 */
export const baseOf = (base: SharedBase | undefined): Base | undefined =>
  base && { version: base.version, keep: base.keep, base: baseOf(base.base) }
