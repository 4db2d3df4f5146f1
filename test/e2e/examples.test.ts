/**
 * Every example runs with its one command, so none rots: `npm start` twice
 * against one data directory (the second run resumes the first run's
 * interrupt), and each file in examples/.
 */
import { Command, MemorySaver } from "@langchain/langgraph"
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildAgent, say } from "../../examples/agent/graph.ts"
import { createDatabase } from "../../harness/databases.ts"

let database: Awaited<ReturnType<typeof createDatabase>>
beforeAll(async () => {
  database = await createDatabase("examples")
})
afterAll(() => database.drop())

const run = async (example: string, args: Array<string> = [], env: Record<string, string> = {}) => {
  const { DATABASE_URL: _, ...rest } = process.env
  const { stdout } = await promisify(execFile)(process.execPath, [
    join(import.meta.dirname, "../../examples", example),
    ...args
  ], {
    encoding: "utf8",
    env: { ...rest, ...env }
  })
  return stdout
}

describe("npm start (examples/agent.ts)", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "lce-agent-"))
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

  it("shows memory, time travel and an interrupt; a second process resumes it and remembers", async () => {
    const first = await run("agent.ts", ["--data-dir", dataDir])
    expect(first).toContain(`checkpoints: PGlite in ${dataDir}`)
    expect(first).toContain("agent    Hello Ada! That was turn 1 of this thread (no notes yet).")
    expect(first).toMatch(/replay +from checkpoint [0-9a-f-]+: Hello Ada! That was turn 1/)
    expect(first).toContain(`fork     "Hi, call me Grace." instead: Hello Grace! That was turn 1`)
    expect(first).toContain(`paused   Save the note "run 1 was here"? (waiting for a human; run again to approve)`)
    expect(first).not.toContain("resume ")

    const second = await run("agent.ts", ["--data-dir", dataDir])
    expect(second).toContain(`resume   Save the note "run 1 was here"? (asked by an earlier run) -> yes`)
    expect(second).toContain("agent    Saved. I keep 1 note(s).")
    // The thread continued from the first run's fork, with its saved note.
    expect(second).toContain("agent    Hello Ada! That was turn 3 of this thread (notes: run 1 was here).")
    expect(second).toContain(`paused   Save the note "run 2 was here"?`)

    const other = await run("agent.ts", ["--data-dir", dataDir, "--thread", "other"])
    expect(other).toContain("thread:      other")
    expect(other).toContain("That was turn 1 of this thread (no notes yet).")

    const reset = await run("agent.ts", ["--data-dir", dataDir, "--reset"])
    expect(reset).toContain("reset    the thread was deleted")
    expect(reset).not.toContain("resume ")
    expect(reset).toContain("agent    Hello Ada! That was turn 1 of this thread (no notes yet).")
  }, 120_000)

  it("asks in LangGraph's human-in-the-loop shape, and takes agent-chat-ui's answers as npm start's", async () => {
    const agent = buildAgent(new MemorySaver())
    const config = { configurable: { thread_id: "hitl" } }
    const ask = async (note: string) => {
      await agent.invoke(say(`remember: ${note}`), config)
      return (await agent.getState(config)).tasks.flatMap((task) => task.interrupts)[0]?.value
    }
    expect(await ask("milk")).toEqual([{
      action_request: { action: "save_note", args: { note: "milk" } },
      config: { allow_accept: true, allow_ignore: true, allow_respond: false, allow_edit: false },
      description: `Save the note "milk"?`
    }])
    const answers = [[{ type: "accept", args: null }], [{ type: "ignore", args: null }], "yes", { type: "accept" }]
    const notes = []
    for (const [at, answer] of answers.entries()) {
      if (at > 0) await ask(`note ${at}`)
      notes.push((await agent.invoke(new Command({ resume: answer }), config)).notes)
    }
    expect(notes).toEqual([["milk"], ["milk"], ["milk", "note 2"], ["milk", "note 2", "note 3"]])
  })

  it("is read by the inspector from the clone, as the README says: npm run cli -- threads", async () => {
    const { stdout } = await promisify(execFile)("npm", ["run", "-s", "cli", "--", "threads", `pglite:${dataDir}`], {
      cwd: join(import.meta.dirname, "../.."),
      encoding: "utf8"
    })
    expect(stdout).toMatch(/\bdemo\b/)
    expect(stdout).toMatch(/\bother\b/)
  }, 120_000)

  it("runs on PostgreSQL when DATABASE_URL is set", async () => {
    const output = await run("agent.ts", ["--thread", `pg-${Date.now()}`], { DATABASE_URL: database.url })
    expect(output).toContain("checkpoints: PostgreSQL (DATABASE_URL)")
    expect(output).toContain(`paused   Save the note "run 1 was here"?`)
  }, 60_000)

  // A wrong DATABASE_URL is an ordinary mistake: a line while it retries, a line saying why, no stack trace.
  it(
    "says it is retrying, then what is wrong, in at most 3 lines and exit 1, when the database is unreachable",
    async () => {
      const unreachable = await promisify(execFile)(process.execPath, [
        join(import.meta.dirname, "../../examples/agent.ts")
      ], { encoding: "utf8", env: { ...process.env, DATABASE_URL: "postgres://ada:secret@127.0.0.1:1/db" } })
        .then(() => undefined, (error: { code: number; stdout: string; stderr: string }) => error)
      expect(unreachable?.code).toBe(1)
      const lines = `${unreachable?.stdout}${unreachable?.stderr}`.trim().split("\n")
      expect(lines.length).toBeLessThanOrEqual(3)
      expect(lines[0]).toMatch(/cannot reach the database yet: nothing accepts connections there .*; retrying$/)
      expect(lines.at(-1)).toMatch(
        /^error: connect: storage failed after \d+ attempts: cannot open the database postgres:\/\/\*\*\*@127\.0\.0\.1:1\/db: nothing accepts connections there/
      )
      expect(lines.join("\n")).not.toMatch(/^\s+at |secret/m)

      const elsewhere = new URL(database.url)
      elsewhere.pathname = "/no_such_database"
      const missing = await promisify(execFile)(process.execPath, [
        join(import.meta.dirname, "../../examples/agent.ts")
      ], { encoding: "utf8", env: { ...process.env, DATABASE_URL: elsewhere.href } })
        .then(() => undefined, (error: { code: number; stdout: string; stderr: string }) => error)
      expect(missing?.code).toBe(1)
      expect(`${missing?.stdout}${missing?.stderr}`.trim()).toMatch(
        /^error: connect: storage failed \(SQLSTATE 3D000\): cannot open the database postgres:\/\/\S+\/no_such_database: the server has no such database: .*"no_such_database" does not exist$/
      )
    },
    60_000
  )
})

describe("examples/", () => {
  it("memory: each thread remembers its own turns", async () => {
    const output = await run("memory.ts")
    expect(output).toContain("ada  agent: Hello Ada! That was turn 2 of this thread")
    expect(output).toContain("bob  agent: Hello Bob! That was turn 1 of this thread")
    expect(output).toContain("ada  agent: Hello Ada! That was turn 3 of this thread")
  }, 60_000)

  it("human-in-the-loop: interrupts wait for an answer", async () => {
    const output = await run("human-in-the-loop.ts")
    expect(output).toContain(`paused at [save_note]: Save the note "buy milk"?`)
    expect(output).toContain(`answered "yes": Saved. I keep 1 note(s). notes=["buy milk"]`)
    expect(output).toContain(`answered "no": Not saved. I keep 1 note(s). notes=["buy milk"]`)
  }, 60_000)

  it("time-travel: history, replay and a fork", async () => {
    const output = await run("time-travel.ts")
    expect(output.match(/^ {2}[0-9a-f-]{36} {2}next=/gm)).toHaveLength(6)
    expect(output).toContain("replayed from the first turn:  Hello Ada! That was turn 1")
    expect(output).toContain("forked at the first turn:      Hello Grace! That was turn 1")
    expect(output).toMatch(/the fork's parent is [0-9a-f-]{36}, the checkpoint it was made from/)
  }, 60_000)

  it("encryption-kms: data keys wrapped by a KMS; dropping a tenant's key shreds its threads", async () => {
    const output = await run("encryption-kms.ts")
    expect(output).toContain(`acme/ticket-1    ai    Noted: "Where is my rocket?"`)
    expect(output).toContain(`globex/ticket-7  ai    Noted: "Is the device ready?"`)
    expect(output).toContain(
      `without globex's key, acme/ticket-1: still reads; last message: Noted: "Where is my rocket?"`
    )
    expect(output).toMatch(
      /without globex's key, globex\/ticket-7: CorruptedCheckpoint: checkpoint [0-9a-f-]{36} of thread "globex\/ticket-7" cannot be read: .* sealed under the key "globex", which the keyring does not hold/
    )
  }, 60_000)

  for (const where of ["PGlite", "PostgreSQL"] as const) {
    it(`effect-app: layers, a Stream over history and typed errors, on ${where}`, async () => {
      const output = await run("effect-app.ts", [], where === "PGlite" ? {} : { DATABASE_URL: database.url })
      expect(output).toContain("agent: Hello Ada! That was turn 2 of this thread")
      expect(output).toContain("history: 4:loop 3:loop 2:input 1:loop 0:loop -1:input")
      expect(output).toContain(
        `InvalidConfig: getTuple: invalid config: Expected a value with a length of at least 1 at ["thread_id"]`
      )
    }, 60_000)
  }
})
