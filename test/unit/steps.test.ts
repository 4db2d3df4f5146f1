/** What each step did (`inspector/Steps.ts`), read from checkpoints real graphs wrote through MemorySaver. */
import { type BaseMessageLike, HumanMessage } from "@langchain/core/messages"
import { Command, MemorySaver } from "@langchain/langgraph"
import { describe, expect, it } from "vitest"
import { approvalGraph, chatGraph, collect, nestedGraph, stepsGraph } from "../../harness/inspectedGraph.ts"
import * as Steps from "../../src/internal/inspector/Steps.ts"
import * as Values from "../../src/internal/inspector/Values.ts"

const config = (thread_id: string) => ({ configurable: { thread_id } })

/** Oldest first: per checkpoint, its source, the nodes that ran and the preview. */
const story = async (saver: MemorySaver, thread_id: string, checkpoint_ns = "") =>
  (await collect(saver, { configurable: { thread_id, checkpoint_ns } })).reverse().map((tuple) => [
    tuple.metadata?.source,
    Steps.ran(tuple.checkpoint),
    Steps.preview(tuple.checkpoint, Values.changedChannels(tuple.checkpoint))
  ])

describe("what each step did", () => {
  it("three nodes in a row: each checkpoint names the node that made it and what it appended", async () => {
    const saver = new MemorySaver()
    await stepsGraph(saver).invoke({ steps: ["go"] }, config("s"))
    expect(await story(saver, "s")).toEqual([
      ["input", [], `input={"steps":["go"]}`],
      ["loop", ["__start__"], `steps=["go"]`],
      ["loop", ["a"], `steps=["go","a"]`],
      ["loop", ["b"], `steps=["go","a","b"]`],
      ["loop", ["c"], `steps=["go","a","b","c"]`]
    ])
  })

  it("a chat: the input's message, then the model's reply as role: text, cut to one line of 60", async () => {
    const saver = new MemorySaver()
    const long = `a question\nthat goes on ${"and on ".repeat(20)}`
    await chatGraph(saver).invoke({ messages: [new HumanMessage(long)] }, config("c"))
    const rows = await story(saver, "c")
    expect(rows.map(([source, nodes]) => [source, nodes])).toEqual([["input", []], ["loop", ["__start__"]], [
      "loop",
      ["model"]
    ]])
    expect(rows[0]![2]).toMatch(/^human: a question that goes on and on/)
    expect(String(rows[0]![2])).toHaveLength(60)
    expect(String(rows[0]![2]).endsWith("…")).toBe(true)
    expect(rows[2]![2]).toMatch(/^ai: heard "a question that goes on/)
  })

  it("an input as LangGraph's API and its clients give it (plain { type, content } or { role, content }): its message", async () => {
    const given: Array<[BaseMessageLike, string]> = [
      [{ type: "human", content: "Hi, I'm Ada." }, "human: Hi, I'm Ada."],
      [{ role: "user", content: [{ type: "text", text: "Hi" }, { type: "text", text: "there" }] }, "user: Hi there"]
    ]
    for (const [message, shown] of given) {
      const saver = new MemorySaver()
      await chatGraph(saver).invoke({ messages: [message] }, config("api"))
      expect((await story(saver, "api"))[0]).toEqual(["input", [], shown])
    }
  })

  it("an update (time travel) runs no node; an interrupt's step names no node that did not finish", async () => {
    const saver = new MemorySaver()
    const graph = chatGraph(saver)
    await graph.invoke({ messages: [new HumanMessage("hello")] }, config("t"))
    const updated = await graph.updateState(config("t"), { messages: [new HumanMessage("edited")] })
    const [edit] = await collect(saver, {
      configurable: { thread_id: "t", checkpoint_id: updated.configurable?.checkpoint_id }
    })
    expect(edit!.metadata?.source).toBe("update")
    expect(Steps.ran(edit!.checkpoint)).toEqual([])
    expect(Steps.preview(edit!.checkpoint, Values.changedChannels(edit!.checkpoint))).toBe("human: edited")

    await approvalGraph(saver).invoke({ request: "deploy" }, config("a"))
    expect((await story(saver, "a")).at(-1)).toEqual(["loop", ["__start__"], `request="deploy"`])
  })

  it("a subgraph: the parent's step ran the subgraph's node, not the interrupt bookkeeping", async () => {
    const saver = new MemorySaver()
    const graph = nestedGraph(saver)
    await graph.invoke({ value: "x" }, config("n"))
    await graph.invoke(new Command({ resume: "answer" }), config("n"))
    expect((await story(saver, "n")).map(([, nodes]) => nodes)).toEqual([[], ["__start__"], ["child"], ["after"]])
  })
})
