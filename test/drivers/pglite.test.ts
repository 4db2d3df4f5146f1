/**
 * The embedded PGlite driver: a database persisted in a directory surviving
 * the layer that wrote it (the storage contract and the graph scenarios run
 * on every driver in `storage.test.ts` and `graphs.test.ts`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CheckpointStorage, EffectCheckpointSaver } from "../../src/index.ts"
import * as Pglite from "../../src/pglite.ts"
import { checkpoint, metadata } from "../support/fixtures.ts"

const { CheckpointStorage: Storage } = CheckpointStorage

describe("a PGlite database in a directory", () => {
  it.live("keeps what one layer wrote for the next one, and for fromConnString", () =>
    Effect.gen(function*() {
      const dataDir = mkdtempSync(join(tmpdir(), "lce-pglite-"))
      try {
        const stored = yield* Storage.use((s) =>
          s.put({ thread_id: "kept" }, checkpoint({ a: [1, 2] }), metadata(), { a: 1 })
        ).pipe(
          Effect.provide(Pglite.layer({ dataDir }))
        )
        const read = yield* Storage.use((s) => s.getTuple({ thread_id: "kept" })).pipe(
          Effect.provide(Pglite.layer({ dataDir }))
        )
        expect(Option.getOrThrow(read).checkpoint.channel_values).toEqual({ a: [1, 2] })
        const saver = yield* Effect.promise(() => EffectCheckpointSaver.fromConnString(`pglite:${dataDir}`))
        const tuple = yield* Effect.promise(() => saver.getTuple({ configurable: stored }))
        yield* Effect.promise(() => saver.close())
        expect(tuple?.checkpoint.channel_values).toEqual({ a: [1, 2] })
      } finally {
        rmSync(dataDir, { recursive: true, force: true })
      }
    }), 60_000)

  it.live("fromConnString(\"pglite:\") is in memory and starts empty", () =>
    Effect.promise(async () => {
      const saver = await EffectCheckpointSaver.fromConnString("pglite:")
      try {
        expect(await saver.getTuple({ configurable: { thread_id: "kept" } })).toBeUndefined()
      } finally {
        await saver.close()
      }
    }), 60_000)
})
