/**
 * Stored data never hangs a call: parent links changed behind the library's
 * back (by SQL, or in the memory driver's own state) so that they loop — a
 * checkpoint its own parent, two checkpoints each other's, a loop through a
 * 200-checkpoint chain. Every operation ends within a second: the ones that
 * walk the parent chain (`getDeltaChannelHistory`, `prune`, `deleteForRuns`,
 * retention, the inspector's prune plan) with a `CorruptedCheckpoint` naming
 * the thread, namespace and a checkpoint on the loop, leaving the thread as
 * it was (retention, and the inspector's retention plan, leave the thread
 * and name it with the loop); the others (`getTuple`, `list`, the
 * inspector's history) with their rows. `copyThread` refuses the thread
 * with the same error and `importThread` its rows (and rows with a missing
 * parent or a value nested deeper than `put` accepts), writing nothing.
 */
import type { RunnableConfig } from "@langchain/core/runnables"
import { uuid6 } from "@langchain/langgraph-checkpoint"
import { type Effect, Layer, type ManagedRuntime, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CheckpointError, CheckpointStorage, EffectCheckpointSaver, type StorageDriver } from "../../src/index.ts"
import type { Inspector } from "../../src/internal/inspector/Inspector.ts"
import * as Tree from "../../src/internal/inspector/Tree.ts"

type Storage = CheckpointStorage.CheckpointStorage["Service"]

/** A driver under test, kept open for the suite. */
export interface Subject {
  readonly runtime: ManagedRuntime.ManagedRuntime<CheckpointStorage.CheckpointStorage, unknown>
  /** Runs the inspector over the same storage (the SQL drivers). */
  readonly inspect:
    | (<A, E>(f: (inspector: Inspector["Service"]) => Effect.Effect<A, E>) => Promise<A>)
    | undefined
  /** Points a checkpoint at another parent, behind the library's back. */
  readonly setParent: (
    at: { readonly thread_id: string; readonly checkpoint_ns: string; readonly checkpoint_id: string },
    parent: string
  ) => Promise<void>
  readonly close: () => Promise<void>
}

/** Within a second, as issue 24 asks of every call on stored data that loops. */
const LIMIT_MS = 1000

/** How a call ended, and how long it took (which must be under a second). */
const timed = async <A>(what: string, promise: Promise<A>) => {
  const start = performance.now()
  const outcome = await promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error })
  )
  const elapsed = performance.now() - start
  expect(elapsed, `${what} took ${elapsed.toFixed(0)} ms`).toBeLessThan(LIMIT_MS)
  return outcome
}

/** The call's typed error, which must be a `CorruptedCheckpoint` naming a checkpoint on the loop. */
const loopsIn = async (
  what: string,
  promise: Promise<unknown>,
  thread_id: string,
  loop: ReadonlyArray<string>
) => {
  const outcome = await timed(what, promise)
  expect(outcome.ok, `${what} succeeded`).toBe(false)
  const error = (outcome as { readonly error: unknown }).error
  expect(error, what).toBeInstanceOf(CheckpointError.CorruptedCheckpoint)
  expect(error).toMatchObject({ thread_id, checkpoint_ns: "" })
  expect(loop).toContain((error as CheckpointError.CorruptedCheckpoint).checkpoint_id)
  expect(String(error)).toMatch(/parent chain loops/)
}

const succeeds = async <A>(what: string, promise: Promise<A>): Promise<A> => {
  const outcome = await timed(what, promise)
  if (!outcome.ok) throw outcome.error
  return outcome.value
}

export const loopScenarios = (name: string, subject: () => Promise<Subject>) =>
  describe(`parent links that loop, on ${name}`, () => {
    let opened: Subject
    let saver: EffectCheckpointSaver
    let run = 0
    const thread = (label: string) => `${label}-${process.pid}-${++run}`
    beforeAll(async () => {
      opened = await subject()
      saver = EffectCheckpointSaver.fromLayer(Layer.succeedContext(await opened.runtime.context()))
    }, 60_000)
    afterAll(async () => {
      await saver.close()
      await opened.close()
    })

    const storage = <A, E>(f: (storage: Storage) => Effect.Effect<A, E>) =>
      opened.runtime.runPromise(CheckpointStorage.CheckpointStorage.use(f))

    /**
     * A chain of checkpoints: the first (and every `seedEvery`-th) stores the
     * channel `log`, each writes to it (so its delta history reads back to
     * the nearest that stores it), all by one run.
     */
    const chain = async (thread_id: string, length: number, run_id: string, seedEvery = length) => {
      let config: RunnableConfig = { configurable: { thread_id, checkpoint_ns: "" } }
      const ids: Array<string> = []
      for (let step = 0; step < length; step++) {
        const seeded = step % seedEvery === 0
        config = await saver.put(
          config,
          {
            v: 4,
            id: uuid6(-1),
            ts: new Date().toISOString(),
            channel_values: seeded ? { log: [`seed ${step}`] } : {},
            channel_versions: { log: step + 1 },
            versions_seen: {}
          },
          { source: "loop", step, parents: {}, run_id } as never,
          seeded ? { log: step + 1 } : {}
        )
        await saver.putWrites(config, [["log", `entry ${step}`]], `task-${step}`)
        ids.push(String(config.configurable?.checkpoint_id))
      }
      return ids
    }

    const count = async (thread_id: string) => {
      let n = 0
      for await (const _ of saver.list({ configurable: { thread_id } })) n++
      return n
    }

    const config = (thread_id: string, checkpoint_id?: string): RunnableConfig => ({
      configurable: { thread_id, checkpoint_ns: "", ...(checkpoint_id === undefined ? {} : { checkpoint_id }) }
    })

    /** Every operation on a thread whose links loop through `loop`, the latest being `ids.at(-1)`. */
    const everyOperation = async (thread_id: string, ids: ReadonlyArray<string>, loop: ReadonlyArray<string>) => {
      const run_id = `run-${thread_id}`
      const latest = ids.at(-1)!
      // Reads that do not walk the chain answer.
      const tuple = await succeeds("getTuple", saver.getTuple(config(thread_id)))
      expect(tuple?.checkpoint.id).toBe(latest)
      expect(await succeeds("list", count(thread_id))).toBe(ids.length)
      // Walks end in the typed error.
      await loopsIn(
        "getDeltaChannelHistory",
        saver.getDeltaChannelHistory({ config: config(thread_id), channels: ["log"] }),
        thread_id,
        loop
      )
      await loopsIn(
        "getDeltaChannelHistory (by id)",
        saver.getDeltaChannelHistory({ config: config(thread_id, latest), channels: ["log"] }),
        thread_id,
        loop
      )
      await loopsIn("prune", saver.prune([thread_id], { strategy: "keep_latest" }), thread_id, loop)
      await loopsIn("deleteForRuns", saver.deleteForRuns([run_id]), thread_id, loop)
      const retention = await succeeds("applyRetention", saver.applyRetention({ keepLast: 1 }))
      const skipped = retention.skipped.find((entry) => entry.thread_id === thread_id)
      expect(skipped?.detail).toMatch(/parent chain loops/)
      // Nothing was changed.
      expect(await count(thread_id)).toBe(ids.length)
      // A copy is refused as an import of the rows would be, naming the loop; nothing is written.
      await loopsIn("copyThread", saver.copyThread(thread_id, `${thread_id}-copy`), thread_id, loop)
      expect(await count(`${thread_id}-copy`)).toBe(0)
      // Its rows are refused by import (here, over itself), and nothing is written.
      const rows = await succeeds("exportThread", storage((s) => s.exportThread(thread_id)))
      const refused = await timed("importThread", storage((s) => s.importThread(rows, { replace: true })))
      expect(refused.ok).toBe(false)
      expect((refused as { readonly error: unknown }).error).toBeInstanceOf(CheckpointError.InvalidInput)
      expect(String((refused as { readonly error: unknown }).error)).toMatch(/parent chain loops/)
      expect(await count(thread_id)).toBe(ids.length)
      const inspect = opened.inspect
      if (inspect !== undefined) {
        const history = await succeeds(
          "the inspector's history",
          inspect((inspector) => Stream.runCollect(inspector.history(thread_id)))
        )
        expect(history).toHaveLength(ids.length)
        const tree = Tree.layout(history, (entry) => entry.checkpoint_id, (entry) => entry.parent_checkpoint_id)
        expect(tree).toHaveLength(ids.length)
        // The page the CLI and the web page draw: laid out from the ids alone, a loop or not.
        const page = await succeeds(
          "the inspector's history page",
          inspect((inspector) => inspector.historyPage(thread_id))
        )
        expect(page.total).toBe(ids.length)
        expect(page.namespaces.flatMap((namespace) => namespace.rows)).toHaveLength(ids.length)
        const shown = await succeeds("the inspector's show", inspect((inspector) => inspector.checkpoint(thread_id)))
        expect(shown.tuple.checkpoint.id).toBe(latest)
        await loopsIn(
          "the inspector's prune plan",
          inspect((inspector) => inspector.plan.keepLatest([thread_id], 1)),
          thread_id,
          loop
        )
        // Retention's plan leaves the thread out of its removals, and names it with the loop.
        const planned = await succeeds(
          "the inspector's retention plan",
          inspect((inspector) => inspector.plan.retention({ keepLast: 1 }))
        )
        expect(planned.removals.map((removal) => removal.thread_id)).not.toContain(thread_id)
        const named = planned.skipped.find((entry) => entry.thread_id === thread_id)
        expect(named?.detail).toMatch(/parent chain loops/)
        expect(loop.some((id) => named?.detail.includes(id))).toBe(true)
      }
    }

    it("a checkpoint its own parent", async () => {
      const thread_id = thread("self")
      const ids = await chain(thread_id, 5, `run-${thread_id}`)
      await opened.setParent({ thread_id, checkpoint_ns: "", checkpoint_id: ids[4]! }, ids[4]!)
      await everyOperation(thread_id, ids, [ids[4]!])
    }, 60_000)

    it("two checkpoints each other's parent; a history that does not reach them still reads", async () => {
      const thread_id = thread("pair")
      const ids = await chain(thread_id, 5, `run-${thread_id}`)
      await opened.setParent({ thread_id, checkpoint_ns: "", checkpoint_id: ids[2]! }, ids[3]!)
      await everyOperation(thread_id, ids, [ids[2]!, ids[3]!])
      // Checkpoint 1's chain is whole: its history reads back to the seed.
      const history = await succeeds(
        "getDeltaChannelHistory (outside the loop)",
        saver.getDeltaChannelHistory({ config: config(thread_id, ids[1]), channels: ["log"] })
      )
      expect(history.log).toEqual({ seed: ["seed 0"], writes: [["task-0", "log", "entry 0"]] })
    }, 60_000)

    it("a loop through a 200-checkpoint chain", async () => {
      const thread_id = thread("long")
      const ids = await chain(thread_id, 201, `run-${thread_id}`)
      // From the latest, 200 checkpoints back and round again; the seed (the first) out of reach.
      await opened.setParent({ thread_id, checkpoint_ns: "", checkpoint_id: ids[1]! }, ids[200]!)
      await everyOperation(thread_id, ids, ids.slice(1))
    }, 120_000)

    it("a pruned thread names no parent it lost, so its export imports and reads back the same", async () => {
      const thread_id = thread("pruned")
      const ids = await chain(thread_id, 6, `run-${thread_id}`, 3)
      const latest = config(thread_id)
      const before = await saver.getDeltaChannelHistory({ config: latest, channels: ["log"] })
      await saver.prune([thread_id], { strategy: "keep_latest" })
      // The head's history reads back to the seed at 3, which stays, and names no parent now.
      expect(await count(thread_id)).toBe(3)
      const cut = await saver.getTuple(config(thread_id, ids[3]))
      expect(cut?.parentConfig).toBeUndefined()
      expect(await saver.getDeltaChannelHistory({ config: latest, channels: ["log"] })).toEqual(before)
      const rows = await storage((s) => s.exportThread(thread_id))
      const target = thread("pruned-imported")
      await storage((s) =>
        s.importThread({
          ...rows,
          thread_id: target,
          checkpoints: rows.checkpoints.map((row) => ({ ...row, thread_id: target }))
        })
      )
      expect(await saver.getDeltaChannelHistory({ config: config(target), channels: ["log"] })).toEqual(before)
    }, 60_000)

    it(
      "import refuses links that loop, a missing parent and a value nested deeper than put accepts, writing nothing",
      async () => {
        const thread_id = thread("import")
        const ids = await chain(thread_id, 4, `run-${thread_id}`)
        const rows = await storage((s) => s.exportThread(thread_id))
        const target = thread("imported")
        const withParent = (checkpoint_id: string, parent: string | undefined): StorageDriver.ThreadRows => ({
          ...rows,
          thread_id: target,
          checkpoints: rows.checkpoints.map((row) => ({
            ...row,
            thread_id: target,
            parent_checkpoint_id: row.checkpoint_id === checkpoint_id ? parent : row.parent_checkpoint_id
          }))
        })
        const deep = new TextEncoder().encode(`${"[".repeat(20_000)}${"]".repeat(20_000)}`)
        const bad: ReadonlyArray<readonly [string, StorageDriver.ThreadRows, RegExp]> = [
          ["a loop", withParent(ids[0]!, ids[3]), /parent chain loops/],
          ["its own parent", withParent(ids[2]!, ids[2]), /parent chain loops/],
          ["a missing parent", withParent(ids[2]!, "no-such-checkpoint"), /no-such-checkpoint, which is not among/],
          [
            "a deep value",
            {
              ...withParent(ids[0]!, undefined),
              blobs: rows.blobs.map((blob) => ({ ...blob, type: "json", bytes: deep }))
            },
            /nests deeper than 500 levels/
          ],
          [
            "a deep write",
            { ...withParent(ids[0]!, undefined), writes: rows.writes.map((write) => ({ ...write, bytes: deep })) },
            /nests deeper than 500 levels/
          ]
        ]
        for (const [what, wrong, detail] of bad) {
          const outcome = await timed(`import of ${what}`, storage((s) => s.importThread(wrong)))
          expect(outcome.ok, what).toBe(false)
          const error = (outcome as { readonly error: unknown }).error
          expect(error, what).toBeInstanceOf(CheckpointError.InvalidInput)
          expect(String(error), what).toMatch(detail)
          expect(await count(target), what).toBe(0)
        }
        // The rows as exported import.
        await storage((s) => s.importThread(withParent(ids[0]!, undefined)))
        expect(await count(target)).toBe(4)
      },
      60_000
    )
  })
