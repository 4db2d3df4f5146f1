/** How the commands word a message (`cli/commands/Text.ts`): tool calls, tool results, edits, stored text escaped. */
import { AIMessage, ToolMessage } from "@langchain/core/messages"
import { describe, expect, it } from "vitest"
import { fieldChange, messageLines } from "../../src/internal/cli/commands/Text.ts"
import * as Values from "../../src/internal/inspector/Values.ts"

const ESC = "\u001b"

describe("a message as lines", () => {
  it("an AI message's tool calls each on a line; a tool's result by its tool and call", () => {
    const ai = Values.asMessage(
      new AIMessage({
        content: "",
        tool_calls: [{ name: "get_weather", args: { city: "Paris" }, id: "call_1", type: "tool_call" }],
        response_metadata: { model_name: "m" }
      })
    )!
    expect(messageLines(ai, 200)).toEqual(["ai:", `  tool call get_weather {"city":"Paris"} (id call_1)`])
    expect(messageLines(ai, 200, { metadata: true })).toEqual([
      "ai:",
      `  tool call get_weather {"city":"Paris"} (id call_1)`,
      `  response_metadata: {"model_name":"m"}`
    ])
    const result = Values.asMessage(new ToolMessage({ content: "sunny", tool_call_id: "call_1", name: "get_weather" }))!
    expect(messageLines(result, 200)).toEqual(["tool (name get_weather, tool_call_id call_1): sunny"])
    const failed = Values.asMessage(
      new ToolMessage({ content: "no such city", tool_call_id: "call_1", status: "error" })
    )!
    expect(messageLines(failed, 200)).toEqual(["tool (tool_call_id call_1, status error): no such city"])
  })

  it("a tool's name, arguments and ids are stored text: escaped, never sent to the terminal", () => {
    const hostile = `x${ESC}[31mred\n`
    const ai = Values.asMessage(
      new AIMessage({
        content: "",
        tool_calls: [{ name: hostile, args: { city: hostile }, id: hostile, type: "tool_call" }]
      })
    )!
    const result = Values.asMessage(new ToolMessage({ content: hostile, tool_call_id: hostile, name: hostile }))!
    const lines = [
      ...messageLines(ai, 200),
      ...messageLines(result, 200),
      fieldChange({ path: hostile, before: hostile, after: { [hostile]: 1 } }, 90)
    ]
    for (const line of lines) {
      expect(line).not.toContain(ESC)
      expect(line).not.toContain("\n")
    }
    expect(lines[1]).toBe(`  tool call x\\u{1b}[31mred\\n {"city":"x\\u001b[31mred\\n"} (id x\\u{1b}[31mred\\n)`)
  })

  it("a changed field: its path, its values as JSON, a missing one as (none)", () => {
    expect(fieldChange({ path: "tool_calls[0].args.city", before: "Paris", after: "Lyon" }, 90)).toBe(
      `tool_calls[0].args.city: "Paris" → "Lyon"`
    )
    expect(fieldChange({ path: "tool_calls[1]", before: undefined, after: { a: 1 } }, 90)).toBe(
      `tool_calls[1]: (none) → {"a":1}`
    )
  })
})
