/** What the inspector reads out of a checkpoint (`inspector/Values.ts`). */
import { load } from "@langchain/core/load"
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages"
import type { Checkpoint, CheckpointTuple } from "@langchain/langgraph-checkpoint"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as Values from "../../src/internal/inspector/Values.ts"
import type * as Serializer from "../../src/Serializer.ts"

const checkpoint = (fields: Partial<Checkpoint>): Checkpoint => ({
  v: 4,
  id: "1",
  ts: "",
  channel_values: {},
  channel_versions: {},
  versions_seen: {},
  ...fields
})

/** A message as stored without revival. */
const inert = (kind: string, kwargs: Record<string, unknown>) => ({
  lc: 1,
  type: "constructor",
  id: ["langchain_core", "messages", kind],
  kwargs
})

describe("messages", () => {
  it("reads revived and inert messages alike, content parts by their text", () => {
    expect(Values.asMessage(new HumanMessage({ content: "hi", id: "m1" }))).toEqual({
      id: "m1",
      role: "human",
      text: "hi"
    })
    expect(Values.asMessage(inert("AIMessage", { content: [{ type: "text", text: "a" }, { type: "image" }] })))
      .toEqual({ id: undefined, role: "ai", text: "a[image]" })
  })

  it("reads tool calls, the call a tool's result answers and the metadata, empty fields left out", () => {
    const call = { name: "get_weather", args: { city: "Paris" }, id: "call_1", type: "tool_call" as const }
    const ai = new AIMessage({
      content: "",
      id: "m2",
      tool_calls: [call],
      response_metadata: { model_name: "m" },
      usage_metadata: { input_tokens: 1, output_tokens: 2, total_tokens: 3 } as never
    })
    const expected = {
      id: "m2",
      role: "ai",
      text: "",
      tool_calls: [{ name: "get_weather", args: { city: "Paris" }, id: "call_1" }],
      response_metadata: { model_name: "m" },
      usage_metadata: { input_tokens: 1, output_tokens: 2, total_tokens: 3 }
    }
    expect(Values.asMessage(ai)).toEqual(expected)
    // The same message stored inert reads the same.
    expect(Values.asMessage(JSON.parse(JSON.stringify(ai)))).toEqual(expected)
    const result = new ToolMessage({ content: "sunny", tool_call_id: "call_1", name: "get_weather", id: "m3" })
    expect(Values.asMessage(result)).toEqual({
      id: "m3",
      role: "tool",
      text: "sunny",
      tool_call_id: "call_1",
      name: "get_weather"
    })
    expect(Values.asMessage(JSON.parse(JSON.stringify(result)))).toEqual(Values.asMessage(result))
  })

  it("anything else is no message, and a list is messages only when all are", () => {
    expect(Values.asMessage({ content: "x" })).toBeUndefined()
    expect(Values.asMessage(inert("Unknown", { content: "x" }))).toBeUndefined()
    expect(Values.asMessages([new AIMessage("a"), { content: "b" }])).toBeUndefined()
    expect(Values.asMessages([])).toBeUndefined()
    expect(Values.asMessages([new AIMessage("a")])?.map((m) => m.role)).toEqual(["ai"])
  })
})

describe("toPlain", () => {
  it("makes bytes, dates, maps, sets, bigints, functions and unreadable values printable", () => {
    const value = {
      bytes: new Uint8Array(3),
      at: new Date("2026-01-01T00:00:00.000Z"),
      map: new Map([["k", 1n]]),
      set: new Set([1]),
      f: () => 1,
      unreadable: new Values.Unreadable("msgpack", 12),
      message: new HumanMessage("hi")
    }
    expect(Values.toPlain(value)).toEqual({
      bytes: { $bytes: 3 },
      at: "2026-01-01T00:00:00.000Z",
      map: [["k", "1"]],
      set: [1],
      f: "[function]",
      unreadable: { $unreadable: "msgpack", bytes: 12 },
      message: { id: undefined, role: "human", text: "hi" }
    })
    expect(String(new Values.Unreadable("msgpack", 12))).toBe("<msgpack, 12 bytes>")
  })

  it("toJson: each message whole, in LangChain's serialized form, which load revives", async () => {
    const ai = new AIMessage({
      content: "",
      id: "m2",
      tool_calls: [{ name: "get_weather", args: { city: "Paris" }, id: "call_1", type: "tool_call" }],
      response_metadata: { model_name: "m" }
    })
    const inert = JSON.parse(JSON.stringify(new ToolMessage({ content: "sunny", tool_call_id: "call_1" })))
    const plain = Values.toJson({ messages: [ai, inert], n: 1n }) as { messages: Array<unknown>; n: unknown }
    expect(plain.messages[0]).toEqual(JSON.parse(JSON.stringify(ai)))
    expect(plain.messages[1]).toEqual(inert)
    expect(plain.n).toBe("1")
    const revived = await load<AIMessage>(JSON.stringify(plain.messages[0]))
    expect(AIMessage.isInstance(revived)).toBe(true)
    expect(revived.tool_calls).toEqual(ai.tool_calls)
    expect(revived.id).toBe("m2")
  })

  it("cuts what is too deep instead of recursing without end", () => {
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    let at: unknown = Values.toPlain(cycle)
    let depth = 0
    while (typeof at === "object" && at !== null) {
      at = (at as Record<string, unknown>).self
      depth++
    }
    expect(at).toBe("[too deep]")
    expect(depth).toBe(65)
  })

  it("bounds a 20,000-deep stored value: in a message's content, a tool call's arguments, messages in messages", () => {
    const nest = (depth: number, wrap: (inner: unknown) => unknown): unknown => {
      let value: unknown = "bottom"
      for (let i = 0; i < depth; i++) value = wrap(value)
      return value
    }
    // As stored: JSON.stringify itself overflows the stack on these.
    const content = nest(20_000, (inner) => ({ a: inner }))
    expect(() => JSON.stringify(content)).toThrow(RangeError)
    const text = Values.asMessage(inert("HumanMessage", { content }))!.text
    expect(text.length).toBeLessThan(1000)
    expect(text).toContain("[too deep]")

    const args = nest(20_000, (inner) => [inner])
    const call = Values.asMessage(inert("AIMessage", { content: "", tool_calls: [{ name: "t", args }] }))!
    expect(JSON.stringify(call.tool_calls).length).toBeLessThan(1000)

    // A message whose tool call holds a message whose tool call holds a message…: the depth counts on through them.
    const chain = nest(
      20_000,
      (inner) => inert("AIMessage", { content: "", tool_calls: [{ name: "t", args: { inner } }] })
    )
    for (const plain of [Values.toPlain(chain), Values.toJson(chain), Values.toPlain({ messages: [chain] })]) {
      const json = JSON.stringify(plain)
      expect(json).toContain("[too deep]")
      expect(json.length).toBeLessThan(20_000)
    }
    expect(Values.asMessages([chain])).toHaveLength(1)

    // A revived message (what `show --json` writes whole): LangChain's own toJSON would recurse through it.
    const revived = new HumanMessage({ content: "hi", additional_kwargs: { deep: nest(20_000, (inner) => [inner]) } })
    expect(() => revived.toJSON()).toThrow(RangeError)
    const whole = JSON.stringify(Values.toJson({ messages: [revived] }))
    expect(whole).toContain("[too deep]")
    expect(whole.length).toBeLessThan(20_000)
    // A shallow one is still LangChain's serialized form, as `load` revives it.
    expect(Values.toJson(new HumanMessage({ content: "hi", id: "m1" }))).toMatchObject({
      lc: 1,
      type: "constructor",
      id: ["langchain_core", "messages", "HumanMessage"]
    })
  })
})

describe("lenient", () => {
  it("a value the serializer cannot load becomes an Unreadable", async () => {
    const failing = {
      load: () => Effect.fail(new Error("no")),
      dump: () => Effect.die("unused")
    } as unknown as Serializer.SerializerService
    const loaded = await Effect.runPromise(
      Values.lenient(failing).load({ type: "msgpack", bytes: new Uint8Array(5) })
    )
    expect(loaded).toEqual(new Values.Unreadable("msgpack", 5))
  })
})

describe("a checkpoint's next nodes, interrupts and changed channels", () => {
  it("next: the nodes whose trigger holds a value newer than they saw", () => {
    const next = Values.nextNodes(checkpoint({
      channel_values: { "branch:to:a": null, "branch:to:b": null, "branch:to:c": null },
      channel_versions: { "branch:to:a": 3, "branch:to:b": "00000002.5", "branch:to:c": 2, "branch:to:gone": 9 },
      versions_seen: { a: { "branch:to:a": 2 }, b: { "branch:to:b": "00000002.5" } }
    }))
    expect(next).toEqual(["a", "c"])
  })

  it("interrupts: the values on __interrupt__, an Interrupt by its value", () => {
    const tuple = {
      config: {},
      checkpoint: checkpoint({}),
      pendingWrites: [["t1", "__interrupt__", [{ value: "approve?", id: "i" }]], ["t2", "messages", "x"], [
        "t3",
        "__interrupt__",
        "raw"
      ]]
    } as CheckpointTuple
    expect(Values.interrupts(tuple)).toEqual(["approve?", "raw"])
  })

  it("changed: the channels at the checkpoint's highest version, triggers left out", () => {
    expect(Values.changedChannels(checkpoint({
      channel_versions: { a: 2, b: "00000003.123", c: 3, "branch:to:x": 3, __start__: 1 }
    }))).toEqual(["b", "c"])
    // An input writes `__start__` alone: the state channels below it are not what it changed.
    expect(Values.changedChannels(checkpoint({ channel_versions: { a: 2, b: 3, __start__: 4 } }))).toEqual([])
  })
})

describe("diff", () => {
  it("channels added, removed and changed; unchanged and trigger channels left out", () => {
    const a = checkpoint({ channel_values: { kept: 1, gone: 2, changed: { x: 1 }, "branch:to:n": 1 } })
    const b = checkpoint({ channel_values: { kept: 1, changed: { x: 2 }, added: [3], "branch:to:n": 2 } })
    expect(Values.diff(a, b)).toEqual([
      { channel: "added", change: "added", after: [3] },
      { channel: "changed", change: "changed", before: { x: 1 }, after: { x: 2 } },
      { channel: "gone", change: "removed", before: 2 }
    ])
  })

  it("message lists: appended, removed and edited, matched by id", () => {
    const a = checkpoint({
      channel_values: {
        messages: [new HumanMessage({ content: "q", id: "1" }), new AIMessage({ content: "a", id: "2" })]
      }
    })
    const b = checkpoint({
      channel_values: {
        messages: [new HumanMessage({ content: "q!", id: "1" }), new AIMessage({ content: "new", id: "3" })]
      }
    })
    expect(Values.diff(a, b)).toEqual([{
      channel: "messages",
      change: "messages",
      appended: [{ id: "3", role: "ai", text: "new" }],
      removed: [{ id: "2", role: "ai", text: "a" }],
      edited: [{
        before: { id: "1", role: "human", text: "q" },
        after: { id: "1", role: "human", text: "q!" },
        fields: [{ path: "content", before: "q", after: "q!" }]
      }]
    }])
  })

  it("an edited message, field by field: a tool call's argument, its id, a call added", () => {
    const call = (city: string, id = "call_1") => ({
      name: "get_weather",
      args: { city },
      id,
      type: "tool_call" as const
    })
    const ask = (calls: Array<ReturnType<typeof call>>) =>
      checkpoint({ channel_values: { messages: [new AIMessage({ content: "", id: "a", tool_calls: calls })] } })
    const [change] = Values.diff(ask([call("Paris")]), ask([call("Lyon", "call_2"), call("Rome")]))
    expect(change).toMatchObject({ change: "messages", appended: [], removed: [] })
    expect((change as Extract<Values.ChannelDiff, { change: "messages" }>).edited[0]!.fields).toEqual([
      { path: "tool_calls[0].args.city", before: "Paris", after: "Lyon" },
      { path: "tool_calls[0].id", before: "call_1", after: "call_2" },
      { path: "tool_calls[1]", before: undefined, after: { name: "get_weather", args: { city: "Rome" }, id: "call_1" } }
    ])
    // The same call twice is no change.
    expect(Values.diff(ask([call("Paris")]), ask([call("Paris")]))).toEqual([])
  })

  it("a tool's result: its tool_call_id, name and a failure's status compared; metadata too", () => {
    const result = (tool_call_id: string, name: string, status: "success" | "error" = "success") =>
      checkpoint({
        channel_values: {
          messages: [
            new ToolMessage({ content: "x", id: "t", tool_call_id, name, status, response_metadata: { took: name } })
          ]
        }
      })
    const [change] = Values.diff(result("c1", "get_weather"), result("c2", "get_time", "error"))
    expect((change as Extract<Values.ChannelDiff, { change: "messages" }>).edited[0]!.fields).toEqual([
      { path: "tool_call_id", before: "c1", after: "c2" },
      { path: "name", before: "get_weather", after: "get_time" },
      { path: "response_metadata.took", before: "get_weather", after: "get_time" },
      { path: "status", before: undefined, after: "error" }
    ])
  })
})
