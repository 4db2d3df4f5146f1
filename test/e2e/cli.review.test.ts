/**
 * The command line's findings of the security review (issue 36), each as a
 * user meets it: a thread whose parent links loop is named by `retention`
 * (dry run and real run), which leaves it as it is, and refused by `copy`;
 * an import of a line nested thousands deep is a one-line error naming the
 * line (it was a stack overflow on PostgreSQL) and writes nothing.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { usingCli } from "../support/cli.ts"
import { admin, createDatabase, withSaverOn } from "../support/databases.ts"
import { putChain } from "../support/forks.ts"

const { fails, ok } = usingCli()

const inOrder = (timeout = 60_000) => ({ concurrent: false, timeout })

let database: Awaited<ReturnType<typeof createDatabase>>
let dir: string

beforeAll(async () => {
  database = await createDatabase("cli_review")
  dir = await mkdtemp(join(tmpdir(), "lce-cli-review-"))
}, 120_000)

afterAll(async () => {
  await database?.drop()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

describe("a thread whose parent links loop", { concurrent: false }, () => {
  /** The thread's checkpoint ids, oldest first. */
  let ids: ReadonlyArray<string> = []

  beforeAll(async () => {
    await withSaverOn(database.url, async (saver) => {
      await putChain(saver, "looping", 4)
      await putChain(saver, "plain", 4)
    })
    ids = await admin(async (client) =>
      (await client.query<{ id: string }>(
        "SELECT checkpoint_id AS id FROM checkpoints WHERE thread_id = 'looping' ORDER BY checkpoint_id"
      )).rows.map((row) => row.id), database.url)
    // The second checkpoint's parent made the third, behind the library's back: 2 → 3 → 2.
    await admin(
      (client) =>
        client.query(
          "UPDATE checkpoints SET parent_checkpoint_id = $1 WHERE thread_id = 'looping' AND checkpoint_id = $2",
          [ids[2], ids[1]]
        ),
      database.url
    )
  }, 120_000)

  it("retention names it, with the loop, and leaves it as it is; the other thread is trimmed", inOrder(), async () => {
    /** The one `skipped:` line (the plan's and the run's name the thread once). */
    const skippedLine = (stdout: string) => {
      const lines = stdout.split("\n").filter((line) => line.startsWith("skipped: "))
      expect(lines, stdout).toHaveLength(1)
      return lines[0]
    }
    const dryRun = await ok(["retention", database.url, "--keep-last", "1", "--dry-run"])
    expect(skippedLine(dryRun.stdout)).toContain(`thread "looping"`)
    expect(skippedLine(dryRun.stdout)).toMatch(/its parent chain loops \(\S+ → \S+ → \S+\)/)
    expect(skippedLine(dryRun.stdout)).toContain(ids[1])
    expect(dryRun.stdout).toContain("  plain: 3 checkpoint(s)")
    expect(dryRun.stdout).not.toContain("  looping:")

    const done = await ok(["retention", database.url, "--keep-last", "1", "--yes"])
    expect(skippedLine(done.stdout)).toContain(`thread "looping"`)
    expect(done.stdout).toContain("retention: removed 3 checkpoint(s) from 1 thread(s)")
    const counts = await admin(async (client) =>
      (await client.query<{ thread_id: string; n: string }>(
        "SELECT thread_id, count(*) AS n FROM checkpoints GROUP BY thread_id ORDER BY thread_id"
      )).rows.map((row) => [row.thread_id, Number(row.n)]), database.url)
    expect(counts).toEqual([["looping", 4], ["plain", 1]])

    // Nothing else to remove: retention says so, and still names the thread it leaves.
    const again = await ok(["retention", database.url, "--keep-last", "1", "--yes"])
    expect(again.stdout).toContain("nothing to remove")
    expect(skippedLine(again.stdout)).toContain(`thread "looping"`)
  })

  it("copy refuses it, naming the thread and the loop, and writes nothing", inOrder(), async () => {
    const refused = await fails(1, ["copy", database.url, "looping", "looping-copy"])
    expect(refused.stderr).toMatch(/^error: .*thread "looping".*copyThread: its parent chain loops \(/)
    const copies = await admin(
      async (client) => (await client.query("SELECT 1 FROM checkpoints WHERE thread_id = 'looping-copy'")).rowCount,
      database.url
    )
    expect(copies).toBe(0)
  })
})

describe("import", { concurrent: false }, () => {
  it("a line nested 6,000 deep is an error naming the line, and nothing is written", inOrder(), async () => {
    const file = join(dir, "deep.jsonl")
    const deep = `${`{"a":`.repeat(6000)}1${"}".repeat(6000)}`
    await writeFile(
      file,
      [
        JSON.stringify({ format: "langgraph-checkpoints", version: 1, exported_at: "2025-01-01T00:00:00.000Z" }),
        JSON.stringify({ kind: "thread", thread_id: "deep", last_activity: "2025-01-01T00:00:00.000Z" }),
        `{"kind":"checkpoint","checkpoint_ns":"","checkpoint_id":"a","checkpoint":{"v":4,"id":"a",` +
        `"ts":"2025-01-01T00:00:00.000Z","channel_versions":{},"versions_seen":{},"x":${deep}},"metadata":"{}"}`
      ].join("\n") + "\n"
    )
    const refused = await fails(1, ["import", database.url, file])
    expect(refused.stderr).toBe(
      "error: import: invalid line 3: nests deeper than 500 levels, more than an export's line holds\n"
    )
    const written = await admin(
      async (client) => (await client.query("SELECT 1 FROM checkpoints WHERE thread_id = 'deep'")).rowCount,
      database.url
    )
    expect(written).toBe(0)
  })
})
