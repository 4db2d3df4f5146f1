/**
 * The storage format levels of stored rows: the level each encoding belongs
 * to (`levelOf`, read from `FormatLevel.LEVELS`), and the encodings a
 * thread's rows are written in (`encodingsOf`). What a reader checks before
 * it decodes a row, and an import before it stores rows.
 *
 * @since 0.1.0
 */
import { LEVELS } from "../../FormatLevel.ts"
import type { ThreadRows } from "../../StorageDriver.ts"
import {
  COMPRESSED_PIECE,
  DERIVED,
  HEADER_WITHOUT_ID,
  isCompressed,
  isDerived,
  SEALED_SUFFIX,
  withoutId
} from "../StorageFormat.ts"

/** What a stored type of this library's own (not a serializer's) looks like: `shared-…` or `…/<n>`. */
const OWN_TYPE = /^shared-|\/\d+$/

const levels = new Map<string, number | undefined>()

/**
 * The level a stored type (sealed or not) belongs to; `undefined` for a type
 * that looks like one of this library's (`shared-…`, `…/<n>`) but that this
 * release does not know, written by a newer one. Any other type is a
 * serializer's (LangGraph's `json` and `bytes`, or a custom `serde`'s): level 1.
 *
 * @since 0.1.0
 */
export const levelOf = (type: string): number | undefined => {
  // Asked for every value read: the answers of the few types a store holds are kept.
  if (levels.has(type)) return levels.get(type)
  const base = type.endsWith(SEALED_SUFFIX) ? type.slice(0, -SEALED_SUFFIX.length) : type
  const found = LEVELS.find((level) => level.encodings.includes(base))
  const level = found !== undefined ? found.level : OWN_TYPE.test(base) ? undefined : 1
  if (levels.size < 256) levels.set(type, level)
  return level
}

/**
 * The encodings a thread's rows are written in: their stored types, and
 * `DERIVED`, `COMPRESSED_PIECE` and `HEADER_WITHOUT_ID` (see `StorageFormat`)
 * where they hold those. {@link levelOf} each says which level a store must
 * be at to take the rows.
 *
 * @since 0.3.0
 */
export const encodingsOf = (rows: ThreadRows): ReadonlySet<string> => {
  const found = new Set<string>()
  for (const { type } of rows.blobs) found.add(type)
  for (const { type } of rows.writes) found.add(type)
  if (rows.pieces.some((piece) => isDerived(piece.bytes))) found.add(DERIVED)
  if (rows.pieces.some((piece) => isCompressed(piece.bytes))) found.add(COMPRESSED_PIECE)
  if (rows.checkpoints.some((row) => withoutId(row.checkpoint))) found.add(HEADER_WITHOUT_ID)
  return found
}
