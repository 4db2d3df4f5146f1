/**
 * The storage format levels (`FormatLevel.LEVELS`): every stored type this
 * release writes belongs to a level, each level has a schema step that
 * raises a database to it and a fixture (read by `test/drivers/formats.test.ts`),
 * a process writes a level's encodings only once its store is at that level,
 * and the release's version is the package's.
 */
import { HumanMessage } from "@langchain/core/messages"
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph"
import { DeltaSnapshot } from "@langchain/langgraph-checkpoint"
import { Duration, Effect, Layer } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import * as FormatLevel from "../../src/FormatLevel.ts"
import { CheckpointError, CheckpointStorage, EffectCheckpointSaver, MemoryDriver } from "../../src/index.ts"
import * as Migrations from "../../src/internal/sql/Migrations.ts"
import * as Tables from "../../src/internal/sql/Tables.ts"
import * as StorageFormat from "../../src/internal/StorageFormat.ts"
import { VERSION } from "../../src/internal/Version.ts"
import { keyOf } from "../scenarios/encryption.ts"

const long = (label: string) => `${label}: `.padEnd(300, "lorem ipsum ")

/** Every encoding in a memory store's rows: each stored type, derived and compressed pieces. */
const storedTypes = (memory: MemoryDriver.MemoryDriver["Service"]) => {
  const types = new Set<string>()
  for (const thread of memory.threads.values()) {
    for (const namespace of thread.namespaces.values()) {
      for (const blobs of namespace.blobs.values()) for (const blob of blobs.values()) types.add(blob.type)
      for (const writes of namespace.writes.values()) for (const write of writes.values()) types.add(write.type)
    }
    for (const piece of thread.pieces.values()) {
      if (StorageFormat.derivedFrom(piece) !== undefined) types.add(StorageFormat.DERIVED)
      if (StorageFormat.isCompressed(piece)) types.add(StorageFormat.COMPRESSED_PIECE)
    }
    for (const namespace of thread.namespaces.values()) {
      for (const row of namespace.checkpoints.values()) {
        if (!Object.hasOwn(row.checkpoint, "id")) types.add(StorageFormat.HEADER_WITHOUT_ID)
      }
    }
  }
  return types
}

/** A saver over `memory`, a chat and raw values written through it: what the codec writes for them. */
const writeEverything = async (memory: MemoryDriver.MemoryDriver["Service"], encrypted: boolean, level?: number) => {
  const saver = EffectCheckpointSaver.fromLayer(CheckpointStorage.layerDriver(Effect.succeed(memory.driver)), {
    ...(encrypted ? { encryption: { keys: { k: keyOf(3) }, primary: "k" } } : {}),
    ...(level === undefined ? {} : { formatLevel: level })
  })
  const thread_id = `everything-${encrypted}`
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("model", (state) => ({ messages: [new HumanMessage(long(`reply ${state.messages.length}`))] }))
    .addEdge(START, "model")
    .addEdge("model", END)
    .compile({ checkpointer: saver })
  for (let turn = 0; turn < 3; turn++) {
    await graph.invoke({ messages: [new HumanMessage(long(`turn ${turn}`))] }, { configurable: { thread_id } })
  }
  const config = await saver.put(
    { configurable: { thread_id: `${thread_id}-raw`, checkpoint_ns: "" } },
    {
      v: 4,
      id: "1f0a",
      ts: new Date().toISOString(),
      channel_values: {
        bytes: new Uint8Array([1, 2, 3]),
        snapshot: new DeltaSnapshot([{ text: long("a") }, { text: long("b") }]),
        small: [1, 2, 3],
        record: { notes: long("r"), more: long("s") },
        text: long("t").repeat(2)
      },
      channel_versions: { bytes: 1, snapshot: 1, small: 1, record: 1, text: 1 },
      versions_seen: {}
    },
    { source: "input", step: -1, parents: {} },
    { bytes: 1, snapshot: 1, small: 1, record: 1, text: 1 }
  )
  await saver.putWrites(
    config,
    [["file", new Uint8Array([9])], ["items", [{ text: long("c") }, { text: long("d") }]]],
    "t"
  )
  await saver.close()
}

describe("storage format levels", () => {
  it("are numbered from 1, each adding encodings; the newest is the last", () => {
    expect(FormatLevel.LEVELS.map((level) => level.level)).toEqual(
      FormatLevel.LEVELS.map((_, i) => i + 1)
    )
    expect(FormatLevel.NEWEST_LEVEL).toBe(FormatLevel.LEVELS.length)
    for (const level of FormatLevel.LEVELS) expect(level.encodings.length).toBeGreaterThan(0)
  })

  it("give every stored type its level, and none to an encoding of a newer release", () => {
    const cases: ReadonlyArray<readonly [string, number | undefined]> = [
      ["json", 1],
      ["bytes", 1],
      ["msgpack", 1], // a custom serializer's type
      ["json+sealed", 1],
      [StorageFormat.SHARED, 1],
      [`${StorageFormat.SHARED}+sealed`, 1],
      [StorageFormat.FRAMED, 2],
      [`${StorageFormat.FRAMED}+sealed`, 2],
      ["shared-json/2", undefined],
      ["shared-json-derived/1+sealed", undefined],
      ["json/2", undefined]
    ]
    for (const [type, level] of cases) expect(FormatLevel.levelOf(type), type).toBe(level)
  })

  it("each have a schema step that raises a database to them, and a fixture", () => {
    const versions = new Set(Array.from({ length: Migrations.latest + 1 }, (_, v) => v))
    expect(Migrations.raisedLevel(versions)).toBe(FormatLevel.NEWEST_LEVEL)
    expect(Migrations.raisedLevel(new Set([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 100, 101, 102]))).toBe(1)
    for (const level of FormatLevel.LEVELS) {
      const fixture = join(import.meta.dirname, "..", "fixtures", "formats", `level-${level.level}`)
      expect(existsSync(join(fixture, "observations.json")), `a fixture of level ${level.level}`).toBe(true)
    }
  })

  it("are raised by the migrations' level steps, one a level above 1, each recording its level", () => {
    const levelSteps = Migrations.STEPS.filter((step) => step.kind === "level")
    expect(levelSteps.map((step) => step.level)).toEqual(FormatLevel.LEVELS.slice(1).map((level) => level.level))
    for (const step of Migrations.STEPS) expect(step.level !== undefined, `${step.version}`).toBe(step.kind === "level")
    const tables = Tables.make()
    for (const step of levelSteps) {
      expect(step.statements(tables).at(-1)).toContain(`VALUES (${step.level}, '${VERSION}')`)
    }
  })

  it("cover every type the codec writes (encrypted or not); a store at level 1 gets none of level 2", async () => {
    for (const encrypted of [false, true]) {
      const memory = MemoryDriver.makeInspectable()
      await writeEverything(memory, encrypted)
      const types = storedTypes(memory)
      for (const type of types) expect(FormatLevel.levelOf(type), type).toBeDefined()
      expect(types).toContain(StorageFormat.HEADER_WITHOUT_ID)
      expect(types).toContain(encrypted ? `${StorageFormat.COMPRESSED}+sealed` : StorageFormat.COMPRESSED)
      expect(types).toContain(encrypted ? `${StorageFormat.RECORD}+sealed` : StorageFormat.RECORD)
      // A sealed thread stores every piece whole.
      expect(types.has(StorageFormat.DERIVED)).toBe(!encrypted)
      expect(types.has(StorageFormat.COMPRESSED_PIECE)).toBe(!encrypted)

      const older = MemoryDriver.makeInspectable({ formatLevel: 1 })
      await writeEverything(older, encrypted, 1)
      expect([...storedTypes(older)].filter((type) => FormatLevel.levelOf(type) !== 1)).toEqual([])
    }
  })

  it("refuse a store above what a process supports, and a level this release does not know", async () => {
    const store = MemoryDriver.make()
    const pinned = CheckpointStorage.layerDriver(Effect.succeed(store)).pipe(
      Layer.provide(Layer.succeed(FormatLevel.Supported, 1))
    )
    const error = await Effect.runPromise(Effect.flip(Layer.build(pinned).pipe(Effect.scoped)))
    expect(error).toBeInstanceOf(CheckpointError.IncompatibleFormat)
    expect(error.message).toContain(`format level ${FormatLevel.NEWEST_LEVEL}`)
    expect(error.message).toContain("format levels up to 1")
    const unknown = await EffectCheckpointSaver.fromLayer(CheckpointStorage.layerMemory, { formatLevel: 9 }).ready()
      .then(() => undefined, (failure: unknown) => failure)
    expect(unknown).toBeInstanceOf(CheckpointError.InvalidConfig)
    expect(String(unknown)).toContain(`from 1 to ${FormatLevel.NEWEST_LEVEL}, got 9`)
  })

  it("a running process notices a raise: the newer starts writing it, the pinned stops", async () => {
    const store = MemoryDriver.makeInspectable({ formatLevel: 1 })
    const over = (supported: number) =>
      CheckpointStorage.layerDriver(Effect.succeed(store.driver)).pipe(
        Layer.provide(Layer.succeed(FormatLevel.Supported, supported)),
        Layer.provide(Layer.succeed(FormatLevel.Refresh, Duration.millis(20)))
      )
    const newer = EffectCheckpointSaver.fromLayer(over(2))
    const pinned = EffectCheckpointSaver.fromLayer(over(1))
    try {
      expect(await pinned.formatLevel()).toMatchObject({ level: 1, supported: 1 })
      expect(await newer.upgradeFormat()).toMatchObject({ level: 2, supported: 2 })
      await new Promise((resolve) => setTimeout(resolve, 100))
      const refused = await pinned.getTuple({ configurable: { thread_id: "t" } }).then(
        () => undefined,
        (failure: unknown) => failure
      )
      expect(refused).toBeInstanceOf(CheckpointError.IncompatibleFormat)
      expect(await newer.getTuple({ configurable: { thread_id: "t" } })).toBeUndefined()
    } finally {
      await Promise.all([newer.close(), pinned.close()])
    }
  })

  it("an import takes rows only in encodings its store is at: a level above, or a newer release's, is refused", async () => {
    const newest = MemoryDriver.makeInspectable()
    await writeEverything(newest, false)
    const rows = await Effect.runPromise(newest.driver.threadRows("everything-false"))
    expect(FormatLevel.encodingsOf(rows)).toContain(StorageFormat.DERIVED)
    const older = MemoryDriver.makeInspectable({ formatLevel: 2 })
    const importing = (changed: typeof rows) =>
      Effect.runPromise(
        CheckpointStorage.CheckpointStorage.use((storage) => Effect.flip(storage.importThread(changed))).pipe(
          Effect.provide(CheckpointStorage.layerDriver(Effect.succeed(older.driver)))
        )
      )
    const refused = await importing(rows)
    expect(refused).toBeInstanceOf(CheckpointError.InvalidInput)
    expect(refused.message).toMatch(/of storage format level [34], and this database is at level 2: raise it first/)
    expect(older.threads.has("everything-false"), "nothing written").toBe(false)

    const unknown = await importing({
      ...rows,
      blobs: rows.blobs.map((blob, i) => i === 0 ? { ...blob, type: "shared-json/9" } : blob)
    })
    expect(unknown.message).toContain("shared-json/9, an encoding of a newer release")

    // Raised, the store takes them, and they read back as written.
    await Effect.runPromise(older.driver.raiseFormat(FormatLevel.NEWEST_LEVEL))
    await Effect.runPromise(
      CheckpointStorage.CheckpointStorage.use((storage) => storage.importThread(rows)).pipe(
        Effect.provide(CheckpointStorage.layerDriver(Effect.succeed(older.driver)))
      )
    )
    const read = (driver: MemoryDriver.MemoryDriver["Service"]) => {
      const saver = EffectCheckpointSaver.fromLayer(CheckpointStorage.layerDriver(Effect.succeed(driver.driver)))
      return saver.getTuple({ configurable: { thread_id: "everything-false" } }).finally(() => saver.close())
    }
    expect((await read(older))?.checkpoint).toEqual((await read(newest))?.checkpoint)
  })

  it("a process pinned below level 3 reads a derived piece or a header without its id as IncompatibleFormat", async () => {
    const newest = MemoryDriver.makeInspectable({ formatLevel: 3 })
    await writeEverything(newest, false)
    const rows = await Effect.runPromise(newest.driver.threadRows("everything-false"))
    const withIds = {
      ...rows,
      checkpoints: rows.checkpoints.map((row) => ({
        ...row,
        checkpoint: StorageFormat.header(row) as typeof row.checkpoint
      }))
    }
    // Rows a level-3 process wrote, met by a process pinned at 2 before it read the raise.
    for (
      const [written, encoding] of [[rows, StorageFormat.HEADER_WITHOUT_ID], [withIds, StorageFormat.DERIVED]] as const
    ) {
      const store = MemoryDriver.makeInspectable({ formatLevel: 2 })
      await Effect.runPromise(store.driver.writeThread(written))
      const pinned = EffectCheckpointSaver.fromLayer(CheckpointStorage.layerDriver(Effect.succeed(store.driver)), {
        formatLevel: 2
      })
      try {
        const met = await pinned.getTuple({ configurable: { thread_id: "everything-false" } }).then(
          () => undefined,
          (error: unknown) => error
        )
        expect(met, encoding).toBeInstanceOf(CheckpointError.IncompatibleFormat)
        expect(String(met)).toContain(`${encoding} (format level 3)`)
      } finally {
        await pinned.close()
      }
    }
  })

  it("a process pinned below level 4 reads a record list, a compressed value or piece as IncompatibleFormat", async () => {
    const newest = MemoryDriver.makeInspectable()
    await writeEverything(newest, false)
    for (
      const [thread_id, encoding] of [
        ["everything-false", StorageFormat.COMPRESSED_PIECE],
        ["everything-false-raw", StorageFormat.COMPRESSED],
        ["everything-false-raw", StorageFormat.RECORD]
      ] as const
    ) {
      const rows = await Effect.runPromise(newest.driver.threadRows(thread_id))
      expect(FormatLevel.encodingsOf(rows)).toContain(encoding)
      // One encoding of level 4 at a time: other pieces as their texts, other channels' values left out.
      const pieces = encoding === StorageFormat.COMPRESSED_PIECE ? rows.pieces : rows.pieces.map((piece) => ({
        ...piece,
        bytes: StorageFormat.isCompressed(piece.bytes)
          ? StorageFormat.decompress(piece.bytes) as Uint8Array
          : piece.bytes
      }))
      const blobs = rows.blobs.filter((blob) =>
        encoding === StorageFormat.COMPRESSED_PIECE || FormatLevel.levelOf(blob.type) !== 4 || blob.type === encoding
      )
      const store = MemoryDriver.makeInspectable({ formatLevel: 3 })
      await Effect.runPromise(store.driver.writeThread({ ...rows, blobs, pieces }))
      const pinned = EffectCheckpointSaver.fromLayer(CheckpointStorage.layerDriver(Effect.succeed(store.driver)), {
        formatLevel: 3
      })
      try {
        const met = await pinned.getTuple({ configurable: { thread_id } }).then(
          () => undefined,
          (error: unknown) => error
        )
        expect(met, encoding).toBeInstanceOf(CheckpointError.IncompatibleFormat)
        expect(String(met)).toContain(`${encoding} (format level 4)`)
      } finally {
        await pinned.close()
      }
    }
  })

  it("a sealed frame of a later format is IncompatibleFormat; a damaged one is CorruptedCheckpoint", async () => {
    const memory = MemoryDriver.makeInspectable()
    await writeEverything(memory, true)
    const thread_id = "everything-true-raw"
    const rows = await Effect.runPromise(memory.driver.threadRows(thread_id))
    const reading = async (change: (bytes: Uint8Array) => Uint8Array) => {
      const blobs = rows.blobs.map((blob) =>
        blob.channel === "bytes" && blob.bytes !== undefined ? { ...blob, bytes: change(blob.bytes) } : blob
      )
      await Effect.runPromise(memory.driver.writeThread({ ...rows, blobs }))
      const saver = EffectCheckpointSaver.fromLayer(CheckpointStorage.layerDriver(Effect.succeed(memory.driver)), {
        encryption: { keys: { k: keyOf(3) }, primary: "k" }
      })
      try {
        return await saver.getTuple({ configurable: { thread_id } }).then(() => undefined, (error: unknown) => error)
      } finally {
        await saver.close()
      }
    }
    expect(await reading((bytes) => Uint8Array.of(2, ...bytes.subarray(1)))).toBeInstanceOf(
      CheckpointError.IncompatibleFormat
    )
    expect(await reading((bytes) => Uint8Array.of(...bytes.subarray(0, -1), bytes.at(-1)! ^ 1))).toBeInstanceOf(
      CheckpointError.CorruptedCheckpoint
    )
  })

  it("name this release as package.json does", () => {
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, "..", "..", "package.json"), "utf8"))
    expect(VERSION).toBe(pkg.version)
  })
})

describe("migration steps", () => {
  it("are forever: versions are added, never renumbered nor removed; the latest derives from them", () => {
    const versions = Migrations.STEPS.map((step) => step.version)
    expect(versions).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 100, 101, 102, 103, 104, 105, 1000, 1001, 1002])
    expect(Migrations.latest).toBe(105)
  })

  it("are LangGraph's below 100, this library's from it, features from 1000 (what older releases ignore)", () => {
    for (const step of Migrations.STEPS) {
      const range = step.version < 100 ? "langgraph" : step.version < 1000 ? "own" : "feature"
      const expected = step.kind === "index" || step.kind === "level" ? "own" : step.kind
      expect(range, `${step.version}`).toBe(expected)
    }
  })
})
