/**
 * Sealing's frames (`codec/Sealing.ts`): what a sealed row stores, that it
 * opens only where it was sealed, and how a sealed list keeps its hashes
 * readable.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as Encryption from "../../src/Encryption.ts"
import * as Sealing from "../../src/internal/codec/Sealing.ts"
import * as StorageFormat from "../../src/internal/StorageFormat.ts"
import type { BlobRow, WriteRow } from "../../src/StorageDriver.ts"
/** A key of 32 equal bytes. */
const keyOf = (byte: number) => Buffer.alloc(32, byte).toString("base64")

const sealingOf = (options: Partial<Encryption.EncryptionOptions> = {}) =>
  Effect.runSync(
    Encryption.Encryption.use((encryption) => Effect.succeed(Sealing.make(encryption))).pipe(
      Effect.provide(Encryption.layer({ keys: { k1: keyOf(1) }, primary: "k1", ...options }))
    )
  )

const utf8 = new TextEncoder()
const sealing = sealingOf()
const key = sealing.threadKey("t")
if (typeof key === "string") throw new Error(key)
const place = { thread_id: "t", checkpoint_ns: "" }
const blob: BlobRow = { channel: "a", version: "1", type: "json", bytes: utf8.encode("{\"x\":1}"), base: undefined }
const tally = () => ({ plaintext: 0 })
/** A row with its bytes as plain numbers (an opened row's bytes may be a Buffer). */
const plain = <R extends { readonly bytes: Uint8Array | undefined }>(row: R | string) =>
  typeof row === "string" ? row : { ...row, bytes: row.bytes && [...row.bytes] }

describe("a sealed value", () => {
  const sealed = sealing.sealBlob(key, "t", "", blob)

  it("is stored as type+sealed, a frame: version 1, the key id, then the ciphertext", () => {
    expect(sealed.type).toBe("json+sealed")
    expect(Sealing.isSealed(sealed.type)).toBe(true)
    expect(Sealing.isSealed("json")).toBe(false)
    expect([...sealed.bytes!.subarray(0, 4)]).toEqual([1, 2, ...utf8.encode("k1")])
    expect(Buffer.from(sealed.bytes!).includes(Buffer.from("\"x\""))).toBe(false)
  })

  it("opens where it was sealed, to the value it was", () => {
    expect(plain(sealing.openBlob(place, sealed, tally()))).toEqual(plain(blob))
  })

  it("does not open moved to another place, altered or truncated", () => {
    expect(sealing.openBlob({ ...place, thread_id: "u" }, sealed, tally())).toMatch(/does not decrypt/)
    expect(sealing.openBlob(place, { ...sealed, version: "2" }, tally())).toMatch(/does not decrypt/)
    const altered = Uint8Array.from(sealed.bytes!)
    altered[altered.length - 1]! ^= 1
    expect(sealing.openBlob(place, { ...sealed, bytes: altered }, tally())).toMatch(/does not decrypt/)
    expect(sealing.openBlob(place, { ...sealed, bytes: sealed.bytes!.subarray(0, 3) }, tally())).toBe("is truncated")
    expect(sealing.openBlob(place, { ...sealed, bytes: utf8.encode("xx") }, tally())).toMatch(/not a ciphertext/)
  })

  it("under a key the ring does not hold, says which", () => {
    const other = sealingOf({ keys: { k2: keyOf(2) }, primary: "k2" })
    expect(other.openBlob(place, sealed, tally())).toMatch(/sealed under the key "k1", which the keyring does not hold/)
  })

  it("a write is bound to its checkpoint and task", () => {
    const at = { thread_id: "t", checkpoint_ns: "", checkpoint_id: "c1" }
    const write: WriteRow = {
      task_id: "task",
      task_path: "",
      idx: 0,
      channel: "a",
      type: "json",
      bytes: utf8.encode("1")
    }
    const sealedWrite = sealing.sealWrite(key, at, write)
    expect(plain(sealing.openWrite(at, sealedWrite, tally()))).toEqual(plain(write))
    expect(sealing.openWrite({ ...at, checkpoint_id: "c2" }, sealedWrite, tally())).toMatch(/does not decrypt/)
    expect(sealing.openWrite(at, { ...sealedWrite, idx: 1 }, tally())).toMatch(/does not decrypt/)
  })
})

describe("rows that are not sealed", () => {
  it("an empty channel stays as it is", () => {
    const empty: BlobRow = { ...blob, type: "empty", bytes: undefined }
    expect(sealing.sealBlob(key, "t", "", empty)).toBe(empty)
    expect(sealing.openBlob(place, empty, tally())).toBe(empty)
  })

  it("plaintext is an error, unless allowed, and then counted", () => {
    expect(sealing.openBlob(place, blob, tally())).toBe("is not encrypted (allowPlaintext is off)")
    const counted = tally()
    expect(sealingOf({ allowPlaintext: true }).openBlob(place, blob, counted)).toBe(blob)
    expect(counted.plaintext).toBe(1)
  })
})

describe("a sealed list", () => {
  const hashes = StorageFormat.packHashes(["a", "b"].map((text) => StorageFormat.hashOf(utf8.encode(text))))
  const list: BlobRow = {
    channel: "messages",
    version: "2",
    type: StorageFormat.SHARED,
    bytes: hashes,
    base: undefined
  }
  const sealed = sealing.sealBlob(key, "t", "", list)

  it("keeps its hashes in front, readable, then a trailer of whole units ending in the frame's length", () => {
    const bytes = sealed.bytes!
    expect(sealed.type).toBe(StorageFormat.SHARED + StorageFormat.SEALED_SUFFIX)
    expect(bytes.byteLength % StorageFormat.HASH_BYTES).toBe(0)
    expect(bytes.subarray(0, hashes.byteLength)).toEqual(hashes)
    const frame = bytes.at(-1)!
    expect(bytes.byteLength - hashes.byteLength).toBe(Math.ceil((frame + 1) / StorageFormat.HASH_BYTES) * 16)
    expect(StorageFormat.references(sealed).slice(0, 2)).toEqual(StorageFormat.unpackHashes(hashes))
  })

  it("opens to its hashes; a hash changed or a trailer cut does not", () => {
    expect(plain(sealing.openBlob(place, sealed, tally()))).toEqual(plain(list))
    const swapped = Uint8Array.from(sealed.bytes!)
    swapped[0]! ^= 1
    expect(sealing.openBlob(place, { ...sealed, bytes: swapped }, tally())).toMatch(/does not decrypt/)
    expect(sealing.openBlob(place, { ...sealed, bytes: hashes }, tally())).toBe("is truncated")
  })
})

describe("a sealed framed list", () => {
  const hashes = StorageFormat.packHashes(["frame", "a"].map((text) => StorageFormat.hashOf(utf8.encode(text))))
  const at = (version: string, base?: BlobRow["base"]): BlobRow => ({
    channel: "messages",
    version,
    type: StorageFormat.FRAMED,
    bytes: hashes,
    base
  })
  const sealedBase = sealing.sealBlob(key, "t", "", at("1"))
  const sealed = sealing.sealBlob(key, "t", "", at("2", { version: "1", keep: 2 }))

  it("is a list: its hashes stay readable, and it opens with its base, sealed as a framed list too", () => {
    expect(sealed.type).toBe(StorageFormat.FRAMED + StorageFormat.SEALED_SUFFIX)
    expect(StorageFormat.references(sealed).slice(0, 2)).toEqual(StorageFormat.unpackHashes(hashes))
    const read = { ...sealed, base: { version: "1", keep: 2, list: sealedBase.bytes, base: undefined } }
    const opened = sealing.openBlob(place, read, tally())
    if (typeof opened === "string") throw new Error(opened)
    expect([...opened.bytes!]).toEqual([...hashes])
    expect([...opened.base!.list!]).toEqual([...hashes])
  })

  it("does not open as a shared list of the same place, nor with a shared list's base", () => {
    expect(sealing.openBlob(place, { ...sealed, type: StorageFormat.SHARED + StorageFormat.SEALED_SUFFIX }, tally()))
      .toMatch(/does not decrypt/)
    const sharedBase = sealing.sealBlob(key, "t", "", { ...at("1"), type: StorageFormat.SHARED })
    const read = { ...sealed, base: { version: "1", keep: 2, list: sharedBase.bytes, base: undefined } }
    expect(sealing.openBlob(place, read, tally())).toMatch(/its base \(version 1\) does not decrypt/)
  })
})
