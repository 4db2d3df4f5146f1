/**
 * Encryption at rest: the scenarios on every driver; canaries searched for in
 * every byte PostgreSQL and PGlite store; each tamper case done with direct
 * SQL; key configuration.
 */
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages"
import { Command, END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph"
import { ConfigProvider, Effect, Layer, Stream, Tracer } from "effect"
import { randomBytes } from "node:crypto"
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Client } from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  CheckpointError,
  CheckpointStorage,
  EffectCheckpointSaver,
  Encryption,
  MemoryDriver,
  type SaverOptions,
  type StorageDriver
} from "../../src/index.ts"
import * as Postgres from "../../src/postgres.ts"
import { encryptionScenarios, keyOf } from "../scenarios/encryption.ts"
import { drivers } from "../support/drivers.ts"
import { checkpoint, metadata } from "../support/fixtures.ts"

const k1 = keyOf(1)
const encryption = { keys: { k1 }, primary: "k1" }

const matrix = drivers("encryption")
for (const driver of matrix.all) {
  encryptionScenarios(driver.name, () => ({
    open: async (options) => driver.saver(options)
  }))
}

const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error)

/** Text long enough to be stored as a piece of its own. */
const long = (text: string) => `${text} ${"with enough words around it to be a message worth a piece ".repeat(2)}`

const canaries = {
  message: `canary-message-${process.pid}`,
  tool: `canary-tool-${process.pid}`,
  write: `canary-write-${process.pid}`,
  metadata: `canary-metadata-${process.pid}`
}

/**
 * A conversation carrying each canary: in a user message, a tool result, a
 * pending write (the value of an interrupt) and a user metadata key.
 */
const writeCanaries = async (saver: EffectCheckpointSaver) => {
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("model", () => ({ messages: [new AIMessage(long("thinking"))] }))
    .addNode("review", () => {
      interrupt({ question: long(canaries.write) })
      return {}
    })
    .addEdge(START, "model")
    .addEdge("model", "review")
    .addEdge("review", END)
    .compile({ checkpointer: saver })
  const config = { configurable: { thread_id: "canary" }, metadata: { note: canaries.metadata } }
  await graph.invoke({
    messages: [
      new HumanMessage(long(canaries.message)),
      new AIMessage({ content: "", tool_calls: [{ id: "call-1", name: "lookup", args: {} }] }),
      new ToolMessage({ content: long(canaries.tool), tool_call_id: "call-1" })
    ]
  }, config)
  const state = await graph.getState(config)
  expect(state.tasks[0]?.interrupts[0]?.value).toEqual({ question: long(canaries.write) })
  await graph.invoke(new Command({ resume: "ok" }), config)
}

/** Each canary's count of rows (in any table of `schema`) whose text or bytes hold it. */
const searchSchema = async (url: string, schema: string) => {
  const client = new Client({ connectionString: url })
  await client.connect()
  try {
    const tables = await client.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = $1",
      [schema]
    )
    expect(tables.rows.length).toBeGreaterThanOrEqual(5)
    const found: Record<string, number> = {}
    for (const [what, canary] of Object.entries(canaries)) {
      found[what] = 0
      for (const { table_name } of tables.rows) {
        // A row as text shows bytea as hex.
        const result = await client.query<{ n: string }>(
          `SELECT count(*) AS n FROM "${schema}"."${table_name}" t WHERE position($1 in t::text) > 0 OR position($2 in t::text) > 0`,
          [canary, Buffer.from(canary).toString("hex")]
        )
        found[what] += Number(result.rows[0]!.n)
      }
    }
    return found
  } finally {
    await client.end()
  }
}

const filesOf = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesOf(path) : [path]
  })

/** Each canary's count of files under `dir` that hold it. */
const searchFiles = (dir: string) =>
  Object.fromEntries(
    Object.entries(canaries).map(([what, canary]) => [
      what,
      filesOf(dir).filter((file) => readFileSync(file).includes(Buffer.from(canary))).length
    ])
  )

const none = { message: 0, tool: 0, write: 0, metadata: 0 }
/** The user metadata key is stored only when asked for. */
const metadataFromConfig = ["run_id", "note"]

describe("canaries", () => {
  it("are nowhere in PostgreSQL's tables with encryption on, and in them without", async () => {
    for (
      // The plain one at level 3, where text is stored as it is: compressed, it would hide the canaries too.
      const [schema, options] of [["canary_sealed", { encryption, metadataFromConfig }], ["canary_plain", {
        metadataFromConfig,
        formatLevel: 3
      }]] as const
    ) {
      const saver = EffectCheckpointSaver.fromLayer(Postgres.layer({ url: matrix.databaseUrl(), schema }), options)
      await writeCanaries(saver)
      await saver.close()
    }
    expect(await searchSchema(matrix.databaseUrl(), "canary_sealed")).toEqual(none)
    const plain = await searchSchema(matrix.databaseUrl(), "canary_plain")
    for (const count of Object.values(plain)) expect(count).toBeGreaterThan(0)
  }, 60_000)

  it("are nowhere in PGlite's data directory with encryption on, and in it without", async () => {
    const found = []
    // The plain one at level 3, where text is stored as it is: compressed, it would hide the canaries too.
    const both = [{ encryption, metadataFromConfig }, { metadataFromConfig, formatLevel: 3 }]
    for (const options of both satisfies Array<SaverOptions>) {
      const dir = mkdtempSync(join(tmpdir(), "lce-canary-"))
      try {
        const saver = await EffectCheckpointSaver.fromConnString(`pglite:${dir}`, options)
        await writeCanaries(saver)
        await saver.close()
        // Reopened, the conversation is all there (with the key).
        const again = await EffectCheckpointSaver.fromConnString(`pglite:${dir}`, options)
        const tuple = await again.getTuple({ configurable: { thread_id: "canary" } })
        expect(JSON.stringify(tuple?.checkpoint.channel_values)).toContain(canaries.tool)
        await again.close()
        found.push(searchFiles(dir))
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }
    expect(found[0]).toEqual(none)
    for (const count of Object.values(found[1]!)) expect(count).toBeGreaterThan(0)
  }, 120_000)
})

describe("tampering (direct SQL on PostgreSQL)", () => {
  const schema = "tamper"
  let saver: EffectCheckpointSaver
  let client: Client
  let thread = 0
  beforeAll(async () => {
    saver = EffectCheckpointSaver.fromLayer(Postgres.layer({ url: matrix.databaseUrl(), schema }), { encryption })
    await saver.ready()
    client = new Client({ connectionString: matrix.databaseUrl() })
    await client.connect()
    await client.query(`SET search_path TO ${schema}`)
  })
  afterAll(async () => {
    await client.end()
    await saver.close()
  })

  const chat = () =>
    new StateGraph(MessagesAnnotation)
      .addNode("model", (state) => ({ messages: [new AIMessage(long(`reply ${state.messages.length}`))] }))
      .addEdge(START, "model")
      .addEdge("model", END)
      .compile({ checkpointer: saver })

  /** A thread of three turns; its checkpoints oldest first, and another thread to take rows from. */
  const conversation = async () => {
    const thread_id = `tamper-${++thread}`
    for (const id of [thread_id, `${thread_id}-other`]) {
      for (let turn = 0; turn < 3; turn++) {
        await chat().invoke({ messages: [new HumanMessage(long(`turn ${turn}`))] }, { configurable: { thread_id: id } })
      }
    }
    const rows = await client.query<{ checkpoint_id: string; messages: string }>(
      `SELECT checkpoint_id, checkpoint -> 'channel_versions' ->> 'messages' AS messages
       FROM checkpoints WHERE thread_id = $1 ORDER BY checkpoint_id`,
      [thread_id]
    )
    return { thread_id, checkpoints: rows.rows }
  }

  /**
   * `checkpoint_id` fails with a typed error naming it and no key; the first
   * checkpoint still reads. Read by a saver of its own, as another process
   * would: the writer keeps the pieces it wrote in memory, and reads them
   * from there.
   */
  const expectUnreadable = async (thread_id: string, checkpoint_id: string, first: string, detail: string | RegExp) => {
    const reader = EffectCheckpointSaver.fromLayer(Postgres.layer({ url: matrix.databaseUrl(), schema }), {
      encryption
    })
    const read = (id: string) => reader.getTuple({ configurable: { thread_id, checkpoint_ns: "", checkpoint_id: id } })
    try {
      const error = await failure(read(checkpoint_id))
      expect(error).toBeInstanceOf(CheckpointError.CorruptedCheckpoint)
      expect(error).toMatchObject({ thread_id, checkpoint_ns: "", checkpoint_id })
      expect(String(error)).toMatch(detail)
      expect(String(error) + JSON.stringify(error)).not.toContain(k1)
      expect((await read(first))?.checkpoint.id).toBe(first)
    } finally {
      await reader.close()
    }
  }

  const bytesOf = async (sql: string, params: Array<unknown>) =>
    Buffer.from((await client.query<{ blob: Buffer }>(sql, params)).rows[0]!.blob)

  /** A sealed list's trailer: where its frame starts and how long the frame is. */
  const frameOf = (list: Buffer) => {
    const length = list.at(-1)!
    return { start: list.length - Math.ceil((length + 1) / 16) * 16, length }
  }

  const blobCases: Record<
    string,
    { detail: string | RegExp; change: (list: Buffer, other: Buffer) => [string, Buffer] }
  > = {
    "an unencrypted row": {
      detail: "is not encrypted",
      change: (list) => ["shared-json/1", list.subarray(0, frameOf(list).start)]
    },
    "an unknown key id": {
      detail: `is sealed under the key "k9", which the keyring does not hold`,
      change: (list) => {
        const changed = Buffer.from(list)
        changed.write("k9", frameOf(list).start + 2)
        return ["shared-json/1+sealed", changed]
      }
    },
    "a bad tag": {
      detail: "does not decrypt",
      change: (list) => {
        const changed = Buffer.from(list)
        const { length, start } = frameOf(list)
        changed[start + length - 1]! ^= 1
        return ["shared-json/1+sealed", changed]
      }
    },
    "a truncated ciphertext": {
      // Cut off, its last byte no longer says where the seal starts: whatever it finds there does not open.
      detail: /is truncated|does not decrypt|is not a ciphertext this library writes/,
      change: (list) => ["shared-json/1+sealed", list.subarray(0, list.length - 16)]
    },
    "a hash swapped in the list": {
      detail: "does not decrypt",
      change: (list) => {
        const changed = Buffer.from(list)
        changed.copy(changed, 0, 16, 32)
        return ["shared-json/1+sealed", changed]
      }
    },
    "a row moved from another thread": {
      detail: "does not decrypt",
      change: (_, other) => ["shared-json/1+sealed", other]
    }
  }

  for (const [name, { change, detail }] of Object.entries(blobCases)) {
    it(`a channel value: ${name} is CorruptedCheckpoint; the rest of the thread reads`, async () => {
      const { checkpoints, thread_id } = await conversation()
      const latest = checkpoints.at(-1)!
      const list = await bytesOf(
        "SELECT blob FROM checkpoint_blobs WHERE thread_id = $1 AND channel = 'messages' AND version = $2",
        [thread_id, latest.messages]
      )
      const other = await bytesOf(
        `SELECT blob FROM checkpoint_blobs WHERE thread_id = $1 AND channel = 'messages' ORDER BY version DESC LIMIT 1`,
        [`${thread_id}-other`]
      )
      const [type, bytes] = change(list, other)
      await client.query(
        "UPDATE checkpoint_blobs SET type = $3, blob = $4 WHERE thread_id = $1 AND channel = 'messages' AND version = $2",
        [thread_id, latest.messages, type, bytes]
      )
      await expectUnreadable(thread_id, latest.checkpoint_id, checkpoints[0]!.checkpoint_id, detail)
    })
  }

  it("a channel value emptied (no bytes), sealed type or not, is CorruptedCheckpoint", async () => {
    for (const [type, detail] of [["shared-json/1+sealed", "has lost its ciphertext"], ["bytes", "is not encrypted"]]) {
      const { checkpoints, thread_id } = await conversation()
      const latest = checkpoints.at(-1)!
      await client.query(
        "UPDATE checkpoint_blobs SET type = $3, blob = NULL WHERE thread_id = $1 AND channel = 'messages' AND version = $2",
        [thread_id, latest.messages, type]
      )
      await expectUnreadable(thread_id, latest.checkpoint_id, checkpoints[0]!.checkpoint_id, detail!)
    }
  })

  it("a channel value moved to another version of its channel is CorruptedCheckpoint", async () => {
    const { checkpoints, thread_id } = await conversation()
    const latest = checkpoints.at(-1)!
    const earlier = checkpoints.findLast((c) => c.messages !== latest.messages && c.messages !== null)!
    await client.query(
      `UPDATE checkpoint_blobs SET blob = (
         SELECT blob FROM checkpoint_blobs WHERE thread_id = $1 AND channel = 'messages' AND version = $3
       ) WHERE thread_id = $1 AND channel = 'messages' AND version = $2`,
      [thread_id, latest.messages, earlier.messages]
    )
    await expectUnreadable(thread_id, latest.checkpoint_id, checkpoints[0]!.checkpoint_id, "does not decrypt")
  })

  it("a piece altered, replaced by plaintext, or swapped with another is CorruptedCheckpoint", async () => {
    for (
      const [change, detail] of [
        ["set_byte(blob, length(blob) - 1, get_byte(blob, length(blob) - 1) # 1)", "does not decrypt"],
        [`convert_to('"forged"', 'UTF8')`, "is not encrypted"],
        ["(SELECT p.blob FROM checkpoint_pieces p WHERE p.thread_id = $1 AND p.hash <> $2 LIMIT 1)", "does not decrypt"]
      ] as const
    ) {
      const { checkpoints, thread_id } = await conversation()
      const latest = checkpoints.at(-1)!
      // The last message's piece: only the latest checkpoint's list refers to it.
      const list = await bytesOf(
        "SELECT blob FROM checkpoint_blobs WHERE thread_id = $1 AND channel = 'messages' AND version = $2",
        [thread_id, latest.messages]
      )
      const hash = list.subarray(frameOf(list).start - 16, frameOf(list).start)
      const updated = await client.query(
        `UPDATE checkpoint_pieces SET blob = ${change} WHERE thread_id = $1 AND hash = $2`,
        [thread_id, hash]
      )
      expect(updated.rowCount).toBe(1)
      await expectUnreadable(thread_id, latest.checkpoint_id, checkpoints[0]!.checkpoint_id, detail)
    }
  })

  it("a pending write altered, unencrypted or moved to another checkpoint is CorruptedCheckpoint", async () => {
    for (
      const [set, detail] of [
        ["blob = set_byte(blob, length(blob) - 1, get_byte(blob, length(blob) - 1) # 1)", "does not decrypt"],
        [`type = 'json', blob = convert_to('"forged"', 'UTF8')`, "is not encrypted"],
        ["checkpoint_id = $3", "does not decrypt"]
      ] as const
    ) {
      const { checkpoints, thread_id } = await conversation()
      const written = await client.query<{ checkpoint_id: string; task_id: string; idx: number }>(
        "SELECT checkpoint_id, task_id, idx FROM checkpoint_writes WHERE thread_id = $1 ORDER BY checkpoint_id DESC LIMIT 1",
        [thread_id]
      )
      const write = written.rows[0]!
      // A checkpoint without writes of its own, to move the write to.
      const target = checkpoints.at(-1)!.checkpoint_id
      expect(write.checkpoint_id).not.toBe(target)
      await client.query(
        `UPDATE checkpoint_writes SET ${set} WHERE thread_id = $1 AND checkpoint_id = $2 AND $3::text IS NOT NULL AND task_id = $4 AND idx = $5`,
        [thread_id, write.checkpoint_id, target, write.task_id, write.idx]
      )
      const victim = set.startsWith("checkpoint_id") ? target : write.checkpoint_id
      await expectUnreadable(thread_id, victim, checkpoints[0]!.checkpoint_id, detail)
    }
  })

  it("metadata: a plaintext key changed, the seal removed or taken from another checkpoint is CorruptedCheckpoint", async () => {
    for (
      const [set, detail] of [
        ["metadata = jsonb_set(metadata, '{step}', '99')", "metadata does not decrypt"],
        ["metadata = metadata - '$sealed'", "metadata is not encrypted"],
        [
          `metadata = jsonb_set(metadata, '{$sealed}', (
             SELECT o.metadata -> '$sealed' FROM checkpoints o WHERE o.thread_id = $1 AND o.checkpoint_id <> $2 LIMIT 1
           ))`,
          "metadata does not decrypt"
        ],
        [
          `checkpoint = jsonb_set(checkpoint, '{channel_versions,messages}', to_jsonb($3::text))`,
          "metadata does not decrypt"
        ]
      ] as const
    ) {
      const { checkpoints, thread_id } = await conversation()
      const latest = checkpoints.at(-1)!
      const earlier = checkpoints.findLast((c) => c.messages !== latest.messages && c.messages !== null)!
      await client.query(`UPDATE checkpoints SET ${set} WHERE thread_id = $1 AND checkpoint_id = $2`, [
        thread_id,
        latest.checkpoint_id,
        ...(set.includes("$3") ? [earlier.messages] : [])
      ])
      await expectUnreadable(thread_id, latest.checkpoint_id, checkpoints[0]!.checkpoint_id, detail)
    }
  })
})

describe("keys", () => {
  const start = (options: Encryption.EncryptionOptions) =>
    failure(EffectCheckpointSaver.fromConnString("memory:", { encryption: options }))

  it("a malformed key, a missing primary or a bad id is InvalidConfig when the saver starts, never showing a key", async () => {
    const short = Buffer.alloc(16, 9).toString("base64")
    for (
      const [options, detail] of [
        [{ keys: { k1: short }, primary: "k1" }, `key "k1" is not the base64 of 32 bytes`],
        [{ keys: { k1: "not base64!" }, primary: "k1" }, `key "k1" is not the base64 of 32 bytes`],
        [{ keys: { k1 }, primary: "k2" }, `the primary key "k2" is not among the keys`],
        [{ keys: { "a key": k1 }, primary: "a key" }, "is not 1-64 letters"],
        [{ keys: {}, primary: "k1" }, "no key given"]
      ] as const
    ) {
      const error = await start(options)
      expect(error).toBeInstanceOf(CheckpointError.InvalidConfig)
      expect(String(error)).toContain(detail)
      expect(String(error)).not.toContain(short)
    }
  })

  it("a put for a thread whose key keyFor names but the ring lacks is InvalidConfig; nothing is written", async () => {
    const saver = await EffectCheckpointSaver.fromConnString("memory:", {
      encryption: { keys: { k1 }, primary: "k1", keyFor: (thread) => (thread === "lost" ? "gone" : "k1") }
    })
    const graph = new StateGraph(MessagesAnnotation).addNode("model", () => ({ messages: [new AIMessage("hi")] }))
      .addEdge(START, "model").compile({ checkpointer: saver })
    const error = await failure(
      graph.invoke({ messages: [new HumanMessage("x")] }, { configurable: { thread_id: "lost" } })
    )
    expect(error).toBeInstanceOf(CheckpointError.InvalidConfig)
    expect(String(error)).toContain(`"gone"`)
    expect(await saver.getTuple({ configurable: { thread_id: "lost" } })).toBeUndefined()
    await graph.invoke({ messages: [new HumanMessage("x")] }, { configurable: { thread_id: "kept" } })
    await saver.close()
  })

  it("no span, span attribute, event or failure the storage records carries a key", async () => {
    const bytes = randomBytes(32)
    const key = bytes.toString("base64")
    const recorded: Array<unknown> = []
    const recording = Tracer.make({
      span(options) {
        const span = Tracer.nativeTracer.span(options)
        const attribute = span.attribute.bind(span)
        const event = span.event.bind(span)
        const end = span.end.bind(span)
        span.attribute = (name, value) => {
          recorded.push([options.name, name, value])
          attribute(name, value)
        }
        span.event = (name, startTime, attributes) => {
          recorded.push([options.name, name, attributes])
          event(name, startTime, attributes)
        }
        span.end = (endTime, exit) => {
          recorded.push([options.name, String(exit)])
          end(endTime, exit)
        }
        return span
      }
    })
    const memory = MemoryDriver.make()
    const storage = (keys: Record<string, string>, primary: string) =>
      CheckpointStorage.layerDriver(Effect.succeed(memory)).pipe(
        Layer.provide(Encryption.layer({ keys, primary }))
      )
    const program = Effect.gen(function*() {
      const stored = yield* CheckpointStorage.CheckpointStorage.use((s) =>
        s.put({ thread_id: "traced" }, checkpoint({ messages: ["a secret value long enough"] }), metadata(), {
          messages: 1
        })
      )
      yield* CheckpointStorage.CheckpointStorage.use((s) =>
        Effect.gen(function*() {
          yield* s.putWrites(stored, [["messages", "a write"]], { task_id: "task" })
          yield* s.getTuple({ thread_id: "traced" })
          yield* Stream.runCollect(s.list({ thread_id: "traced" }))
          yield* s.copyThread("traced", "traced-copy")
          yield* Stream.runCollect(s.reencrypt())
        })
      )
    }).pipe(Effect.provide(storage({ k1: key }, "k1")))
    // A reader without the key fails, and its failure is recorded too.
    const denied = CheckpointStorage.CheckpointStorage.use((s) => s.getTuple({ thread_id: "traced" })).pipe(
      Effect.provide(storage({ k2: keyOf(9) }, "k2")),
      Effect.flip
    )
    await Effect.runPromise(program.pipe(Effect.withTracer(recording)))
    expect(await Effect.runPromise(denied.pipe(Effect.withTracer(recording)))).toBeInstanceOf(
      CheckpointError.CorruptedCheckpoint
    )
    const text = JSON.stringify(recorded, (_, value) => typeof value === "bigint" ? String(value) : value)
    expect(recorded.length).toBeGreaterThan(10)
    expect(text).toContain("CheckpointStorage.put")
    expect(text).toContain("CorruptedCheckpoint")
    for (const form of [key, bytes.toString("hex"), bytes.toString("base64url")]) expect(text).not.toContain(form)
  })

  it("layerConfig reads CHECKPOINT_ENCRYPTION_KEYS (or LANGGRAPH_AES_KEY) as Redacted; a bad setting is InvalidConfig", async () => {
    const read = (env: Record<string, string>) =>
      Effect.runPromise(
        Encryption.Encryption.use((service) => Effect.succeed(service.cipher.keyFor("any"))).pipe(
          Effect.provide(Encryption.layerConfig()),
          Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env))),
          Effect.result
        )
      )
    const k2 = keyOf(2)
    expect(await read({ CHECKPOINT_ENCRYPTION_KEYS: `k1:${k1}, k2:${k2}`, CHECKPOINT_ENCRYPTION_PRIMARY: "k2" }))
      .toMatchObject({ _tag: "Success", success: "k2" })
    expect(await read({ CHECKPOINT_ENCRYPTION_KEYS: `k1:${k1}` })).toMatchObject({ success: "k1" })
    expect(await read({ LANGGRAPH_AES_KEY: "x".repeat(32) })).toMatchObject({ success: "default" })
    const bad = await read({ CHECKPOINT_ENCRYPTION_KEYS: `k1:${k1.slice(4)}` })
    expect(bad).toMatchObject({ _tag: "Failure", failure: { _tag: "InvalidConfig" } })
    expect(JSON.stringify(bad)).not.toContain(k1.slice(4))
    expect(await read({})).toMatchObject({ _tag: "Failure", failure: { _tag: "InvalidConfig" } })
  })
})

describe("reencrypt on the adapter: awaited, iterated, or both, it runs once and to the end", () => {
  const k2 = keyOf(2)
  const k3 = keyOf(3)
  /** A memory storage that counts the threads it rewrites, with three threads sealed under k1 (one under k3). */
  const setUp = async () => {
    const memory = MemoryDriver.make()
    let rewrites = 0
    const counting: StorageDriver.StorageDriver = {
      ...memory,
      writeThread: (rows) =>
        Effect.suspend(() => {
          rewrites++
          return memory.writeThread(rows)
        })
    }
    const open = (options: Encryption.EncryptionOptions) =>
      EffectCheckpointSaver.fromLayer(CheckpointStorage.layerDriver(Effect.succeed(counting)), { encryption: options })
    const first = open({ keys: { k1, k3 }, primary: "k1", keyFor: (thread) => thread === "lost" ? "k3" : "k1" })
    for (const thread_id of ["a", "b", "lost"]) {
      await first.put({ configurable: { thread_id } }, checkpoint({ note: `of ${thread_id}` }), metadata(), { note: 1 })
    }
    await first.close()
    // k2 primary; k3 (the "lost" thread's) removed.
    const saver = open({ keys: { k1, k2 }, primary: "k2" })
    return { saver, open, rewrites: () => rewrites }
  }
  const readable = async (saver: EffectCheckpointSaver) =>
    (await Promise.all(["a", "b"].map((thread_id) => saver.getTuple({ configurable: { thread_id } }))))
      .map((tuple) => tuple?.checkpoint.channel_values.note)

  it("awaited, it resolves when every thread is done, to a summary; the old key can then go", async () => {
    const { open, rewrites, saver } = await setUp()
    const summary = await saver.reencrypt()
    expect(summary).toMatchObject({ total: 3, rewritten: 2, current: 0 })
    expect(summary.unreadable).toEqual([{ thread_id: "lost", detail: expect.stringContaining(`"k3"`) }])
    expect(rewrites()).toBe(2)
    await saver.close()
    const rotated = open({ keys: { k2 }, primary: "k2" })
    expect(await readable(rotated)).toEqual(["of a", "of b"])
    expect(await rotated.reencrypt()).toMatchObject({ total: 3, rewritten: 0, current: 2 })
    expect(rewrites()).toBe(2)
    await rotated.close()
  })

  it("iterated, it yields each thread's progress; awaited afterwards, or iterated again, it does not run again", async () => {
    const { rewrites, saver } = await setUp()
    const run = saver.reencrypt()
    const steps: Array<{ thread_id: string; outcome: string; done: number; total: number }> = []
    for await (const step of run) steps.push(step)
    expect(steps.map((step) => [step.thread_id, step.outcome]).toSorted()).toEqual([
      ["a", "rewritten"],
      ["b", "rewritten"],
      ["lost", "unreadable"]
    ])
    expect(steps.map((step) => `${step.done}/${step.total}`)).toEqual(["1/3", "2/3", "3/3"])
    expect(await run).toMatchObject({ total: 3, rewritten: 2, current: 0 })
    const again = []
    for await (const step of run) again.push(step)
    expect(again).toEqual(steps)
    expect(rewrites()).toBe(2)
    await saver.close()
  })

  it("leaving the loop early stops listening, not the run: awaiting it then finds every thread done", async () => {
    const { rewrites, saver } = await setUp()
    const run = saver.reencrypt()
    for await (const step of run) {
      expect(step.done).toBe(1)
      break
    }
    expect(await run).toMatchObject({ total: 3, rewritten: 2 })
    expect(rewrites()).toBe(2)
    await saver.close()
  })

  it("a run that cannot start rejects when awaited and throws when iterated, never as an unhandled rejection", async () => {
    const saver = await EffectCheckpointSaver.fromConnString("memory:")
    expect(await failure(saver.reencrypt())).toBeInstanceOf(CheckpointError.InvalidConfig)
    const iterated = (async () => {
      for await (const _ of saver.reencrypt()) expect.unreachable()
    })()
    expect(await failure(iterated)).toBeInstanceOf(CheckpointError.InvalidConfig)
    // Neither awaited nor iterated: it runs, and its failure is not an unhandled rejection.
    void saver.reencrypt()
    await new Promise((resolve) => setTimeout(resolve, 50))
    await saver.close()
  })
})
