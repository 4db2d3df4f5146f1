/**
 * The prune plans: the same answers as a plain reference walk on random
 * forests of checkpoints, a loop as the answer for links that loop, and a
 * 60,000-checkpoint thread planned in well under the bound (the plans were
 * quadratic: 25 s and more, holding the thread's lock).
 */
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import * as Prune from "../../src/internal/lifecycle/Prune.ts"
import type { IndexEntry } from "../../src/StorageDriver.ts"

/** A small deterministic generator, so a failure can be run again. */
const random = (seed: number) => () => {
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648
}

const CHANNELS = ["a", "b", "c", "d", "__start__", "branch:to:a"]

/** A forest of checkpoints in a few namespaces: forks, several roots, and ids not always in creation order. */
const forest = (next: () => number, size: number): Array<IndexEntry> => {
  const entries: Array<IndexEntry> = []
  for (let i = 0; i < size; i++) {
    const checkpoint_ns = ["", "sub:1"][Math.floor(next() * 2)]!
    const earlier = entries.filter((entry) => entry.checkpoint_ns === checkpoint_ns)
    const parent = earlier.length === 0 || next() < 0.1 ? undefined : earlier[Math.floor(next() * earlier.length)]
    const some = () => CHANNELS.filter(() => next() < 0.3)
    entries.push({
      checkpoint_ns,
      // Mostly increasing; now and then an id older than its parent's.
      checkpoint_id: String(next() < 0.9 ? 1000 + i : Math.floor(next() * 1000)).padStart(5, "0") + `-${i}`,
      parent_checkpoint_id: parent?.checkpoint_id,
      channels: CHANNELS.filter(() => next() < 0.8),
      stored: some(),
      written: some(),
      run_id: ["r1", "r2", undefined][Math.floor(next() * 3)]
    })
  }
  return entries
}

const place = (entry: { readonly checkpoint_ns: string; readonly checkpoint_id: string }) =>
  JSON.stringify([entry.checkpoint_ns, entry.checkpoint_id])

/** What keeping the `last` newest of each namespace removes, walked plainly from each head (forests only). */
const referenceKeepingLast = (index: ReadonlyArray<IndexEntry>, last: number) => {
  const byPlace = new Map(index.map((entry) => [place(entry), entry]))
  const parentOf = (entry: IndexEntry) =>
    entry.parent_checkpoint_id === undefined
      ? undefined
      : byPlace.get(place({ checkpoint_ns: entry.checkpoint_ns, checkpoint_id: entry.parent_checkpoint_id }))
  const kept = new Set<IndexEntry>()
  for (const ns of new Set(index.map((entry) => entry.checkpoint_ns))) {
    const heads = index.filter((entry) => entry.checkpoint_ns === ns)
      .toSorted((a, b) => a.checkpoint_id < b.checkpoint_id ? 1 : -1)
      .slice(0, last)
    for (const head of heads) {
      kept.add(head)
      const chain: Array<IndexEntry> = []
      for (let at = parentOf(head); at !== undefined; at = parentOf(at)) chain.push(at)
      let depth = 0
      // LangGraph reads back only what the head does not store, never a trigger channel.
      for (const channel of head.channels.filter((c) => !head.stored.includes(c) && !Prune.isTrigger(c))) {
        const seed = chain.findIndex((entry) => entry.stored.includes(channel))
        depth = Math.max(
          depth,
          seed >= 0 ? seed + 1 : chain.findLastIndex((entry) => entry.written.includes(channel)) + 1
        )
      }
      for (const entry of chain.slice(0, depth)) kept.add(entry)
    }
  }
  return kept
}

/** Survivors of deleting the runs, each pointed at its nearest surviving ancestor (forests only). */
const referenceDeletingRuns = (index: ReadonlyArray<IndexEntry>, runs: ReadonlySet<string>) => {
  const byPlace = new Map(index.map((entry) => [place(entry), entry]))
  const gone = (entry: IndexEntry | undefined) => entry?.run_id !== undefined && runs.has(entry.run_id)
  const at = (entry: IndexEntry, id: string) =>
    byPlace.get(place({ checkpoint_ns: entry.checkpoint_ns, checkpoint_id: id }))
  return index.filter((entry) => !gone(entry) && entry.parent_checkpoint_id !== undefined)
    .filter((entry) => gone(at(entry, entry.parent_checkpoint_id!)))
    .map((entry) => {
      let parent = entry.parent_checkpoint_id
      while (parent !== undefined && gone(at(entry, parent))) parent = at(entry, parent)!.parent_checkpoint_id
      return { checkpoint_ns: entry.checkpoint_ns, checkpoint_id: entry.checkpoint_id, parent_checkpoint_id: parent }
    })
}

const ok = <A>(result: Result.Result<A, unknown>): A => {
  if (Result.isFailure(result)) throw new Error(`expected a plan, got ${JSON.stringify(result.failure)}`)
  return result.success
}

describe("prune plans", () => {
  it("keep the same checkpoints as a plain walk from each head, on random forests; no kept link dangles", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const next = random(seed)
      const index = forest(next, 1 + Math.floor(next() * 60))
      for (const last of [1, 2, 5]) {
        const plan = ok(Prune.keepingLast(index, last))
        const kept = referenceKeepingLast(index, last)
        expect(new Set(plan.removed), `seed ${seed}, last ${last}`).toEqual(
          new Set(index.filter((entry) => !kept.has(entry)))
        )
        const removed = new Set(plan.removed.map(place))
        expect(plan.relinked, `seed ${seed}, last ${last}`).toEqual(
          index.filter((entry) =>
            !removed.has(place(entry)) && entry.parent_checkpoint_id !== undefined &&
            removed.has(place({ ...entry, checkpoint_id: entry.parent_checkpoint_id }))
          ).map(({ checkpoint_id, checkpoint_ns }) => ({
            checkpoint_ns,
            checkpoint_id,
            parent_checkpoint_id: undefined
          }))
        )
      }
      const runs = new Set(["r1"])
      const plan = ok(Prune.deletingRuns(index, runs))
      expect(plan.removed, `seed ${seed}`).toEqual(index.filter((entry) => entry.run_id === "r1"))
      expect(plan.relinked, `seed ${seed}`).toEqual(referenceDeletingRuns(index, runs))
    }
  })

  it("answer a loop in the parent links instead of a plan", () => {
    const entry = (checkpoint_id: string, parent: string | undefined): IndexEntry => ({
      checkpoint_ns: "",
      checkpoint_id,
      parent_checkpoint_id: parent,
      channels: ["a"],
      stored: [],
      written: ["a"],
      run_id: "r1"
    })
    const pair = [entry("1", undefined), entry("2", "3"), entry("3", "2"), entry("4", "3")]
    for (const plan of [Prune.keepingLast(pair, 1), Prune.deletingRuns(pair, new Set(["r1"]))]) {
      expect(Result.isFailure(plan) && new Set(plan.failure.ids)).toEqual(new Set(["2", "3"]))
    }
    const self = [entry("1", "1")]
    expect(Result.isFailure(Prune.keepingLast(self, 1))).toBe(true)
  })

  it("plan a 60,000-checkpoint thread in well under 5 s", () => {
    const id = (i: number) => String(i).padStart(8, "0")
    const index: Array<IndexEntry> = Array.from({ length: 60_000 }, (_, i) => ({
      checkpoint_ns: "",
      checkpoint_id: id(i),
      parent_checkpoint_id: i === 0 ? undefined : id(i - 1),
      channels: ["messages", "step", "branch:to:model"],
      // A snapshot every 100 steps, as DeltaChannels store them; "log" written, never stored.
      stored: i % 100 === 0 ? ["messages", "step", "branch:to:model"] : ["step", "branch:to:model"],
      written: i >= 59_990 && i % 3 === 0 ? ["messages", "log"] : ["messages"],
      run_id: `run-${Math.floor(i / 3)}`
    }))
    index[59_999] = { ...index[59_999]!, channels: [...index[59_999]!.channels, "log"] }
    const start = performance.now()
    const kept = ok(Prune.keepingLast(index, 1))
    const retained = ok(Prune.keepingLast(index, 1000))
    const runs = ok(Prune.deletingRuns(index, new Set(Array.from({ length: 10_000 }, (_, i) => `run-${2 * i}`))))
    const elapsed = performance.now() - start
    expect(elapsed).toBeLessThan(5000)
    // The head's "messages" read back to the snapshot at 59,900; "log" (never stored) to its first write, 59,991.
    expect(kept.removed).toHaveLength(59_900)
    // The oldest of the 1000 kept (59,000) stores its snapshot itself: nothing older is read.
    expect(retained.removed).toHaveLength(59_000)
    expect(runs.removed).toHaveLength(30_000)
  })
})
