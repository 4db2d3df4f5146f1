/**
 * A tar archive (POSIX ustar) of directories and regular files: the format
 * PGlite's `loadDataDir` reads. Written here rather than with PGlite's own
 * `dumpDataDir`, which fails on a directory holding a socket (the owner's,
 * see `Owner`).
 *
 * @since 0.1.0
 */

/**
 * One entry: a path relative to the archive's root (`/`-separated); a
 * directory has no `size`, a file its size and what fills its bytes (`read`
 * writes exactly `size` bytes into the view it is given, in the archive
 * itself: no file is copied twice).
 *
 * @since 0.1.0
 */
export type Entry =
  | { readonly path: string; readonly mode: number; readonly mtime: number }
  | {
    readonly path: string
    readonly mode: number
    readonly mtime: number
    readonly size: number
    readonly read: (into: Uint8Array) => void
  }

const BLOCK = 512

const encoder = new TextEncoder()

/** `value` as `width - 1` octal digits and a NUL, as ustar numbers are written. */
const octal = (value: number, width: number) => value.toString(8).padStart(width - 1, "0") + "\0"

/** A path as ustar's `name` (100 bytes) and `prefix` (155 bytes), split at a `/`. */
const split = (path: string): readonly [name: string, prefix: string] => {
  if (encoder.encode(path).length <= 100) return [path, ""]
  for (let cut = path.indexOf("/"); cut !== -1; cut = path.indexOf("/", cut + 1)) {
    const [prefix, name] = [path.slice(0, cut), path.slice(cut + 1)]
    if (encoder.encode(prefix).length <= 155 && encoder.encode(name).length <= 100) return [name, prefix]
  }
  throw new Error(`tar: the path ${path} is too long for a ustar archive`)
}

const header = (entry: Entry, size: number): Uint8Array => {
  const block = new Uint8Array(BLOCK)
  const put = (offset: number, text: string) => block.set(encoder.encode(text), offset)
  const directory = !("size" in entry)
  const [name, prefix] = split(directory ? `${entry.path}/` : entry.path)
  put(0, name)
  put(100, octal(entry.mode & 0o7777, 8))
  put(108, octal(0, 8))
  put(116, octal(0, 8))
  put(124, octal(size, 12))
  put(136, octal(Math.max(0, Math.floor(entry.mtime)), 12))
  put(148, "        ")
  put(156, directory ? "5" : "0")
  put(257, "ustar\u000000")
  put(345, prefix)
  const sum = block.reduce((total, byte) => total + byte, 0)
  put(148, octal(sum, 7) + " ")
  return block
}

/**
 * The archive of `entries`, in their order (a directory before what it
 * holds).
 *
 * @since 0.1.0
 */
export const archive = (entries: ReadonlyArray<Entry>): Uint8Array => {
  const out = new Uint8Array(sizeOf(entries.map((entry) => "size" in entry ? entry.size : 0)))
  let offset = 0
  for (const entry of entries) {
    const size = "size" in entry ? entry.size : 0
    out.set(header(entry, size), offset)
    offset += BLOCK
    if ("size" in entry) entry.read(out.subarray(offset, offset + size))
    offset += Math.ceil(size / BLOCK) * BLOCK
  }
  return out
}

/**
 * How many bytes the archive of entries of these sizes takes (a
 * directory's is 0), to refuse one too large before reading any file.
 *
 * @since 0.1.0
 */
export const sizeOf = (sizes: ReadonlyArray<number>): number =>
  sizes.reduce((total, size) => total + BLOCK + Math.ceil(size / BLOCK) * BLOCK, 2 * BLOCK)
