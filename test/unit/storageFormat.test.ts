/** The shared lists' storage format (`StorageFormat.ts`): hashes, packing, references, joining. */
import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import * as StorageFormat from "../../src/StorageFormat.ts"

const utf8 = new TextEncoder()
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

describe("hashes and keys", () => {
  it("a piece's plain address is the first 16 bytes of its SHA-256, as latin1", () => {
    const bytes = utf8.encode("{\"content\":\"hi\"}")
    const hash = StorageFormat.hashOf(bytes)
    expect(hash).toHaveLength(StorageFormat.HASH_BYTES)
    expect(Buffer.from(hash, "latin1")).toEqual(createHash("sha256").update(bytes).digest().subarray(0, 16))
    expect(StorageFormat.hashOf(utf8.encode("other"))).not.toBe(hash)
  })

  it("pieceKey and pieceOf are inverse, whatever the view's offset", () => {
    const key = StorageFormat.hashOf(utf8.encode("x"))
    const piece = StorageFormat.pieceOf(key, utf8.encode("x"))
    expect(StorageFormat.pieceKey(piece.hash)).toBe(key)
    const padded = new Uint8Array(20)
    padded.set(piece.hash, 4)
    expect(StorageFormat.pieceKey(padded.subarray(4))).toBe(key)
  })

  it("distinct drops repeated pieces, keeping the first of each", () => {
    const a = StorageFormat.pieceOf(StorageFormat.hashOf(utf8.encode("a")), utf8.encode("a"))
    const b = StorageFormat.pieceOf(StorageFormat.hashOf(utf8.encode("b")), utf8.encode("b"))
    const again = StorageFormat.pieceOf(StorageFormat.hashOf(utf8.encode("a")), utf8.encode("a"))
    expect(StorageFormat.distinct([a, b, again, b])).toEqual([a, b])
  })
})

describe("packing a list's hashes", () => {
  const keys = ["a", "b", "c"].map((value) => StorageFormat.hashOf(utf8.encode(value)))

  it("packs back to back and unpacks to the same keys", () => {
    const packed = StorageFormat.packHashes(keys)
    expect(packed.byteLength).toBe(3 * StorageFormat.HASH_BYTES)
    expect(StorageFormat.unpackHashes(packed)).toEqual(keys)
    expect(StorageFormat.unpackHashes(new Uint8Array())).toEqual([])
  })

  it("a length that is not a whole number of hashes does not unpack", () => {
    expect(StorageFormat.unpackHashes(StorageFormat.packHashes(keys).subarray(1))).toBeUndefined()
  })

  it("unpacks a view into a larger buffer from its own offset", () => {
    const packed = StorageFormat.packHashes(keys)
    const buffer = new Uint8Array(packed.byteLength + 3)
    buffer.set(packed, 3)
    expect(StorageFormat.unpackHashes(buffer.subarray(3))).toEqual(keys)
  })
})

describe("references", () => {
  const keys = ["x", "y"].map((value) => StorageFormat.hashOf(utf8.encode(value)))
  const bytes = StorageFormat.packHashes(keys)

  it("a plain or sealed list refers to the pieces its bytes name", () => {
    expect(StorageFormat.references({ type: StorageFormat.SHARED, bytes })).toEqual(keys)
    expect(StorageFormat.references({ type: StorageFormat.SHARED + StorageFormat.SEALED_SUFFIX, bytes })).toEqual(keys)
  })

  it("other types, empty rows and damaged lists refer to none", () => {
    expect(StorageFormat.references({ type: "json", bytes })).toEqual([])
    expect(StorageFormat.references({ type: StorageFormat.SHARED, bytes: undefined })).toEqual([])
    expect(StorageFormat.references({ type: StorageFormat.SHARED, bytes: bytes.subarray(0, 5) })).toEqual([])
  })
})

describe("join", () => {
  it("is the JSON array of the texts", () => {
    expect(text(StorageFormat.join([]))).toBe("[]")
    expect(text(StorageFormat.join([utf8.encode("1")]))).toBe("[1]")
    const joined = StorageFormat.join(["{\"a\":1}", "\"é😀\"", "null"].map((t) => utf8.encode(t)))
    expect(JSON.parse(text(joined))).toEqual([{ a: 1 }, "é😀", null])
  })
})

describe("derived pieces", () => {
  const base = utf8.encode(`{"kwargs":{"content":"${"a long message ".repeat(30)}","response_metadata":{}}}`)
  const key = StorageFormat.hashOf(base)
  const read = (piece: Uint8Array, from: Uint8Array = base) => {
    const found = StorageFormat.derived(piece)
    if (typeof found !== "object") throw new Error(`not derived: ${found}`)
    return StorageFormat.compose(found, from)
  }

  it("hold a text as its base with one span replaced, and read back as that text", () => {
    const edited = utf8.encode(
      text(base).replace(`"response_metadata":{}`, `"response_metadata":{},"id":"0f8a6a7e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"`)
    )
    const piece = StorageFormat.derive({ key, bytes: base }, edited)!
    expect(piece[0]).toBe(StorageFormat.DERIVED_MARK)
    expect(piece.byteLength).toBeLessThan(80)
    expect(StorageFormat.derivedFrom(piece)).toBe(key)
    expect(read(piece)).toEqual(edited)
    // At either end, a removal alone, an offset past 127 (a varint of two bytes), nothing changed.
    for (
      const changed of [
        utf8.encode(`[${text(base)}`),
        utf8.encode(`${text(base)} `),
        base.subarray(0, 200),
        base.subarray(300),
        utf8.encode(text(base).replace("message", "messages")),
        base
      ]
    ) expect(read(StorageFormat.derive({ key, bytes: base }, changed)!)).toEqual(changed)
  })

  it("are not written when a piece of its own is about as small", () => {
    expect(StorageFormat.derive({ key, bytes: base }, utf8.encode("something else entirely"))).toBeUndefined()
    expect(StorageFormat.derive({ key, bytes: base }, utf8.encode(`"${"b".repeat(500)}"`))).toBeUndefined()
  })

  it("no JSON text nor sealed frame reads as one; damage says what is wrong", () => {
    for (const plain of ["{}", "[1]", "\"x\"", " {}", "null"]) {
      expect(StorageFormat.derived(utf8.encode(plain))).toBe(undefined)
    }
    expect(StorageFormat.derived(new Uint8Array([1, 2, 3]))).toBe(undefined)
    const piece = StorageFormat.derive({ key, bytes: base }, utf8.encode(`${text(base)}!`))!
    expect(StorageFormat.derived(piece.subarray(0, 10))).toMatch(/cut short/)
    expect(StorageFormat.derived(piece.subarray(0, 17))).toMatch(/cut short/)
    expect(read(piece, base.subarray(0, 10))).toMatch(/more than its base holds/)
    expect(read(piece, piece)).toMatch(/extends a derived piece/)
  })
})
