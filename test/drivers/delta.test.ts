/**
 * What a DeltaChannel's history costs on PostgreSQL: LangGraph asks for it at
 * every turn, and each walk ends at the same snapshot over nearly the same
 * writes. A walk names the seed and the pieces this process holds, so the
 * next one sends neither again; counted on the wire (bytes read, round
 * trips), and the answers compared with a reader that holds nothing. A seed
 * that left memory between the walk and its decoding makes the walk run
 * again, naming nothing.
 */
import { PgClient } from "@effect/sql-pg"
import { AIMessage } from "@langchain/core/messages"
import type { RunnableConfig } from "@langchain/core/runnables"
import { DeltaSnapshot } from "@langchain/langgraph-checkpoint"
import { Effect, Layer, Redacted } from "effect"
import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import { makeCountingSocket } from "../../harness/countingSocket.ts"
import { admin } from "../../harness/databases.ts"
import { CheckpointStorage, EffectCheckpointSaver, MemoryDriver, type SaverOptions } from "../../src/index.ts"
import { FRAMED } from "../../src/internal/StorageFormat.ts"
import * as Postgres from "../../src/postgres.ts"
import type { StorageDriver } from "../../src/StorageDriver.ts"
import { keyOf } from "../scenarios/encryption.ts"
import { drivers } from "../support/drivers.ts"

/** A saver whose one connection counts what crosses the wire. */
const counted = (url: string, options: SaverOptions = {}) => {
  const socket = makeCountingSocket(url)
  const saver = EffectCheckpointSaver.fromLayer(
    Postgres.layerClient().pipe(
      Layer.provide(PgClient.layerFrom(PgClient.makeClient({ url: Redacted.make(url), stream: socket.open })))
    ),
    options
  )
  return { saver, socket }
}

const message = (i: number, tag: string) =>
  new AIMessage({ id: `m-${i}`, content: `${tag} ${i}: ${"lorem ipsum dolor sit amet ".repeat(12)}` })

/**
 * A thread as a DeltaChannel stores it: a snapshot of `seeded` messages at
 * the root, then `steps` checkpoints, each after a write of one message on
 * its parent, and each followed by `quiet` checkpoints that write nothing.
 * Fixed ids, so that it can be written again with other bytes.
 */
const populate = async (
  saver: EffectCheckpointSaver,
  thread_id: string,
  seeded: number,
  steps: number,
  tag: string,
  quiet = 0
) => {
  let config: RunnableConfig = { configurable: { thread_id, checkpoint_ns: "" } }
  for (let step = 0; step <= steps; step++) {
    const snapshot = step === 0
    if (!snapshot) await saver.putWrites(config, [["messages", [message(seeded + step, tag)]]], `task-${step}`)
    for (let k = 0; k <= quiet; k++) {
      config = await saver.put(
        config,
        {
          v: 4,
          id: `1f0${String(step).padStart(5, "0")}-${String(k).padStart(4, "0")}-6000-8000-000000000000`,
          ts: new Date(0).toISOString(),
          channel_values: snapshot && k === 0
            ? { messages: new DeltaSnapshot(Array.from({ length: seeded }, (_, i) => message(i, tag))) }
            : {},
          channel_versions: { messages: step + 1 },
          versions_seen: {}
        },
        { source: "loop", step, parents: {} },
        snapshot && k === 0 ? { messages: 1 } : {}
      )
    }
  }
  return config
}

/** A history as plain JSON, to compare answers whatever their classes. */
const plain = (history: unknown) => JSON.parse(JSON.stringify(history)) as unknown

describe("DeltaChannel history on PostgreSQL", () => {
  // The file's PostgreSQL store: savers over it write, and a saver over a counting connection to it reads.
  const { databaseUrl, postgres } = drivers("delta")

  it.each(
    [
      ["plain", {}],
      ["encrypted", { encryption: { keys: { k1: keyOf(1) }, primary: "k1" } }]
    ] as const
  )(
    "%s: a walk after the first sends neither the seed nor the pieces it read again, in one round trip",
    async (name, options: SaverOptions) => {
      const writer = postgres.saver(options)
      const { saver: reader, socket } = counted(databaseUrl(), options)
      const fresh = postgres.saver(options)
      try {
        const config = await populate(writer, `walks-${name}`, 200, 40, "first")
        const ask = (saver: EffectCheckpointSaver) =>
          saver.getDeltaChannelHistory({ config, channels: ["messages"] }).then(plain)
        let [bytes, trips] = [socket.bytesRead(), socket.roundTrips()]
        const first = await ask(reader)
        const firstBytes = socket.bytesRead() - bytes
        ;[bytes, trips] = [socket.bytesRead(), socket.roundTrips()]
        const second = await ask(reader)
        const secondBytes = socket.bytesRead() - bytes
        expect(socket.roundTrips() - trips).toBe(1)
        // The seed is ~75 KB and the writes' messages ~14 KB (~70 KB in all
        // compressed, unsealed): the first walk brings them; the second only
        // the rows, their hashes and a digest.
        expect(firstBytes).toBeGreaterThan(60_000)
        expect(secondBytes).toBeLessThan(firstBytes / 3)
        // Rows that seed nothing send no header or metadata: what is left is ~400 B a row (with them,
        // 25 KB unsealed and 29 KB sealed).
        expect(secondBytes).toBeLessThan(21_000)
        expect(second).toEqual(first)
        expect(second).toEqual(await ask(fresh))
        const history = (second as Record<string, { writes: Array<unknown>; seed: { value: Array<unknown> } }>).messages
        expect(history?.writes).toHaveLength(40)
        expect(history?.seed.value).toHaveLength(200)
      } finally {
        await Promise.all([writer.close(), reader.close(), fresh.close()])
      }
    }
  )

  it("a walk sends no row for the checkpoints on its way that hold neither a value nor a write of its channels", async () => {
    const writer = postgres.saver()
    const { saver: reader, socket } = counted(databaseUrl())
    try {
      // The same history, with two checkpoints that write nothing after each step in the second.
      const dense = await populate(writer, "dense", 50, 20, "rows")
      const sparse = await populate(writer, "sparse", 50, 20, "rows", 2)
      const walk = async (config: RunnableConfig) => {
        const before = socket.bytesRead()
        const answer = plain(await reader.getDeltaChannelHistory({ config, channels: ["messages"] }))
        return { answer, bytes: socket.bytesRead() - before }
      }
      // The first walks bring the seeds and the pieces; the second ones only their rows.
      await walk(dense)
      await walk(sparse)
      const [a, b] = [await walk(dense), await walk(sparse)]
      expect(b.answer).toEqual(a.answer)
      expect((a.answer as { messages: { writes: Array<unknown> } }).messages.writes).toHaveLength(20)
      // 40 more checkpoints on the way, none of them sent (each took ~200 B).
      expect(b.bytes - a.bytes).toBeLessThan(40 * 50)
    } finally {
      await Promise.all([writer.close(), reader.close()])
    }
  })

  it("a snapshot is a framed list: its messages are pieces, stored once with the writes that hold them too", async () => {
    const saver = postgres.saver()
    try {
      const config = await populate(saver, "framed", 30, 3, "framed")
      const stored = await admin(async (client) => ({
        types: (await client.query(`SELECT type FROM checkpoint_blobs WHERE thread_id = 'framed'`)).rows,
        pieces: (await client.query(`SELECT count(*)::int AS n FROM checkpoint_pieces WHERE thread_id = 'framed'`))
          .rows[0].n
      }), databaseUrl())
      expect(stored.types).toEqual([{ type: FRAMED }])
      // The snapshot's 30 messages, the 3 written after it, and the snapshot's frame.
      expect(stored.pieces).toBe(34)
      const history = (await saver.getDeltaChannelHistory({ config, channels: ["messages"] })).messages
      expect(history?.seed).toBeInstanceOf(DeltaSnapshot)
      expect(plain(history?.seed)).toEqual(
        plain(new DeltaSnapshot(Array.from({ length: 30 }, (_, i) => message(i, "framed"))))
      )
    } finally {
      await saver.close()
    }
  })

  it("a thread written again with other bytes under the same ids and versions reads back as written", async () => {
    const writer = postgres.saver()
    const { saver: reader } = counted(databaseUrl())
    try {
      const config = await populate(writer, "again", 50, 5, "before")
      const ask = () => reader.getDeltaChannelHistory({ config, channels: ["messages"] }).then(plain)
      await ask()
      await ask()
      // The same ids and versions, other messages: what the reader holds is stale.
      await writer.deleteThread("again")
      await populate(writer, "again", 50, 5, "after")
      const after = JSON.stringify(await ask())
      // The seed's first message and the last write's.
      expect(after).toContain("after 0:")
      expect(after).toContain("after 55:")
      expect(after).not.toContain("before")
    } finally {
      await Promise.all([writer.close(), reader.close()])
    }
  })
})

describe("DeltaChannel history, a seed the walk left out", () => {
  it("when the process no longer holds it, the walk runs again naming nothing", async () => {
    const inner = MemoryDriver.make()
    const named: Array<ReadonlyArray<string>> = []
    let forget = false
    // As the SQL driver does: each blob with its digest, its bytes left out when the caller names it.
    // Forgetting, the driver leaves out a seed under a digest the caller never held.
    const driver: StorageDriver = {
      ...inner,
      ancestors: (location, channels, known) =>
        inner.ancestors(location, channels, known).pipe(Effect.map(({ chain, loopsAt }) => {
          named.push(known.blobs)
          return {
            loopsAt,
            chain: chain.map((stored) => ({
              ...stored,
              blobs: stored.blobs.map((blob) => {
                if (blob.bytes === undefined) return blob
                const digest = createHash("md5").update(blob.bytes).digest("hex")
                if (forget && known.blobs.length > 0) return { ...blob, digest: "gone", bytes: undefined }
                return known.blobs.includes(digest) ? { ...blob, digest, bytes: undefined } : { ...blob, digest }
              })
            }))
          }
        }))
    }
    const saver = EffectCheckpointSaver.fromLayer(CheckpointStorage.layerDriver(Effect.succeed(driver)))
    try {
      // A snapshot of 80 messages: its list of hashes is large enough for the walk to keep.
      const config = await populate(saver, "forgot", 80, 5, "kept")
      const ask = () => saver.getDeltaChannelHistory({ config, channels: ["messages"] }).then(plain)
      const first = await ask()
      expect(await ask()).toEqual(first)
      forget = true
      expect(await ask()).toEqual(first)
      // The first walk named nothing, the second the seed it read; the third named it, found it gone, and ran again.
      expect(named.map((digests) => digests.length)).toEqual([0, 1, 1, 0])
    } finally {
      await saver.close()
    }
  })
})
