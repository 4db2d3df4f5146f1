/**
 * A PGlite directory an earlier release left on its engine (PGlite 0.5,
 * PostgreSQL 18; `test/fixtures/pglite/0.5`), as its user meets this
 * release: opening it is `IncompatibleDirectory`, naming both PostgreSQL
 * versions and the command, and changes nothing; the CLI, `serve` and
 * `npm start` say so in one line and exit 1. `upgrade-pglite` (the built
 * executable, as users run it) carries it over, keeping the old directory:
 * every thread then reads exactly as that release read it (sealed ones with
 * their key, the pending interrupt, the DeltaValue histories), every record
 * as it was, at the same storage format level, and the old directory still
 * opens with the engine that wrote it; a second run changes nothing.
 */
import { execFile, execFileSync } from "node:child_process"
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { brotliDecompressSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CheckpointError, EffectCheckpointSaver } from "../../src/index.ts"
import { POSTGRES_MAJOR } from "../../src/pglite.ts"
import { type FixtureThread, observe } from "../fixtures/formats/observe.ts"
import { usingCli } from "../support/cli.ts"

const { fails, ok } = usingCli()

const FIXTURE = join(import.meta.dirname, "../fixtures/pglite/0.5")

interface Fixture {
  readonly postgres: string
  readonly source: string
  readonly level: number
}

const readJson = async <A>(path: string): Promise<A> => JSON.parse(await readFile(path, "utf8")) as A

/** Every file of a directory tree, with its size and modification time: what "nothing changed" compares. */
const listing = async (directory: string): Promise<Array<string>> => {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true })
  const files = await Promise.all(
    entries.filter((entry) => entry.isFile()).map(async (entry) => {
      const path = join(entry.parentPath, entry.name)
      const info = await stat(path)
      return `${path.slice(directory.length)} ${info.size} ${info.mtimeMs}`
    })
  )
  return files.sort()
}

/** What a release-0.5 thread record held: later fields (status, values) are the new release's. */
const recordOf = (record: object | undefined) =>
  record === undefined ? undefined : Object.fromEntries(
    Object.entries(record).filter(([key]) => ["thread_id", "metadata", "created_at", "updated_at"].includes(key))
  )

let work: string
let fixture: Fixture

/** The fixture's directory, unpacked afresh as `name`. */
const unpack = async (name: string) => {
  const directory = join(work, name)
  await mkdir(directory)
  const tar = join(work, `${name}.tar`)
  await writeFile(tar, brotliDecompressSync(await readFile(join(FIXTURE, "datadir.tar.br"))))
  execFileSync("tar", ["-xf", tar, "-C", directory])
  await rm(tar)
  return directory
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "lce-pglite-upgrade-"))
  fixture = await readJson<Fixture>(join(FIXTURE, "fixture.json"))
})

afterAll(async () => {
  if (work !== undefined) await rm(work, { recursive: true, force: true })
})

describe("a directory an older engine wrote", { concurrent: false }, () => {
  it("is the engine this release runs: a new directory says PostgreSQL " + POSTGRES_MAJOR, async () => {
    const fresh = join(work, "fresh")
    const saver = await EffectCheckpointSaver.fromConnString(`pglite:${fresh}`)
    await saver.close()
    expect((await readFile(join(fresh, "PG_VERSION"), "utf8")).trim()).toBe(POSTGRES_MAJOR)
    expect(fixture.postgres).not.toBe(POSTGRES_MAJOR)
  }, 60_000)

  it("is refused, typed, naming both versions and the command, and nothing changes", async () => {
    const directory = await unpack("refused")
    const before = await listing(directory)
    const error = await EffectCheckpointSaver.fromConnString(`pglite:${directory}`).then(
      (saver) => saver.close().then(() => undefined),
      (error: unknown) => error
    )
    expect(error).toBeInstanceOf(CheckpointError.IncompatibleDirectory)
    expect(error).toMatchObject({ found: fixture.postgres, supported: POSTGRES_MAJOR })
    expect(String(error)).toContain(`npx langgraph-checkpoints upgrade-pglite ${directory}`)
    // The command line, `serve` and `npm start` say it in one line, and exit 1.
    for (
      const args of [["threads", `pglite:${directory}`], [
        "serve",
        "./examples/agent/graph.ts:graph",
        "--db",
        `pglite:${directory}`,
        "--port",
        "0"
      ]]
    ) {
      const refused = await fails(1, args, { cwd: join(import.meta.dirname, "../..") })
      expect(refused.stderr).toContain(`PostgreSQL ${fixture.postgres}`)
      expect(refused.stderr).toContain(`upgrade-pglite ${directory}`)
    }
    const started = await promisify(execFile)(
      process.execPath,
      ["examples/agent.ts", "--data-dir", directory],
      { cwd: join(import.meta.dirname, "../.."), env: { ...process.env, DATABASE_URL: "" } }
    ).then(() => ({ code: 0, stderr: "" }), (error: { code: number; stderr: string }) => error)
    expect(started.code).toBe(1)
    expect(started.stderr.trimEnd().split("\n")).toEqual([expect.stringContaining("upgrade-pglite")])
    expect(await listing(directory)).toEqual(before)
  }, 120_000)

  it("is carried over by upgrade-pglite: every thread, record and the format level as they were", async () => {
    const directory = await unpack("upgraded")
    const done = await ok(["upgrade-pglite", directory])
    expect(done.stdout).toContain(`from PostgreSQL ${fixture.postgres} to ${POSTGRES_MAJOR}`)
    const kept = `${directory}.postgres-${fixture.postgres}`
    expect(done.stdout).toContain(`kept at ${kept}`)
    // The old directory is kept, its rows as they were, readable by the engine that wrote it.
    const old = await (await import("pglite-0.5")).PGlite.create({ dataDir: kept })
    const counted = await old.query<{ readonly n: number }>("SELECT count(*)::int AS n FROM checkpoints")
    await old.close()
    expect(counted.rows[0]?.n).toBe(JSON.parse(done.stdout.match(/checkpoints (\d+)/)?.[1] ?? "-1"))
    expect((await readFile(join(kept, "PG_VERSION"), "utf8")).trim()).toBe(fixture.postgres)
    expect((await readFile(join(directory, "PG_VERSION"), "utf8")).trim()).toBe(POSTGRES_MAJOR)

    const source = join(import.meta.dirname, "../..", fixture.source)
    const { key, threads } = await readJson<
      { readonly key: { readonly id: string; readonly key: string }; readonly threads: ReadonlyArray<FixtureThread> }
    >(join(source, "fixture.json"))
    const observations = await readJson<Record<string, unknown>>(join(source, "observations.json"))
    const records = await readJson<Record<string, unknown>>(join(FIXTURE, "records.json"))
    const sealedIds = new Set(threads.filter((thread) => thread.sealed === true).map((thread) => thread.thread_id))
    const plain = await EffectCheckpointSaver.fromConnString(`pglite:${directory}`)
    try {
      expect((await plain.formatLevel()).level).toBe(fixture.level)
      const read = await Promise.all(
        threads.map(async ({ thread_id }) => [thread_id, recordOf(await plain.getThread(thread_id))])
      )
      expect(JSON.parse(JSON.stringify(Object.fromEntries(read)))).toEqual(records)
      expect(await observe(plain, threads.filter((thread) => thread.sealed !== true))).toEqual(
        Object.fromEntries(Object.entries(observations).filter(([id]) => !sealedIds.has(id)))
      )
    } finally {
      await plain.close()
    }
    const sealed = await EffectCheckpointSaver.fromConnString(`pglite:${directory}`, {
      encryption: { keys: { [key.id]: key.key }, primary: key.id }
    })
    try {
      expect(await observe(sealed, threads.filter((thread) => sealedIds.has(thread.thread_id)))).toEqual(
        Object.fromEntries(Object.entries(observations).filter(([id]) => sealedIds.has(id)))
      )
    } finally {
      await sealed.close()
    }

    // Again: nothing to do, nothing changes.
    const settled = await listing(directory)
    const again = await ok(["upgrade-pglite", `pglite:${directory}`])
    expect(again.stdout).toContain("nothing to do")
    expect(await listing(directory)).toEqual(settled)
  }, 180_000)
})
