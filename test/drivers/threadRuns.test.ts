/**
 * What a thread's writers and runs leave in the store, on every driver:
 *
 * - one writer per thread: two writers race one thread, each with its own
 *   claim (`claimThread`, `configurable.writer_epoch`); the older one's
 *   next write fails with `ThreadConflict` and writes nothing, and the
 *   thread's history is the older writer's steps up to the claim, then the
 *   newer's, one chain, never interleaved; a fork (`updateState` on an
 *   older checkpoint) by the claim's holder works as before, and writes
 *   without an epoch are not fenced;
 * - a thread's status and values, found by status, ids and values;
 * - run records: stored, changed, read, listed newest first (by status
 *   too), removed, and gone with their thread;
 * - cron records: stored, replaced, searched, moved to their next tick
 *   only from the one a caller saw, removed, and a thread's gone with it.
 */
import { Annotation, END, START, StateGraph } from "@langchain/langgraph"
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint"
import { describe, expect, it } from "vitest"
import { CheckpointError, type CronRecord, type EffectCheckpointSaver, type RunRecord } from "../../src/index.ts"
import { type Driver, drivers } from "../support/drivers.ts"

const d = drivers("runs")

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error)

const using = async <A>(driver: Driver, f: (saver: EffectCheckpointSaver) => Promise<A>): Promise<A> => {
  const saver = driver.saver()
  try {
    return await f(saver)
  } finally {
    await saver.close()
  }
}

/** A graph whose every step appends its writer's name, a few milliseconds apart. */
const stepping = (saver: BaseCheckpointSaver) => {
  const State = Annotation.Root({
    log: Annotation<Array<string>>({ reducer: (a, b) => a.concat(b), default: () => [] })
  })
  return new StateGraph(State)
    .addNode("one", async (_, config) => {
      await sleep(3)
      return { log: [String(config.configurable?.writer)] }
    })
    .addNode("two", async (_, config) => {
      await sleep(3)
      return { log: [String(config.configurable?.writer)] }
    })
    .addEdge(START, "one")
    .addEdge("one", "two")
    .addEdge("two", END)
    .compile({ checkpointer: saver })
}

const run = (thread_id: string, overrides: Partial<RunRecord> = {}): RunRecord => ({
  thread_id,
  run_id: "r",
  assistant_id: "agent",
  status: "pending",
  metadata: {},
  multitask_strategy: "reject",
  created_at: new Date(),
  updated_at: new Date(),
  ...overrides
})

const cron = (cron_id: string, overrides: Partial<CronRecord> = {}): CronRecord => ({
  cron_id,
  assistant_id: "agent",
  schedule: "*/5 * * * *",
  enabled: true,
  on_run_completed: "delete",
  payload: { input: { text: "tick" } },
  metadata: {},
  created_at: new Date(),
  updated_at: new Date(),
  ...overrides
})

for (const driver of d.all) {
  describe(`thread runs on ${driver.name}`, () => {
    it("two writers racing one thread never interleave: the older's next write is ThreadConflict", async () => {
      await using(driver, async (saver) => {
        const thread_id = "raced"
        const graph = stepping(saver)
        const invoke = (writer: string, writer_epoch: number) =>
          graph.invoke({ log: [] }, { configurable: { thread_id, writer, writer_epoch } })
        const first = await saver.claimThread(thread_id)
        expect(first).toBe(1)
        // The first writer runs turn after turn until it is refused; the second claims once it finished one.
        const firstTurn = Promise.withResolvers<void>()
        const older = (async () => {
          for (let turn = 0;; turn++) {
            const outcome = await failure(invoke("a", first))
            firstTurn.resolve()
            if (outcome !== undefined) return { turns: turn, outcome }
          }
        })()
        await firstTurn.promise
        await sleep(10)
        const second = await saver.claimThread(thread_id)
        expect(second).toBe(2)
        for (let turn = 0; turn < 3; turn++) await invoke("b", second)
        const { outcome, turns } = await older
        expect(turns).toBeGreaterThan(0)
        expect(outcome).toBeInstanceOf(CheckpointError.ThreadConflict)
        expect(outcome).toMatchObject({ thread_id, epoch: 1 })

        // One chain, oldest first: a's steps, then b's, never a's after b's.
        const history = []
        for await (const tuple of saver.list({ configurable: { thread_id } })) history.push(tuple)
        const chain = history.reverse()
        chain.forEach((tuple, i) => {
          if (i > 0) {
            expect(tuple.parentConfig?.configurable?.checkpoint_id).toBe(
              chain[i - 1]!.config.configurable?.checkpoint_id
            )
          }
        })
        const log = chain.at(-1)!.checkpoint.channel_values.log as Array<string>
        expect(log.slice(-6)).toEqual(["b", "b", "b", "b", "b", "b"])
        expect(log.indexOf("b")).toBeGreaterThan(0)
        expect(log.slice(0, log.indexOf("b")).every((writer) => writer === "a")).toBe(true)
        expect(log.slice(log.indexOf("b")).every((writer) => writer === "b")).toBe(true)

        // The claim's holder forks from an older checkpoint, as LangGraph's updateState does.
        const older_id = chain[2]!.config.configurable?.checkpoint_id as string
        const forked = await graph.updateState(
          { configurable: { thread_id, checkpoint_id: older_id, writer_epoch: second } },
          { log: ["fork"] }
        )
        expect((await saver.getTuple(forked))?.parentConfig?.configurable?.checkpoint_id).toBe(older_id)
        // The stale claim writes nothing, a write without an epoch is not fenced.
        expect(
          await failure(
            saver.putWrites({ configurable: { ...forked.configurable, writer_epoch: first } }, [["log", ["x"]]], "k")
          )
        ).toBeInstanceOf(CheckpointError.ThreadConflict)
        expect((await saver.getTuple(forked))?.pendingWrites).toEqual([])
        await saver.putWrites(forked, [["log", ["y"]]], "k")
        expect((await saver.getTuple(forked))?.pendingWrites?.map(([, , value]) => value)).toEqual([["y"]])
        // A malformed epoch is an InvalidConfig.
        expect(await failure(invoke("c", -1))).toBeInstanceOf(CheckpointError.InvalidConfig)
      })
    }, 60_000)

    it("a thread's status and values, found by status, ids and values", async () => {
      await using(driver, async (saver) => {
        await saver.setThread("s1", { kind: "put", metadata: { topic: "x" } })
        await saver.setThread("s2", { kind: "put", metadata: { topic: "x" } })
        expect((await saver.getThread("s1"))?.status).toBe("idle")
        expect((await saver.getThread("s1"))?.values).toBeUndefined()
        const before = (await saver.getThread("s1"))!.updated_at
        await sleep(5)
        await saver.setThreadState("s1", { status: "busy" })
        await saver.setThreadState("s2", { status: "interrupted", values: { messages: [{ content: "hi" }], n: 2 } })
        const s1 = await saver.getThread("s1")
        expect(s1).toMatchObject({ status: "busy", metadata: { topic: "x" }, values: undefined })
        expect(s1!.updated_at.getTime()).toBeGreaterThan(before.getTime())
        // Values stay when only the status changes.
        await saver.setThreadState("s2", { status: "idle" })
        expect(await saver.getThread("s2")).toMatchObject({ status: "idle", values: { n: 2 } })
        const ids = async (query: Parameters<EffectCheckpointSaver["searchThreads"]>[0]) =>
          (await saver.searchThreads({ ...query, sort_by: "thread_id", sort_order: "asc" })).threads.map((t) =>
            t.thread_id
          )
        expect(await ids({ status: "busy" })).toEqual(["s1"])
        expect(await ids({ metadata: { topic: "x" }, status: "idle" })).toEqual(["s2"])
        expect(await ids({ values: { messages: [{ content: "hi" }] } })).toEqual(["s2"])
        expect(await ids({ ids: ["s2", "nope"] })).toEqual(["s2"])
        expect((await saver.searchThreads({ ids: ["s1", "s2"], status: "busy" })).total).toBe(1)
        expect(await failure(saver.setThreadState("s1", { status: "sleeping" as never }))).toBeInstanceOf(
          CheckpointError.InvalidInput
        )
        expect(await failure(saver.searchThreads({ status: "sleeping" as never }))).toBeInstanceOf(
          CheckpointError.InvalidInput
        )
      })
    })

    it("run records: stored, changed, listed newest first, removed, and gone with their thread", async () => {
      await using(driver, async (saver) => {
        const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms)
        await saver.putRun(run("r-thread", { run_id: "r1", created_at: at(1), updated_at: at(1), metadata: { k: 1 } }))
        await saver.putRun(run("r-thread", { run_id: "r2", created_at: at(2), updated_at: at(2) }))
        await saver.putRun(run("r-thread", { run_id: "r3", created_at: at(3), updated_at: at(3), status: "running" }))
        // A change replaces status, metadata and updated_at, and keeps created_at.
        await saver.putRun(
          run("r-thread", {
            run_id: "r1",
            status: "success",
            created_at: at(99),
            updated_at: at(50),
            metadata: { k: 2 }
          })
        )
        expect(await saver.getRun("r-thread", "r1")).toEqual(
          run("r-thread", {
            run_id: "r1",
            status: "success",
            created_at: at(1),
            updated_at: at(50),
            metadata: { k: 2 }
          })
        )
        expect(await saver.getRun("r-thread", "nope")).toBeUndefined()
        expect((await saver.listRuns("r-thread")).map((r) => r.run_id)).toEqual(["r3", "r2", "r1"])
        expect((await saver.listRuns("r-thread", { limit: 1, offset: 1 })).map((r) => r.run_id)).toEqual(["r2"])
        expect((await saver.listRuns("r-thread", { status: "running" })).map((r) => r.run_id)).toEqual(["r3"])
        // The thread has a record (made for the run).
        expect(await saver.getThread("r-thread")).toBeDefined()
        expect(await saver.deleteRun("r-thread", "r2")).toBe(true)
        expect(await saver.deleteRun("r-thread", "r2")).toBe(false)
        expect((await saver.listRuns("r-thread")).map((r) => r.run_id)).toEqual(["r3", "r1"])
        await saver.deleteThread("r-thread")
        expect(await saver.listRuns("r-thread")).toEqual([])
        expect(await saver.getRun("r-thread", "r1")).toBeUndefined()
        // Bad input is typed and stores nothing.
        expect(await failure(saver.putRun(run("bad", { status: "done" as never })))).toBeInstanceOf(
          CheckpointError.InvalidInput
        )
        expect(await failure(saver.putRun(run("bad", { run_id: "" })))).toBeInstanceOf(CheckpointError.InvalidInput)
        expect(await saver.listRuns("bad")).toEqual([])
      })
    })

    it("a run's record and its thread's state, stored together", async () => {
      await using(driver, async (saver) => {
        // Without a state the thread's is left as it is; with one it is set, values kept unless given.
        await saver.setThreadState("together", { status: "interrupted", values: { n: 1 } })
        await saver.putRun(run("together", { run_id: "a" }))
        expect(await saver.getThread("together")).toMatchObject({ status: "interrupted", values: { n: 1 } })
        await saver.putRun(run("together", { run_id: "a", status: "running" }), { status: "busy" })
        expect(await saver.getThread("together")).toMatchObject({ status: "busy", values: { n: 1 } })
        await saver.putRun(run("together", { run_id: "a", status: "success" }), { status: "idle", values: { n: 2 } })
        expect(await saver.getThread("together")).toMatchObject({ status: "idle", values: { n: 2 } })
        expect(await saver.getRun("together", "a")).toMatchObject({ status: "success" })
        // A thread made by its first run's record takes the state given.
        await saver.putRun(run("fresh", { run_id: "b" }), { status: "busy" })
        expect(await saver.getThread("fresh")).toMatchObject({ status: "busy" })
        // A bad state is typed, and neither the run nor the thread changes.
        const bad = await failure(
          saver.putRun(run("together", { run_id: "a", status: "error" }), { status: "x" as never })
        )
        expect(bad).toBeInstanceOf(CheckpointError.InvalidInput)
        expect(bad).toMatchObject({ argument: "thread.status" })
        expect(await saver.getRun("together", "a")).toMatchObject({ status: "success" })
        expect(await saver.getThread("together")).toMatchObject({ status: "idle", values: { n: 2 } })
      })
    })

    it("a run's claim: the next epoch, the run recorded and the thread busy, in one step", async () => {
      await using(driver, async (saver) => {
        await saver.putRun(run("claimed", { run_id: "a" }), { status: "busy", values: { n: 1 } })
        const epoch = await saver.claimThread("claimed", run("claimed", { run_id: "a", status: "running" }))
        expect(epoch).toBe(1)
        expect(await saver.getRun("claimed", "a")).toMatchObject({ status: "running" })
        expect(await saver.getThread("claimed")).toMatchObject({ status: "busy", values: { n: 1 } })
        // A thread without a record gets one; a plain claim after it takes the next epoch.
        expect(await saver.claimThread("fresh-claim", run("fresh-claim", { run_id: "b", status: "running" }))).toBe(1)
        expect(await saver.getThread("fresh-claim")).toMatchObject({ status: "busy" })
        expect(await saver.claimThread("fresh-claim")).toBe(2)
        // Another thread's run, or a bad one, is typed, and nothing changes.
        for (const bad of [run("elsewhere", { run_id: "c" }), run("claimed", { run_id: "c", status: "x" as never })]) {
          expect(await failure(saver.claimThread("claimed", bad))).toBeInstanceOf(CheckpointError.InvalidInput)
        }
        expect(await saver.getRun("claimed", "c")).toBeUndefined()
        expect(await saver.claimThread("claimed")).toBe(2)
      })
    })

    it("cron records: stored, replaced, searched, advanced only from the tick seen, and gone with their thread", async () => {
      await using(driver, async (saver) => {
        const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms)
        await saver.createThread("c-thread", {})
        await saver.putCron(cron("c1", { thread_id: "c-thread", created_at: at(1), next_run_date: at(60_000) }))
        await saver.putCron(cron("c2", { created_at: at(2), metadata: { owner: "ann" }, timezone: "Europe/Paris" }))
        await saver.putCron(
          cron("c3", { created_at: at(3), assistant_id: "other", enabled: false, end_time: at(9_000_000) })
        )
        expect(await saver.getCron("c1")).toEqual(
          cron("c1", {
            thread_id: "c-thread",
            timezone: undefined,
            end_time: undefined,
            created_at: at(1),
            updated_at: (await saver.getCron("c1"))!.updated_at,
            next_run_date: at(60_000)
          })
        )
        expect(await saver.getCron("c3")).toMatchObject({ enabled: false, end_time: at(9_000_000) })
        expect(await saver.getCron("nope")).toBeUndefined()
        const ids = async (query: Parameters<EffectCheckpointSaver["searchCrons"]>[0]) => {
          const page = await saver.searchCrons(query)
          return { ids: page.crons.map((found) => found.cron_id), total: page.total }
        }
        expect(await ids({})).toEqual({ ids: ["c1", "c2", "c3"], total: 3 })
        expect(await ids({ limit: 1, offset: 1 })).toEqual({ ids: ["c2"], total: 3 })
        expect(await ids({ thread_id: "c-thread" })).toEqual({ ids: ["c1"], total: 1 })
        expect(await ids({ assistant_id: "other" })).toEqual({ ids: ["c3"], total: 1 })
        expect(await ids({ enabled: true })).toEqual({ ids: ["c1", "c2"], total: 2 })
        expect(await ids({ metadata: { owner: "ann" } })).toEqual({ ids: ["c2"], total: 1 })
        // A put replaces all but created_at.
        await saver.putCron(cron("c2", { schedule: "0 9 * * 1", created_at: at(99), payload: { input: 2 } }))
        expect(await saver.getCron("c2")).toMatchObject({
          schedule: "0 9 * * 1",
          timezone: undefined,
          metadata: {},
          payload: { input: 2 },
          created_at: at(2)
        })
        // Compare-and-set on the next tick: of two firings of one tick, one moves it.
        expect(await saver.advanceCron("c1", at(60_000), at(120_000))).toBe(true)
        expect(await saver.advanceCron("c1", at(60_000), at(120_000))).toBe(false)
        expect((await saver.getCron("c1"))?.next_run_date).toEqual(at(120_000))
        expect(await saver.advanceCron("c1", at(120_000), undefined)).toBe(true)
        expect((await saver.getCron("c1"))?.next_run_date).toBeUndefined()
        expect(await saver.deleteCron("c3")).toBe(true)
        expect(await saver.deleteCron("c3")).toBe(false)
        // A thread's crons go with it.
        await saver.deleteThread("c-thread")
        expect(await saver.getCron("c1")).toBeUndefined()
        expect(await ids({})).toEqual({ ids: ["c2"], total: 1 })
        // Bad input is typed and stores nothing: a schedule or zone that does not parse, a thread that is not there.
        for (
          const [bad, argument] of [
            [cron("bad", { schedule: "every minute" }), "cron.schedule"],
            [cron("bad", { timezone: "Mars/Olympus" }), "cron.timezone"],
            [cron("bad", { thread_id: "no-such-thread" }), "cron.thread_id"],
            [cron("bad", { on_run_completed: "drop" as never }), "cron.on_run_completed"],
            [cron("bad", { payload: [] as never }), "cron.payload"]
          ] as const
        ) {
          const error = await failure(saver.putCron(bad))
          expect(error).toBeInstanceOf(CheckpointError.InvalidInput)
          expect(error).toMatchObject({ argument })
        }
        expect(await saver.getCron("bad")).toBeUndefined()
      })
    })
  })
}
