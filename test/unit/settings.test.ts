/**
 * Bad configuration is an `InvalidConfig` when the layer is built (issue 36):
 * every duration and count option of the public API, given in code or by
 * environment variable, refused with a message naming the option and the
 * value, before anything connects; a retry window without end refused, so
 * `fromConnString` on an unreachable server settles; a key id given twice
 * refused by its id. No server: each check must fail before one is reached
 * (the URL below refuses connections, and a start that tried it would fail
 * otherwise, and later).
 */
import { ConfigProvider, Duration, Effect, Layer, Result, Schedule } from "effect"
import { describe, expect, it } from "vitest"
import * as Cockroach from "../../src/cockroach.ts"
import { CheckpointError, CheckpointStorage, EffectCheckpointSaver, Encryption, Retry } from "../../src/index.ts"
import * as Settings from "../../src/internal/Settings.ts"
import * as Pglite from "../../src/pglite.ts"
import * as Postgres from "../../src/postgres.ts"
import { checkpoint, metadata } from "../support/fixtures.ts"

/** Nothing listens on port 1: a layer that connected would fail with a `StorageFailure`, after retrying. */
const unreachable = "postgres://postgres@127.0.0.1:1/postgres"

/** Every malformed duration of the issue, with how a message shows it. */
const badDurations: ReadonlyArray<readonly [unknown, string]> = [
  [-1, "got -1"],
  [Number.NaN, "got NaN"],
  [{}, "got {}"],
  [{ seconds: Number.NaN }, "got { seconds: NaN }"],
  [[Number.NaN, 0], "got [NaN, 0]"],
  ["ten seconds", `got "ten seconds"`],
  ["5 parsecs", `got "5 parsecs"`],
  [Number.POSITIVE_INFINITY, "got Infinity"],
  ["Infinity", `got "Infinity"`],
  [Duration.infinity, "got Infinity"],
  [null, "got null"]
]

/** The build's failure, or `undefined` if it was built. */
const buildFailure = <A, E>(layer: Layer.Layer<A, E>) =>
  Effect.runPromise(Effect.scoped(Layer.build(layer)).pipe(Effect.flip, Effect.orElseSucceed(() => undefined)))

const invalid = (error: unknown, ...parts: ReadonlyArray<string>) => {
  expect(error).toBeInstanceOf(CheckpointError.InvalidConfig)
  for (const part of parts) expect((error as Error).message).toContain(part)
}

const checked = (options: object) => Effect.runSync(Effect.result(Settings.check("layer", options)))

describe("Settings.check: each duration option, once, at the boundary", () => {
  const positive = ["idleTimeout", "connectionTTL", "statementTimeout"] as const
  const zeroAllowed = [["retryWindow"], ["groupCommit", "window"]] as const
  const at = (path: ReadonlyArray<string>, value: unknown) =>
    path.length === 1 ? { [path[0]!]: value } : { [path[0]!]: { [path[1]!]: value } }
  const pathText = (path: ReadonlyArray<string>) => path.map((name) => `["${name}"]`).join("")

  it("refuses 0 where it means nothing, and every malformed value, naming the option and the value", () => {
    for (const option of positive) {
      for (const [value, shown] of [[0, "got 0"] as const, ...badDurations]) {
        const result = checked({ [option]: value })
        expect(Result.isFailure(result), `${option}: ${shown}`).toBe(true)
        if (Result.isFailure(result)) {
          invalid(result.failure, `["${option}"]`, shown, "a finite duration greater than 0")
        }
      }
    }
    for (const path of zeroAllowed) {
      for (const [value, shown] of badDurations) {
        const result = checked(at(path, value))
        expect(Result.isFailure(result), `${path.join(".")}: ${shown}`).toBe(true)
        if (Result.isFailure(result)) invalid(result.failure, pathText(path), shown, "a finite duration of 0 or more")
      }
    }
  })

  it("accepts every well-formed finite duration, decoded; 0 only for the retry and group-commit windows", () => {
    const given = [250, "5 seconds", Duration.seconds(2), { seconds: 1, milliseconds: 5 }, [1, 0], 7n] as const
    const millis = [250, 5000, 2000, 1005, 1000, 0.000007]
    for (const option of positive) {
      given.forEach((value, i) => {
        const result = checked({ [option]: value })
        expect(Result.isSuccess(result)).toBe(true)
        if (Result.isSuccess(result)) {
          expect(Duration.toMillis((result.success as Record<string, Duration.Duration>)[option]!)).toBe(millis[i])
        }
      })
    }
    for (const path of zeroAllowed) expect(Result.isSuccess(checked(at(path, 0)))).toBe(true)
    // Whatever is not a number or a duration is left as it was.
    const url = "postgres://u@h/db"
    expect(checked({ url, groupCommit: false, migrate: true })).toEqual(
      Result.succeed({ url, groupCommit: false, migrate: true })
    )
  })

  it("refuses counts that are not integers of 1 or more, and ports out of range", () => {
    const counts = [["poolSize"], ["pageSize"], ["maxMessageSize"], ["groupCommit", "concurrency"], [
      "groupCommit",
      "maxBatch"
    ]] as const
    for (const path of counts) {
      for (const value of [0, -3, 2.5, Number.NaN, Number.POSITIVE_INFINITY, "4"]) {
        const result = checked(at(path, value))
        expect(Result.isFailure(result), `${path.join(".")}: ${String(value)}`).toBe(true)
        if (Result.isFailure(result)) {
          invalid(result.failure, pathText(path), `got ${typeof value === "string" ? `"${value}"` : value}`)
        }
      }
      expect(Result.isSuccess(checked(at(path, 4)))).toBe(true)
    }
    for (const port of [0, 65536, 54.5]) expect(Result.isFailure(checked({ port }))).toBe(true)
    expect(Result.isSuccess(checked({ port: 5432 }))).toBe(true)
  })
})

describe("layers refuse bad options when built, before connecting or opening anything", () => {
  it("Postgres.layer, Cockroach.layer and layerSqlClient: at once, though the server is unreachable", async () => {
    const started = Date.now()
    for (
      const [option, value] of [
        ["statementTimeout", Number.NaN],
        ["idleTimeout", 0],
        ["connectionTTL", "5 parsecs"],
        [
          "retryWindow",
          Number.POSITIVE_INFINITY
        ],
        ["poolSize", 0],
        ["pageSize", 0],
        ["groupCommit", { window: {} }]
      ] as const
    ) {
      for (const layer of [Postgres.layer, Cockroach.layer]) {
        invalid(await buildFailure(layer({ url: unreachable, [option]: value })), "connect: invalid config", option)
      }
    }
    invalid(await buildFailure(Postgres.layerSqlClient({ url: unreachable, poolSize: Number.NaN })), `["poolSize"]`)
    invalid(await buildFailure(Postgres.layerSqlClient({ url: unreachable, idleTimeout: -5 })), `["idleTimeout"]`)
    // A connection attempt would have retried for the default 10 seconds.
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  it("Pglite.layer: before the database is opened or the directory taken", async () => {
    const started = Date.now()
    invalid(
      await buildFailure(Pglite.layer({ dataDir: "/nonexistent/never/made", statementTimeout: 0 })),
      `["statementTimeout"]`
    )
    invalid(await buildFailure(Pglite.layer({ groupCommit: { maxBatch: 0 } })), `["groupCommit"]["maxBatch"]`)
    // Opening a PGlite database takes about 3 seconds.
    expect(Date.now() - started).toBeLessThan(2_000)
    const snapshot = await Effect.runPromise(Effect.flip(Pglite.snapshot("/tmp", { maxBytes: Number.NaN })))
    invalid(snapshot, "snapshot: invalid config", `["maxBytes"]`)
  })
})

describe("the environment's settings: the same checks, naming the variable", () => {
  const configured = (settings: Record<string, string>) =>
    Postgres.layerConfig().pipe(
      Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ DATABASE_URL: unreachable, ...settings })))
    )

  it("refuses 0, negative, malformed and infinite durations, and pool sizes under 1", async () => {
    const variables = ["CHECKPOINT_IDLE_TIMEOUT", "CHECKPOINT_CONNECTION_TTL", "CHECKPOINT_STATEMENT_TIMEOUT"]
    for (const variable of variables) {
      for (const value of ["0 seconds", "-5 seconds", "ten seconds", "5 parsecs", "Infinity", "NaN seconds"]) {
        invalid(await buildFailure(configured({ [variable]: value })), "layerConfig", variable, JSON.stringify(value))
      }
    }
    for (const value of ["-5 seconds", "Infinity", "soon"]) {
      invalid(await buildFailure(configured({ CHECKPOINT_RETRY_WINDOW: value })), "CHECKPOINT_RETRY_WINDOW", value)
    }
    for (const value of ["0", "-2", "2.5", "many"]) {
      invalid(await buildFailure(configured({ CHECKPOINT_POOL_SIZE: value })), "CHECKPOINT_POOL_SIZE")
    }
  })

  it("a retry window of 0 seconds turns retries off: the unreachable server fails the first attempt", async () => {
    const failure = await buildFailure(configured({ CHECKPOINT_RETRY_WINDOW: "0 seconds" }))
    expect(failure).toBeInstanceOf(CheckpointError.StorageFailure)
    expect((failure as CheckpointError.StorageFailure).attempts).toBe(1)
  })
})

describe("the saver", () => {
  const settlesWithin = <A>(promise: Promise<A>, millis: number) =>
    Promise.race([
      promise.then(() => "resolved", (error: unknown) => error),
      new Promise((resolve) => setTimeout(() => resolve("still pending"), millis))
    ])

  it("fromConnString(unreachable, { retryWindow: Infinity }) rejects at once with InvalidConfig", async () => {
    for (
      const retryWindow of [
        Number.POSITIVE_INFINITY,
        "Infinity",
        Number.NaN,
        -1,
        "10 parsecs",
        1e308,
        "2 hours"
      ] as const
    ) {
      const outcome = await settlesWithin(
        EffectCheckpointSaver.fromConnString(unreachable, { retryWindow: retryWindow as Duration.Input }),
        2_000
      )
      invalid(outcome, "fromConnString: invalid config", `["retryWindow"]`)
    }
    const connection = await settlesWithin(
      EffectCheckpointSaver.fromConnString(unreachable, { connection: { statementTimeout: Number.NaN } }),
      2_000
    )
    invalid(connection, "connect: invalid config", `["statementTimeout"]`, "got NaN")
  })

  it("fromLayer: a bad retryWindow fails ready(), and every call, with InvalidConfig", async () => {
    const saver = EffectCheckpointSaver.fromLayer(CheckpointStorage.layerMemory, { retryWindow: {} as Duration.Input })
    invalid(await saver.ready().catch((error: unknown) => error), "fromLayer: invalid config", `["retryWindow"]`)
    invalid(await saver.getTuple({ configurable: { thread_id: "t" } }).catch((error: unknown) => error))
    await saver.close()
  })
})

describe("retention", () => {
  it("applyRetention refuses an inactiveFor that would delete every thread, and deletes nothing", async () => {
    const saver = EffectCheckpointSaver.fromLayer(CheckpointStorage.layerMemory)
    const config = { configurable: { thread_id: "kept" } }
    await saver.put(config, checkpoint({ a: 1 }), metadata({ source: "input", step: -1 }), { a: 1 })
    for (const inactiveFor of [Number.NaN, {}, 0, -1, "soon", "Infinity"] as const) {
      const error = await saver.applyRetention({ inactiveFor: inactiveFor as Duration.Input }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(CheckpointError.InvalidInput)
      expect((error as Error).message).toContain(`["inactiveFor"]`)
    }
    expect(await saver.getTuple(config)).toBeDefined()
    await saver.close()
  })

  it("layerRetention with a policy every round would refuse is an InvalidConfig when built", async () => {
    for (
      const policy of [{ inactiveFor: Number.NaN }, { keepLast: 0 }, { inactiveFor: "1 parsec" as Duration.Input }]
    ) {
      const layer = CheckpointStorage.layerRetention(policy, Schedule.spaced("1 hour")).pipe(
        Layer.provide(CheckpointStorage.layerMemory)
      )
      invalid(await buildFailure(layer), "layerRetention: invalid config")
    }
  })
})

describe("Retry.windowed", () => {
  const attempts = async (window: Duration.Input) => {
    let runs = 0
    await Effect.runPromise(
      Effect.suspend(() => {
        runs++
        return Effect.fail(new Error("down"))
      }).pipe(Effect.retry(Retry.windowed(window) as Schedule.Schedule<unknown, Error>), Effect.ignore)
    )
    return runs
  }

  it("a window of 0 retries nothing; a short one retries", async () => {
    expect(await attempts(0)).toBe(1)
    expect(await attempts("0 seconds")).toBe(1)
    expect(await attempts("100 millis")).toBeGreaterThan(1)
  })
})

describe("CHECKPOINT_ENCRYPTION_KEYS", () => {
  const key = (byte: number) => Buffer.alloc(32, byte).toString("base64")
  const read = (env: Record<string, string>) =>
    Effect.runPromise(
      Encryption.Encryption.use((service) => Effect.succeed(service.cipher.keyFor("any"))).pipe(
        Effect.provide(Encryption.layerConfig()),
        Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env))),
        Effect.result
      )
    )

  it("refuses a key id given twice, by its id, never showing a key", async () => {
    for (const keys of [`k1:${key(1)},k1:${key(2)}`, `k1:${key(1)}, k2:${key(3)}, k1 :${key(2)}`]) {
      // Also when LANGGRAPH_AES_KEY is there to fall back on.
      for (
        const env of [{ CHECKPOINT_ENCRYPTION_KEYS: keys }, {
          CHECKPOINT_ENCRYPTION_KEYS: keys,
          LANGGRAPH_AES_KEY: key(4)
        }]
      ) {
        const result = await read(env)
        expect(Result.isFailure(result)).toBe(true)
        if (Result.isFailure(result)) {
          invalid(result.failure, "encryption: invalid config", `"k1" is given more than once`)
          for (const byte of [1, 2, 3, 4]) expect(result.failure.message).not.toContain(key(byte))
        }
      }
    }
    expect(await read({ CHECKPOINT_ENCRYPTION_KEYS: `k1:${key(1)},k2:${key(2)}` })).toEqual(Result.succeed("k1"))
  })
})
