/**
 * The LangGraph adapter: a `BaseCheckpointSaver` that runs the
 * {@link CheckpointStorage} service through a `ManagedRuntime`, so
 * `graph.compile({ checkpointer })` works for users who never write Effect.
 *
 * @since 0.1.0
 */
import type { RunnableConfig } from "@langchain/core/runnables"
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type DeltaChannelHistory,
  type PendingWrite,
  type SerializerProtocol
} from "@langchain/langgraph-checkpoint"
import { type Duration, Effect, Layer, Logger, ManagedRuntime, Option, Result, Stream } from "effect"
import {
  type CheckpointIdRef,
  configOf,
  defaultMetadataFromConfig,
  metadataWithConfig,
  nextVersion
} from "./Checkpoint.ts"
import { InvalidConfig } from "./CheckpointError.ts"
import {
  CheckpointStorage,
  type CronPage,
  type CronQuery,
  type CronRecord,
  type FormatReport,
  layerMemory,
  type ReencryptProgress,
  type ReencryptSummary,
  type RetentionPolicy,
  type RetentionReport,
  type RunQuery,
  type RunRecord,
  summarizeReencrypt,
  type ThreadPage,
  type ThreadQuery,
  type ThreadRecord,
  type ThreadState,
  type ThreadStorage,
  type ThreadUpdate
} from "./CheckpointStorage.ts"
import * as Encryption from "./Encryption.ts"
import * as FormatLevel from "./FormatLevel.ts"
import * as ConnectionString from "./internal/ConnectionString.ts"
import { explainMissing } from "./internal/MissingPackage.ts"
import * as Settings from "./internal/Settings.ts"
import { SafeJsonPlusSerializer } from "./JsonPlus.ts"
import * as Retry from "./Retry.ts"
import type * as Revival from "./Revival.ts"
import * as Serializer from "./Serializer.ts"
import * as Sharing from "./Sharing.ts"
import type { ConnectionSettings } from "./SqlOptions.ts"

/**
 * @since 0.1.0
 */
export interface SaverOptions {
  /**
   * The serializer for channel values and writes (default:
   * `SafeJsonPlusSerializer`, LangGraph's `JsonPlusSerializer` format with
   * safe revival). Another serializer decides its own revival; metadata is
   * always stored as JSON and read with safe revival.
   */
  readonly serde?: SerializerProtocol
  /**
   * Classes stored records may be revived into besides LangChain's messages,
   * or (`false`) to stop reviving, by serialized id (see `Revival.Allow`),
   * e.g. `{ "my_app/models/Quote": Quote }`. Any other record reads back as
   * inert plain data. Ignored when `serde` is given.
   */
  readonly allow?: Revival.Allow
  /**
   * How retryable storage failures are retried (default
   * `Retry.defaultPolicy`); a layer's own `retry` option wins.
   */
  readonly retry?: Retry.Policy
  /**
   * How long an operation keeps retrying (default `Retry.defaultWindow`, 10
   * seconds), e.g. `"45 seconds"` to ride out a managed database's failover;
   * `retry` wins over it. Finite: 0 turns retries off, and a malformed or
   * infinite window is an `InvalidConfig` when the saver starts.
   */
  readonly retryWindow?: Duration.Input
  /**
   * The connection pool of a `postgres://` or `cockroachdb://` connection
   * string (`fromConnString`): `poolSize`, `idleTimeout`, `connectionTTL`,
   * `statementTimeout`, `prepare`; or the `serverless` preset of
   * `langgraph-checkpoint-effect/postgres`. Other connection strings ignore it.
   */
  readonly connection?: ConnectionSettings
  /**
   * Whether arrays are stored with structural sharing (default `true`, see
   * `Sharing`). `false` keeps every value in the plain encoding LangGraph's
   * own savers read.
   */
  readonly sharing?: boolean
  /**
   * Encryption at rest (see `Encryption`): channel values, pending writes,
   * shared pieces and every metadata key but `plaintextMetadata` are sealed
   * with AES-256-GCM under `keys[primary]` (or `keyFor(thread_id)`), e.g.
   * `{ keys: { k1: process.env.CHECKPOINT_KEY }, primary: "k1" }`. A bad key
   * is `InvalidConfig` when the saver starts; a row that is not encrypted,
   * altered or moved, or sealed under a key not given, fails to read.
   */
  readonly encryption?: Encryption.EncryptionOptions
  /**
   * Keys of a call's config recorded in the metadata `put` stores, looked up
   * in `config.metadata`, then in `config.configurable` (strings, numbers and
   * booleans only; the checkpoint's own keys win). Default `["run_id"]`, which
   * `deleteForRuns` selects by; `[]` stores exactly what LangGraph's own
   * savers store. E.g. `["run_id", "assistant_id", "user_id"]` to filter
   * `list` by them.
   */
  readonly metadataFromConfig?: ReadonlyArray<string>
  /**
   * The highest storage format level this saver reads and writes (default
   * the newest this release knows; see Upgrading in the README). One level
   * down, it behaves as the release before: what it writes, that release
   * reads, and a store raised above it is refused with `IncompatibleFormat`.
   */
  readonly formatLevel?: number
}

/**
 * A `reencrypt` run: a promise of its summary that is also an async iterable
 * of its progress, thread by thread.
 *
 * @since 0.1.0
 */
export type ReencryptRun = Promise<ReencryptSummary> & AsyncIterable<ReencryptProgress>

/**
 * A LangGraph checkpointer (`BaseCheckpointSaver`) over this library's
 * storage: `graph.compile({ checkpointer: saver })` stores checkpoints with
 * structural sharing, optional encryption and safe revival, in memory,
 * PGlite, PostgreSQL or CockroachDB. Each call runs the
 * {@link CheckpointStorage} service and resolves or rejects as LangGraph's
 * own savers do; the lifecycle (`copyThread`, `prune`, `deleteForRuns`,
 * `applyRetention`, `reencrypt`) is there too.
 *
 * Build one with `fromConnString` (a URL), `fromLayer` (any storage layer)
 * or `make` (inside an Effect application); release it with `close()`.
 *
 * @since 0.1.0
 */
export class EffectCheckpointSaver extends BaseCheckpointSaver {
  readonly #runtime: ManagedRuntime.ManagedRuntime<CheckpointStorage, unknown>
  readonly #metadataFromConfig: ReadonlyArray<string>

  private constructor(
    runtime: ManagedRuntime.ManagedRuntime<CheckpointStorage, unknown>,
    serde: SerializerProtocol,
    metadataFromConfig: ReadonlyArray<string>
  ) {
    super(serde)
    this.#runtime = runtime
    this.#metadataFromConfig = metadataFromConfig
  }

  /**
   * A saver over any storage layer.
   *
   * **When to use**
   *
   * Use when the storage is configured in code: a driver's layer with
   * options a connection string cannot say (`Postgres.layerConfig`, an
   * application's `SqlClient` through `Postgres.layerClient`), or a test's
   * `layerMemory`.
   *
   * **Details**
   *
   * The layer is built on first use (call `ready()` to build it now) and
   * released by `close()`. `options` provide the serializer, retry policy,
   * structural sharing and encryption to the layer.
   *
   * **Gotchas**
   *
   * A layer that fails to build fails the first call, not this constructor:
   * `await saver.ready()` to learn of it at start.
   */
  static fromLayer<E>(layer: Layer.Layer<CheckpointStorage, E>, options: SaverOptions = {}): EffectCheckpointSaver {
    const serializer = Serializer.fromProtocol(options.serde ?? new SafeJsonPlusSerializer({ allow: options.allow }))
    // Checked when the layer is built: a bad `retryWindow` fails `ready()` (and `fromConnString`) before connecting.
    const retry = Layer.unwrap(
      Effect.map(Settings.check("fromLayer", { retryWindow: options.retryWindow }), (valid) => {
        const policy = Retry.policyOf({ retry: options.retry, retryWindow: valid.retryWindow })
        return policy === undefined ? Layer.empty : Layer.succeed(Retry.RetryPolicy, policy)
      })
    )
    const services = Layer.succeed(Serializer.Serializer, serializer).pipe(
      Layer.merge(retry),
      Layer.merge(options.sharing === undefined ? Layer.empty : Layer.succeed(Sharing.Enabled, options.sharing)),
      Layer.merge(
        options.formatLevel === undefined ? Layer.empty : Layer.succeed(FormatLevel.Supported, options.formatLevel)
      ),
      Layer.merge(options.encryption === undefined ? Layer.empty : Encryption.layer(options.encryption)),
      // What the storage warns of (a connection it retries) goes to stderr: stdout is the application's.
      Layer.merge(Layer.succeed(Logger.LogToStderr, true))
    )
    const runtime = ManagedRuntime.make(layer.pipe(Layer.provide(services)))
    return new EffectCheckpointSaver(
      runtime,
      serializer.protocol,
      options.metadataFromConfig ?? defaultMetadataFromConfig
    )
  }

  /**
   * A saver over the storage an Effect application already provides.
   *
   * **When to use**
   *
   * Use inside an Effect application that provides `CheckpointStorage`, to
   * run LangGraph graphs against the same storage (and its serializer,
   * encryption and pool).
   *
   * **Details**
   *
   * The saver runs its calls with the application's services as they were
   * when it was made.
   *
   * **Gotchas**
   *
   * The application's scope owns the storage: the saver's `close()`
   * releases nothing of it, and the saver stops working once that scope
   * closes.
   */
  static readonly make: Effect.Effect<EffectCheckpointSaver, never, CheckpointStorage> = Effect.map(
    Effect.context<CheckpointStorage>(),
    (context) => EffectCheckpointSaver.fromLayer(Layer.succeedContext(context))
  )

  /**
   * A ready saver from a connection string.
   *
   * **When to use**
   *
   * Use in a LangGraph application that does not use Effect: one line gives
   * a migrated, connected checkpointer.
   *
   * **Details**
   *
   * `"memory:"` keeps checkpoints in this process; `"pglite:"` in an
   * embedded PostgreSQL in memory and `"pglite:<directory>"` persisted in a
   * directory; `"postgres://…"` (or `"postgresql://…"`) uses PostgreSQL and
   * `"cockroachdb://…"` CockroachDB (see `ConnectionString`). Only the
   * chosen driver is loaded. SQL backends migrate their tables on start;
   * `options.connection` sizes the pool of a `postgres://` or
   * `cockroachdb://` URL.
   *
   * **Gotchas**
   *
   * Rejects with `InvalidConfig` for a scheme no driver serves, a driver
   * whose package is not installed, or a malformed number or duration among
   * the options (an infinite `retryWindow` included: see `Settings`), and
   * with the driver's error when it cannot start. A `pglite:<directory>` is
   * owned by one process at a time: another opener gets `DatabaseLocked`.
   * Call `close()` when done: it releases the pool, or the directory.
   */
  static async fromConnString(url: string, options: SaverOptions = {}): Promise<EffectCheckpointSaver> {
    // Before a driver loads: a retry window without end would keep an unreachable server from ever failing.
    const checked = Effect.runSync(
      Effect.result(Settings.check("fromConnString", { retryWindow: options.retryWindow }))
    )
    if (Result.isFailure(checked)) throw checked.failure
    const layer = await layerFromConnString(url, options.connection ?? {})
    if (layer instanceof InvalidConfig) throw layer
    const saver = EffectCheckpointSaver.fromLayer(layer, options)
    await saver.ready()
    return saver
  }

  /** Builds the storage layer now, surfacing connection or migration errors. */
  async ready(): Promise<void> {
    await this.#runtime.context()
  }

  /** Releases everything the layer acquired (pools, connections, fibers). */
  async close(): Promise<void> {
    await this.#runtime.dispose()
  }

  #run<A, E>(effect: Effect.Effect<A, E, CheckpointStorage>): Promise<A> {
    return this.#runtime.runPromise(effect)
  }

  /** Versions unique across forks of a thread (see `Checkpoint.nextVersion`). */
  override getNextVersion(current: number | undefined): number {
    return nextVersion(current)
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    // The contract: no thread, no tuple.
    if (config.configurable?.thread_id === undefined) return undefined
    return this.#run(
      CheckpointStorage.use((storage) => storage.getTuple(configurable(config))).pipe(Effect.map(Option.getOrUndefined))
    )
  }

  override async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const configurable = config.configurable ?? {}
    const stream = Stream.unwrap(CheckpointStorage.use((storage) =>
      Effect.succeed(storage.list({
        thread_id: configurable.thread_id,
        checkpoint_ns: configurable.checkpoint_ns,
        checkpoint_id: configurable.checkpoint_id,
        before: options.before?.configurable?.checkpoint_id,
        limit: options.limit,
        filter: options.filter
      }))
    ))
    yield* Stream.toAsyncIterableWith(stream, await this.#runtime.context())
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions
  ): Promise<RunnableConfig> {
    const stored = await this.#run(
      CheckpointStorage.use((storage) =>
        storage.put(
          configurable(config),
          checkpoint,
          metadataWithConfig(config, metadata, this.#metadataFromConfig),
          newVersions
        )
      )
    )
    return configOf(stored.thread_id, stored.checkpoint_ns ?? "", stored.checkpoint_id)
  }

  override async putWrites(
    config: RunnableConfig,
    writes: Array<PendingWrite>,
    taskId: string,
    taskPath?: string
  ): Promise<void> {
    await this.#run(CheckpointStorage.use((storage) =>
      storage.putWrites(
        configurable(config),
        writes,
        taskPath === undefined ? { task_id: taskId } : { task_id: taskId, task_path: taskPath }
      )
    ))
  }

  override async deleteThread(threadId: string): Promise<void> {
    await this.#run(CheckpointStorage.use((storage) => storage.deleteThread(threadId)))
  }

  /**
   * Copies a whole thread to `target` (see `CheckpointStorage.copyThread`);
   * with `latest`, only its latest state. Rejects with `ThreadExists` for an
   * existing target unless `replace`.
   */
  async copyThread(
    source: string,
    target: string,
    options: { readonly replace?: boolean; readonly latest?: boolean } = {}
  ): Promise<void> {
    await this.#run(CheckpointStorage.use((storage) => storage.copyThread(source, target, options)))
  }

  /**
   * Where a thread's bytes are, as stored (see
   * `CheckpointStorage.threadStorage`). Rejects with `ThreadNotFound` for a
   * thread without checkpoints.
   */
  async threadStorage(threadId: string): Promise<ThreadStorage> {
    return this.#run(CheckpointStorage.use((storage) => storage.threadStorage(threadId)))
  }

  /**
   * Shrinks threads: `keep_latest` keeps each namespace's latest checkpoint
   * and everything it needs; `delete` removes the threads.
   */
  async prune(threadIds: Array<string>, options: { readonly strategy: "keep_latest" | "delete" }): Promise<void> {
    await this.#run(CheckpointStorage.use((storage) => storage.prune(threadIds, options)))
  }

  /**
   * Removes the checkpoints and writes of the given runs (metadata `run_id`),
   * keeping the chain of the survivors consistent.
   */
  async deleteForRuns(runIds: Array<string>): Promise<void> {
    await this.#run(CheckpointStorage.use((storage) => storage.deleteForRuns(runIds)))
  }

  /**
   * Applies a retention policy once (see `CheckpointStorage.applyRetention`);
   * `CheckpointStorage.layerRetention` runs one on a schedule.
   */
  async applyRetention(policy: RetentionPolicy): Promise<RetentionReport> {
    return this.#run(CheckpointStorage.use((storage) => storage.applyRetention(policy)))
  }

  /**
   * The store's storage format level, read now, and the highest this saver
   * supports (see Upgrading in the README).
   */
  async formatLevel(): Promise<FormatReport> {
    return this.#run(CheckpointStorage.use((storage) => storage.formatLevel()))
  }

  /**
   * Raises the store's storage format level to `level` (default the highest
   * this saver supports), once every process on it runs a release that reads
   * it: the last step of a rolling deploy. Safe to repeat; there is no way
   * back (see `CheckpointStorage.upgradeFormat`).
   */
  async upgradeFormat(level?: number): Promise<FormatReport> {
    return this.#run(CheckpointStorage.use((storage) => storage.upgradeFormat(level)))
  }

  /**
   * A thread's record: its metadata, `created_at` and `updated_at` (see
   * `CheckpointStorage.getThread`); undefined when the thread has neither
   * checkpoints nor a record. The first record call enables records in the
   * store (SQL: a migration a 0.1.0 process on the database then refuses).
   */
  async getThread(threadId: string): Promise<ThreadRecord | undefined> {
    return this.#run(
      CheckpointStorage.use((storage) => storage.getThread(threadId)).pipe(Effect.map(Option.getOrUndefined))
    )
  }

  /**
   * Creates or changes a thread's record (see `CheckpointStorage.setThread`):
   * `put` replaces its metadata, `patch` merges into it. Rejects with
   * `InvalidInput` for metadata that is not a plain JSON object.
   */
  async setThread(threadId: string, update: ThreadUpdate): Promise<ThreadRecord> {
    return this.#run(CheckpointStorage.use((storage) => storage.setThread(threadId, update)))
  }

  /**
   * Creates a thread's record only if the thread has neither checkpoints
   * nor a record (see `CheckpointStorage.createThread`): the record, or
   * undefined when the thread exists (nothing changed). Of concurrent
   * creators of one id, exactly one gets the record.
   */
  async createThread(threadId: string, metadata?: Record<string, unknown>): Promise<ThreadRecord | undefined> {
    return this.#run(
      CheckpointStorage.use((storage) => storage.createThread(threadId, metadata)).pipe(
        Effect.map(Option.getOrUndefined)
      )
    )
  }

  /**
   * Sets what a thread's runs leave in its record: its status and (when
   * given) its values (see `CheckpointStorage.setThreadState`).
   */
  async setThreadState(threadId: string, state: ThreadState): Promise<void> {
    await this.#run(CheckpointStorage.use((storage) => storage.setThreadState(threadId, state)))
  }

  /**
   * Takes the thread's next writer epoch (see `CheckpointStorage.claimThread`):
   * pass it as `configurable.writer_epoch` with the new writer's runs, and an
   * older writer's next write fails with `ThreadConflict`, writing nothing.
   * With `run`, its record is stored and the thread is busy, at once.
   *
   * ```ts
   * const writer_epoch = await saver.claimThread("t")
   * await graph.invoke(input, { configurable: { thread_id: "t", writer_epoch } })
   * ```
   */
  async claimThread(threadId: string, run?: RunRecord): Promise<number> {
    return this.#run(CheckpointStorage.use((storage) => storage.claimThread(threadId, run)))
  }

  /** Stores a run's record, and with `thread` its thread's state, at once (see `CheckpointStorage.putRun`). */
  async putRun(run: RunRecord, thread?: ThreadState): Promise<void> {
    await this.#run(CheckpointStorage.use((storage) => storage.putRun(run, thread)))
  }

  /** A thread's run's record; undefined when it has none of that id. */
  async getRun(threadId: string, runId: string): Promise<RunRecord | undefined> {
    return this.#run(
      CheckpointStorage.use((storage) => storage.getRun(threadId, runId)).pipe(Effect.map(Option.getOrUndefined))
    )
  }

  /** A page of a thread's runs, newest first (see `CheckpointStorage.listRuns`). */
  async listRuns(threadId: string, query: RunQuery = {}): Promise<ReadonlyArray<RunRecord>> {
    return this.#run(CheckpointStorage.use((storage) => storage.listRuns(threadId, query)))
  }

  /** Removes a run's record: whether there was one. */
  async deleteRun(threadId: string, runId: string): Promise<boolean> {
    return this.#run(CheckpointStorage.use((storage) => storage.deleteRun(threadId, runId)))
  }

  /** Stores a cron's record (see `CheckpointStorage.putCron`). */
  async putCron(cron: CronRecord): Promise<void> {
    await this.#run(CheckpointStorage.use((storage) => storage.putCron(cron)))
  }

  /** A cron, undefined when there is none of that id. */
  async getCron(cronId: string): Promise<CronRecord | undefined> {
    return this.#run(
      CheckpointStorage.use((storage) => storage.getCron(cronId)).pipe(Effect.map(Option.getOrUndefined))
    )
  }

  /** A page of crons, oldest first, and how many match (see `CheckpointStorage.searchCrons`). */
  async searchCrons(query: CronQuery = {}): Promise<CronPage> {
    return this.#run(CheckpointStorage.use((storage) => storage.searchCrons(query)))
  }

  /** Removes a cron's record: whether there was one. */
  async deleteCron(cronId: string): Promise<boolean> {
    return this.#run(CheckpointStorage.use((storage) => storage.deleteCron(cronId)))
  }

  /** Moves a cron's next tick from `from` to `to`, only if it is `from` (see `CheckpointStorage.advanceCron`). */
  async advanceCron(cronId: string, from: Date, to: Date | undefined): Promise<boolean> {
    return this.#run(CheckpointStorage.use((storage) => storage.advanceCron(cronId, from, to)))
  }

  /**
   * Records whose metadata contains `query.metadata`, a page of them and the
   * count of all (see `CheckpointStorage.searchThreads`).
   */
  async searchThreads(query: ThreadQuery = {}): Promise<ThreadPage> {
    return this.#run(CheckpointStorage.use((storage) => storage.searchThreads(query)))
  }

  /**
   * Rewrites every thread under its current key (see
   * `CheckpointStorage.reencrypt`): after adding a new primary key, run it,
   * then remove the old key once no thread is `unreadable`.
   *
   * It starts when called, like any promise, and runs once whichever way it
   * is used: `await saver.reencrypt()` resolves when every thread is done,
   * to a summary (threads rewritten, already current, and unreadable with
   * why); `for await (const step of saver.reencrypt())` yields each
   * thread's progress as it is done (from the first, whenever iteration
   * starts), and ends when the run does. Leaving the loop early stops
   * listening, not the run; awaiting the same run afterwards resolves to its
   * summary without running it again.
   */
  reencrypt(): ReencryptRun {
    const steps: Array<ReencryptProgress> = []
    /** Iterators waiting for the next step, or the end. */
    const waiting = new Set<() => void>()
    const wake = () => {
      for (const resume of waiting) resume()
      waiting.clear()
    }
    let ended = false
    const stream = Stream.unwrap(CheckpointStorage.use((storage) => Effect.succeed(storage.reencrypt())))
    const run = this.#run(Stream.runForEach(stream, (step) =>
      Effect.sync(() => {
        steps.push(step)
        wake()
      }))).then(() => summarizeReencrypt(steps)).finally(() => {
        ended = true
        wake()
      })
    // A run only iterated (its iterators throw its failure) is no unhandled rejection.
    run.catch(() => undefined)
    const progress: AsyncIterable<ReencryptProgress> = {
      async *[Symbol.asyncIterator]() {
        for (let next = 0;; next++) {
          while (next >= steps.length && !ended) await new Promise<void>((resume) => waiting.add(resume))
          if (next >= steps.length) {
            await run
            return
          }
          yield steps[next]!
        }
      }
    }
    return Object.assign(run, progress)
  }

  override async getDeltaChannelHistory(options: {
    config: RunnableConfig
    channels: Array<string>
  }): Promise<Record<string, DeltaChannelHistory>> {
    return this.#run(
      CheckpointStorage.use((storage) => storage.getDeltaChannelHistory(configurable(options.config), options.channels))
    )
  }
}

/**
 * The `configurable` of a config, passed on unchecked: the service decodes it
 * and answers bad input with `InvalidConfig`.
 */
const configurable = (config: RunnableConfig): CheckpointIdRef => (config.configurable ?? {}) as CheckpointIdRef

/**
 * The storage layer a connection string names. Drivers load on demand, so
 * a memory saver never loads a database client.
 */
const layerFromConnString = async (
  url: string,
  connection: ConnectionSettings
): Promise<Layer.Layer<CheckpointStorage, unknown> | InvalidConfig> => {
  const parsed = ConnectionString.parse(url)
  if (Result.isFailure(parsed)) {
    return ConnectionString.unsupported(
      "fromConnString",
      parsed.failure,
      `"memory:", "pglite:", "pglite:<directory>", "postgres://…" or "cockroachdb://…"`
    )
  }
  const target = parsed.success
  switch (target._tag) {
    case "Memory":
      return layerMemory
    case "Postgres":
      return loadDriver(
        target.scheme,
        () => import("./postgres.ts"),
        (Postgres) => Postgres.layer({ ...connection, url: target.url })
      )
    case "Pglite":
      return loadDriver(
        target.scheme,
        () => import("./internal/pglite/Database.ts"),
        (Pglite) => Pglite.layer(target.dataDir === undefined ? {} : { dataDir: target.dataDir })
      )
    case "Cockroach":
      return loadDriver(
        target.scheme,
        () => import("./cockroach.ts"),
        (Cockroach) => Cockroach.layer({ ...connection, url: target.url })
      )
  }
}

/**
 * Loads a driver's module. A package it imports that cannot be found (a
 * peer left out, a pruned install) is an `InvalidConfig` that names the
 * package and how to install it, not a raw module-not-found error.
 */
const loadDriver = <Module>(
  scheme: string,
  load: () => Promise<Module>,
  layer: (module: Module) => Layer.Layer<CheckpointStorage, unknown>
): Promise<Layer.Layer<CheckpointStorage, unknown> | InvalidConfig> =>
  load().then(layer, (cause: unknown) => {
    const explained = explainMissing(
      cause,
      "fromConnString",
      (missing) => `"${scheme}" needs the package ${missing}, which cannot be found: install it with npm i ${missing}`
    )
    if (explained === undefined) throw cause
    return explained
  })
