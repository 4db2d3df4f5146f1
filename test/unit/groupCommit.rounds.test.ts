/**
 * Group commit's batching (`sql/GroupCommit.ts`) over statements that only
 * record what they are given: a batch goes in rounds, each thread's calls in
 * order and at most one a round, and a failing statement is split in halves.
 */
import { Deferred, Effect } from "effect"
import { describe, expect, it } from "vitest"
import { StorageFailure } from "../../src/CheckpointError.ts"
import type { WritesCall } from "../../src/internal/sql/Calls.ts"
import * as GroupCommit from "../../src/internal/sql/GroupCommit.ts"

const call = (thread_id: string, n: number): WritesCall => ({
  checkpoint: { thread_id, checkpoint_ns: "", checkpoint_id: `c${n}` },
  writes: [],
  pieces: []
})
const label = (c: WritesCall) => `${c.checkpoint.thread_id}${c.checkpoint.checkpoint_id}`

/**
 * Sends `calls` at once while the one slot is held by a first call: the rest
 * gather in one batch. What each statement was given, in order.
 */
const batched = (calls: ReadonlyArray<WritesCall>, fails: (many: ReadonlyArray<string>) => boolean) =>
  Effect.gen(function*() {
    const release = yield* Deferred.make<void>()
    const sent: Array<{ readonly kind: "many" | "one"; readonly calls: ReadonlyArray<string> }> = []
    const statements: GroupCommit.Batches = {
      putWrites: (many) =>
        Effect.suspend(() => {
          const labels = many.map(label)
          sent.push({ kind: "many", calls: labels })
          return fails(labels)
            ? Effect.fail(new StorageFailure({ operation: "putWrites", retryable: false, cause: "x" }))
            : Effect.succeed(many.map(() => "stored" as const))
        }),
      putWritesOne: (one) =>
        Effect.suspend(() => {
          sent.push({ kind: "one", calls: [label(one)] })
          return Effect.as(label(one) === "holdc0" ? Deferred.await(release) : Effect.void, "stored" as const)
        }),
      put: () => Effect.die("unused"),
      putOne: () => Effect.die("unused")
    }
    const group = GroupCommit.make(statements, { concurrency: 1, maxBatch: 64 })
    yield* Effect.all([
      Effect.forEach([call("hold", 0), ...calls], (c) => group.putWrites(c), { concurrency: "unbounded" }),
      Effect.sleep("50 millis").pipe(Effect.andThen(Deferred.succeed(release, undefined)))
    ], { concurrency: "unbounded" })
    return sent.slice(1)
  })

describe("group commit's rounds", () => {
  it("a batch's calls go in rounds: each thread at most once a round, in the order it called", async () => {
    const calls = [call("a", 1), call("a", 2), call("b", 1), call("a", 3), call("b", 2), call("c", 1)]
    const sent = await Effect.runPromise(batched(calls, () => false))
    expect(sent).toEqual([
      { kind: "many", calls: ["ac1", "bc1", "cc1"] },
      { kind: "many", calls: ["ac2", "bc2"] },
      { kind: "one", calls: ["ac3"] }
    ])
  })

  it("a failing statement of several calls is split in halves, down to each call alone", async () => {
    const calls = [call("a", 1), call("b", 1), call("c", 1), call("d", 1)]
    const sent = await Effect.runPromise(batched(calls, (many) => many.length > 2 || many.includes("ac1")))
    expect(sent).toEqual([
      { kind: "many", calls: ["ac1", "bc1", "cc1", "dc1"] },
      { kind: "many", calls: ["ac1", "bc1"] },
      { kind: "one", calls: ["ac1"] },
      { kind: "one", calls: ["bc1"] },
      { kind: "many", calls: ["cc1", "dc1"] }
    ])
  })
})
