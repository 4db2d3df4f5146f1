/**
 * The `langgraph-checkpoints` executable, built as it is published and run
 * in child processes, on real databases real graphs wrote: PostgreSQL and
 * PGlite (this library's saver), a database only LangGraph's own
 * `PostgresSaver` wrote (read, never changed), and 100,000 threads.
 *
 * What the commands print is checked against what the library's own saver
 * reads (`list` over every namespace, `getTuple`, `getDeltaChannelHistory`);
 * what they change, against row counts taken directly.
 */
import { PGlite } from "@electric-sql/pglite"
import { load } from "@langchain/core/load"
import { type AIMessage, type BaseMessage, HumanMessage, type ToolMessage } from "@langchain/core/messages"
import type { CheckpointTuple } from "@langchain/langgraph-checkpoint"
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres"
import { Client } from "@langchain/langgraph-sdk"
import { execFile } from "node:child_process"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { type AddressInfo, createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest"
import { admin, createDatabase, withSaverOn } from "../../harness/databases.ts"
import { putForks } from "../../harness/forks.ts"
import {
  address,
  CANARY,
  chatGraph,
  type ChatThread,
  collect,
  DELTA_CHANNELS,
  MODEL_NAME,
  RUNS,
  text,
  THREADS,
  TOOLS_QUESTION,
  type ToolsThread,
  TRUNK_RUN,
  USAGE,
  view,
  writeApproval,
  writeChat,
  writeForest,
  writeInspected,
  writeNested
} from "../../harness/inspectedGraph.ts"
import type { EffectCheckpointSaver } from "../../src/index.ts"
import type { Serve } from "../../src/internal/cli/commands/Serve.ts"
import type { serve } from "../../src/server.ts"
import { type CliResult, describeResult, usingCli } from "../support/cli.ts"
import { insertThreads } from "../support/manyThreads.ts"

const { built, fails, ok, run } = usingCli()

/**
 * Two lanes run side by side (one for each of the 2 cores this has to fit
 * in): PostgreSQL's suites, and those that open PGlite (whose processes
 * take longest).
 * Within a lane, suites and tests run in order: later tests change what
 * earlier ones read.
 */
const lane = { concurrent: true } as const
const inSequence = { concurrent: false } as const
const inOrder = (timeout = 60_000) => ({ concurrent: false, timeout })

const json = <A = any>(result: CliResult): A => {
  try {
    return JSON.parse(result.stdout) as A
  } catch (cause) {
    throw new Error(`not JSON:\n${result.stdout}`, { cause })
  }
}

const ESC = "\u001b"
const short = (id: string) => id.slice(-12)

/** The tables this library writes, and their row counts. */
const TABLES = ["checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_pieces", "checkpoint_threads"]

const countRows = async (query: (sql: string) => Promise<number>) =>
  Object.fromEntries(
    await Promise.all(TABLES.map(async (table) => [table, await query(`SELECT count(*)::int AS n FROM ${table}`)]))
  ) as Record<string, number>

/** A database a saver of this library writes, and a way to look at it while no command runs. */
interface Backend {
  readonly url: string
  /** A saver on the database for the time of `f` (PGlite is one process: closed again before any command runs). */
  readonly withSaver: <A>(f: (saver: EffectCheckpointSaver) => Promise<A>) => Promise<A>
  /** Row counts of the library's tables, read directly. */
  readonly counts: () => Promise<Record<string, number>>
  readonly dispose: () => Promise<void>
}

const postgresBackend = async (): Promise<Backend> => {
  const database = await createDatabase("cli")
  return {
    url: database.url,
    withSaver: (f) => withSaverOn(database.url, f),
    counts: () =>
      admin((client) => countRows(async (sql) => (await client.query<{ n: number }>(sql)).rows[0]!.n), database.url),
    dispose: async () => {
      await database.drop()
    }
  }
}

const pgliteBackend = async (): Promise<Backend> => {
  const dir = await mkdtemp(join(tmpdir(), "lce-cli-pglite-"))
  const dataDir = join(dir, "db")
  return {
    url: `pglite:${dataDir}`,
    withSaver: (f) => withSaverOn(`pglite:${dataDir}`, f),
    counts: async () => {
      const db = await PGlite.create(dataDir)
      try {
        return await countRows(async (sql) => (await db.query<{ n: number }>(sql)).rows[0]!.n)
      } finally {
        await db.close()
      }
    },
    dispose: () => rm(dir, { recursive: true, force: true })
  }
}

/** The DeltaChannels LangGraph rebuilds from history at a checkpoint: those it does not store. */
const readBack = (tuple: CheckpointTuple) =>
  DELTA_CHANNELS.filter((channel) => !(channel in tuple.checkpoint.channel_values))

/** What the library's saver reads of the threads the fixture wrote. */
interface Expected {
  readonly chat: ChatThread
  readonly tools: ToolsThread
  /** Per thread, `list` over every namespace. */
  readonly lists: Record<string, Array<CheckpointTuple>>
  /** Per thread, the root namespace's latest. */
  readonly latest: Record<string, CheckpointTuple>
  /** Per thread and namespace, that namespace's latest. */
  readonly latestByNamespace: Record<string, Record<string, CheckpointTuple>>
  /** When the fixture's last write ended. */
  readonly writtenAt: number
  /** The DeltaValue thread's latest checkpoint's `getDeltaChannelHistory`. */
  readonly deltaHistory: unknown
}

const readExpected = async (
  saver: EffectCheckpointSaver,
  { chat, tools }: { readonly chat: ChatThread; readonly tools: ToolsThread }
): Promise<Expected> => {
  const lists: Record<string, Array<CheckpointTuple>> = {}
  const latest: Record<string, CheckpointTuple> = {}
  const latestByNamespace: Record<string, Record<string, CheckpointTuple>> = {}
  for (const thread_id of THREADS) {
    lists[thread_id] = await collect(saver, { configurable: { thread_id } })
    latest[thread_id] = (await saver.getTuple({ configurable: { thread_id, checkpoint_ns: "" } }))!
    latestByNamespace[thread_id] = {}
    for (const ns of new Set(lists[thread_id].map((tuple) => address(tuple).checkpoint_ns))) {
      latestByNamespace[thread_id][ns] = (await saver.getTuple({ configurable: { thread_id, checkpoint_ns: ns } }))!
    }
  }
  const deltaHistory = await saver.getDeltaChannelHistory({
    config: latest.delta!.config,
    channels: readBack(latest.delta!)
  })
  return { chat, tools, lists, latest, latestByNamespace, writtenAt: Date.now(), deltaHistory }
}

const messagesOf = (tuple: CheckpointTuple) =>
  (tuple.checkpoint.channel_values.messages as Array<{ content: unknown }>).map(text)

/** The lines of `show`'s output from "channels" up to "metadata". */
const channelsSection = (stdout: string) => {
  const lines = stdout.split("\n")
  return lines.slice(lines.indexOf("channels"), lines.findIndex((line) => line.startsWith("metadata:")))
}

/**
 * The commands on a database this library's saver wrote. `thorough` runs
 * every variant (text and JSON, every error, dry runs). Without it (PGlite,
 * where each command's process takes 4–6 s: PGlite's WebAssembly is
 * compiled anew each time), each of the inspector's queries once (threads,
 * history, show, stats) and each writing command (copy, prune, delete-runs,
 * delete): what goes through the driver; the rest is the same code.
 */
const backendSuite = (name: "PostgreSQL" | "PGlite", make: () => Promise<Backend>, thorough: boolean) =>
  describe(`on ${name}`, inSequence, () => {
    let backend: Backend
    let expected: Expected
    /** Outputs of reading commands run before anything changes the database: each runs once. */
    const reads = new Map<string, Promise<CliResult>>()
    const read = (args: ReadonlyArray<string>) => {
      const key = JSON.stringify(args)
      if (!reads.has(key)) reads.set(key, run([args[0]!, backend.url, ...args.slice(1)]))
      return reads.get(key)!.then((result) => {
        expect(result.code, describeResult(args, result)).toBe(0)
        return result
      })
    }
    const childNamespace = () => Object.keys(expected.latestByNamespace.nested!).find((ns) => ns.startsWith("child:"))!

    beforeAll(async () => {
      backend = await make()
      expected = await backend.withSaver(async (saver) => readExpected(saver, await writeInspected(saver)))
    }, 120_000)

    afterAll(async () => {
      await backend?.dispose()
    })

    it("the fixture: a fork, an interrupt, a child namespace, DeltaValue channels, run ids", inOrder(), () => {
      const chat = expected.lists.chat!
      const parents = chat.map((tuple) => address(tuple).parent_checkpoint_id)
      expect(parents.filter((parent) => parent === expected.chat.afterFirstTurn)).toHaveLength(2)
      expect(expected.latest.approval!.pendingWrites?.some(([, channel]) => channel === "__interrupt__")).toBe(true)
      expect(childNamespace()).toBeDefined()
      expect(messagesOf(expected.latest.chat!).at(-2)).toBe(CANARY)
      expect(expected.lists.runs!.map((tuple) => (tuple.metadata as Record<string, unknown> | undefined)?.run_id))
        .toContain("run-b")
    })

    it("threads --json: one entry per thread, with what list reads", inOrder(120_000), async () => {
      const listed = json<Array<any>>(await read(["threads", "--json"]))
      expect(listed.map((thread) => thread.thread_id).sort()).toEqual([...THREADS].sort())
      for (const thread of listed) {
        const tuples = expected.lists[thread.thread_id]!
        expect(thread.checkpoints, thread.thread_id).toBe(tuples.length)
        expect(thread.latest_step, thread.thread_id).toBe(expected.latest[thread.thread_id]!.metadata?.step)
        expect(thread.namespaces, thread.thread_id).toEqual(
          [...new Set(tuples.map((tuple) => address(tuple).checkpoint_ns))].sort()
        )
        expect(thread.interrupts, thread.thread_id).toBe(thread.thread_id === "approval" ? 1 : 0)
      }
      // Newest activity first.
      const activity = listed.map((thread) => Date.parse(thread.last_activity))
      expect(activity).toEqual([...activity].sort((a, b) => b - a))
    })

    it.runIf(thorough)("threads: a table naming every thread; --limit", inOrder(120_000), async () => {
      const textual = await read(["threads"])
      const rows = textual.stdout.trimEnd().split("\n")
      expect(rows[0]).toBe("thread\tnamespaces\tcheckpoints\tstep\tlast activity\tinterrupts")
      expect(rows.slice(1).map((row) => row.split("\t")[0]).sort()).toEqual([...THREADS].sort())
      const approval = rows.find((row) => row.startsWith("approval\t"))!.split("\t")
      expect(approval[1]).toBe("(root)")
      expect(approval[2]).toBe(String(expected.lists.approval!.length))
      expect(approval[5]).toBe("1")

      const newest = json<Array<any>>(await read(["threads", "--json"]))[0].thread_id
      const one = await read(["threads", "--limit", "1", "--json"])
      expect(json<Array<any>>(one).map((thread) => thread.thread_id)).toEqual([newest])
      const oneText = await read(["threads", "--limit", "1"])
      expect(oneText.stdout.trimEnd().split("\n").filter((line) => line.includes("\t"))).toHaveLength(2)
      // The trailer is for people: on stderr, so the rows piped on stdout are the TSV alone.
      expect(oneText.stdout.trimEnd().split("\n")).toHaveLength(2)
      expect(oneText.stderr).toContain("(first 1; more with --limit)")
    })

    it(
      "history: the time-travel edit as head, branch and fork point; the steps and next nodes",
      inOrder(120_000),
      async () => {
        const { stdout } = await read(["history", "chat"])
        const lines = stdout.trimEnd().split("\n")
        // A line of the graph alone where the branches join, e.g. "|/" or "| /".
        expect(lines.some((line) => /^[ |/]*\/[ |/]*$/.test(line)), stdout).toBe(true)
        expect(lines.filter((line) => line.includes("(head)"))).toHaveLength(1)
        expect(lines.find((line) => line.includes("(head)"))).toContain(short(expected.latest.chat!.checkpoint.id))
        // The original conversation is a branch; the checkpoint the edit started from, the fork point.
        expect(lines.filter((line) => line.includes("(branch)"))).toHaveLength(1)
        expect(lines.find((line) => line.includes("(branch)"))).toContain(short(expected.chat.originalHead))
        expect(lines.filter((line) => line.includes("(fork point)"))).toHaveLength(1)
        expect(lines.find((line) => line.includes("(fork point)"))).toContain(short(expected.chat.afterFirstTurn))
        expect(lines.filter((line) => line.includes("(root)"))).toHaveLength(1)
        for (const tuple of expected.lists.chat!) {
          expect(stdout).toContain(`${short(tuple.checkpoint.id)}`)
        }
        // The nodes each checkpoint runs next: the input's "__start__", then "model", then none.
        const lineOf = (id: string) => lines.find((line) => line.includes(short(id)))!
        const [head, beforeModel, input] = expected.lists.chat!.filter((tuple) =>
          tuple.checkpoint.id === expected.latest.chat!.checkpoint.id || tuple.metadata?.step === 0 ||
          tuple.metadata?.step === -1
        )
        expect(lineOf(input!.checkpoint.id)).toMatch(/step -1 {2}input {2}"human: hello" {2}next: __start__$/)
        expect(lineOf(beforeModel!.checkpoint.id)).toMatch(
          /step 0 {2}loop {2}ran: __start__ {2}"human: hello" {2}next: model {2}/
        )
        expect(lineOf(head!.checkpoint.id)).not.toContain("next:")
        // What each step did: the node that ran and a line of what it wrote, the terminal's escape made visible.
        expect(lineOf(head!.checkpoint.id)).toContain("ran: model")
        expect(lineOf(head!.checkpoint.id)).toContain(`"ai: heard "canary \\u{1b}[31mRED`)
        expect(lineOf(beforeModel!.checkpoint.id)).toContain(`ran: __start__  "human: hello"`)
        expect(lineOf(input!.checkpoint.id)).toContain(`input  "human: hello"`)
        expect(lineOf(expected.chat.originalHead)).toContain(`ran: model  "ai: heard "tell me more" (5 messages)"`)
        expect(lineOf(expected.chat.fork)).toMatch(/step 2 {2}update {2}"human: forked question"/)
      }
    )

    it.runIf(thorough)("history: a subgraph's namespace; --json in list's order", inOrder(120_000), async () => {
      const nested = await read(["history", "nested"])
      expect(nested.stdout).toContain(`namespace ${childNamespace()}`)
      // The subgraph's group names the root checkpoint that started it (metadata `parents`) and its step.
      const started = expected.lists.nested!.find((tuple) => address(tuple).checkpoint_ns === childNamespace())!
      const parent = String((started.metadata as { parents: Record<string, string> }).parents[""])
      const step = expected.lists.nested!.find((tuple) => tuple.checkpoint.id === parent)!.metadata?.step
      expect(nested.stdout).toContain(
        `(a subgraph under the root, started at checkpoint ${short(parent)} (step ${step}))`
      )
      // The interrupt the subgraph paused at, in both namespaces, with what the step before wrote.
      expect(nested.stdout).toMatch(
        /step 0 {2}loop {2}ran: __start__ {2}"value="x"" {2}next: child {2}interrupt: \["inner question"\]/
      )
      expect(nested.stdout).toMatch(
        /step 0 {2}loop {2}ran: __start__ {2}"value="x"" {2}next: ask {2}interrupt: \["inner question"\]/
      )
      expect(nested.stdout).toContain(`ran: ask  "value="x+answer""`)
      for (const thread_id of ["chat", "nested"]) {
        const entries = json<Array<any>>(await read(["history", thread_id, "--json"]))
        expect(
          entries.map((entry) => ({
            checkpoint_ns: entry.checkpoint_ns,
            checkpoint_id: entry.checkpoint_id,
            parent_checkpoint_id: entry.parent_checkpoint_id ?? null
          })),
          thread_id
        ).toEqual(expected.lists[thread_id]!.map(address))
      }
    })

    it("show: the interrupt, the next node", inOrder(120_000), async () => {
      const approval = await read(["show", "approval"])
      expect(approval.stdout).toContain("interrupt: approve?")
      expect(approval.stdout).toMatch(/^next: review$/m)
      if (thorough) expect(json(await read(["show", "approval", "--json"])).next).toEqual(["review"])
    })

    it("show: the latest checkpoint's messages by role, escaped; --json", inOrder(120_000), async () => {
      const chat = await read(["show", "chat"])
      expect(chat.stdout).toContain(`checkpoint ${expected.latest.chat!.checkpoint.id}`)
      expect(chat.stdout).toContain("    human: hello\n")
      expect(chat.stdout).toContain(`    ai: heard "hello" (1 messages)\n`)
      expect(chat.stdout).toContain("    human: forked question\n")
      expect(chat.stdout).not.toContain("how are you")
      // The canary: the escape shown, not sent.
      expect(chat.stdout).not.toContain(ESC)
      expect(chat.stdout).toContain("    human: canary \\u{1b}[31mRED <script>alert(1)</script>\n")

      if (!thorough) return
      const shown = json(await read(["show", "chat", "--json"]))
      expect(shown.checkpoint.id).toBe(expected.latest.chat!.checkpoint.id)
      expect(shown.next).toEqual([])
    })

    it.runIf(thorough)(
      "show: an older checkpoint by the end of its id; a subgraph's by --ns",
      inOrder(120_000),
      async () => {
        const older = await read(["show", "chat", short(expected.chat.originalHead)])
        expect(older.stdout).toContain(`checkpoint ${expected.chat.originalHead}`)
        expect(older.stdout).toContain("    human: tell me more\n")
        const olderJson = json(await read(["show", "chat", short(expected.chat.originalHead), "--json"]))
        expect(olderJson.checkpoint.id).toBe(expected.chat.originalHead)
        const child = json(await read(["show", "nested", "--ns", childNamespace(), "--json"]))
        expect(child.checkpoint.id).toBe(expected.latestByNamespace.nested![childNamespace()]!.checkpoint.id)
      }
    )

    it.runIf(thorough)("diff: the messages appended between two checkpoints; --json", inOrder(120_000), async () => {
      const args = ["diff", "chat", short(expected.chat.afterFirstTurn), short(expected.chat.originalHead)]
      const { stdout } = await read(args)
      expect(stdout).toMatch(/^messages: 4 appended, 0 removed, 0 edited$/m)
      expect(stdout).toContain("  + human: how are you\n")
      expect(stdout).toContain(`  + ai: heard "tell me more" (5 messages)\n`)
      const channels = json<Array<any>>(await read([...args, "--json"]))
      const messages = channels.find((change) => change.channel === "messages")
      expect(messages.change).toBe("messages")
      expect(messages.appended.map((message: { text: string }) => message.text)).toEqual([
        "how are you",
        `heard "how are you" (3 messages)`,
        "tell me more",
        `heard "tell me more" (5 messages)`
      ])
    })

    it(
      "show: a tool agent's calls (name, arguments, id) and results (tool_call_id, name); --metadata",
      inOrder(120_000),
      async () => {
        const { stdout } = await read(["show", "tools"])
        expect(channelsSection(stdout)).toEqual([
          "channels",
          "  messages: 4 messages",
          `    human: ${TOOLS_QUESTION}`,
          "    ai:",
          `      tool call get_weather {"city":"Lyon"} (id call_weather_1)`,
          "    tool (name get_weather, tool_call_id call_weather_1): Lyon: 21 degrees, sunny",
          "    ai: the weather: Lyon: 21 degrees, sunny"
        ])
        expect(stdout).not.toContain("usage_metadata")
        const withMetadata = (await read(["show", "tools", "--metadata"])).stdout
        expect(withMetadata).toContain(`      usage_metadata: ${JSON.stringify(USAGE)}\n`)
        expect(withMetadata).toContain(`      response_metadata: {"model_name":"${MODEL_NAME}"}\n`)
      }
    )

    it.runIf(thorough)(
      "show --json: each message whole, as LangChain serializes it and load revives it",
      inOrder(120_000),
      async () => {
        const shown = json(await read(["show", "tools", "--json"]))
        const held = expected.latest.tools!.checkpoint.channel_values.messages as Array<BaseMessage>
        const messages = shown.checkpoint.channel_values.messages as Array<unknown>
        expect(messages).toEqual(JSON.parse(JSON.stringify(held)))
        const revived = await Promise.all(messages.map((message) => load<BaseMessage>(JSON.stringify(message))))
        expect(revived.map((message) => message.getType())).toEqual(["human", "ai", "tool", "ai"])
        expect((revived[1] as AIMessage).tool_calls).toEqual((held[1] as AIMessage).tool_calls)
        expect((revived[2] as ToolMessage).tool_call_id).toBe("call_weather_1")
        expect((revived[3] as AIMessage).usage_metadata).toEqual(USAGE)
        expect(revived.map((message) => message.id)).toEqual(held.map((message) => message.id))
      }
    )

    it.runIf(thorough)(
      "diff: a human's edit of a pending tool call, field by field; --json",
      inOrder(120_000),
      async () => {
        const call = (expected.latest.tools!.checkpoint.channel_values.messages as Array<BaseMessage>)[1]!
        const args = ["diff", "tools", short(expected.tools.paused), short(expected.tools.edited)]
        const { stdout } = await read(args)
        expect(stdout).toMatch(/^messages: 0 appended, 0 removed, 1 edited$/m)
        expect(stdout).toContain(`  ~ ai (id ${call.id}): tool_calls[0].args.city: "Paris" → "Lyon"\n`)
        const channels = json<Array<any>>(await read([...args, "--json"]))
        const messages = channels.find((change) => change.channel === "messages")
        expect(messages.edited).toHaveLength(1)
        expect(messages.edited[0].fields).toEqual([{ path: "tool_calls[0].args.city", before: "Paris", after: "Lyon" }])
        expect(messages.edited[0].after.tool_calls).toEqual([
          { name: "get_weather", args: { city: "Lyon" }, id: "call_weather_1" }
        ])
        // The run went on from the edit: the tool answered for Lyon.
        const after = await read([
          "diff",
          "tools",
          short(expected.tools.edited),
          short(expected.latest.tools!.checkpoint.id)
        ])
        expect(after.stdout).toContain(
          "  + tool (name get_weather, tool_call_id call_weather_1): Lyon: 21 degrees, sunny\n"
        )
      }
    )

    it.runIf(thorough)("no raw ESC from diff, history, threads or --json either", inOrder(120_000), async () => {
      const diff = await read(["diff", "chat", short(expected.chat.fork), short(expected.latest.chat!.checkpoint.id)])
      expect(diff.stdout).toContain("+ human: canary \\u{1b}[31mRED")
      for (
        const result of [
          diff,
          await read(["show", "chat", "--json"]),
          await read(["history", "chat"]),
          await read(["threads"])
        ]
      ) {
        expect(result.stdout).not.toContain(ESC)
      }
    })

    it("stats: rows per table, counted as SELECT count(*) counts them", inOrder(120_000), async () => {
      if (thorough) {
        const { stdout } = await read(["stats"])
        for (const table of ["threads", "checkpoints", "blobs", "writes", "pieces"]) {
          expect(stdout).toMatch(new RegExp(`^${table}\\t\\d+`, "m"))
        }
      }
      const stats = json(await read(["stats", "--json"]))
      const counts = await backend.counts()
      expect({
        checkpoints: stats.checkpoints,
        blobs: stats.blobs,
        writes: stats.writes,
        pieces: stats.pieces,
        threads: stats.threads
      }).toEqual({
        checkpoints: counts.checkpoints,
        blobs: counts.checkpoint_blobs,
        writes: counts.checkpoint_writes,
        pieces: counts.checkpoint_pieces,
        threads: counts.checkpoint_threads
      })
      for (const key of ["threads", "checkpoints", "blobs", "writes", "pieces"]) {
        expect(stats[key], key).toBeGreaterThan(0)
      }
    })

    it.runIf(thorough)("an unknown thread or checkpoint is exit 1, one line naming it", inOrder(120_000), async () => {
      const thread = await fails(1, ["show", backend.url, "no-such-thread"])
      expect(thread.stderr).toContain("no-such-thread")
      const history = await fails(1, ["history", backend.url, "no-such-thread"])
      expect(history.stderr).toContain("no-such-thread")
      const checkpoint = await fails(1, ["show", backend.url, "chat", "zzzzzzzz"])
      expect(checkpoint.stderr).toContain("zzzzzzzz")
    })

    it("copy: a whole thread under a new id, shown like the original", inOrder(120_000), async () => {
      const copied = await ok(["copy", backend.url, "chat", "chat-copy"])
      expect(copied.stdout).toContain("copied chat to chat-copy")
      await backend.withSaver(async (saver) => {
        const copied = await collect(saver, { configurable: { thread_id: "chat-copy" } })
        expect(copied.map((tuple) => tuple.checkpoint)).toEqual(expected.lists.chat!.map((tuple) => tuple.checkpoint))
      })
      // --latest: the latest state alone, read back as the original's latest.
      expect((await ok(["copy", backend.url, "chat", "chat-latest", "--latest"])).stdout).toContain(
        "copied chat to chat-latest"
      )
      await backend.withSaver(async (saver) => {
        const latest = await collect(saver, { configurable: { thread_id: "chat-latest" } })
        expect(latest.length).toBeLessThan(expected.lists.chat!.length)
        expect(latest[0]!.checkpoint).toEqual(expected.lists.chat![0]!.checkpoint)
        await saver.deleteThread("chat-latest")
      })
      if (!thorough) return
      const copy = await ok(["show", backend.url, "chat-copy"])
      expect(copy.stdout).toContain("    human: hello\n")
      expect(channelsSection(copy.stdout)).toEqual(channelsSection((await read(["show", "chat"])).stdout))
      // The target exists now.
      const again = await fails(1, ["copy", backend.url, "chat", "chat-copy"])
      expect(again.stderr).toContain("chat-copy")
    })

    it(
      "prune --keep-latest --yes: the latest of each namespace reads the same; what it plans, it removes",
      inOrder(120_000),
      async () => {
        const threads = ["chat-copy", "delta", "nested"]
        const before = thorough ? await backend.counts() : undefined
        const pruned = await ok(["prune", backend.url, ...threads, "--keep-latest", "--yes"])
        const after = thorough ? await backend.counts() : undefined
        const strip = (tuple: CheckpointTuple | undefined) => ({ ...view(tuple), parent_checkpoint_id: undefined })
        const left = await backend.withSaver(async (saver) => {
          for (const thread_id of ["delta", "nested"]) {
            for (const [ns, tuple] of Object.entries(expected.latestByNamespace[thread_id]!)) {
              const now = await saver.getTuple({ configurable: { thread_id, checkpoint_ns: ns } })
              expect(strip(now), `${thread_id} ${ns}`).toEqual(strip(tuple))
            }
          }
          const copy = (await saver.getTuple({ configurable: { thread_id: "chat-copy" } }))!
          expect(copy.checkpoint).toEqual(expected.latest.chat!.checkpoint)
          expect(copy.pendingWrites).toEqual(expected.latest.chat!.pendingWrites)
          // The DeltaValue channels rebuild as before.
          const delta = (await saver.getTuple({ configurable: { thread_id: "delta" } }))!
          expect(await saver.getDeltaChannelHistory({ config: delta.config, channels: readBack(delta) })).toEqual(
            expected.deltaHistory
          )
          // The other threads are as they were.
          expect(view(await saver.getTuple({ configurable: { thread_id: "approval" } }))).toEqual(
            view(expected.latest.approval)
          )
          return Object.fromEntries(
            await Promise.all(
              threads.map(async (thread_id) => [
                thread_id,
                (await collect(saver, { configurable: { thread_id } })).length
              ])
            )
          ) as Record<string, number>
        })
        // What it said it would remove, it removed; what it says it removed, went.
        const planned = [...pruned.stdout.matchAll(/^ {2}(\S+): (\d+) checkpoint\(s\)$/gm)]
        const removed = Number(/^prune: removed (\d+) checkpoint\(s\) from \d+ thread\(s\)/m.exec(pruned.stdout)?.[1])
        const was = (thread_id: string) => expected.lists[thread_id === "chat-copy" ? "chat" : thread_id]!.length
        expect(removed, pruned.stdout).toBe(
          threads.reduce((sum, thread_id) => sum + was(thread_id) - left[thread_id]!, 0)
        )
        if (before !== undefined && after !== undefined) {
          expect(removed, pruned.stdout).toBe(before.checkpoints - after.checkpoints)
        }
        expect(planned.reduce((sum, [, , n]) => sum + Number(n), 0), pruned.stdout).toBe(removed)
        for (const [, thread_id, n] of planned) {
          expect(left[thread_id!], pruned.stdout).toBe(was(thread_id!) - Number(n))
        }
        // The forked chat loses its older branch at least.
        expect(left["chat-copy"], pruned.stdout).toBeLessThan(expected.lists.chat!.length)
      }
    )

    it("delete-runs: the checkpoints a run wrote (metadata run_id), nothing else", inOrder(120_000), async () => {
      const runOf = (tuple: CheckpointTuple) => (tuple.metadata as Record<string, unknown> | undefined)?.run_id
      const runB = expected.lists.runs!.filter((tuple) => runOf(tuple) === "run-b")
      const kept = expected.lists.runs!.filter((tuple) => runOf(tuple) !== "run-b")
      expect(runB.length).toBeGreaterThan(0)
      if (thorough) {
        const before = await backend.counts()
        const dry = await ok(["delete-runs", backend.url, RUNS[1], "--dry-run"])
        expect(dry.stdout).toContain(`runs: ${runB.length} checkpoint(s)`)
        expect(dry.stdout).toContain("would remove")
        expect(await backend.counts()).toEqual(before)
      }
      const removed = await ok(["delete-runs", backend.url, RUNS[1], "--yes"])
      expect(removed.stdout).toContain(`delete-runs: removed ${runB.length} checkpoint(s)`)
      await backend.withSaver(async (saver) => {
        const left = await collect(saver, { configurable: { thread_id: "runs" } })
        expect(left.map((tuple) => tuple.checkpoint.id).sort()).toEqual(kept.map((tuple) => tuple.checkpoint.id).sort())
        expect(messagesOf((await saver.getTuple({ configurable: { thread_id: "runs" } }))!)).toEqual([
          "from run-a",
          `heard "from run-a" (1 messages)`
        ])
      })
    })

    it.runIf(thorough)(
      "retention --inactive-for 1s --dry-run: the inactive threads, nothing changed",
      inOrder(120_000),
      async () => {
        const wait = expected.writtenAt + 1_500 - Date.now()
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
        const before = await backend.counts()
        const { stdout } = await ok(["retention", backend.url, "--inactive-for", "1s", "--dry-run"])
        for (const thread_id of ["chat", "approval", "delta"]) {
          expect(stdout).toMatch(new RegExp(`^ {2}${thread_id}: \\d+ checkpoint\\(s\\) \\(the whole thread\\)$`, "m"))
        }
        expect(stdout).toContain("retention would remove")
        expect(stdout).toContain("(dry run: nothing changed)")
        expect(await backend.counts()).toEqual(before)
      }
    )

    it("delete: --dry-run and no --yes change nothing; --yes removes the thread alone", inOrder(120_000), async () => {
      const before = thorough ? await backend.counts() : undefined
      const checkpoints = expected.lists.chat!.length
      if (before !== undefined) {
        const dry = await ok(["delete", backend.url, "chat", "--dry-run"])
        expect(dry.stdout).toContain(`  chat: ${checkpoints} checkpoint(s) (the whole thread)`)
        expect(dry.stdout).toContain(`delete would remove ${checkpoints} checkpoint(s) of 1 thread(s)`)
        expect(await backend.counts()).toEqual(before)

        // Standard input is not a terminal: no question, a refusal.
        const refused = await fails(2, ["delete", backend.url, "chat"])
        expect(refused.stderr).toContain("--yes")
        expect(await backend.counts()).toEqual(before)
      }

      const deleted = await ok(["delete", backend.url, "chat", "--yes"])
      expect(deleted.stdout).toContain(`delete: removed ${checkpoints} checkpoint(s) from 1 thread(s)`)
      await backend.withSaver(async (saver) => {
        expect(await saver.getTuple({ configurable: { thread_id: "chat" } })).toBeUndefined()
        expect(view(await saver.getTuple({ configurable: { thread_id: "approval" } }))).toEqual(
          view(expected.latest.approval)
        )
        const delta = (await saver.getTuple({ configurable: { thread_id: "delta" } }))!
        expect(delta.checkpoint).toEqual(expected.latest.delta!.checkpoint)
        expect(delta.pendingWrites).toEqual(expected.latest.delta!.pendingWrites)
        expect(await saver.getTuple({ configurable: { thread_id: "chat-copy" } })).toBeDefined()
      })
      if (before === undefined) return
      expect((await backend.counts()).checkpoints).toBe(before.checkpoints - checkpoints)
      const gone = await fails(1, ["show", backend.url, "chat"])
      expect(gone.stderr).toContain("chat")
    })
  })

const usageSuite = () =>
  describe("usage", inSequence, () => {
    let database: Awaited<ReturnType<typeof createDatabase>>

    beforeAll(async () => {
      database = await createDatabase("cli_usage")
      await withSaverOn(database.url, (saver) => writeApproval(saver))
    }, 60_000)

    afterAll(async () => {
      await database?.drop()
    })

    it("the database from DATABASE_URL when the command has none", inOrder(), async () => {
      const { stdout } = await ok(["threads"], { env: { DATABASE_URL: database.url } })
      expect(stdout).toContain("approval\t")
      const shown = await ok(["show", "approval"], { env: { DATABASE_URL: database.url } })
      expect(shown.stdout).toContain("interrupt: approve?")
    })

    it(
      "no database at all is a usage error (exit 2), the refusal last, with where the help is",
      inOrder(),
      async () => {
        const { stderr, stdout } = await fails(2, ["threads"])
        expect(stderr).toMatch(/^error: .*DATABASE_URL.*\nusage: langgraph-checkpoints threads --help\n$/)
        expect(stdout).toBe("")
      }
    )

    it("a connection string no driver serves is exit 1, one line", inOrder(), async () => {
      const given = await fails(1, ["threads", "mysql://x"])
      expect(given.stderr).toContain("mysql://x")
      const fromEnv = await fails(1, ["threads"], { env: { DATABASE_URL: "mysql://x" } })
      expect(fromEnv.stderr).toContain("unsupported connection string")
    })

    it("a database that cannot be reached or does not exist is exit 1, one line", inOrder(120_000), async () => {
      await fails(1, ["threads", "postgres://postgres@127.0.0.1:1/none"])
      const missing = await fails(1, ["threads", `pglite:${join(tmpdir(), "lce-cli-no-such-dir", "db")}`])
      expect(missing.stderr).toContain("no database")
      await fails(1, ["threads", "pglite:"])
    })

    it(
      "an unknown command or a missing argument is exit 2 with where the help is; on a terminal, the help",
      inOrder(),
      async () => {
        const unknown = await run(["frobnicate"])
        expect(unknown.code, describeResult(["frobnicate"], unknown)).toBe(2)
        expect(unknown.stderr).toContain("frobnicate")
        expect(unknown.stderr).toMatch(/\nusage: langgraph-checkpoints --help\n$/)
        expect(unknown.stdout).toBe("")

        const missing = await fails(2, ["show", database.url])
        expect(missing.stderr).toContain("missing <thread>")
        expect(missing.stderr).toMatch(/\nusage: langgraph-checkpoints show --help\n$/)
        expect(missing.stdout).toBe("")

        // A person at a terminal gets the help itself (util-linux's script gives the command one).
        const shown = await promisify(execFile)("script", [
          "-qec",
          `${process.execPath} ${built().main} show ${database.url}`,
          "/dev/null"
        ], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } }).catch((error: { stdout: string }) => error)
        expect(shown.stdout).toContain("missing <thread>")
        expect(shown.stdout).toMatch(/USAGE/)

        const tooMany = await fails(2, ["threads", database.url, "extra"])
        expect(tooMany.stderr).toContain("extra")
      }
    )

    it("stats <thread> says where the thread's bytes are, as the storage reports them", inOrder(), async () => {
      const { stdout } = await ok(["stats", database.url, "approval", "--json"])
      const report = JSON.parse(stdout) as {
        thread_id: string
        total_bytes: number
        checkpoints: { count: number; bytes: number }
        channel_values: { bytes: number }
        pending_writes: { bytes: number }
      }
      expect(report.thread_id).toBe("approval")
      expect(report.checkpoints.count).toBeGreaterThan(0)
      expect(report.total_bytes).toBe(
        report.checkpoints.bytes + report.channel_values.bytes + report.pending_writes.bytes
      )
      const table = (await ok(["stats", database.url, "approval"])).stdout
      expect(table).toMatch(/^thread approval\trows\tstored\tuncompressed\n/)
      expect(table).toMatch(/\ncheckpoints\t\d+\t/)
      expect(table).toMatch(/\ntotal\t\t.+\n$/)
      expect((await fails(1, ["stats", database.url, "no-such-thread"])).stderr).toContain(
        `threadStorage: thread "no-such-thread" has no checkpoints`
      )
    })

    it("prune --all plans every thread; with thread ids, or with neither, it is a usage error", inOrder(), async () => {
      const listed = (await ok(["threads", database.url])).stdout.split("\n").filter((line) => line.includes("\t"))
        .map((line) => line.split("\t")[0]!).filter((id) => id !== "thread")
      const planned = (await ok(["prune", database.url, "--all", "--delete", "--dry-run"])).stdout
      expect(listed.length).toBeGreaterThan(0)
      for (const thread_id of listed) expect(planned).toContain(`  ${thread_id}: `)
      expect(planned).toContain(`of ${listed.length} thread(s) (dry run: nothing changed)`)
      expect((await fails(2, ["prune", database.url, "--delete"])).stderr).toContain("(or --all for every thread)")
      expect((await fails(2, ["prune", database.url, "x", "--all", "--delete"])).stderr).toContain("not both")
    })

    it("retention --inactive-for 0d, which takes every thread for inactive, is a usage error", inOrder(), async () => {
      const zero = await fails(2, ["retention", database.url, "--inactive-for", "0d", "--yes"])
      expect(zero.stderr).toContain(`--inactive-for "0d"`)
      expect((await ok(["threads", database.url])).stdout).toContain("approval\t")
    })

    it("--version and --help", inOrder(), async () => {
      const { version } = JSON.parse(await readFile(join(import.meta.dirname, "..", "..", "package.json"), "utf8"))
      expect((await ok(["--version"])).stdout).toContain(version)
      const help = await ok(["--help"])
      for (
        const command of ["threads", "history", "show", "diff", "export", "import", "delete", "retention", "stats"]
      ) {
        expect(help.stdout).toContain(command)
      }
    })
  })

const exportSuite = () =>
  describe("export, then import into a new PGlite database", inSequence, () => {
    let source: Backend
    let dir: string
    const exported = ["chat", "approval", "nested", "delta"]

    beforeAll(async () => {
      source = await postgresBackend()
      await source.withSaver((saver) => writeInspected(saver))
      dir = await mkdtemp(join(tmpdir(), "lce-cli-import-"))
    }, 120_000)

    afterAll(async () => {
      await source?.dispose()
      if (dir !== undefined) await rm(dir, { recursive: true, force: true })
    })

    it(
      "reads back identical: list, getTuple and getDeltaChannelHistory; the graph continues",
      inOrder(180_000),
      async () => {
        const file = join(dir, "threads.jsonl")
        const before = await source.counts()
        const done = await ok(["export", source.url, ...exported, "-o", file])
        expect(done.stderr).toContain(`exported ${exported.length} thread(s)`)
        expect(await source.counts()).toEqual(before)

        const lines = (await readFile(file, "utf8")).split("\n").filter((line) => line !== "")
        const records = lines.map((line, i) => {
          try {
            return JSON.parse(line) as unknown
          } catch (cause) {
            throw new Error(`line ${i + 1} of the export is not JSON: ${line.slice(0, 200)}`, { cause })
          }
        })
        expect(records.length).toBeGreaterThan(exported.length)
        expect(records[0]).toMatchObject({ format: "langgraph-checkpoints", version: 1 })

        // To standard output without -o: the same lines.
        const piped = await ok(["export", source.url, ...exported])
        expect(piped.stdout.split("\n").filter((line) => line !== "").length).toBe(lines.length)

        const target = `pglite:${join(dir, "imported")}`
        const imported = await ok(["import", target, file])
        expect(imported.stdout).toContain(`imported ${exported.length} thread(s)`)

        await source.withSaver(async (original) => {
          await withSaverOn(target, async (copy) => {
            for (const thread_id of exported) {
              const tuples = await collect(original, { configurable: { thread_id } })
              expect((await collect(copy, { configurable: { thread_id } })).map(view), thread_id).toEqual(
                tuples.map(view)
              )
              for (const tuple of tuples) {
                expect(view(await copy.getTuple(tuple.config))).toEqual(view(tuple))
                const latest = { configurable: { ...tuple.config.configurable, checkpoint_id: undefined } }
                expect(view(await copy.getTuple(latest))).toEqual(view(await original.getTuple(latest)))
              }
            }
            for (const tuple of await collect(original, { configurable: { thread_id: "delta" } })) {
              const options = { config: tuple.config, channels: DELTA_CHANNELS }
              expect(await copy.getDeltaChannelHistory(options)).toEqual(await original.getDeltaChannelHistory(options))
            }
            // Not exported: not there.
            expect(await copy.getTuple({ configurable: { thread_id: "runs" } })).toBeUndefined()

            const latest = (await original.getTuple({ configurable: { thread_id: "chat" } }))!
            const state = await chatGraph(copy).invoke({ messages: [new HumanMessage("after import")] }, {
              configurable: { thread_id: "chat" }
            })
            expect(state.messages.map(text)).toEqual([
              ...messagesOf(latest),
              "after import",
              `heard "after import" (${messagesOf(latest).length + 1} messages)`
            ])
            expect(messagesOf(latest)).toContain(CANARY)
          })
        })

        // The threads exist now: refused, unless --replace.
        const again = await fails(1, ["import", target, file])
        expect(again.stderr).toMatch(/chat|approval|nested|delta/)
        await ok(["import", target, file, "--replace"])
        await source.withSaver(async (original) => {
          await withSaverOn(target, async (copy) => {
            for (const thread_id of exported) {
              expect((await collect(copy, { configurable: { thread_id } })).map(view), thread_id).toEqual(
                (await collect(original, { configurable: { thread_id } })).map(view)
              )
            }
          })
        })
      }
    )
  })

/**
 * Everything a read must leave as it was: the tables of the public schema
 * with their row counts and a digest of their rows, and the applied migrations.
 */
const snapshot = (url: string) =>
  admin(async (client) => {
    const tables = await client.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`
    )
    const contents: Record<string, unknown> = {}
    for (const { table_name } of tables.rows) {
      contents[table_name] = (await client.query(
        `SELECT count(*)::int AS rows, md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS digest
         FROM public."${table_name}" t`
      )).rows[0]
    }
    const migrations = (await client.query<{ v: number }>("SELECT v FROM checkpoint_migrations ORDER BY v")).rows
    const schemas = await client.query<{ nspname: string }>(
      "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg_%' ORDER BY nspname"
    )
    return {
      tables: tables.rows.map((row) => row.table_name),
      contents,
      migrations: migrations.map((row) => row.v),
      schemas: schemas.rows.map((row) => row.nspname)
    }
  }, url)

const officialSuite = () =>
  describe("a database only LangGraph's own PostgresSaver wrote", inSequence, () => {
    let database: Awaited<ReturnType<typeof createDatabase>>
    let chat: ChatThread
    let lists: Record<string, Array<CheckpointTuple>>
    let before: Awaited<ReturnType<typeof snapshot>>
    let dir: string
    const threads = ["chat", "approval", "nested"]

    beforeAll(async () => {
      database = await createDatabase("cli_official")
      dir = await mkdtemp(join(tmpdir(), "lce-cli-official-"))
      const official = PostgresSaver.fromConnString(database.url)
      try {
        await official.setup()
        chat = await writeChat(official)
        await writeApproval(official)
        await writeNested(official)
        lists = Object.fromEntries(
          await Promise.all(
            threads.map(async (thread_id) => [thread_id, await collect(official, { configurable: { thread_id } })])
          )
        )
      } finally {
        await official.end()
      }
      before = await snapshot(database.url)
    }, 120_000)

    afterAll(async () => {
      await database?.drop()
      if (dir !== undefined) await rm(dir, { recursive: true, force: true })
    })

    it("threads, history, show, diff, stats and export read it, and change nothing", inOrder(180_000), async () => {
      expect(before.tables).toEqual(["checkpoint_blobs", "checkpoint_migrations", "checkpoint_writes", "checkpoints"])
      const url = database.url

      const listed = json<Array<any>>(await ok(["threads", url, "--json"]))
      expect(listed.map((thread) => thread.thread_id).sort()).toEqual([...threads].sort())
      for (const thread of listed) expect(thread.checkpoints, thread.thread_id).toBe(lists[thread.thread_id]!.length)
      expect(listed.find((thread) => thread.thread_id === "approval").interrupts).toBe(1)
      const table = await ok(["threads", url])
      for (const thread_id of threads) expect(table.stdout).toContain(`${thread_id}\t`)

      const history = await ok(["history", url, "chat"])
      expect(history.stdout).toContain("(head)")
      expect(history.stdout).toContain("(branch)")
      expect(history.stdout).toContain("(fork point)")
      expect(history.stdout.split("\n").some((line) => /^[ |/]*\/[ |/]*$/.test(line))).toBe(true)
      const entries = json<Array<any>>(await ok(["history", url, "chat", "--json"]))
      expect(entries.map((entry) => entry.checkpoint_id)).toEqual(lists.chat!.map((tuple) => tuple.checkpoint.id))
      const nested = await ok(["history", url, "nested"])
      expect(nested.stdout).toMatch(/namespace child:/)

      const approval = await ok(["show", url, "approval"])
      expect(approval.stdout).toContain("interrupt: approve?")
      const shown = await ok(["show", url, "chat"])
      expect(shown.stdout).toContain("    human: hello\n")
      expect(shown.stdout).toContain("    human: canary \\u{1b}[31mRED")
      expect(shown.stdout).not.toContain(ESC)

      const diff = await ok(["diff", url, "chat", short(chat.afterFirstTurn), short(chat.originalHead)])
      expect(diff.stdout).toMatch(/^messages: 4 appended/m)
      expect(diff.stdout).toContain("  + human: tell me more\n")

      const stats = json(await ok(["stats", url, "--json"]))
      expect(stats.checkpoints).toBe((before.contents.checkpoints as { rows: number }).rows)

      const file = join(dir, "official.jsonl")
      await ok(["export", url, ...threads, "-o", file])
      const lines = (await readFile(file, "utf8")).split("\n").filter((line) => line !== "")
      expect(lines.length).toBeGreaterThan(threads.length)
      for (const line of lines) JSON.parse(line)

      // Exported from LangGraph's tables, imported into this library's, read the same.
      const target = await createDatabase("cli_official_import")
      try {
        await ok(["import", target.url, file])
        await withSaverOn(target.url, async (copy) => {
          for (const thread_id of threads) {
            expect((await collect(copy, { configurable: { thread_id } })).map(view), thread_id).toEqual(
              lists[thread_id]!.map(view)
            )
          }
        })
      } finally {
        await target.drop()
      }

      expect(await snapshot(url)).toEqual(before)
    })

    it("a writing command is refused without --migrate (exit 1), and changes nothing", inOrder(120_000), async () => {
      const refused = await fails(1, ["delete", database.url, "chat", "--yes"])
      expect(refused.stderr).toContain("--migrate")
      const copy = await fails(1, ["copy", database.url, "chat", "chat-copy"])
      expect(copy.stderr).toContain("--migrate")
      expect(await snapshot(database.url)).toEqual(before)
    })
  })

/** A forest: `delete-runs` removed the trunk two runs shared; `history` draws two trees, each root marked. */
const forestSuite = () =>
  describe("history of a forest", inSequence, () => {
    let database: Awaited<ReturnType<typeof createDatabase>>
    let forkPoint: string

    beforeAll(async () => {
      database = await createDatabase("cli_forest")
      await withSaverOn(database.url, async (saver) => {
        await writeForest(saver)
        forkPoint = await putForks(saver, "forks", 12)
      })
    }, 120_000)

    afterAll(async () => {
      await database?.drop()
    })

    it(
      "after delete-runs removed the shared trunk: two trees, apart, each with its root",
      inOrder(120_000),
      async () => {
        const before = await ok(["history", database.url, "forest"])
        expect(before.stdout.split("\n").filter((line) => line.includes("(root)"))).toHaveLength(1)
        expect(before.stdout).toContain("(fork point)")
        await ok(["delete-runs", database.url, TRUNK_RUN, "--yes"])

        const { stdout } = await ok(["history", database.url, "forest"])
        const lines = stdout.trimEnd().split("\n")
        const roots = lines.filter((line) => line.includes("(root)"))
        expect(roots, stdout).toHaveLength(2)
        expect(stdout).not.toContain("(fork point)")
        // The newer tree ends at its root, an empty line, then the older tree from its end (a branch) down.
        const gap = lines.indexOf("")
        expect(gap, stdout).toBeGreaterThan(0)
        expect(lines[gap - 1]).toContain("(root)")
        expect(lines[gap + 1]).toContain("(branch)")
        expect(lines[0]).toContain("(head)")
        expect(lines.filter((line) => line.startsWith("*")).length + 1).toBe(lines.length)

        const entries = json<Array<any>>(await ok(["history", database.url, "forest", "--json"]))
        const ids = new Set(entries.map((entry) => entry.checkpoint_id))
        expect(entries.filter((entry) => !ids.has(entry.parent_checkpoint_id))).toHaveLength(2)
        // --json carries what each step did, as the text says it.
        expect(entries[0]).toMatchObject({ nodes: ["model"], parents: {} })
        expect(entries[0].preview).toMatch(/^ai: heard "(left|right)"/)
        expect(lines[0]).toContain(`ran: model  "${entries[0].preview}"`)
      }
    )

    it(
      "12 forks of one checkpoint: 8 lanes, the other 4 in the overflow column, counted at the fork point",
      inOrder(),
      async () => {
        const { stdout } = await ok(["history", database.url, "forks"])
        const lines = stdout.trimEnd().split("\n")
        const overflow = lines.filter((line) => line.includes(`(no lane of its own: joins ${short(forkPoint)} below)`))
        expect(overflow, stdout).toHaveLength(4)
        for (const line of overflow) expect(line).toMatch(/^(\| ){8}\. /)
        expect(lines.filter((line) => line.includes("(branch)"))).toHaveLength(11)
        const point = lines.find((line) => line.includes("(fork point)"))!
        expect(point).toContain(short(forkPoint))
        expect(point).toContain("+4 more branches join here")
        // Never wider than the 8 lanes and the overflow column.
        expect(Math.max(...lines.map((line) => /^[|*./: ]*/.exec(line)![0].trimEnd().length))).toBeLessThanOrEqual(17)

        // A page of it: the newest 5, laid out as in the whole, and a note on stderr saying how many more.
        const first = await ok(["history", database.url, "forks", "--limit", "5"])
        expect(first.stdout.trimEnd().split("\n")).toEqual(lines.slice(0, 5))
        expect(first.stderr).toContain("(first 5 of 14 checkpoints; more with --limit)")
        expect((await fails(2, ["history", database.url, "forks", "--limit", "0"])).stderr).toContain("--limit 0")
      }
    )
  })

/** `serve`: `npm start`'s agent over LangGraph's HTTP API, on PGlite, through the SDK. */
const serveSuite = () =>
  describe("serve", inSequence, () => {
    it("calls the server entry's serve as the entry declares it", () => {
      // The command declares what it uses of `serve` (it loads the entry only when it runs): the two agree.
      expectTypeOf<typeof serve>().toExtend<Serve>()
    })

    const root = join(import.meta.dirname, "..", "..")
    const agent = join(root, "examples", "agent", "graph.ts")

    it("serves the example agent: the SDK creates a thread and streams a turn", inOrder(120_000), async () => {
      const dataDir = await mkdtemp(join(tmpdir(), "lce-cli-serve-"))
      const server = built().start(["serve", `${agent}:graph`, "--db", `pglite:${dataDir}`, "--port", "0"])
      const missing = "00000000-0000-4000-8000-000000000000"
      try {
        const url = await server.take((line) => line.startsWith("http://127.0.0.1:"), 90_000)
        const client = new Client({ apiUrl: url })
        const [assistant] = await client.assistants.search()
        expect(assistant).toMatchObject({ graph_id: "graph" })
        // What it serves, said: the graph and its assistant's UUID, and the database.
        expect(await server.take((line) => line.startsWith("serving "))).toBe(
          `serving graph graph (assistant ${assistant!.assistant_id})`
        )
        expect(await server.take((line) => line.startsWith("threads in "))).toBe(
          `threads in pglite:${dataDir} (held by this process: other processes read snapshots of it)`
        )
        const thread = await client.threads.create()
        for await (
          const _ of client.runs.stream(thread.thread_id, "graph", {
            input: { messages: [{ type: "human", content: "Hi, I'm Ada." }] }
          })
        ) { /* to the end */ }
        const state = await client.threads.getState(thread.thread_id)
        const messages = (state.values as { messages: Array<{ type: string; content: string }> }).messages
        expect(messages.map((message) => message.type)).toEqual(["human", "ai"])
        expect(messages[1]!.content).toContain("Ada")
        // A request that fails is a line on stderr with its status; the ones that did not, none.
        expect((await fetch(`${url}/threads/${missing}`)).status).toBe(404)
        await expect.poll(() => server.stderr()).toBe(`GET /threads/${missing} 404\n`)
      } finally {
        // Ctrl-C: the server and its database closed, then the shell's code for an interrupt.
        server.child.kill("SIGINT")
        expect((await server.exited).code, server.describe()).toBe(130)
        expect(server.stderr()).toBe(`GET /threads/${missing} 404\n`)
        expect(server.lines.slice(-2)).toEqual(["stopping…", "stopped"])
        await rm(dataDir, { recursive: true, force: true })
      }
    })

    it(
      "serves beyond this machine only with --auth, whose handler then guards every request",
      inOrder(120_000),
      async () => {
        const dataDir = await mkdtemp(join(tmpdir(), "lce-cli-serve-auth-"))
        const graph = `${agent}:graph`
        try {
          expect((await fails(2, ["serve", graph, "--db", `pglite:${dataDir}`, "--host", "0.0.0.0"])).stderr).toContain(
            "--host 0.0.0.0 serves beyond this machine, which needs an authentication handler: --auth <module>:<export>"
          )
          expect((await fails(2, ["serve", graph, "--auth", `${agent}:graph`])).stderr).toContain(
            "has no authentication handler exported as `graph`"
          )
          const handler = `${join(root, "test", "support", "authHandler.ts")}:auth`
          const args = [
            "serve",
            graph,
            "--db",
            `pglite:${dataDir}`,
            "--host",
            "0.0.0.0",
            "--port",
            "0",
            "--auth",
            handler
          ]
          const server = built().start(args)
          try {
            const url = new URL(await server.take((line) => line.startsWith("http://"), 90_000))
            const local = `http://127.0.0.1:${url.port}`
            // The health check answers anyone; everything else needs the handler's yes.
            expect((await fetch(`${local}/ok`)).status).toBe(200)
            const search = (headers: Record<string, string>) =>
              fetch(`${local}/threads/search`, {
                method: "POST",
                headers: { "content-type": "application/json", ...headers },
                body: "{}"
              })
            expect((await search({})).status).toBe(401)
            expect((await search({ authorization: "Bearer ada-token" })).status).toBe(200)
          } finally {
            server.child.kill("SIGINT")
            expect((await server.exited).code, server.describe()).toBe(130)
          }
        } finally {
          await rm(dataDir, { recursive: true, force: true })
        }
      }
    )

    it("a port in use is exit 1, one line, and leaves the database free", inOrder(120_000), async () => {
      const dataDir = await mkdtemp(join(tmpdir(), "lce-cli-serve-port-"))
      const taken = createServer()
      await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
      try {
        const port = String((taken.address() as AddressInfo).port)
        const refused = await fails(1, ["serve", `${agent}:graph`, "--db", `pglite:${dataDir}`, "--port", port])
        expect(refused.stderr).toContain("EADDRINUSE")
        // The directory is free at once: the next start opens it.
        const server = built().start(["serve", `${agent}:graph`, "--db", `pglite:${dataDir}`, "--port", "0"])
        await server.take((line) => line.startsWith("http://127.0.0.1:"), 90_000)
        server.child.kill("SIGINT")
        expect((await server.exited).code, server.describe()).toBe(130)
      } finally {
        taken.close()
        await rm(dataDir, { recursive: true, force: true })
      }
    })

    it("a database that does not answer is named in words, one line", inOrder(120_000), async () => {
      const down = await fails(1, [
        "serve",
        `${agent}:graph`,
        "--db",
        "postgres://ada:s3cret@127.0.0.1:1/x",
        "--port",
        "0"
      ])
      // While it retries it says so; then why it stops, in one line.
      expect(down.stderr).toMatch(/^.*cannot reach the database yet: nothing accepts connections there .*; retrying\n/)
      expect(down.stderr).toMatch(
        /\nerror: cannot open the database postgres:\/\/\*\*\*@127\.0\.0\.1:1\/x: nothing accepts[^\n]*\n$/
      )
      expect(down.stdout + down.stderr).not.toContain("s3cret")
    })

    it("names what it cannot serve, and why, in words", inOrder(), async () => {
      const nowhere = join(root, "no-such-module.ts")
      // Never the CLI's own chunk, which Node names as the importer.
      expect((await fails(1, ["serve", nowhere])).stderr).toBe(`error: cannot load ${nowhere}: there is no such file\n`)
      const broken = join(built().dir, "broken-graph.ts")
      await writeFile(broken, "export const graph = 1\nconst oops = ;\n")
      // Node's words for it differ by version (and for TypeScript); where it is does not.
      expect((await fails(1, ["serve", broken])).stderr).toMatch(
        new RegExp(`^error: cannot load ${broken}: [^\\n]+ at ${broken}:2:14\\n$`)
      )
      expect((await fails(2, ["serve", `${agent}:nothing`])).stderr).toContain(
        "no compiled graph exported as `nothing` (it exports `graph`: name one as"
      )
      const uncompiled = join(root, "test", "support", "uncompiledGraph.ts")
      expect((await fails(2, ["serve", `${uncompiled}:builder`])).stderr).toContain(
        "is a graph not compiled yet: export `builder.compile()`"
      )
    })
  })

describe("PostgreSQL lane", lane, () => {
  backendSuite("PostgreSQL", postgresBackend, true)
  forestSuite()
  usageSuite()
  officialSuite()
})

describe("PGlite lane", lane, () => {
  backendSuite("PGlite", pgliteBackend, false)
  exportSuite()
  serveSuite()
})

// After the others, alone: its timing is the command's, not the machine's load.
describe("100,000 threads", () => {
  let database: Awaited<ReturnType<typeof createDatabase>>
  const THREAD_COUNT = 100_000

  beforeAll(async () => {
    database = await createDatabase("cli_big")
    await insertThreads(database.url, THREAD_COUNT, "thread-")
  }, 180_000)

  afterAll(async () => {
    await database?.drop()
  })

  it("threads --limit 50 answers in under 10 s, newest first", inOrder(120_000), async () => {
    const result = await ok(["threads", database.url, "--limit", "50"])
    console.log(`threads --limit 50 over ${THREAD_COUNT} threads: ${Math.round(result.ms)} ms (whole process)`)
    expect(result.ms).toBeLessThan(10_000)
    expect(result.stdout.split("\n")[1]).toMatch(/^thread-000001\t/)

    const listed = json<Array<any>>(await ok(["threads", database.url, "--json", "--limit", "50"]))
    expect(listed.map((thread) => thread.thread_id)).toEqual(
      Array.from({ length: 50 }, (_, i) => `thread-${String(i + 1).padStart(6, "0")}`)
    )
    expect(listed.every((thread) => thread.checkpoints === 1 && thread.latest_step === -1)).toBe(true)
  })
})
