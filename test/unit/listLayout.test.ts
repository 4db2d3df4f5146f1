/**
 * The list layout of structural sharing (`codec/Sharing.ts`): which arrays
 * become lists, how a list is laid out against the one its channel stored
 * before (its base, what it keeps, the pieces it sends), and how a stored
 * list reads back as the very bytes of the plain encoding.
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages"
import { DeltaSnapshot } from "@langchain/langgraph-checkpoint"
import { describe, expect, it } from "vitest"
import * as Sharing from "../../src/internal/codec/Sharing.ts"
import { makeListMemory, makePieceCache } from "../../src/internal/codec/sharing/Caches.ts"
import type * as Layout from "../../src/internal/codec/sharing/Layout.ts"
import * as StorageFormat from "../../src/internal/StorageFormat.ts"
import * as JsonPlus from "../../src/JsonPlus.ts"
import { MAX_DEPTH } from "../../src/Revival.ts"
import type { SharedBase } from "../../src/StorageDriver.ts"

const utf8 = new TextEncoder()
const text = (read: Uint8Array | { readonly bytes: Uint8Array } | Sharing.Decoded | Sharing.Missing | string) =>
  typeof read === "string" ? read : "missing" in read ? `missing ${read.missing}` : new TextDecoder().decode(
    read instanceof Uint8Array ? read : "texts" in read ? StorageFormat.join(read.texts) : read.bytes
  )
/** A list read back, or the test fails saying why not. */
const decoded = (read: Sharing.Decoded | Sharing.Missing | string): Sharing.Decoded => {
  if (typeof read === "string" || "missing" in read) throw new Error(text(read))
  return read
}
const dumpJson = (value: unknown) => utf8.encode(JSON.stringify(value) ?? "")
const at = { thread_id: "t", checkpoint_ns: "" }

/** A message-like element of about 100 bytes. */
const message = (n: number) => ({ role: "human", content: `message ${n} `.padEnd(100, "x") })
const messages = (count: number, from = 0) => Array.from({ length: count }, (_, i) => message(from + i))

const sharedOf = (sharing: Sharing.Sharing, value: unknown) => {
  const encoded = sharing.encode(value)
  if (encoded?._tag !== "shared") throw new Error("expected a shared list")
  return encoded
}
const elementsOf = (sharing: Sharing.Sharing, value: ReadonlyArray<unknown>) => sharedOf(sharing, value).elements

const piecesOf = (laid: ReadonlyArray<{ readonly pieces: ReadonlyArray<{ hash: Uint8Array; bytes: Uint8Array }> }>) =>
  new Map(laid.flatMap((l) => l.pieces).map((piece) => [StorageFormat.pieceKey(piece.hash), piece.bytes]))

describe("encode", () => {
  it("an array of objects large enough becomes a list of elements addressed by their plain hash", () => {
    const elements = elementsOf(Sharing.make(dumpJson), messages(4))
    expect(elements.map((element) => text(element.bytes))).toEqual(messages(4).map((m) => JSON.stringify(m)))
    expect(elements[0]!.key).toBe(StorageFormat.hashOf(elements[0]!.bytes))
  })

  it("small arrays keep the plain encoding, byte for byte", () => {
    const small = [{ a: 1 }, { b: 2 }]
    const encoded = Sharing.make(dumpJson).encode(small)
    expect(encoded?._tag).toBe("serialized")
    if (encoded?._tag === "serialized") expect(text(encoded.bytes)).toBe(JSON.stringify(small))
  })

  it("numbers and short strings, or no JSON serializer, are left to the serializer", () => {
    expect(Sharing.make(dumpJson).encode([1, 2, 3])).toBeUndefined()
    expect(Sharing.make(dumpJson).encode(["short", ...messages(4)])).toBeUndefined()
    expect(Sharing.make(undefined).encode(messages(4))).toBeUndefined()
  })

  it("an element mutated in place is serialized again", () => {
    const sharing = Sharing.make(dumpJson)
    const value = messages(4)
    const before = elementsOf(sharing, value)[0]!.key
    value[0]!.content = "changed ".padEnd(100, "y")
    expect(elementsOf(sharing, value)[0]!.key).not.toBe(before)
  })
})

describe("a list read back", () => {
  /** A sharing whose serializer counts its calls. */
  const counting = () => {
    let calls = 0
    const sharing = Sharing.make((value) => {
      calls++
      return dumpJson(value)
    })
    return { sharing, calls: () => calls }
  }
  const place = { ...at, channel: "messages", version: "1" }
  /** `value` read back as a list stored from `stored`: new objects, the stored texts. */
  const readBack = (sharing: Sharing.Sharing, stored: ReadonlyArray<object>, plainKeys = true) => {
    const elements = elementsOf(Sharing.make(dumpJson), stored)
    const value = stored.map((item) => structuredClone(item) as { content: string })
    const texts = elements.map((element) => element.bytes)
    const keys = plainKeys ? elements.map((element) => element.key) : elements.map((_, i) => `keyed ${i}`)
    const decoded = { type: StorageFormat.SHARED, keys, texts, stored: texts, base: undefined }
    sharing.remember(place, decoded)
    sharing.recognize(place, value, decoded, plainKeys)
    return { value, elements }
  }

  it("is not serialized again by the next put, which serializes only what it adds", () => {
    const { calls, sharing } = counting()
    const { elements, value } = readBack(sharing, messages(30))
    const next = elementsOf(sharing, [...value, message(30)])
    expect(calls()).toBe(1)
    expect(next.slice(0, 30)).toEqual(elements)
    expect(text(next[30]!)).toBe(JSON.stringify(message(30)))
  })

  it("an item edited after the read is serialized again", () => {
    const { calls, sharing } = counting()
    const { elements, value } = readBack(sharing, messages(30))
    value[3]!.content = "edited after the read"
    const next = elementsOf(sharing, [...value, message(30)])
    expect(calls()).toBe(2)
    expect(text(next[3]!)).toBe(JSON.stringify(value[3]))
    expect(next[3]!.key).not.toBe(elements[3]!.key)
  })

  it("is recognized once until its channel's next put: reading again costs nothing more", () => {
    const { calls, sharing } = counting()
    readBack(sharing, messages(30))
    const { value } = readBack(sharing, messages(30))
    elementsOf(sharing, [...value, message(30)])
    expect(calls()).toBe(31)
    sharing.stored(at, [
      sharing.layOut(at, "messages", "2", sharedOf(sharing, [...value, message(30)]), { fresh: false })
    ])
    const again = readBack(sharing, messages(31))
    const before = calls()
    elementsOf(sharing, [...again.value, message(31)])
    expect(calls() - before).toBe(1)
  })

  it("keyed hashes (encryption on) are not taken as the pieces' plain hashes", () => {
    const { sharing } = counting()
    const { elements, value } = readBack(sharing, messages(30), false)
    expect(elementsOf(sharing, value).map((element) => element.key)).toEqual(elements.map((element) => element.key))
  })
})

describe("layOut", () => {
  it("a first list stores every hash and sends every piece", () => {
    const sharing = Sharing.make(dumpJson)
    const laid = sharing.layOut(at, "messages", "1", sharedOf(sharing, messages(3)), { fresh: false })
    expect(laid.blob).toMatchObject({ channel: "messages", version: "1", type: StorageFormat.SHARED, base: undefined })
    expect(laid.blob.bytes!.byteLength).toBe(3 * StorageFormat.HASH_BYTES)
    expect(laid.pieces).toHaveLength(3)
    expect(laid.requires).toEqual([])
  })

  it("an append extends the list stored before: one hash, one piece", () => {
    const sharing = Sharing.make(dumpJson)
    const first = sharing.layOut(at, "messages", "1", sharedOf(sharing, messages(20)), { fresh: false })
    sharing.stored(at, [first])
    const next = sharing.layOut(at, "messages", "2", sharedOf(sharing, messages(21)), { fresh: false })
    expect(next.blob.base).toEqual({ version: "1", keep: 20 })
    expect(StorageFormat.unpackHashes(next.blob.bytes!)).toEqual([StorageFormat.hashOf(dumpJson(message(20)))])
    expect(next.pieces).toHaveLength(1)
    expect(next.requires).toEqual(["1"])
  })

  it("an edit keeps the base up to the first difference and sends from there", () => {
    const sharing = Sharing.make(dumpJson)
    const first = sharing.layOut(at, "messages", "1", sharedOf(sharing, messages(100)), { fresh: false })
    sharing.stored(at, [first])
    const edited = [...messages(90), message(999), ...messages(9, 91)]
    const next = sharing.layOut(at, "messages", "2", sharedOf(sharing, edited), { fresh: false })
    expect(next.blob.base).toEqual({ version: "1", keep: 90 })
    expect(next.pieces).toHaveLength(10)
    expect(next.list.keys).toHaveLength(100)
  })

  it("bases go at most two deep: the third step extends a base of the chain, not the list before", () => {
    const sharing = Sharing.make(dumpJson)
    let laid = sharing.layOut(at, "messages", "1", sharedOf(sharing, messages(100)), { fresh: false })
    const depths: Array<number> = []
    for (let step = 2; step < 12; step++) {
      sharing.stored(at, [laid])
      laid = sharing.layOut(at, "messages", String(step), sharedOf(sharing, messages(100 + step)), { fresh: false })
      let depth = 0
      for (let base = laid.list.base; base !== undefined; base = base.base) depth++
      depths.push(depth)
    }
    expect(Math.max(...depths)).toBe(StorageFormat.BASE_DEPTH)
    expect(depths.every((depth) => depth >= 1 && depth <= StorageFormat.BASE_DEPTH)).toBe(true)
  })

  it("fresh: laid out against nothing", () => {
    const sharing = Sharing.make(dumpJson)
    sharing.stored(at, [sharing.layOut(at, "messages", "1", sharedOf(sharing, messages(20)), { fresh: false })])
    const laid = sharing.layOut(at, "messages", "2", sharedOf(sharing, messages(21)), { fresh: true })
    expect(laid.blob.base).toBeUndefined()
    expect(laid.pieces).toHaveLength(21)
  })
})

describe("decode", () => {
  it("a list and its base read back as the plain encoding's bytes", () => {
    const writer = Sharing.make(dumpJson)
    const first = writer.layOut(at, "messages", "1", sharedOf(writer, messages(20)), { fresh: false })
    writer.stored(at, [first])
    const next = writer.layOut(at, "messages", "2", sharedOf(writer, messages(21)), { fresh: false })
    const base: SharedBase = { version: "1", keep: next.blob.base!.keep, list: first.blob.bytes, base: undefined }
    const reader = Sharing.make(dumpJson)
    const read = reader.decode(
      at.thread_id,
      { type: StorageFormat.SHARED, bytes: next.blob.bytes, base },
      piecesOf([first, next])
    )
    expect(text(read)).toBe(JSON.stringify(messages(21)))
  })

  it("records nothing: the next step extends a list read only once the caller remembers it", () => {
    const writer = Sharing.make(dumpJson)
    const first = writer.layOut(at, "messages", "1", sharedOf(writer, messages(20)), { fresh: false })
    const reader = Sharing.make(dumpJson)
    const read = decoded(reader.decode(at.thread_id, first.blob, piecesOf([first])))
    const next = () => reader.layOut(at, "messages", "2", sharedOf(reader, messages(21)), { fresh: false })
    expect(next().blob.base).toBeUndefined()
    reader.remember({ ...at, channel: "messages", version: "1" }, read)
    expect(next().blob.base?.version).toBe("1")
  })

  it("a missing piece, a damaged list, a missing or short base and too deep a chain say so", () => {
    const writer = Sharing.make(dumpJson)
    const laid = writer.layOut(at, "messages", "1", sharedOf(writer, messages(4)), { fresh: false })
    const reader = () => Sharing.make(dumpJson)
    const pieces = piecesOf([laid])
    expect(reader().decode(at.thread_id, laid.blob, new Map())).toEqual({
      missing: StorageFormat.references(laid.blob)[0]
    })
    expect(reader().decode(at.thread_id, { type: StorageFormat.SHARED, bytes: laid.blob.bytes!.subarray(1) }, pieces))
      .toBe(
        "its list is not a whole number of hashes"
      )
    const base = (keep: number, list: Uint8Array | undefined, deeper?: SharedBase): SharedBase => ({
      version: "0",
      keep,
      list,
      base: deeper
    })
    expect(
      reader().decode(
        at.thread_id,
        { type: StorageFormat.SHARED, bytes: laid.blob.bytes, base: base(1, undefined) },
        pieces
      )
    )
      .toBe(
        "its base (version 0) is missing"
      )
    expect(
      reader().decode(at.thread_id, {
        type: StorageFormat.SHARED,
        bytes: laid.blob.bytes,
        base: base(9, laid.blob.bytes)
      }, pieces)
    ).toBe(
      "its base (version 0) is shorter than it keeps"
    )
    const tooDeep = base(1, laid.blob.bytes, base(1, laid.blob.bytes, base(1, laid.blob.bytes)))
    expect(reader().decode(at.thread_id, { type: StorageFormat.SHARED, bytes: laid.blob.bytes, base: tooDeep }, pieces))
      .toBe(
        "its bases are deeper than this library writes"
      )
  })
})

describe("the piece cache", () => {
  it("keeps each thread's pieces apart; over the budget, the least recently used thread leaves whole", () => {
    const cache = makePieceCache({ budget: 10 })
    const bytes = (n: number) => new Uint8Array(n)
    cache.add("a", "k", bytes(4))
    cache.add("b", "k", bytes(3))
    expect(cache.of("a").get("k")).toHaveLength(4)
    expect(cache.of("b").get("k")).toHaveLength(3)
    expect(cache.of("c").has("k")).toBe(false)
    cache.add("a", "k", bytes(1)) // a key kept keeps its bytes
    expect(cache.of("a").get("k")).toHaveLength(4)
    cache.add("a", "l", bytes(2)) // "a" is now the most recent
    cache.add("c", "k", bytes(3)) // 12 bytes: "b", the least recent, leaves
    expect(cache.of("b").has("k")).toBe(false)
    expect([cache.of("a").has("k"), cache.of("a").has("l"), cache.of("c").has("k")]).toEqual([true, true, true])
    expect(cache.bytes()).toBe(9)
  })

  it("counts a piece as its own copy, never the buffer it arrived in", () => {
    const cache = makePieceCache({ budget: 1000 })
    const read = new Uint8Array(32 * 1024).subarray(100, 500)
    cache.add("a", "k", read)
    expect(cache.of("a").get("k")!.buffer.byteLength).toBe(400)
    expect(cache.bytes()).toBe(400)
  })

  it("forgets a thread unused for its idle time", () => {
    let now = 0
    const cache = makePieceCache({ budget: 1000, idleMs: 100, now: () => now })
    cache.add("a", "k", new Uint8Array(4))
    cache.add("b", "k", new Uint8Array(4))
    now = 60
    expect(cache.of("a").has("k")).toBe(true) // used: kept another 100
    now = 120
    cache.add("c", "k", new Uint8Array(4)) // "b", unused since 0, goes
    expect(cache.of("b").has("k")).toBe(false)
    expect(cache.of("a").has("k")).toBe(true)
    now = 400
    expect(cache.of("a").has("k")).toBe(false)
    expect(cache.bytes()).toBeLessThanOrEqual(4)
  })
})

describe("content addresses are verified, never trusted", () => {
  const place = { ...at, channel: "messages", version: "1" }
  /** A list of `items` as stored, and its pieces; the first piece's bytes replaced by `forged`'s. */
  const stored = (items: ReadonlyArray<unknown>, forged?: unknown) => {
    const laid = Sharing.make(dumpJson).layOut(at, "messages", "1", sharedOf(Sharing.make(dumpJson), items), {
      fresh: true
    })
    const pieces = piecesOf([laid])
    if (forged !== undefined) pieces.set(StorageFormat.references(laid.blob)[0]!, dumpJson(forged))
    return { laid, pieces }
  }

  it("a read keeps only pieces whose bytes hash to their key, and only for its own thread", () => {
    const { laid, pieces } = stored(messages(4), message(99))
    const reader = Sharing.make(dumpJson)
    reader.keepRead(at.thread_id, pieces)
    const read = decoded(reader.decode(at.thread_id, laid.blob, pieces))
    reader.remember(place, read)
    const known = StorageFormat.unpackHashes(reader.knownPieces(at))!
    expect(known).toHaveLength(3)
    expect(known).not.toContain(StorageFormat.references(laid.blob)[0])
    // Another thread's read names none of them, and takes none of them.
    const other = { thread_id: "other", checkpoint_ns: "" }
    reader.remember({ ...other, channel: "messages", version: "1" }, read)
    expect(reader.knownPieces(other).byteLength).toBe(0)
    expect(reader.decode(other.thread_id, laid.blob, new Map())).toHaveProperty("missing")
  })

  it("an item read from a forged piece is learned under its bytes' own hash: the next put sends it as new", () => {
    const items = messages(4)
    const { laid, pieces } = stored(items, message(99))
    const reader = Sharing.make(dumpJson)
    reader.keepRead(at.thread_id, pieces)
    const read = decoded(reader.decode(at.thread_id, laid.blob, pieces))
    reader.remember(place, read)
    const value = read.texts.map((bytes) => JSON.parse(new TextDecoder().decode(bytes)) as unknown)
    reader.recognize(place, value, read, true)
    const next = reader.layOut(at, "messages", "2", sharedOf(reader, [...value, message(4)]), { fresh: false })
    const keys = StorageFormat.references(next.blob)
    expect(keys[0]).toBe(StorageFormat.hashOf(dumpJson(message(99))))
    expect(keys[0]).not.toBe(StorageFormat.references(laid.blob)[0])
    expect(next.pieces.map((piece) => StorageFormat.pieceKey(piece.hash))).toContain(keys[0])
    for (const piece of next.pieces) expect(StorageFormat.pieceKey(piece.hash)).toBe(StorageFormat.hashOf(piece.bytes))
  })
})

describe("framed lists", () => {
  /** The storage's own dumper: the depth limit counted from the stored value's top. */
  const plusDump = (value: unknown, below: number) => JsonPlus.dumpJson(value, MAX_DEPTH - below)
  const conversation = (count: number) =>
    Array.from({ length: count }, (_, i) =>
      i % 2 === 0
        ? new HumanMessage({ id: `h${i}`, content: `question ${i} `.padEnd(120, "q") })
        : new AIMessage({ id: `a${i}`, content: `answer ${i} `.padEnd(120, "a") }))
  /** A value encoded and read back the way `Decode` reads a stored framed list. */
  const roundTrip = (sharing: Sharing.Sharing, value: unknown) => {
    const encoded = sharedOf(sharing, value)
    expect(encoded.type).toBe(StorageFormat.FRAMED)
    const laid = sharing.layOut(at, "c", "1", encoded, { fresh: true })
    const read = decoded(Sharing.make(plusDump).decode(at.thread_id, laid.blob, piecesOf([laid])))
    expect(read.type).toBe(StorageFormat.FRAMED)
    return text(StorageFormat.unframe(read.texts))
  }

  it("a DeltaSnapshot and a graph's input read back as the very bytes the plain encoding stores", () => {
    const sharing = Sharing.make(plusDump)
    const snapshot = new DeltaSnapshot(conversation(6))
    expect(roundTrip(sharing, snapshot)).toBe(text(JsonPlus.dumpJson(snapshot)))
    const input = { note: "kept in the frame", messages: conversation(3) }
    expect(roundTrip(sharing, input)).toBe(text(JsonPlus.dumpJson(input)))
    // The frame is the list's first entry, a piece of its own; the elements are the messages' pieces.
    const encoded = sharedOf(sharing, input)
    expect(JSON.parse(text(encoded.elements[0]!.bytes))).toEqual(["{\"note\":\"kept in the frame\",\"messages\":", "}"])
    expect(encoded.elements.slice(1).map((element) => element.bytes)).toEqual(
      elementsOf(sharing, input.messages).map((element) => element.bytes)
    )
  })

  it("only values written as their own keys with the array last are framed; small arrays keep the plain bytes", () => {
    const sharing = Sharing.make(plusDump)
    expect(sharing.encode({ messages: conversation(3), step: 1 })).toBeUndefined()
    expect(sharing.encode({ lc: 1, messages: conversation(3) })).toBeUndefined()
    expect(sharing.encode({ toJSON: () => "x", messages: conversation(3) })).toBeUndefined()
    expect(sharing.encode(
      new (class Holder {
        messages = conversation(3)
      })()
    )).toBeUndefined()
    // An array of numbers is no record's entry worth a piece: a small record keeps the plain bytes.
    const ids = { ids: [1, 2, 3] }
    const plain = sharing.encode(ids)
    expect(plain?._tag === "serialized" && text(plain.bytes)).toBe(text(JsonPlus.dumpJson(ids)))
    const small = { messages: [{ a: 1 }] }
    const encoded = sharing.encode(small)
    expect(encoded?._tag).toBe("serialized")
    if (encoded?._tag === "serialized") expect(text(encoded.bytes)).toBe(text(JsonPlus.dumpJson(small)))
  })

  it("a change around the array is a new frame; the array's pieces stay", () => {
    const sharing = Sharing.make(plusDump)
    const input = { note: "first", messages: conversation(3) }
    const before = sharedOf(sharing, input).elements
    input.note = "second"
    const after = sharedOf(sharing, input).elements
    expect(after[0]!.key).not.toBe(before[0]!.key)
    expect(after.slice(1)).toEqual(before.slice(1))
    expect(roundTrip(sharing, input)).toBe(text(JsonPlus.dumpJson(input)))
  })

  it("an element's text is kept for as deep as it was written: a framed value, a level deeper, writes it again", () => {
    const depths: Array<number> = []
    const sharing = Sharing.make((value, below) => {
      depths.push(below)
      return plusDump(value, below)
    })
    const messages = conversation(4)
    sharedOf(sharing, messages)
    sharedOf(sharing, [...messages])
    expect(depths).toEqual([1, 1, 1, 1])
    sharedOf(sharing, { messages })
    // The frame, written at the top, and each message again, two levels down; then kept for both.
    expect(depths.slice(4)).toEqual([2, 2, 2, 2, 0])
    sharedOf(sharing, { messages })
    sharedOf(sharing, [...messages])
    expect(depths.slice(9)).toEqual([0])
  })

  it("a framed list and a shared list of one channel never extend each other", () => {
    const sharing = Sharing.make(plusDump)
    const messages = conversation(20)
    sharing.stored(at, [sharing.layOut(at, "c", "1", sharedOf(sharing, messages), { fresh: false })])
    const framed = sharing.layOut(at, "c", "2", sharedOf(sharing, new DeltaSnapshot(messages)), { fresh: false })
    expect(framed.blob.base).toBeUndefined()
    sharing.stored(at, [framed])
    const next = sharing.layOut(at, "c", "3", sharedOf(sharing, new DeltaSnapshot(conversation(21))), { fresh: false })
    expect(next.blob.base).toEqual({ version: "2", keep: 21 })
  })

  it("a frame that is not two texts says so", () => {
    const items = [utf8.encode("{}")]
    expect(StorageFormat.unframe([utf8.encode("[1]"), ...items])).toBe("its frame is not two texts")
    expect(StorageFormat.unframe([utf8.encode("not json"), ...items])).toBe("its frame is not two texts")
    expect(StorageFormat.unframe([])).toBe("its frame is missing")
    expect(text(StorageFormat.unframe([StorageFormat.frameOf("{\"a\":", "}"), ...items]))).toBe("{\"a\":[{}]}")
  })
})

describe("list memory", () => {
  const list = (...keys: Array<string>): Layout.List => ({
    type: StorageFormat.SHARED,
    version: "1",
    base: undefined,
    keys
  })
  const hash = (n: number) => StorageFormat.pieceKey(new Uint8Array(StorageFormat.HASH_BYTES).fill(n))
  const knownOf = (memory: ReturnType<typeof makeListMemory>, location: { thread_id: string; checkpoint_ns: string }) =>
    StorageFormat.unpackHashes(memory.known(location, () => true))

  it("a namespace's known pieces are the entries of its own lists, every channel's, and no other namespace's", () => {
    const memory = makeListMemory()
    memory.set({ thread_id: "t", checkpoint_ns: "" }, "messages", list(hash(1), hash(2)))
    memory.set({ thread_id: "t", checkpoint_ns: "" }, "notes", list(hash(3)))
    memory.set({ thread_id: "t", checkpoint_ns: "sub" }, "messages", list(hash(4)))
    memory.set({ thread_id: "tt", checkpoint_ns: "" }, "messages", list(hash(5)))
    expect(knownOf(memory, { thread_id: "t", checkpoint_ns: "" })).toEqual([hash(1), hash(2), hash(3)])
    expect(knownOf(memory, { thread_id: "t", checkpoint_ns: "sub" })).toEqual([hash(4)])
    expect(knownOf(memory, { thread_id: "x", checkpoint_ns: "" })).toEqual([])
    // Only the pieces still held are named.
    expect(StorageFormat.unpackHashes(memory.known({ thread_id: "t", checkpoint_ns: "" }, (key) => key !== hash(2))))
      .toEqual([hash(1), hash(3)])
  })

  it("keeps the most recently used namespaces within its bytes, each with all its channels' lists", () => {
    // A list of one key retains 144 bytes: a's two lists and c's fit, b's too would not.
    const memory = makeListMemory({ budget: 500 })
    const [a, b, c] = ["a", "b", "c"].map((thread_id) => ({ thread_id, checkpoint_ns: "" }))
    memory.set(a!, "messages", list(hash(1)))
    memory.set(a!, "notes", list(hash(2)))
    memory.set(b!, "messages", list(hash(3)))
    // Used again: `a` is now the most recent, and `b` leaves when `c` comes.
    memory.set(a!, "messages", list(hash(4)))
    memory.set(c!, "messages", list(hash(5)))
    expect(memory.get(b!, "messages")).toBeUndefined()
    expect(memory.get(a!, "notes")?.keys).toEqual([hash(2)])
    expect(knownOf(memory, a!)).toEqual([hash(4), hash(2)])
    expect(memory.get(c!, "messages")?.keys).toEqual([hash(5)])
    expect(memory.bytes()).toBe(3 * 144)
  })

  it("forgets a namespace unused for its idle time", () => {
    let now = 0
    const memory = makeListMemory({ idleMs: 100, now: () => now })
    const a = { thread_id: "a", checkpoint_ns: "" }
    memory.set(a, "messages", list(hash(1)))
    now = 99
    expect(memory.get(a, "messages")).toBeDefined()
    now = 250
    expect(memory.get(a, "messages")).toBeUndefined()
  })
})
