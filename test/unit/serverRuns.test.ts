/**
 * The server's run log and registry (src/server/Runs.ts), without a server:
 * what a run keeps for its readers, how a reader left behind goes on, and
 * what the registry forgets of finished runs (by count and by the bytes of
 * their logs), so a long-running server's memory is bounded by its limits.
 */
import { describe, expect, it } from "vitest"
import { follow, Registry } from "../../src/server/Runs.ts"

const read = async (stream: ReadableStream<Uint8Array>) => new Response(stream).text()

describe("a run's log", () => {
  it("keeps at most maxEvents and maxBytes, the oldest dropped first", () => {
    const runs = new Registry({ maxEvents: 3, maxBytes: 1_000 })
    const run = runs.add("r", "t", {})
    for (let n = 1; n <= 10; n++) run.push("values", `{"n":${n}}`)
    // Events 8, 9 and 10: `{"n":8}` is 7 bytes, `{"n":10}` 8.
    expect(run.held).toEqual({ events: 3, bytes: 7 + 7 + 8 })
    run.push("values", "x".repeat(2_000))
    // One event over the byte budget is still kept: a reader gets the latest state.
    expect(run.held.events).toBe(1)
  })

  it("gives a reader the events after its last one, or from the oldest held when it fell behind", async () => {
    const runs = new Registry({ maxEvents: 2 })
    const run = runs.add("r", "t", {})
    for (const n of [1, 2, 3]) run.push("values", String(n))
    run.finish()
    expect(await read(follow(run, 2))).toBe("id: 3\nevent: values\ndata: 3\n\n")
    // Event 1 is gone: a reader that saw none goes on from event 2.
    expect(await read(follow(run, 0))).toBe("id: 2\nevent: values\ndata: 2\n\nid: 3\nevent: values\ndata: 3\n\n")
    expect(run.status).toBe("success")
  })

  it("ends as error after an error event, and as interrupted when cancelled", () => {
    const runs = new Registry()
    const failed = runs.add("a", "t", {})
    failed.push("error", "{}")
    failed.finish()
    const cancelled = runs.add("b", "u", {})
    cancelled.cancel()
    cancelled.finish()
    expect([failed.status, cancelled.status]).toEqual(["error", "interrupted"])
  })
})

describe("the registry", () => {
  it("forgets finished runs beyond keepFinished and beyond keepFinishedBytes of their logs", async () => {
    const runs = new Registry({ keepFinished: 100, keepFinishedBytes: 10_000 })
    for (let n = 0; n < 50; n++) {
      const run = runs.add(`run-${n}`, `thread-${n}`, {})
      run.push("values", "x".repeat(1_000))
      run.finish()
      await run.ended
    }
    await new Promise((resolve) => setTimeout(resolve, 0))
    const kept = Array.from({ length: 50 }, (_, n) => runs.get(`thread-${n}`, `run-${n}`)).filter((run) => run)
    // 10 logs of 1,000 bytes fit in 10,000: the newest ten.
    expect(kept.map((run) => run!.run_id)).toEqual(Array.from({ length: 10 }, (_, n) => `run-${40 + n}`))
    expect(runs.busy("thread-49")).toBe(false)
  })
})
