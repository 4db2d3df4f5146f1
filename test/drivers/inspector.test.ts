/**
 * The inspector's pure parts: the history drawn as a tree, values made
 * readable, the diff of two checkpoints, text made safe for a terminal.
 */
import { describe, expect, it } from "@effect/vitest"
import { AIMessage, HumanMessage } from "@langchain/core/messages"
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres"
import { Effect, Layer, Stream } from "effect"
import { admin, withDatabase } from "../../harness/databases.ts"
import * as Database from "../../src/internal/cli/Database.ts"
import { clean, cut } from "../../src/internal/cli/Output.ts"
import * as Inspector from "../../src/internal/inspector/Inspector.ts"
import * as Tree from "../../src/internal/inspector/Tree.ts"
import * as Values from "../../src/internal/inspector/Values.ts"
import { drivers } from "../support/drivers.ts"

const checkpoint = (
  channel_values: Record<string, unknown>,
  channel_versions: Record<string, number | string> = {},
  versions_seen: Record<string, Record<string, number | string>> = {}
) => ({ v: 4, id: "c", ts: "2026-01-01T00:00:00.000Z", channel_values, channel_versions, versions_seen })

describe("history tree", () => {
  // c1 <- c2 <- c3 (head), and c1 <- c4 <- c5 (a fork), newest first.
  const entries = [
    { id: "c5", parent: "c4" },
    { id: "c3", parent: "c2" },
    { id: "c4", parent: "c1" },
    { id: "c2", parent: "c1" },
    { id: "c1", parent: undefined }
  ]
  const rows = Tree.layout(entries, (entry) => entry.id, (entry) => entry.parent)

  it("puts each branch on its own lane and joins them at the fork", () => {
    expect(rows.map((row) => [row.entry.id, row.lane])).toEqual([["c5", 0], ["c3", 1], ["c4", 0], ["c2", 1], [
      "c1",
      0
    ]])
    expect(rows.map((row) => [row.entry.id, row.labels])).toEqual([
      ["c5", ["head"]],
      ["c3", ["branch"]],
      ["c4", []],
      ["c2", []],
      ["c1", ["fork point", "root"]]
    ])
    expect(rows.at(-1)!.joins).toEqual([1])
  })

  it("draws like git log --graph", () => {
    expect(Tree.text(rows).map((line) => `${line.graph} ${line.row?.entry.id ?? ""}`.trimEnd())).toEqual([
      "* c5",
      "| * c3",
      "* | c4",
      "| * c2",
      "| / ",
      "* c1"
    ].map((line) => line.trimEnd()))
  })
})

describe("values", () => {
  it("reads revived and serialized messages as role and text", () => {
    expect(Values.asMessages([new HumanMessage({ content: "hi", id: "1" }), new AIMessage("hello")])).toEqual([
      { id: "1", role: "human", text: "hi" },
      { id: undefined, role: "ai", text: "hello" }
    ])
    expect(Values.asMessage({ lc: 1, type: "constructor", id: ["x", "ToolMessage"], kwargs: { content: "42" } }))
      .toEqual({ id: undefined, role: "tool", text: "42" })
    expect(Values.asMessages([{ content: "not a message" }])).toBeUndefined()
  })

  it("names the nodes a channel triggered since they last ran (an emptied trigger is spent)", () => {
    expect(
      Values.nextNodes(checkpoint({ "branch:to:agent": null, "branch:to:tools": null }, {
        "branch:to:agent": 3,
        "branch:to:tools": 2,
        "branch:to:done": 4,
        messages: 3
      }, {
        agent: { "branch:to:agent": 2 },
        tools: { "branch:to:tools": 2 }
      }))
    ).toEqual(["agent"])
  })

  it("finds the channels a step wrote: those at the highest version", () => {
    expect(Values.changedChannels(checkpoint({}, { a: 3, b: "00000003.5", c: 2, "branch:to:x": 3 }))).toEqual([
      "a",
      "b"
    ])
  })

  it("diffs messages as appended, removed and edited, other channels as values", () => {
    const before = checkpoint({
      messages: [new HumanMessage({ content: "hi", id: "1" }), new AIMessage({ content: "old", id: "2" })],
      count: 1,
      gone: true
    })
    const after = checkpoint({
      messages: [
        new HumanMessage({ content: "hi", id: "1" }),
        new AIMessage({ content: "new", id: "2" }),
        new HumanMessage({ content: "more", id: "3" })
      ],
      count: 2,
      added: "x"
    })
    expect(Values.diff(before, after)).toEqual([
      { channel: "added", change: "added", after: "x" },
      { channel: "count", change: "changed", before: 1, after: 2 },
      { channel: "gone", change: "removed", before: true },
      {
        channel: "messages",
        change: "messages",
        appended: [{ id: "3", role: "human", text: "more" }],
        removed: [],
        edited: [{
          before: { id: "2", role: "ai", text: "old" },
          after: { id: "2", role: "ai", text: "new" },
          fields: [{ path: "content", before: "old", after: "new" }]
        }]
      }
    ])
  })

  it("shows a value the serializer cannot read as its type and size", async () => {
    const unreadable = new Values.Unreadable("msgpack", 12)
    expect(String(unreadable)).toBe("<msgpack, 12 bytes>")
    expect(Values.toPlain({ x: unreadable })).toEqual({ x: { $unreadable: "msgpack", bytes: 12 } })
  })
})

describe("terminal output", () => {
  it("prints control characters, escapes and bidirectional overrides as visible escapes", () => {
    const hostile = "a\u001b[31mred\u0007\nnext\u202eevil\u0000"
    const safe = clean(hostile)
    expect(safe).toBe("a\\u{1b}[31mred\\u{7}\\nnext\\u{202e}evil\\u{0}")
    // eslint-disable-next-line no-control-regex
    expect(/[\u0000-\u001f\u007f-\u009f\u202e]/.test(safe)).toBe(false)
    expect(cut("x".repeat(10), 4)).toBe("xxxx… (6 more)")
  })
})

describe("threads, a page at a time", () => {
  // The file's PostgreSQL store, which holds only these threads.
  const { databaseUrl, postgres } = drivers("inspector")

  it.live("pages through threads whose activity falls in the same millisecond, each once", () =>
    Effect.suspend(() => {
      const url = databaseUrl()
      return Effect.gen(function*() {
        // This library's tables (a migrating open), then 450 threads touched at one instant, as a migration adopts them.
        yield* Effect.scoped(Layer.build(postgres.layer()))
        yield* Effect.promise(() =>
          admin((client) =>
            client.query(`
              INSERT INTO checkpoint_threads (thread_id, last_activity)
              SELECT 't' || i, '2026-01-01 00:00:00.000123+00' FROM generate_series(1, 450) AS i;
              INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, checkpoint, metadata)
              SELECT 't' || i, '', 'c', '{"v":4,"id":"c","ts":"2026-01-01T00:00:00Z","channel_values":{},"channel_versions":{},"versions_seen":{}}', '{}'
              FROM generate_series(1, 450) AS i`), url)
        )
        yield* Effect.gen(function*() {
          const inspector = yield* Inspector.Inspector
          const all = yield* Stream.runCollect(inspector.threads())
          expect(all).toHaveLength(450)
          expect(new Set(all.map((thread) => thread.thread_id)).size).toBe(450)
          // Newest first, then by id descending.
          expect(all[0]!.thread_id).toBe("t99")
          const second = yield* Stream.runCollect(inspector.threads({ limit: 10, after: all[9]!.cursor }))
          expect(second.map((thread) => thread.thread_id)).toEqual(all.slice(10, 20).map((thread) => thread.thread_id))
        }).pipe(Effect.provide(Database.layer(url, "read")))
      })
    }))
})

// A database of its own: LangGraph's own tables, not this library's.
describe("a database LangGraph's Python saver wrote", () => {
  it.live("shows a msgpack value as its type and size, never a crash, and the rest as stored", () =>
    withDatabase("inspector_msgpack", (url) =>
      Effect.gen(function*() {
        // LangGraph's own tables (the JS saver's setup), then rows as the Python saver writes them.
        yield* Effect.promise(async () => {
          const saver = PostgresSaver.fromConnString(url)
          await saver.setup()
          await saver.end()
        })
        yield* Effect.promise(() =>
          admin((client) =>
            client.query(`
              INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, checkpoint, metadata)
              VALUES ('py', '', '1f0', '{"v":4,"id":"1f0","ts":"2026-01-01T00:00:00+00:00","channel_values":{},
                "channel_versions":{"messages":"00000001.0","note":"00000001.0"},"versions_seen":{}}',
                '{"source":"loop","step":1}');
              INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) VALUES
                ('py', '', 'messages', '00000001.0', 'msgpack', '\\x9193a26869'),
                ('py', '', 'note', '00000001.0', 'json', convert_to('"readable"', 'UTF8'))`), url)
        )
        const shown = yield* Effect.gen(function*() {
          return yield* (yield* Inspector.Inspector).checkpoint("py")
        }).pipe(Effect.provide(Database.layer(url, "read")))
        const messages = shown.tuple.checkpoint.channel_values.messages
        expect(messages).toBeInstanceOf(Values.Unreadable)
        expect(String(messages)).toBe("<msgpack, 5 bytes>")
        expect(shown.tuple.checkpoint.channel_values.note).toBe("readable")
      })))
})
