/** The retention plan (`lifecycle/Retention.ts`) that `applyRetention` and the inspector share. */
import { Duration } from "effect"
import { describe, expect, it } from "vitest"
import * as Retention from "../../src/internal/lifecycle/Retention.ts"

const now = Date.UTC(2025, 0, 31)
const daysAgo = (thread_id: string, days: number) => ({ thread_id, last_activity: new Date(now - days * 86_400_000) })
const threads = [daysAgo("old", 40), daysAgo("recent", 1), daysAgo("edge", 30), daysAgo("older", 90)]
const ids = (plan: Retention.Plan<{ readonly thread_id: string }>) => ({
  deleted: plan.deleted.map((thread) => thread.thread_id),
  trimmed: plan.trimmed.map((thread) => thread.thread_id)
})

describe("Retention.plan", () => {
  it("deletes threads whose latest put is older than inactiveFor (not those exactly at it), in the order given", () => {
    expect(ids(Retention.plan({ inactiveFor: Duration.days(30) }, now, threads))).toEqual({
      deleted: ["old", "older"],
      trimmed: []
    })
  })

  it("with keepLast, trims every thread it does not delete", () => {
    expect(ids(Retention.plan({ inactiveFor: Duration.days(30), keepLast: 2 }, now, threads))).toEqual({
      deleted: ["old", "older"],
      trimmed: ["recent", "edge"]
    })
  })

  it("with keepLast alone, deletes nothing and trims every thread", () => {
    expect(ids(Retention.plan({ keepLast: 1 }, now, threads))).toEqual({
      deleted: [],
      trimmed: ["old", "recent", "edge", "older"]
    })
  })

  it("with neither, does nothing", () => {
    expect(ids(Retention.plan({}, now, threads))).toEqual({ deleted: [], trimmed: [] })
  })
})
