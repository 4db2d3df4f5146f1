/**
 * copyThread, prune and applyRetention of a 1,000-step thread (this library only):
 * time, round trips and live data after each.
 */
import { PgClient } from "@effect/sql-pg"
import { Layer, Redacted } from "effect"
import { makeCountingSocket } from "../../harness/countingSocket.ts"
import { EffectCheckpointSaver } from "../../src/index.ts"
import * as Postgres from "../../src/postgres.ts"
import { liveBytes } from "../support/databases.ts"
import { mib, ms } from "../support/measure.ts"
import { ChatThread, time } from "../support/workload.mjs"
import type { Run } from "./context.ts"

export const lifecycle = async (run: Run): Promise<void> => {
  const { n, databases, sections, log } = run
  const size = n(1000)
  log(`copy and prune of a ${size}-step thread (this library; the official saver has neither)`)
  const { url, drop } = await databases.create("lifecycle")
  const socket = makeCountingSocket(url)
  const saver = EffectCheckpointSaver.fromLayer(
    Postgres.layerClient().pipe(
      Layer.provide(
        PgClient.layerFrom(
          PgClient.makeClient({ url: Redacted.make(url), stream: socket.open, maxMessageSize: 1 << 30 })
        )
      )
    )
  )
  const thread = await new ChatThread(saver, "long").start()
  for (let step = 0; step < size; step++) await thread.superStep()
  const measure = async (f: () => Promise<unknown>) => {
    const trips = socket.roundTrips()
    const elapsed = await time(f)
    return { elapsed, trips: socket.roundTrips() - trips, bytes: await liveBytes(url) }
  }
  const stored = await liveBytes(url)
  const copied = await measure(() => saver.copyThread("long", "copy"))
  const pruned = await measure(() => saver.prune(["copy"], { strategy: "keep_latest" }))
  const retained = await measure(() => saver.applyRetention({ keepLast: 10 }))
  await saver.close()
  await drop()
  sections.push([
    `### Thread lifecycle: a ${size}-step chat thread (this library only)`,
    "",
    "| operation | time ms | round trips | live data after, MiB |",
    "|---|---:|---:|---:|",
    `| the thread as written | | | ${mib(stored)} |`,
    `| copyThread to a new thread | ${ms(copied.elapsed)} | ${copied.trips} | ${mib(copied.bytes)} |`,
    `| prune the copy, keep_latest | ${ms(pruned.elapsed)} | ${pruned.trips} | ${mib(pruned.bytes)} |`,
    `| applyRetention({ keepLast: 10 }) over both threads | ${ms(retained.elapsed)} | ${retained.trips} | ${
      mib(retained.bytes)
    } |`,
    "",
    "Live data is the checkpoint documents, blobs and writes as stored (compressed where PostgreSQL",
    "compresses them). Operations run in one transaction holding the thread; each statement is one",
    "round trip, BEGIN and COMMIT included."
  ].join("\n"))
}
