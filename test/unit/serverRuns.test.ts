/**
 * The server's run log and registry (src/internal/server/Runs.ts), without a server:
 * what a run keeps for its readers, how a reader left behind goes on, how
 * an execution's ids follow an earlier one's, what a wait answers, and
 * what the registry forgets of finished runs (by count and by the bytes of
 * their logs), so a long-running server's memory is bounded by its limits.
 */
import { describe, expect, it } from "vitest"
import { EPOCH_SPAN, frame, Registry, type RunLog } from "../../src/internal/server/Runs.ts"

const read = async (log: RunLog, from: number) => {
  const frames: Array<string> = []
  for await (const event of log.follow(from)) frames.push(new TextDecoder().decode(frame(event)))
  return frames.join("")
}

describe("a run's log", () => {
  it("keeps at most maxEvents and maxBytes, the oldest dropped first", () => {
    const runs = new Registry({ maxEvents: 3, maxBytes: 1_000 })
    const log = runs.add("r", 0)
    for (let n = 1; n <= 10; n++) log.push("values", `{"n":${n}}`)
    // Events 8, 9 and 10: `{"n":8}` is 7 bytes, `{"n":10}` 8.
    expect(log.held).toEqual({ events: 3, bytes: 7 + 7 + 8 })
    log.push("values", "x".repeat(2_000))
    // One event over the byte budget is still kept: a reader gets the latest state.
    expect(log.held.events).toBe(1)
  })

  it("gives a reader the events after its last one, or from the oldest held when it fell behind", async () => {
    const runs = new Registry({ maxEvents: 2 })
    const log = runs.add("r", 0)
    for (const n of [1, 2, 3]) log.push("values", String(n))
    log.finish()
    expect(await read(log, 2)).toBe("id: 3\nevent: values\ndata: 3\n\n")
    // Event 1 is gone: a reader that saw none goes on from event 2.
    expect(await read(log, 0)).toBe("id: 2\nevent: values\ndata: 2\n\nid: 3\nevent: values\ndata: 3\n\n")
  })

  it("numbers an execution's events after its epoch: a reader of an earlier execution reads this one whole", async () => {
    const runs = new Registry()
    const log = runs.add("r", 7 * EPOCH_SPAN)
    log.push("metadata", "{}")
    log.push("values", "{}")
    log.finish()
    // The last id a reader had came from epoch 6's execution: it gets epoch 7's from its first event.
    expect((await read(log, 6 * EPOCH_SPAN + 40)).match(/^id: \d+$/gm)).toEqual([
      `id: ${7 * EPOCH_SPAN + 1}`,
      `id: ${7 * EPOCH_SPAN + 2}`
    ])
  })

  it("answers what a wait answers: the last values, or the error", () => {
    const runs = new Registry()
    const done = runs.add("a", 0)
    done.push("values", `{"n":1}`)
    done.push("values", `{"n":2}`)
    done.push("end", "null")
    expect(done.outcome()).toBe(`{"n":2}`)
    const failed = runs.add("b", 0)
    failed.push("values", `{"n":1}`)
    failed.push("error", `{"error":"Error","message":"no"}`)
    expect(failed.outcome()).toBe(`{"__error__":{"error":"Error","message":"no"}}`)
    expect(runs.add("c", 0).outcome()).toBeUndefined()
  })
})

describe("the registry", () => {
  it("forgets finished runs beyond keepFinished and beyond keepFinishedBytes of their logs", () => {
    const runs = new Registry({ keepFinished: 100, keepFinishedBytes: 10_000 })
    for (let n = 0; n < 50; n++) {
      const log = runs.add(`run-${n}`, 0)
      log.push("values", "x".repeat(1_000))
      log.finish()
      runs.finished(log)
    }
    const kept = Array.from({ length: 50 }, (_, n) => runs.get(`run-${n}`)).filter((log) => log !== undefined)
    // 10 logs of 1,000 bytes fit in 10,000: the newest ten.
    expect(kept.map((log) => log.run_id)).toEqual(Array.from({ length: 10 }, (_, n) => `run-${40 + n}`))
    const few = new Registry({ keepFinished: 2 })
    for (const id of ["x", "y", "z"]) {
      const log = few.add(id, 0)
      log.finish()
      few.finished(log)
    }
    expect(["x", "y", "z"].map((id) => few.get(id) !== undefined)).toEqual([false, true, true])
  })

  it("hands a reader the log of a run admitted here once it starts, and tells where its events are", async () => {
    const runs = new Registry()
    expect(runs.here("r")).toBe(false)
    runs.expect("r")
    expect(runs.here("r")).toBe(true)
    const waiting = runs.logOf("r")
    const log = runs.add("r", 0)
    expect(await waiting).toBe(log)
    log.push("values", "{}")
    log.settle()
    expect(await log.closed).toBe(true)
    // Settled stays settled: a later abandon changes nothing, and its events stay here.
    log.abandon()
    expect(log.abandoned).toBe(false)
    expect(runs.here("r")).toBe(true)
    // An execution handed over: its events are elsewhere now, and its readers learn it has no end here.
    const moved = runs.add("m", 0)
    moved.abandon()
    expect(await moved.closed).toBe(false)
    expect(runs.here("m")).toBe(false)
    // A run that leaves before it starts: its reader is answered, with no log.
    runs.expect("gone")
    const none = runs.logOf("gone")
    runs.unexpect("gone")
    expect(await none).toBeUndefined()
    expect(runs.here("gone")).toBe(false)
  })
})
