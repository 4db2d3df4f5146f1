/** The shared lists' storage format (`StorageFormat.ts`): hashes, packing, references, joining. */
import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import * as StorageFormat from "../../src/internal/StorageFormat.ts"

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

  it("a plain or sealed list refers to the pieces its bytes name, a sealed one's before its trailer", () => {
    expect(StorageFormat.references({ type: StorageFormat.SHARED, bytes })).toEqual(keys)
    const sealed = StorageFormat.SHARED + StorageFormat.SEALED_SUFFIX
    // A trailer of two units: a 20-byte frame, zeros, and the frame's length last (sealing/Frames).
    const trailer = new Uint8Array(StorageFormat.listTrailerLength(20)).fill(7)
    trailer[trailer.byteLength - 1] = 20
    expect(trailer.byteLength).toBe(32)
    expect(StorageFormat.references({ type: sealed, bytes: Buffer.concat([bytes, trailer]) })).toEqual(keys)
    // Too short to hold the trailer it names: no hashes.
    expect(StorageFormat.references({ type: sealed, bytes: trailer.subarray(16) })).toEqual([])
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

describe("compressed text (level 4)", () => {
  const json = utf8.encode(JSON.stringify({ notes: Array.from({ length: 40 }, (_, i) => `note ${i} of a long file`) }))
  const random = utf8.encode(JSON.stringify(createHash("sha512").update("x").digest("base64").repeat(1)))

  it("reads back as the very text, marked, its length said first; smaller by an eighth or not at all", () => {
    const compressed = StorageFormat.compress(json)!
    expect(compressed[0]).toBe(StorageFormat.COMPRESSED_MARK)
    expect(StorageFormat.isCompressed(compressed)).toBe(true)
    expect(compressed.byteLength).toBeLessThan((json.byteLength * 7) / 8)
    expect(StorageFormat.decompress(compressed)).toEqual(json)
    // Short text, and text that does not shrink (random bytes as base64, under 128 bytes either way), stay as they are.
    expect(StorageFormat.compress(utf8.encode("\"short\""))).toBeUndefined()
    expect(StorageFormat.compress(random)).toBeUndefined()
    // Base64 of random bytes: about its decoded size (zstd codes its 64 letters in 6 bits).
    const base64 = utf8.encode(
      `"data:image/png;base64,${
        Buffer.from(Array.from({ length: 30_000 }, (_, i) => (i * 7919) % 251)).toString("base64")
      }"`
    )
    expect(StorageFormat.compress(base64)!.byteLength).toBeLessThan(base64.byteLength)
  })

  it("no JSON text, sealed frame or derived piece reads as compressed", () => {
    for (const plain of ["{}", "[1]", "\"x\"", " {}", "null"]) {
      expect(StorageFormat.isCompressed(utf8.encode(plain))).toBe(false)
    }
    expect(StorageFormat.isCompressed(new Uint8Array([1, 2, 3]))).toBe(false)
    expect(StorageFormat.isCompressed(new Uint8Array([StorageFormat.DERIVED_MARK]))).toBe(false)
  })

  it("damage and bombs say what is wrong, and spend no memory on them", () => {
    const compressed = StorageFormat.compress(json)!
    expect(StorageFormat.decompress(compressed.subarray(0, 1))).toMatch(/cut short/)
    expect(StorageFormat.decompress(compressed.subarray(0, compressed.byteLength - 4))).toMatch(/compressed text/)
    // A length above what the bytes may stand for (1,024 times them), or above 256 MiB: refused before decompressing.
    const claims = (length: number) => {
      const out = [StorageFormat.COMPRESSED_MARK]
      do {
        out.push((length & 0x7f) | (length > 0x7f ? 0x80 : 0))
        length = Math.floor(length / 128)
      } while (length > 0)
      // The zstd frame: after the mark and the length's varint.
      const frame = compressed.subarray(compressed.findIndex((byte, i) => i > 0 && byte < 0x80) + 1)
      return new Uint8Array([...out, ...frame])
    }
    expect(StorageFormat.decompress(claims(10 * 1024 * 1024))).toMatch(/more than it may stand for/)
    expect(StorageFormat.decompress(claims(StorageFormat.COMPRESSED_LIMITS.bytes + 1))).toMatch(/more than it may/)
    // A length other than the text's: said so.
    expect(StorageFormat.decompress(claims(json.byteLength))).toEqual(json)
    expect(StorageFormat.decompress(claims(json.byteLength - 1))).toMatch(/does not decompress|not as long/)
    expect(StorageFormat.decompress(claims(json.byteLength + 1))).toMatch(/not as long as it says/)
    // Text a thousand times smaller compressed (zeros) is stored as it is: a reader would refuse the ratio.
    expect(StorageFormat.compress(new Uint8Array(4 * 1024 * 1024).fill(0x20))).toBeUndefined()
  })
})

describe("compressed text at its bounds", () => {
  it("whatever compress writes, decompress reads: near the ratio's bound too", () => {
    for (const length of [128, 1000, 20_480, 20_482, 100_000, 300_000]) {
      const text = new Uint8Array(length).fill(0x78)
      const compressed = StorageFormat.compress(text)
      if (compressed === undefined) continue
      const read = StorageFormat.decompress(compressed)
      expect(typeof read === "string" ? read : Buffer.from(read).equals(text), `${length}`).toBe(true)
    }
  })
})
