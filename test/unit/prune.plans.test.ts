/** The prune plans (`lifecycle/Prune.ts`), on hand-made thread indexes. */
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import * as Prune from "../../src/internal/lifecycle/Prune.ts"
import type { IndexEntry } from "../../src/StorageDriver.ts"

/** An index entry; no channels unless given (so nothing to read back), `stored` every channel, `written` none. */
const entry = (
  checkpoint_id: string,
  parent_checkpoint_id: string | undefined,
  fields: Partial<Omit<IndexEntry, "checkpoint_id" | "parent_checkpoint_id">> = {}
): IndexEntry => {
  const channels = fields.channels ?? []
  return {
    checkpoint_ns: "",
    channels,
    stored: channels,
    written: [],
    run_id: undefined,
    ...fields,
    checkpoint_id,
    parent_checkpoint_id
  }
}

const ids = (entries: ReadonlyArray<{ readonly checkpoint_id: string }>) => entries.map((e) => e.checkpoint_id).sort()
const planOf = <E>(result: Result.Result<Prune.Plan, E>) => {
  if (Result.isFailure(result)) throw new Error("expected a plan")
  return result.success
}

describe("keepingLast", () => {
  it("keeps the newest checkpoint of each namespace; the one left names no parent", () => {
    const index = [
      entry("1", undefined),
      entry("2", "1"),
      entry("3", "2"),
      entry("1", undefined, { checkpoint_ns: "child" }),
      entry("2", "1", { checkpoint_ns: "child" })
    ]
    const plan = planOf(Prune.keepingLast(index))
    expect(plan.removed.map((e) => `${e.checkpoint_ns}/${e.checkpoint_id}`).sort()).toEqual(["/1", "/2", "child/1"])
    expect(plan.relinked).toEqual([
      { checkpoint_ns: "", checkpoint_id: "3", parent_checkpoint_id: undefined },
      { checkpoint_ns: "child", checkpoint_id: "2", parent_checkpoint_id: undefined }
    ])
  })

  it("keeps the `last` newest, and relinks only the oldest of them", () => {
    const index = ["1", "2", "3", "4", "5"].map((id, i) => entry(id, i === 0 ? undefined : String(i)))
    const plan = planOf(Prune.keepingLast(index, 2))
    expect(ids(plan.removed)).toEqual(["1", "2", "3"])
    expect(plan.relinked).toEqual([{ checkpoint_ns: "", checkpoint_id: "4", parent_checkpoint_id: undefined }])
  })

  it("keeps the ancestors a head's delta history reads back to: the nearest storing each channel", () => {
    // `d` is stored at 1 only; 2 and 3 have it empty. The head (3) reads back to 1.
    const index = [
      entry("0", undefined, { channels: ["d"] }),
      entry("1", "0", { channels: ["d"] }),
      entry("2", "1", { channels: ["d"], stored: [] }),
      entry("3", "2", { channels: ["d"], stored: [] })
    ]
    const plan = planOf(Prune.keepingLast(index))
    expect(ids(plan.removed)).toEqual(["0"])
    expect(plan.relinked).toEqual([{ checkpoint_ns: "", checkpoint_id: "1", parent_checkpoint_id: undefined }])
  })

  it("for a channel never stored, keeps back to the farthest ancestor that wrote to it", () => {
    const index = [
      entry("1", undefined, { channels: ["d"], stored: [], written: ["d"] }),
      entry("2", "1", { channels: ["d"], stored: [], written: ["d"] }),
      entry("3", "2", { channels: ["d"], stored: [] })
    ]
    expect(planOf(Prune.keepingLast(index)).removed).toEqual([])
  })

  it("keeps the newest of every branch it is asked for, and a fork point they share once", () => {
    const index = [
      entry("1", undefined),
      entry("2", "1", { channels: ["d"], stored: [] }),
      entry("3", "1", { channels: ["d"], stored: [] })
    ]
    // Both heads read `d` back to... no ancestor stores it: nothing more is kept.
    const plan = planOf(Prune.keepingLast(index, 2))
    expect(ids(plan.removed)).toEqual(["1"])
    expect(ids(plan.relinked)).toEqual(["2", "3"])
  })

  it("a channel the head stores is not read back, however far its last value is", () => {
    const index = [
      entry("1", undefined, { channels: ["d"] }),
      entry("2", "1", { channels: ["d"], stored: [] }),
      entry("3", "2", { channels: ["d"] })
    ]
    expect(ids(planOf(Prune.keepingLast(index)).removed)).toEqual(["1", "2"])
  })

  it("LangGraph's trigger channels never pin the chain: a linear thread keeps its latest only", () => {
    // As LangGraph stores them: the input is stored at the first checkpoint, each
    // `branch:to:*` where it was triggered, and every later checkpoint keeps their versions, empty.
    const triggers = ["__start__", "branch:to:a", "branch:to:b", "join:a+b:c", "__pregel_tasks"]
    const index = ["1", "2", "3", "4", "5", "6", "7", "8", "9"].map((id, i) =>
      entry(id, i === 0 ? undefined : String(i), {
        channels: [...triggers, "messages"],
        stored: i === 0 ? ["__start__"] : ["messages", triggers[i % triggers.length]!],
        written: triggers
      })
    )
    expect(ids(planOf(Prune.keepingLast(index)).removed)).toEqual(["1", "2", "3", "4", "5", "6", "7", "8"])
    expect(ids(planOf(Prune.keepingLast(index, 2)).removed)).toEqual(["1", "2", "3", "4", "5", "6", "7"])
  })

  it("has no plan for links that loop: the loop is the answer", () => {
    const result = Prune.keepingLast([entry("1", "2"), entry("2", "1")])
    expect(Result.isFailure(result)).toBe(true)
    if (Result.isFailure(result)) expect([...result.failure.ids].sort()).toEqual(["1", "2"])
  })
})

describe("deletingRuns", () => {
  it("removes the runs' checkpoints; a survivor points at its nearest surviving ancestor", () => {
    const index = [
      entry("1", undefined, { run_id: "keep" }),
      entry("2", "1", { run_id: "gone" }),
      entry("3", "2", { run_id: "gone" }),
      entry("4", "3", { run_id: "keep" }),
      entry("5", "4", { run_id: "other" })
    ]
    const plan = planOf(Prune.deletingRuns(index, new Set(["gone"])))
    expect(ids(plan.removed)).toEqual(["2", "3"])
    expect(plan.relinked).toEqual([{ checkpoint_ns: "", checkpoint_id: "4", parent_checkpoint_id: "1" }])
  })

  it("a survivor whose removed ancestors reach the root names no parent", () => {
    const index = [entry("1", undefined, { run_id: "gone" }), entry("2", "1", { run_id: "gone" }), entry("3", "2")]
    const plan = planOf(Prune.deletingRuns(index, new Set(["gone"])))
    expect(plan.relinked).toEqual([{ checkpoint_ns: "", checkpoint_id: "3", parent_checkpoint_id: undefined }])
  })

  it("checkpoints without a run id, or of other runs, stay as they are", () => {
    const index = [entry("1", undefined), entry("2", "1", { run_id: "other" })]
    expect(planOf(Prune.deletingRuns(index, new Set(["gone"])))).toEqual({ removed: [], relinked: [] })
  })

  it("has no plan for links that loop", () => {
    expect(Result.isFailure(Prune.deletingRuns([entry("1", "1")], new Set(["x"])))).toBe(true)
  })
})
