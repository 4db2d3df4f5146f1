/**
 * Upgrades without downtime, as a team deploys: a database at the storage
 * format level before the newest (what the previous release wrote), this
 * release beside itself pinned one level down (`formatLevel`, as that
 * release behaves) on one database at once, writing the same threads and
 * their own: nothing lost, nothing reported damaged, and nothing of the
 * newest level written (compressed values and pieces). Then the
 * level is raised with `langgraph-checkpoints upgrade-format` while both
 * run: the newer writes the newest encodings, the pinned one reads them as
 * `IncompatibleFormat` (never `CorruptedCheckpoint`, never wrong data) and
 * stops, and a pinned process started afterwards is refused before it
 * writes. On PGlite, whose directory one process owns at a time, the same
 * through hand-overs between the two.
 */
import { HumanMessage } from "@langchain/core/messages"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { admin, createDatabase } from "../../harness/databases.ts"
import { framedGraph, long } from "../../harness/inspectedGraph.ts"
import { NEWEST_LEVEL } from "../../src/FormatLevel.ts"
import { CheckpointError, EffectCheckpointSaver } from "../../src/index.ts"
import { canonical } from "../../src/testing/index.ts"
import { usingCli } from "../support/cli.ts"

const { ok } = usingCli()

const turn = (saver: EffectCheckpointSaver, thread_id: string, label: string) =>
  framedGraph(saver).invoke({ messages: [new HumanMessage(long(label))] }, { configurable: { thread_id } })

const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error)

/** What a saver reads of a thread: its latest tuple, how many checkpoints, and the messages' delta history. */
const read = async (saver: EffectCheckpointSaver, thread_id: string) => {
  const configurable = { thread_id }
  const tuple = await saver.getTuple({ configurable })
  let checkpoints = 0
  for await (const _ of saver.list({ configurable })) checkpoints++
  const delta = await saver.getDeltaChannelHistory({ config: { configurable }, channels: ["messages"] })
  return { latest: canonical(tuple), checkpoints, delta: canonical(delta) }
}

const messageCount = async (saver: EffectCheckpointSaver, thread_id: string) => {
  const state = await framedGraph(saver).getState({ configurable: { thread_id } })
  return (state.values.messages as Array<unknown>).length
}

/** The level the previous release wrote, which this release pinned one level down behaves as. */
const PREVIOUS = NEWEST_LEVEL - 1

/** Rows in the newest level's encodings (compressed values and pieces) in the database at `url`. */
const newestRows = (url: string) =>
  admin(async (client) => {
    const { rows } = await client.query(
      `SELECT (SELECT count(*) FROM checkpoint_blobs WHERE type LIKE 'zstd-json/1%')
        + (SELECT count(*) FROM checkpoint_writes WHERE type LIKE 'zstd-json/1%')
        + (SELECT count(*) FROM checkpoint_pieces WHERE substring(blob FROM 1 FOR 1) = '\\x11'::bytea) AS n`
    )
    return Number(rows[0].n)
  }, url)

describe("a rolling deploy on PostgreSQL", () => {
  let database: Awaited<ReturnType<typeof createDatabase>>
  beforeAll(async () => {
    database = await createDatabase("rolling")
  })
  afterAll(async () => {
    await database?.drop()
  })

  it(
    "two releases side by side lose nothing and report nothing damaged; then raised, the older stops, typed",
    async () => {
      const url = database.url
      // The database as the older release made it: the level before the newest.
      const creator = await EffectCheckpointSaver.fromConnString(url, { formatLevel: PREVIOUS })
      expect(await creator.formatLevel()).toMatchObject({ level: PREVIOUS, supported: PREVIOUS })
      await creator.close()

      const newer = await EffectCheckpointSaver.fromConnString(url)
      const older = await EffectCheckpointSaver.fromConnString(url, { formatLevel: PREVIOUS })
      const turns = new Map<string, number>()
      try {
        expect(await newer.formatLevel()).toMatchObject({ level: PREVIOUS, supported: NEWEST_LEVEL })
        for (let round = 0; round < 6; round++) {
          for (
            const [thread, writer] of [
              ["shared-a", round % 2 === 0 ? newer : older],
              ["shared-b", round % 2 === 0 ? older : newer],
              ["newer-own", newer],
              ["older-own", older]
            ] as const
          ) {
            await turn(writer, thread, `round ${round} of ${thread}`)
            turns.set(thread, (turns.get(thread) ?? 0) + 1)
            // Both read every thread alike, whoever wrote it.
            expect(await read(older, thread)).toEqual(await read(newer, thread))
          }
        }
        for (const [thread, count] of turns) expect(await messageCount(older, thread)).toBe(2 * count)
        expect(await newestRows(url)).toBe(0)

        // Every process now runs a release that reads the newest level: raise it.
        const dry = await ok(["upgrade-format", url, "--dry-run"])
        expect(dry.stdout).toContain(`storage format level ${PREVIOUS} (raised by langgraph-checkpoint-effect`)
        expect(dry.stdout).toContain(`this release reads and writes levels up to ${NEWEST_LEVEL}`)
        expect(dry.stdout).toContain(`would raise it to level ${NEWEST_LEVEL}`)
        expect((await ok(["upgrade-format", url])).stdout).toContain(`raised ${PREVIOUS} → ${NEWEST_LEVEL}`)
        expect((await ok(["upgrade-format", url])).stdout).toContain(`already at level ${NEWEST_LEVEL}`)

        // The newer reads the level again (as it does every minute) and writes the newest encodings from then on.
        expect(await newer.formatLevel()).toMatchObject({ level: NEWEST_LEVEL })
        await turn(newer, "shared-a", "after the raise")
        expect(await newestRows(url)).toBeGreaterThan(0)
        expect(await messageCount(newer, "shared-a")).toBe(2 * (turns.get("shared-a")! + 1))

        // The older, before it reads the level again, meets what it does not read: typed, never damage.
        const met = await failure(read(older, "shared-a"))
        expect(met).toBeInstanceOf(CheckpointError.IncompatibleFormat)
        expect(String(met)).toContain(`(format level ${NEWEST_LEVEL})`)
        // A thread it still reads reads right.
        expect(await read(older, "older-own")).toEqual(await read(newer, "older-own"))
        // Once it reads the level, it stops, before writing anything more.
        expect(await failure(older.formatLevel())).toBeInstanceOf(CheckpointError.IncompatibleFormat)
        expect(await failure(turn(older, "older-own", "refused"))).toBeInstanceOf(CheckpointError.IncompatibleFormat)
        expect(await messageCount(newer, "older-own")).toBe(2 * turns.get("older-own")!)
      } finally {
        await Promise.all([newer.close(), older.close()])
      }
      // A rollback to the older release after the raise is refused when it starts.
      const rolledBack = await failure(EffectCheckpointSaver.fromConnString(url, { formatLevel: PREVIOUS }))
      expect(rolledBack).toBeInstanceOf(CheckpointError.IncompatibleFormat)
      expect(String(rolledBack)).toContain(
        `the database is at storage format level ${NEWEST_LEVEL}, raised by langgraph-checkpoint-effect`
      )
    },
    180_000
  )
})

describe("a rolling deploy on PGlite", () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "lce-rolling-"))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it("hands over between the two releases with nothing lost or damaged; raised, the older is refused", async () => {
    const url = `pglite:${join(dir, "data")}`
    /** One process at a time owns the directory: each stint opens, works and closes. */
    const stint = async <A>(formatLevel: number | undefined, f: (saver: EffectCheckpointSaver) => Promise<A>) => {
      const saver = await EffectCheckpointSaver.fromConnString(url, formatLevel === undefined ? {} : { formatLevel })
      try {
        return await f(saver)
      } finally {
        await saver.close()
      }
    }
    const older = PREVIOUS
    const newer = undefined
    await stint(older, (saver) => turn(saver, "t", "first, by the older"))
    const afterNewer = await stint(newer, async (saver) => {
      expect(await saver.formatLevel()).toMatchObject({ level: PREVIOUS, supported: NEWEST_LEVEL })
      await turn(saver, "t", "second, by the newer")
      return read(saver, "t")
    })
    await stint(older, async (saver) => {
      expect(await read(saver, "t")).toEqual(afterNewer)
      await turn(saver, "t", "third, by the older")
      expect(await messageCount(saver, "t")).toBe(6)
    })
    expect((await ok(["upgrade-format", url])).stdout).toContain(`raised ${PREVIOUS} → ${NEWEST_LEVEL}`)
    await stint(newer, async (saver) => {
      await turn(saver, "t", "fourth, by the newer, in the newest encodings")
      expect(await messageCount(saver, "t")).toBe(8)
    })
    const refused = await failure(stint(older, () => Promise.resolve()))
    expect(refused).toBeInstanceOf(CheckpointError.IncompatibleFormat)
  }, 180_000)
})
