/**
 * SafeJsonPlusSerializer writes the bytes JsonPlusSerializer writes and reads
 * back what it reads (same values, same classes) over everything LangGraph
 * stores, except where JsonPlusSerializer would mistake data for a record:
 * such objects are escaped and read back as the same plain objects.
 */
import { Document } from "@langchain/core/documents"
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages"
import { Send } from "@langchain/langgraph"
import { DeltaSnapshot, JsonPlusSerializer } from "@langchain/langgraph-checkpoint"
import { describe, expect, it } from "vitest"
import { SafeJsonPlusSerializer } from "../../src/index.ts"

const reference = new JsonPlusSerializer()
const fast = new SafeJsonPlusSerializer()

/** A structural description that includes every object's class. */
const shape = (value: unknown): unknown => {
  if (value instanceof Uint8Array) return { class: "Uint8Array", bytes: Array.from(value) }
  if (value instanceof Set) return { class: "Set", items: Array.from(value, shape) }
  if (value instanceof Map) return { class: "Map", entries: Array.from(value, ([k, v]) => [shape(k), shape(v)]) }
  if (value instanceof RegExp || value instanceof Error) return { class: value.constructor.name, text: String(value) }
  if (Array.isArray(value)) return value.map(shape)
  if (typeof value === "object" && value !== null) {
    return {
      class: value.constructor?.name ?? "null-prototype",
      fields: Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shape(v)]))
    }
  }
  return value === undefined ? { undefined: true } : value
}

const corpus: Record<string, unknown> = {
  "plain JSON": { a: [1, "two", null, true, { b: { c: [] } }], "": "", "unicode \u{1F600}": "\u0000" },
  "messages": [
    new SystemMessage("be brief"),
    new HumanMessage({ content: "hi", id: "1", name: "ada" }),
    new AIMessage({
      content: [{ type: "text", text: "calling" }],
      tool_calls: [{ id: "call-1", name: "search", args: { q: "graphs", n: 3 } }],
      additional_kwargs: { nested: { deep: [1, 2] } },
      response_metadata: { model: "scripted" }
    }),
    new ToolMessage({ content: "result", tool_call_id: "call-1" })
  ],
  "special values": {
    bytes: new Uint8Array([0, 1, 255]),
    set: new Set([1, "a"]),
    map: new Map<unknown, unknown>([["k", { v: 1 }]]),
    regexp: /a+b/gi,
    error: new Error("boom"),
    missing: undefined,
    list: [undefined, 1]
  },
  "a LangChain object holding special values": new AIMessage({
    content: "x",
    additional_kwargs: { bytes: new Uint8Array([9]), set: new Set([1]) }
  }),
  "a LangChain object inside a LangChain object": new Document({
    pageContent: "doc",
    metadata: { source: new HumanMessage("inside") }
  }),
  "a DeltaSnapshot": new DeltaSnapshot([new HumanMessage("a"), { plain: true }]),
  // A class whose toJSON returns what JsonPlusSerializer then rewrites: { node, args } (timeout when set).
  "Sends (pending tasks)": [new Send("worker", { topic: "x" }), new Send("worker", { n: 1 }, { timeout: 5 })],
  "a __proto__ key": JSON.parse(`{"__proto__": {"polluted": true}, "ok": 1}`),
  "deeply nested messages": { threads: [{ messages: [new HumanMessage("n1"), new AIMessage("n2")] }] }
}

/** Plain objects JsonPlusSerializer would read back as something else (or fail on). */
const lookalikes: Record<string, unknown> = {
  "an lc key": { lc: 1, type: "not a constructor", id: "x" },
  "lc 2 of an unknown kind": { lc: 2, type: "unknown-kind", value: 1 },
  "a LangChain constructor": {
    lc: 1,
    type: "constructor",
    id: ["langchain_core", "messages", "HumanMessage"],
    kwargs: {}
  },
  "a LangGraph Set record": { lc: 2, type: "constructor", id: ["Set"], method: null, args: [[1]], kwargs: {} },
  "a LangGraph undefined record": { lc: 2, type: "undefined" },
  "an escaped object": { lc: 2, type: "escaped", entries: [["a", 1]] },
  "nested inside a message": new HumanMessage({
    content: "x",
    additional_kwargs: { inner: { lc: 1, type: "secret", id: ["K"] } }
  }),
  "inside a Set": new Set([{ lc: 2, type: "undefined" }])
}

describe("SafeJsonPlusSerializer", () => {
  for (const [name, value] of Object.entries(corpus)) {
    it(`reads ${name} as JsonPlusSerializer does`, async () => {
      const [type, bytes] = await reference.dumpsTyped(value)
      const [fastType, fastBytes] = await fast.dumpsTyped(value)
      expect(fastType).toBe(type)
      expect(Buffer.compare(fastBytes, bytes)).toBe(0)
      const expected = await reference.loadsTyped(type, bytes)
      const actual = await fast.loadsTyped(type, bytes)
      if (name === "a __proto__ key") {
        // JsonPlusSerializer sets the prototype from such a key; this one keeps it a plain own key.
        expect(Object.getPrototypeOf(actual)).toBe(Object.prototype)
        expect(Object.hasOwn(actual, "__proto__")).toBe(true)
        return
      }
      expect(shape(actual)).toEqual(shape(expected))
      expect(actual).toEqual(expected)
    })
  }

  it("reads raw bytes as bytes", async () => {
    const bytes = new Uint8Array([1, 2, 3])
    expect(await fast.loadsTyped(...(await fast.dumpsTyped(bytes)))).toEqual(bytes)
  })

  for (const [name, value] of Object.entries(lookalikes)) {
    it(`writes a plain object with ${name} escaped and reads it back as that object`, async () => {
      const [type, bytes] = await fast.dumpsTyped(value)
      expect(type).toBe("json")
      const actual = await fast.loadsTyped(type, bytes)
      expect(shape(actual)).toEqual(shape(value))
    })
  }

  it("reads an array's elements' texts as the array their joined text is, each element alone", () => {
    const elements = Object.values(corpus).filter((value) => value !== undefined && typeof value !== "function")
    const texts = elements.map((value) => fast.dumpJson(value))
    const joined = new TextEncoder().encode(`[${texts.map((text) => new TextDecoder().decode(text)).join(",")}]`)
    expect(shape(fast.read(texts).value)).toEqual(shape(fast.read(joined).value))
    // A text that is not one JSON value alone is refused, whatever its neighbours would make of it.
    expect(() => fast.read([new TextEncoder().encode("1,2"), new TextEncoder().encode("3")])).toThrow()
  })
})
