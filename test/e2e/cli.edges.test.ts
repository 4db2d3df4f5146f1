/**
 * The command line's edges, each as a user meets it (issue 26): limits,
 * namespaces and subcommands named in errors, a PGlite directory without its
 * prefix, an empty database, an unreachable server, trailers off stdout,
 * `export --all`, a pipe closed early (`| head`), a password in a connection string printed nowhere, hostile
 * text in ids, `ts`, types, key ids, metadata and error lines printed escaped — and what adopting a database LangGraph's own
 * `PostgresSaver` wrote promises: after this library writes a thread with
 * structural sharing on, the official saver can no longer read that thread;
 * threads this library never wrote, or wrote with sharing off, stay readable.
 */
import { HumanMessage } from "@langchain/core/messages"
import type { CheckpointTuple } from "@langchain/langgraph-checkpoint"
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres"
import { spawn } from "node:child_process"
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { admin, createDatabase, withSaverOn } from "../../harness/databases.ts"
import { putChain } from "../../harness/forks.ts"
import {
  chatGraph,
  type ChatThread,
  collect,
  view,
  writeApproval,
  writeChat,
  writeNested
} from "../../harness/inspectedGraph.ts"
import { usingCli } from "../support/cli.ts"
import { checkpoint, metadata } from "../support/fixtures.ts"

const { built, fails, ok, run } = usingCli()

const inOrder = (timeout = 60_000) => ({ concurrent: false, timeout })

const withOfficial = async <A>(url: string, f: (saver: PostgresSaver) => Promise<A>): Promise<A> => {
  const saver = PostgresSaver.fromConnString(url)
  try {
    return await f(saver)
  } finally {
    await saver.end()
  }
}

const tablesOf = (url: string) =>
  admin(async (client) =>
    (await client.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1"
    )).rows.map((row) => row.name), url)

describe("the edges", { concurrent: false }, () => {
  let database: Awaited<ReturnType<typeof createDatabase>>
  let empty: Awaited<ReturnType<typeof createDatabase>>
  let chat: ChatThread
  let dir: string

  beforeAll(async () => {
    database = await createDatabase("cli_edges")
    empty = await createDatabase("cli_edges_empty")
    dir = await mkdtemp(join(tmpdir(), "lce-cli-edges-"))
    await withSaverOn(database.url, async (saver) => {
      chat = await writeChat(saver)
      await writeApproval(saver)
      await writeNested(saver)
    })
  }, 120_000)

  afterAll(async () => {
    await database?.drop()
    await empty?.drop()
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  it("--limit takes a positive whole number: a usage error otherwise, never SQL", inOrder(), async () => {
    for (const limit of ["-3", "0"]) {
      const result = await fails(2, ["threads", database.url, "--limit", limit])
      expect(result.stderr).toContain(`--limit ${limit}: give a positive whole number`)
      expect(result.stderr + result.stdout).not.toMatch(/LIMIT|SQLSTATE|storage failed/)
    }
    await ok(["threads", database.url, "--limit", "1"])
  })

  it("the trailer is on stderr: piped stdout is the header and the rows alone", inOrder(), async () => {
    const result = await ok(["threads", database.url, "--limit", "2"])
    const lines = result.stdout.trimEnd().split("\n")
    expect(lines).toHaveLength(3)
    for (const line of lines) expect(line.split("\t"), line).toHaveLength(6)
    expect(result.stderr).toContain("(first 2; more with --limit)")
  })

  it("--ns names the namespace that has no checkpoints", inOrder(), async () => {
    for (const command of ["history", "show"]) {
      const result = await fails(1, [command, database.url, "chat", "--ns", "nope"])
      expect(result.stderr).toContain(`${command}: `)
      expect(result.stderr).toContain(`namespace "nope"`)
      expect(result.stderr).not.toContain("has no checkpoints")
    }
    const byId = await fails(1, ["show", database.url, "chat", chat.fork.slice(-12), "--ns", "nope"])
    expect(byId.stderr).toContain(`namespace "nope"`)
    // A thread that does not exist is still said so.
    expect((await fails(1, ["history", database.url, "no-such-thread", "--ns", "nope"])).stderr).toContain(
      `thread "no-such-thread" has no checkpoints`
    )
  })

  it("diff's errors are diff's", inOrder(), async () => {
    const result = await fails(1, ["diff", database.url, "chat", "zzzz", chat.fork.slice(-12)])
    expect(result.stderr).toMatch(/^error: diff: /)
    expect(result.stderr).toContain(`"zzzz"`)
    expect((await fails(1, ["diff", database.url, "nope", "a", "b"])).stderr).toMatch(/^error: diff: /)
  })

  it("a PGlite directory is recognised without pglite:; another directory is explained", inOrder(120_000), async () => {
    const dataDir = join(dir, "db")
    await withSaverOn(`pglite:${dataDir}`, (saver) => writeApproval(saver))
    const listed = await ok(["threads", dataDir])
    expect(listed.stdout).toContain("approval\t")
    const shown = await ok(["show", dataDir, "approval"])
    expect(shown.stdout).toContain("interrupt: approve?")

    const plain = join(dir, "plain")
    await mkdir(plain)
    const explained = await fails(2, ["threads", plain])
    expect(explained.stderr).toContain("holds no PGlite database")
    expect(explained.stderr).toContain("pglite:<directory>")
    const nothing = await fails(2, ["threads"])
    expect(nothing.stderr).toContain("pglite:<directory>")
  })

  it("an empty database reads as empty, and stays without tables", inOrder(), async () => {
    expect(await tablesOf(empty.url)).toEqual([])
    expect((await ok(["threads", empty.url])).stdout).toBe("no threads\n")
    expect(JSON.parse((await ok(["threads", empty.url, "--json"])).stdout)).toEqual([])
    expect(JSON.parse((await ok(["stats", empty.url, "--json"])).stdout).checkpoints).toBe(0)
    const shown = await fails(1, ["show", empty.url, "chat"])
    expect(shown.stderr).toContain(`thread "chat" has no checkpoints`)
    expect(shown.stderr).not.toContain("migration")
    await fails(1, ["history", empty.url, "chat"])
    expect(JSON.parse((await ok(["threads", empty.url, "--json"])).stdout)).toEqual([])
    expect(await tablesOf(empty.url)).toEqual([])
  })

  it("a server that cannot be reached, or refuses the login, is said in words", inOrder(120_000), async () => {
    const refused = await fails(1, ["threads", "postgres://postgres@127.0.0.1:1/none"])
    expect(refused.stderr).toContain("cannot open the database postgres://***@127.0.0.1:1/none")
    expect(refused.stderr).toContain("nothing accepts connections there")
    expect(refused.stderr).not.toMatch(/storage failed|PgConnection|verify schema/)

    const url = new URL(database.url)
    url.username = "no_such_role"
    const login = await fails(1, ["threads", url.toString()])
    expect(login.stderr).toContain("the server refused the login")
    expect(login.stderr).toContain(`role "no_such_role" does not exist`)

    const missing = new URL(database.url)
    missing.pathname = "/no_such_database"
    const noDatabase = await fails(1, ["threads", missing.toString()])
    expect(noDatabase.stderr).toContain("the server has no such database")
  })

  it("a password in the connection string is printed nowhere, the server down", inOrder(120_000), async () => {
    const cases = [
      { url: "postgresql://u:pA@ssW0rd@127.0.0.1:1/db", secrets: ["pA@ssW0rd", "ssW0rd"], shown: "postgresql://***@" },
      { url: "postgresql://127.0.0.1:1/db?user=u&password=S3cret", secrets: ["S3cret"], shown: "password=***" }
    ]
    const runs = await Promise.all(cases.flatMap(({ url }) => [
      fails(1, ["threads", url]),
      fails(1, ["history", "some-thread"], { env: { DATABASE_URL: url } })
    ]))
    cases.forEach(({ secrets, shown }, i) => {
      for (const result of runs.slice(2 * i, 2 * i + 2)) {
        expect(result.stderr).toContain("cannot open the database")
        expect(result.stderr).toContain(shown)
        for (const secret of secrets) expect(result.stdout + result.stderr).not.toContain(secret)
      }
    })
    expect(runs[0]!.stderr).toContain("cannot open the database postgresql://***@127.0.0.1:1/db: nothing accepts")
    // Given where a flag's value goes, it is effect/cli's parse error that quotes it: masked too.
    for (
      const misplaced of [["--limit", cases[0]!.url], [`--limit=${cases[1]!.url}`], ["--limit", "password=S3cret"]]
    ) {
      const refused = await run(["history", ...misplaced, "pglite:/nowhere", "t"])
      expect(refused.code).toBe(2)
      expect(refused.stderr).toContain("Invalid value for flag --limit")
      for (const secret of ["pA@ssW0rd", "ssW0rd", "S3cret"]) {
        expect(refused.stdout + refused.stderr).not.toContain(secret)
      }
    }
  })

  it("a reader that stops early (| head) ends the command quietly", inOrder(120_000), async () => {
    await withSaverOn(database.url, (saver) => putChain(saver, "long", 1000))
    // `history --json` writes a long stream; the reader closes the pipe after the first chunk.
    const child = spawn(
      process.execPath,
      [built().main, "history", database.url, "long", "--json"],
      { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } }
    )
    let stderr = ""
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    let read = 0
    child.stdout.once("data", (chunk: Buffer) => {
      read = chunk.length
      child.stdout.destroy()
    })
    const code = await new Promise((resolve) => child.on("close", resolve))
    expect(read).toBeGreaterThan(0)
    expect(stderr).toBe("")
    expect(code).toBe(0)
  })

  it("export --all: every thread, as exporting them by name does", inOrder(120_000), async () => {
    const all = await ok(["export", database.url, "--all"])
    const named = await ok(["export", database.url, "chat", "approval", "nested", "long"])
    const body = (text: string) => text.split("\n").slice(1).filter((line) => line !== "")
    const threadsIn = (text: string) =>
      body(text).map((line) => JSON.parse(line)).filter((row) => row.kind === "thread").map((row) => row.thread_id)
    expect(threadsIn(all.stdout).sort()).toEqual(["approval", "chat", "long", "nested"])
    expect(body(all.stdout).sort()).toEqual(body(named.stdout).sort())

    const file = join(dir, "all.jsonl")
    const written = await ok(["export", database.url, "--all", "-o", file])
    expect(written.stderr).toContain("exported 4 thread(s)")
    expect(body(await readFile(file, "utf8")).sort()).toEqual(body(all.stdout).sort())

    expect((await fails(2, ["export", database.url])).stderr).toContain("--all")
    expect((await fails(2, ["export", database.url, "chat", "--all"])).stderr).toContain("not both")
    expect((await ok(["export", empty.url, "--all"])).stdout.trimEnd().split("\n")).toHaveLength(1)
  })
})

/** Sequences a hostile file could carry: clipboard write, window title, clear screen, CSI as one C1 byte, bidi. */
const OSC52 = "\u001b]52;c;aGVsbG8=\u0007"
const OSC0 = "\u001b]0;pwned\u0007"
const CSI = "\u001b[2J"
const C1 = "\u009b2J"
const BIDI = "\u202e"
/** The Arabic letter mark: a bidirectional control that lists of "bidi overrides" tend to forget. */
const ALM = "\u061c"
/** Anything a terminal would act on: C0 controls but tab and line break, DEL, C1, every bidi control. */
// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/

describe("hostile stored text never reaches the terminal raw", { concurrent: false }, () => {
  let database: Awaited<ReturnType<typeof createDatabase>>
  let dir: string
  const thread = `chat${OSC0}`
  const KEY = Buffer.alloc(32, 7).toString("base64")

  /** Every line of an export, parsed; `edit` changes them, and the file is written back. */
  const rewrite = async (file: string, edit: (rows: Array<Record<string, any>>) => void) => {
    const rows = (await readFile(file, "utf8")).split("\n").filter((line) => line !== "").map((line) =>
      JSON.parse(line)
    )
    edit(rows)
    await writeFile(file, rows.map((row) => JSON.stringify(row)).join("\n") + "\n")
  }

  /** The JSON text of an export with one string replaced everywhere it appears, even inside stored JSON text. */
  const replaceEverywhere = (text: string, from: string, to: string) =>
    text.split(from).join(JSON.stringify(to).slice(1, -1))

  const clean = (result: { stdout: string; stderr: string }, what: string) => {
    expect(result.stdout, `${what}: stdout`).not.toMatch(RAW)
    expect(result.stderr, `${what}: stderr`).not.toMatch(RAW)
  }

  beforeAll(async () => {
    database = await createDatabase("cli_hostile")
    dir = await mkdtemp(join(tmpdir(), "lce-cli-hostile-"))
    let ids: Array<string> = []
    await withSaverOn(database.url, async (saver) => {
      await writeChat(saver)
      ids = (await collect(saver, { configurable: { thread_id: "chat" } })).map((tuple) => tuple.checkpoint.id)
    }, { sharing: false })
    const file = join(dir, "chat.jsonl")
    await ok(["export", database.url, "chat", "-o", file])
    // The latest checkpoint's id carries OSC 52, an older one's a bidi override; the thread id OSC 0.
    let text = await readFile(file, "utf8")
    text = replaceEverywhere(text, ids[0]!, `${ids[0]}${OSC52}`)
    text = replaceEverywhere(text, ids[2]!, `${ids[2]}${BIDI}x`)
    await writeFile(file, text)
    await rewrite(file, (rows) => {
      for (const row of rows) {
        if (row.kind === "thread") row.thread_id = thread
        // A `ts` with a clear-screen sequence; a value of a type no serializer reads, named with a C1 CSI.
        if (row.kind === "checkpoint") row.checkpoint.ts = `2025-01-01T00:00:00.000Z${CSI}`
        if (row.kind === "blob" && row.channel === "messages" && row.type !== "empty") row.type = `evil${C1}`
      }
    })
    await ok(["import", database.url, file])
  }, 180_000)

  afterAll(async () => {
    await database?.drop()
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  it("in ids, ts and types: threads, history, show, diff and their --json", inOrder(120_000), async () => {
    const threads = await ok(["threads", database.url])
    clean(threads, "threads")
    expect(threads.stdout).toContain("chat\\u{1b}]0;pwned\\u{7}")
    const history = await ok(["history", database.url, thread])
    clean(history, "history")
    expect(history.stdout).toContain(";c;aGVsbG8=\\u{7}")
    const shown = await ok(["show", database.url, thread])
    clean(shown, "show")
    expect(shown.stdout).toContain("\\u{1b}[2J")
    expect(shown.stdout).toContain("evil\\u{9b}2J")
    const json = await ok(["show", database.url, thread, "--json"])
    clean(json, "show --json")
    // Still JSON, and still the same strings.
    expect(JSON.parse(json.stdout).checkpoint.ts).toBe(`2025-01-01T00:00:00.000Z${CSI}`)
    expect(json.stdout).toContain("\\u009b2J")
    const historyJson = await ok(["history", database.url, thread, "--json"])
    clean(historyJson, "history --json")
    const older = JSON.parse(historyJson.stdout)
    expect(older.filter((entry: { checkpoint_id: string }) => entry.checkpoint_id.includes(BIDI))).toHaveLength(1)
    const diff = await ok(["diff", database.url, thread, "x", "aGVsbG8=\u0007"])
    expect(diff.stdout).not.toBe("no channel differs\n")
    clean(diff, "diff")
    const exported = await ok(["export", database.url, thread])
    clean(exported, "export")
    expect(exported.stdout).toContain("\\u202e")
  })

  it(
    "in error lines: a thread that exists, an ambiguous id, a key id read from a ciphertext",
    inOrder(120_000),
    async () => {
      const file = join(dir, "again.jsonl")
      await ok(["export", database.url, thread, "-o", file])
      const exists = await fails(1, ["import", database.url, file])
      clean(exists, "import")
      expect(exists.stderr).toContain("already exists")
      // Every checkpoint id of the thread starts alike: a short prefix is ambiguous, the ids listed.
      const ambiguous = await fails(1, ["show", database.url, thread, "1"])
      clean(ambiguous, "ambiguous id")
      expect(ambiguous.stderr).toContain("is ambiguous")
      expect(ambiguous.stderr).toContain("\\u{1b}]52")

      // A thread sealed under key "k1", its frames' key id rewritten to a hostile one.
      const sealed = join(dir, "sealed.jsonl")
      await withSaverOn(database.url, (saver) => writeApproval(saver), {
        encryption: { keys: { k1: KEY }, primary: "k1" }
      })
      await ok(["export", database.url, "approval", "-o", sealed], { env: { CHECKPOINT_ENCRYPTION_KEYS: `k1:${KEY}` } })
      await rewrite(sealed, (rows) => {
        for (const row of rows) {
          if (typeof row.bytes !== "string") continue
          const bytes = Buffer.from(row.bytes, "base64")
          const at = bytes.indexOf(Buffer.from([1, 2, ...Buffer.from("k1")]))
          if (at === -1) continue
          const id = Buffer.from(`k${OSC52}`)
          row.bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from([1, id.length]), id, bytes.subarray(at + 4)])
            .toString("base64")
        }
      })
      // Sealed rows are bound to their thread: imported under the same id, into another database.
      const other = await createDatabase("cli_hostile_sealed")
      try {
        const env = { env: { CHECKPOINT_ENCRYPTION_KEYS: `k1:${KEY}` } }
        await ok(["import", other.url, sealed], env)
        const unsealed = await run(["show", other.url, "approval"], env)
        clean(unsealed, "sealed show")
        expect(unsealed.stdout + unsealed.stderr).toContain("k\\u{1b}]52")
      } finally {
        await other.drop()
      }
    }
  )

  it(
    "U+061C in a thread id, a channel and metadata: threads, history, show and --json print it escaped",
    inOrder(),
    async () => {
      const marked = `arabic${ALM}mark`
      await withSaverOn(database.url, (saver) =>
        saver.put(
          { configurable: { thread_id: marked, checkpoint_ns: "" } },
          checkpoint({ [`notes${ALM}`]: `seen${ALM}` }),
          metadata({ source: `loop${ALM}`, [`tag${ALM}`]: `value${ALM}` }),
          { [`notes${ALM}`]: 1 }
        ))
      const threads = await ok(["threads", database.url])
      clean(threads, "threads")
      expect(threads.stdout).toContain("arabic\\u{61c}mark\t")
      const history = await ok(["history", database.url, marked])
      clean(history, "history")
      expect(history.stdout).toContain("loop\\u{61c}")
      const shown = await ok(["show", database.url, marked])
      clean(shown, "show")
      expect(shown.stdout).toContain("thread arabic\\u{61c}mark")
      expect(shown.stdout).toContain(`notes\\u{61c}: seen\\u{61c}`)
      expect(shown.stdout).toContain(`"tag\\u{61c}":"value\\u{61c}"`)
      const json = await ok(["show", database.url, marked, "--json"])
      clean(json, "show --json")
      expect(json.stdout).toContain(`"tag\\u061c": "value\\u061c"`)
      // Still the same JSON, the same strings.
      expect(JSON.parse(json.stdout).metadata[`tag${ALM}`]).toBe(`value${ALM}`)
      const missing = await fails(1, ["show", database.url, `${marked}-none`])
      clean(missing, "a thread that does not exist")
    }
  )
})

describe("a database LangGraph's PostgresSaver wrote, adopted", { concurrent: false }, () => {
  let database: Awaited<ReturnType<typeof createDatabase>>
  let before: Record<string, Array<CheckpointTuple>>
  const threads = ["chat", "approval", "nested"]

  const officialReads = (thread_id: string) =>
    withOfficial(database.url, (official) => collect(official, { configurable: { thread_id } }))

  beforeAll(async () => {
    database = await createDatabase("cli_adopted")
    await withOfficial(database.url, async (official) => {
      await official.setup()
      await writeChat(official)
      await writeApproval(official)
      await writeNested(official)
    })
    before = Object.fromEntries(await Promise.all(threads.map(async (id) => [id, await officialReads(id)])))
  }, 120_000)

  afterAll(async () => {
    await database?.drop()
  })

  it("--migrate says which threads LangGraph's savers can read afterwards", inOrder(), async () => {
    const refused = await fails(1, ["copy", database.url, "chat", "chat-copy"])
    expect(refused.stderr).toContain("--migrate")
    expect(refused.stderr).toContain("structural sharing")
    expect(refused.stderr).not.toContain("keep working")
    await ok(["copy", database.url, "chat", "chat-copy", "--migrate"])
    // Migrated, and copied as stored: the official saver reads every thread, the copy too.
    for (const thread_id of threads) {
      expect((await officialReads(thread_id)).map(view)).toEqual(before[thread_id]!.map(view))
    }
    const asChat = (tuples: Array<CheckpointTuple>) => tuples.map(view).map((seen) => ({ ...seen, thread_id: "chat" }))
    expect(asChat(await officialReads("chat-copy"))).toEqual(asChat(before.chat!))
  })

  it(
    "a thread this library writes with sharing on is unreadable to PostgresSaver; untouched or sharing off, readable",
    inOrder(120_000),
    async () => {
      const turn = { messages: [new HumanMessage("one more, from this library")] }
      await withSaverOn(database.url, (saver) => chatGraph(saver).invoke(turn, { configurable: { thread_id: "chat" } }))
      const ours = await withSaverOn(
        database.url,
        async (saver) => {
          await chatGraph(saver).invoke(turn, { configurable: { thread_id: "chat-copy" } })
          return collect(saver, { configurable: { thread_id: "chat-copy" } })
        },
        { sharing: false }
      )

      // Written with sharing (the default): the official saver fails on the thread's latest checkpoint.
      await expect(officialReads("chat")).rejects.toThrow("Unknown serialization type: shared-json/1")
      // Never written by this library: read as before.
      for (const thread_id of ["approval", "nested"]) {
        expect((await officialReads(thread_id)).map(view)).toEqual(before[thread_id]!.map(view))
      }
      // Written with sharing off: the official saver reads what this library reads.
      expect((await officialReads("chat-copy")).map(view)).toEqual(ours.map(view))
      const latest = await withOfficial(
        database.url,
        (official) => official.getTuple({ configurable: { thread_id: "chat-copy", checkpoint_ns: "" } })
      )
      const last = (latest!.checkpoint.channel_values.messages as Array<{ content: unknown }>).at(-1)!
      expect(String(last.content)).toMatch(/^heard "one more, from this library"/)
    }
  )
})
