/**
 * The command line's findings of the security review (issue 36), each as a
 * user meets it: a thread whose parent links loop is named by `retention`
 * (dry run and real run), which leaves it as it is, and refused by `copy`;
 * an import of a line nested thousands deep is a one-line error naming the
 * line (it was a stack overflow on PostgreSQL) and writes nothing; `export
 * -o` writes a file only its user can read, even under umask 000, and never
 * through a symbolic link; Node's compile cache goes to a 0700 directory of
 * the user's cache directory, and a link planted there leaves it off.
 */
import { execFile, execFileSync } from "node:child_process"
import {
  chmod,
  link,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  stat,
  symlink,
  writeFile
} from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { admin, createDatabase, withSaverOn } from "../../harness/databases.ts"
import { putChain } from "../../harness/forks.ts"
import { type CliResult, describeResult, usingCli } from "../support/cli.ts"

const { built, fails, ok } = usingCli()

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

describe("export -o", { concurrent: false }, () => {
  /** Runs the CLI under umask 000, where a file created with the default mode would be 0666. */
  const underUmask0 = (args: ReadonlyArray<string>) =>
    new Promise<CliResult>((resolve) => {
      const started = performance.now()
      execFile(
        "/bin/sh",
        ["-c", `umask 000; exec "$0" "$@"`, process.execPath, built().main, ...args],
        { cwd: dir, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" }, timeout: 120_000 },
        (error, stdout, stderr) => {
          const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1
          resolve({ code, stdout, stderr, ms: performance.now() - started })
        }
      )
    })
  const exported = async (file: string) => {
    const args = ["export", database.url, "plain", "-o", file]
    const result = await underUmask0(args)
    expect(result.code, describeResult(args, result)).toBe(0)
    expect(result.stderr).toContain(`exported 1 thread(s) to ${file}`)
  }
  const refused = async (file: string, detail: string) => {
    const args = ["export", database.url, "plain", "-o", file]
    const result = await underUmask0(args)
    expect(result.code, describeResult(args, result)).toBe(1)
    expect(result.stderr).toBe(`error: export: ${file} ${detail}\n`)
  }
  const modeOf = async (file: string) => (await stat(file)).mode & 0o777
  const linesOf = async (file: string) => (await readFile(file, "utf8")).trimEnd().split("\n")

  let exportDir: string
  beforeAll(async () => {
    exportDir = join(dir, "exports")
    await mkdir(exportDir)
  })

  it("a new file is 0600 under umask 000", inOrder(), async () => {
    const file = join(exportDir, "new.jsonl")
    await exported(file)
    expect((await modeOf(file)).toString(8)).toBe("600")
    expect(JSON.parse((await linesOf(file))[0]!)).toMatchObject({ format: "langgraph-checkpoints" })
  })

  it("an existing regular file of this user's is overwritten whole, and made 0600", inOrder(), async () => {
    const file = join(exportDir, "existing.jsonl")
    await writeFile(file, `${"stale line\n".repeat(10_000)}`)
    await chmod(file, 0o644)
    await exported(file)
    expect((await modeOf(file)).toString(8)).toBe("600")
    const lines = await linesOf(file)
    expect(lines.some((line) => line.includes("stale"))).toBe(false)
    expect(lines.every((line) => JSON.parse(line) !== undefined)).toBe(true)
  })

  it("a symbolic link is refused, live or dangling, and what it points to is untouched", inOrder(), async () => {
    const target = join(exportDir, "target")
    await writeFile(target, "secret\n")
    const live = join(exportDir, "live.jsonl")
    await symlink(target, live)
    await refused(live, "is a symbolic link: refusing to write through it (give the path it points to)")
    expect(await readFile(target, "utf8")).toBe("secret\n")
    expect(await readlink(live)).toBe(target)

    const dangling = join(exportDir, "dangling.jsonl")
    const nowhere = join(exportDir, "nowhere")
    await symlink(nowhere, dangling)
    await refused(dangling, "is a symbolic link: refusing to write through it (give the path it points to)")
    expect((await lstat(dangling)).isSymbolicLink()).toBe(true)
    await expect(stat(nowhere)).rejects.toMatchObject({ code: "ENOENT" })
  })

  it(
    "a file with another name (a hard link), a FIFO and a directory are refused, without waiting",
    inOrder(),
    async () => {
      const original = join(exportDir, "original")
      await writeFile(original, "kept\n")
      const other = join(exportDir, "other-name.jsonl")
      await link(original, other)
      await refused(other, "has other names (hard links)")
      expect(await readFile(original, "utf8")).toBe("kept\n")

      const fifo = join(exportDir, "fifo")
      execFileSync("mkfifo", [fifo])
      const args = ["export", database.url, "plain", "-o", fifo]
      const result = await underUmask0(args)
      expect(result.code, describeResult(args, result)).toBe(1)
      expect(result.stderr).toMatch(new RegExp(`^error: export: (cannot write )?${fifo}`))

      const directory = join(exportDir, "directory")
      await mkdir(directory)
      const asDirectory = await underUmask0(["export", database.url, "plain", "-o", directory])
      expect(asDirectory.code).toBe(1)
      expect(asDirectory.stderr).toMatch(new RegExp(`^error: export: cannot write ${directory}: EISDIR`))
    }
  )
})

describe("the compile cache", { concurrent: false }, () => {
  it("is a 0700 directory of the user's cache directory, which Node fills", inOrder(), async () => {
    const xdg = join(dir, "xdg")
    await ok(["threads", database.url], { env: { XDG_CACHE_HOME: xdg } })
    const cache = join(xdg, "langgraph-checkpoints", "compile-cache")
    for (const directory of [cache, join(cache, "..")]) {
      expect(((await lstat(directory)).mode & 0o777).toString(8)).toBe("700")
    }
    expect((await readdir(cache)).length).toBeGreaterThan(0)
  })

  it(
    "a symbolic link planted where it goes leaves it off: the command runs, nothing is written through it",
    inOrder(),
    async () => {
      const xdg = join(dir, "xdg-planted")
      const elsewhere = join(dir, "planted-cache")
      await mkdir(xdg)
      await mkdir(elsewhere)
      await symlink(elsewhere, join(xdg, "langgraph-checkpoints"))
      const listed = await ok(["threads", database.url], { env: { XDG_CACHE_HOME: xdg } })
      expect(listed.stdout).not.toBe("")
      expect(await readdir(elsewhere)).toEqual([])
    }
  )
})
