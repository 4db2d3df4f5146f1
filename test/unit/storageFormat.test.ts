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
