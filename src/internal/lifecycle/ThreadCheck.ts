/**
 * Whether rows given to be written back whole (`importThread`, from an
 * export or another storage) are a thread this library can read: every row
 * of it, each once, in a namespace that has checkpoints; parent links that
 * neither loop nor name a checkpoint the rows do not hold; pieces stored
 * under the hash of their bytes, derived ones extending a plain piece the
 * rows hold; and no value nested deeper than `put` accepts. Stored rows are
 * not trusted: a file can be edited, and each of these, written, would make
 * reads fail, walks of the parent chain never end, or (a piece under
 * another's hash) give the thread text it never held.
 *
 * `importThread` runs it before writing anything; `ExportFormat.decode` runs
 * it on each thread of a file, to name the line at fault.
 *
 * @since 0.1.0
 */
import { depthOf } from "../../JsonPlus.ts"
import { MAX_DEPTH } from "../../Revival.ts"
import type { ThreadRows } from "../../StorageDriver.ts"
import { VERSION } from "../codec/sealing/Frames.ts"
import * as StorageFormat from "../StorageFormat.ts"
import * as ParentLinks from "./ParentLinks.ts"

/**
 * The kinds of rows of a thread.
 *
 * @since 0.1.0
 */
export type RowKind = "checkpoint" | "blob" | "write" | "piece"

/**
 * What is wrong, and with which row (by kind and position among the rows of
 * its kind), when one row is at fault.
 *
 * @since 0.1.0
 */
export interface Problem {
  readonly detail: string
  readonly at: { readonly kind: RowKind; readonly index: number } | undefined
}

/**
 * The first problem of a thread's rows, if any.
 *
 * @since 0.1.0
 */
export const check = (rows: ThreadRows): Problem | undefined =>
  misplaced(rows) ?? twice(rows) ?? links(rows) ?? ofTexts(rows, textsOf(rows))

/** The checks over the pieces' texts (a derived piece's as it reads back), worked out once. */
const ofTexts = (rows: ThreadRows, texts: Texts) =>
  forged(rows, texts) ?? underived(rows, texts) ?? tooDeep(rows, texts)

const problem = (detail: string, kind?: RowKind, index?: number): Problem => ({
  detail,
  at: kind === undefined || index === undefined || index < 0 ? undefined : { kind, index }
})

const inNamespace = (checkpoint_ns: string) => checkpoint_ns === "" ? "" : ` (namespace "${checkpoint_ns}")`

/** No checkpoint, a checkpoint of another thread, or a blob or write in a namespace without checkpoints. */
const misplaced = (rows: ThreadRows): Problem | undefined => {
  if (rows.checkpoints.length === 0) return problem("a thread has at least one checkpoint, these rows have none")
  const stranger = rows.checkpoints.findIndex((row) => row.thread_id !== rows.thread_id)
  if (stranger >= 0) {
    const row = rows.checkpoints[stranger]!
    return problem(
      `checkpoint ${row.checkpoint_id} is of thread "${row.thread_id}", not "${rows.thread_id}"`,
      "checkpoint",
      stranger
    )
  }
  const namespaces = new Set(rows.checkpoints.map((row) => row.checkpoint_ns))
  for (const [kind, list] of [["blob", rows.blobs], ["write", rows.writes]] as const) {
    const stray = list.findIndex((row) => !namespaces.has(row.checkpoint_ns))
    if (stray >= 0) {
      const row = list[stray]!
      return problem(
        `a ${kind} of channel "${row.channel}" is in namespace "${row.checkpoint_ns}", which has no checkpoint`,
        kind,
        stray
      )
    }
  }
  return undefined
}

/** The first row whose key an earlier row of its kind has. */
const twice = (rows: ThreadRows): Problem | undefined =>
  repeated("checkpoint", rows.checkpoints, (row) => [row.checkpoint_ns, row.checkpoint_id]) ??
    repeated("blob", rows.blobs, (blob) => [blob.checkpoint_ns, blob.channel, blob.version]) ??
    repeated("write", rows.writes, (write) => [write.checkpoint_ns, write.checkpoint_id, write.task_id, write.idx]) ??
    repeated("piece", rows.pieces, (piece) => [Buffer.from(piece.hash).toString("hex")])

const repeated = <A>(
  kind: RowKind,
  rows: ReadonlyArray<A>,
  key: (row: A) => ReadonlyArray<string | number>
): Problem | undefined => {
  const seen = new Set<string>()
  for (const [index, row] of rows.entries()) {
    const text = JSON.stringify(key(row))
    if (seen.has(text)) return problem(`the ${kind} ${text} is given twice`, kind, index)
    seen.add(text)
  }
  return undefined
}

/** Parent links that loop, or name a checkpoint the rows do not hold. */
const links = (rows: ThreadRows): Problem | undefined => {
  const namespaces = ParentLinks.byNamespace(rows.checkpoints)
  const at = (checkpoint_ns: string, checkpoint_id: string) =>
    rows.checkpoints.findIndex((row) => row.checkpoint_ns === checkpoint_ns && row.checkpoint_id === checkpoint_id)
  const loop = ParentLinks.findLoop(namespaces)
  if (loop !== undefined) {
    const first = loop.ids[0]!
    return problem(
      `checkpoint ${first}${inNamespace(loop.checkpoint_ns)}: ${ParentLinks.describeLoop(loop)}`,
      "checkpoint",
      at(loop.checkpoint_ns, first)
    )
  }
  const orphan = ParentLinks.findMissingParent(namespaces)
  if (orphan !== undefined) {
    return problem(
      `checkpoint ${orphan.checkpoint_id}${inNamespace(orphan.checkpoint_ns)} has parent ` +
        `${orphan.parent_checkpoint_id}, which is not among the thread's checkpoints: a thread holds its whole chain`,
      "checkpoint",
      at(orphan.checkpoint_ns, orphan.checkpoint_id)
    )
  }
  return undefined
}

/**
 * Whether a piece is stored plain: JSON text, which never starts with the
 * version byte every sealed frame does. A sealed piece's address is a keyed
 * hash only the key's holder can check, and opening it checks its seal.
 */
const isPlain = (piece: { readonly bytes: Uint8Array }) => piece.bytes[0] !== VERSION

/**
 * A plain piece stored under a key that is not the hash of its text (a
 * derived piece's: of its bytes): every list naming that hash would read
 * the piece's text instead of the one the hash stands for.
 */
const forged = (rows: ThreadRows, texts: Texts): Problem | undefined => {
  const piece = rows.pieces.findIndex((piece) => {
    if (!isPlain(piece)) return false
    const key = StorageFormat.pieceKey(piece.hash)
    const text = StorageFormat.isDerived(piece.bytes) ? piece.bytes : texts.get(key)
    return typeof text === "object" && key !== StorageFormat.hashOf(text)
  })
  if (piece < 0) return undefined
  const hash = Buffer.from(rows.pieces[piece]!.hash).toString("hex")
  return problem(
    `the piece stored as ${hash} is not what that hash stands for (its bytes hash otherwise)`,
    "piece",
    piece
  )
}

/** The rows' plain pieces' texts by key: a derived piece's as it reads back, or what is wrong with it. */
type Texts = ReadonlyMap<string, Uint8Array | string>

/** The {@link Texts} of the rows (see `StorageFormat.DERIVED`). */
const textsOf = (rows: ThreadRows): Texts => {
  const stored = new Map(
    rows.pieces.filter(isPlain).map((piece) =>
      [StorageFormat.pieceKey(piece.hash), StorageFormat.textOf(piece.bytes)] as const
    )
  )
  return new Map([...stored].map(([key, bytes]) => {
    if (typeof bytes === "string") return [key, bytes]
    const from = StorageFormat.derived(bytes)
    if (from === undefined || typeof from === "string") return [key, from ?? bytes]
    const base = stored.get(from.base)
    return [
      key,
      base === undefined
        ? "its derived piece extends a piece the rows do not hold"
        : typeof base === "string"
        ? base
        : StorageFormat.compose(from, base)
    ]
  }))
}

/** A piece that does not read back: compressed text damaged, a derived piece extending a piece the rows lack or a derived one. */
const underived = (rows: ThreadRows, texts: Texts): Problem | undefined => {
  const piece = rows.pieces.findIndex((piece) => typeof texts.get(StorageFormat.pieceKey(piece.hash)) === "string")
  if (piece < 0) return undefined
  const { hash } = rows.pieces[piece]!
  return problem(
    `the piece stored as ${Buffer.from(hash).toString("hex")}: ${texts.get(StorageFormat.pieceKey(hash))}`,
    "piece",
    piece
  )
}

const utf8 = new TextDecoder()

/** Whether JSON text (or its bytes) nests deeper than `limit`. */
const deeper = (json: string | Uint8Array | undefined, limit: number) => {
  if (json === undefined || json.length <= limit) return false
  return depthOf(typeof json === "string" ? json : utf8.decode(json)) > limit
}

/** A value's JSON text: a `json` value's bytes, a compressed one's text; `undefined` for others (and damaged text). */
const jsonOf = (value: { readonly type: string; readonly bytes: Uint8Array | undefined }) => {
  if (value.type === "json") return value.bytes
  const text = value.type === StorageFormat.COMPRESSED && value.bytes !== undefined
    ? StorageFormat.decompress(value.bytes)
    : undefined
  return typeof text === "object" ? text : undefined
}

const deeperThan = (limit: number) => `nests deeper than ${limit} levels, more than put accepts`

/**
 * A value deeper than `put` accepts: metadata and `json` values over
 * `MAX_DEPTH`, an element of a shared list (every plain piece) over
 * `MAX_DEPTH - 1`. Values of other types, and sealed ones (which only a
 * holder of the key can have written), are not JSON text here.
 */
const tooDeep = (rows: ThreadRows, texts: Texts): Problem | undefined => {
  const metadata = rows.checkpoints.findIndex((row) => deeper(row.metadata, MAX_DEPTH))
  if (metadata >= 0) {
    const row = rows.checkpoints[metadata]!
    return problem(`checkpoint ${row.checkpoint_id}: its metadata ${deeperThan(MAX_DEPTH)}`, "checkpoint", metadata)
  }
  const blob = rows.blobs.findIndex((blob) => deeper(jsonOf(blob), MAX_DEPTH))
  if (blob >= 0) {
    const { channel, version } = rows.blobs[blob]!
    return problem(`the value of channel "${channel}" at version ${version} ${deeperThan(MAX_DEPTH)}`, "blob", blob)
  }
  const write = rows.writes.findIndex((write) => deeper(jsonOf(write), MAX_DEPTH))
  if (write >= 0) {
    const { checkpoint_id, idx, task_id } = rows.writes[write]!
    return problem(
      `write ${idx} of task ${task_id} on checkpoint ${checkpoint_id} ${deeperThan(MAX_DEPTH)}`,
      "write",
      write
    )
  }
  const piece = rows.pieces.findIndex((piece) => {
    const text = texts.get(StorageFormat.pieceKey(piece.hash))
    return typeof text === "object" && deeper(text, MAX_DEPTH - 1)
  })
  if (piece >= 0) return problem(`an element of a shared list ${deeperThan(MAX_DEPTH - 1)}`, "piece", piece)
  return undefined
}
