/**
 * Runs as cluster work, on Effect's own engine (`effect/cluster`): a thread
 * is an entity, sharded by thread id, so one runner at a time runs a
 * thread's runs whichever replica took the request, and every replica can
 * start, follow and cancel them.
 *
 * The `Thread` entity's messages:
 *
 * - `Start` (volatile): admits a run as its `multitask_strategy` says
 *   (`reject` refuses it while another is pending or running; `interrupt`
 *   and `rollback` stop that one first; `enqueue` queues it), records it
 *   `pending`, and sends the thread an `Execute` before it answers: once a
 *   replica answered "created", the run happens even if the replica dies
 *   the next millisecond.
 * - `Execute` (persisted, keyed by run id): runs the graph, one run at a
 *   time in the order they were admitted, through the embed server of the
 *   runner it lands on (its events LangGraph's, byte for byte) into a log of
 *   that runner's. It claims the thread first (`claimThread`): a runner that
 *   lost the thread but runs on (a split) cannot write another step into its
 *   history. Its config carries the run id as metadata, so when the runner
 *   dies and the message is delivered again elsewhere, LangGraph resumes
 *   from the thread's last checkpoint instead of taking the input twice. It
 *   records the run `running`, then how it ended, and the thread's status
 *   and values.
 * - `Events` (volatile, streaming): the run's events after an id, followed
 *   to the end, from the log of the runner that executes the run.
 * - `Cancel` (volatile): stops the run where it executes, or drops it from
 *   the queue.
 *
 * Run records and thread statuses are in the database (`ThreadRuns`), so
 * every replica reads them; events stay on the runner that executes the run.
 *
 * One process runs the same code on a cluster of its own, in memory (for
 * `memory:`, `pglite:` and a saver given to `serve`: a run going on when
 * the process stops is recorded as failed at the next start). On
 * PostgreSQL and CockroachDB every `serve` process of a database is a
 * runner of one cluster, its messages and shard locks in tables of that
 * database (`checkpoint_cluster_*`), the runners talking over TCP.
 *
 * @since 0.4.0
 */
import { NodeClusterSocket, NodeCrypto, NodeSocketServer } from "@effect/platform-node-shared"
import { v7 as uuidv7 } from "@langchain/core/utils/uuid"
import {
  Cause,
  Context,
  Deferred,
  Effect,
  Exit,
  Fiber,
  Layer,
  ManagedRuntime,
  Option,
  Result,
  Schema,
  Stream
} from "effect"
import {
  ClusterSchema,
  Entity,
  MessageStorage,
  RunnerAddress,
  RunnerHealth,
  Runners,
  RunnerStorage,
  Sharding,
  ShardingConfig,
  SocketRunner,
  SqlMessageStorage,
  SqlRunnerStorage
} from "effect/cluster"
import { Rpc, RpcSerialization } from "effect/rpc"
import { SocketServer } from "effect/socket/SocketServer"
import type { SqlClient } from "effect/sql"
import type { RunRecord, RunStatus, ThreadState } from "../../CheckpointStorage.ts"
import type { EffectCheckpointSaver } from "../../Saver.ts"
import type { RunLimits } from "../../ServerOptions.ts"
import * as ConnectionString from "../ConnectionString.ts"
import * as Crons from "./Crons.ts"
import { objectOf } from "./Json.ts"
import type { Left } from "./Left.ts"
import { EPOCH_SPAN, frame, pump, Registry, type RunEvent } from "./Runs.ts"
import { stored } from "./Stored.ts"
import * as Streamed from "./Streamed.ts"

/**
 * Where the cluster keeps its messages and how its runners meet: in this
 * process alone, or in tables of a PostgreSQL (or CockroachDB) database
 * whose `serve` processes are the runners.
 *
 * @since 0.4.0
 */
export type ClusterPlace =
  | { readonly _tag: "Local" }
  | {
    readonly _tag: "Sql"
    /** The database's SQL client (the cluster's own pool). */
    readonly client: Layer.Layer<SqlClient.SqlClient, unknown>
    /** Shard locks in a table instead of advisory locks (CockroachDB, a transaction pooler). */
    readonly lockTable: boolean
    /** The address other runners reach this one at (default: 127.0.0.1 and the port it listens on). */
    readonly advertise?: { readonly host: string; readonly port?: number | undefined } | undefined
    /** Where this runner listens (default: the advertised port, else a free one, on the advertised host). */
    readonly listen?: { readonly host: string; readonly port: number } | undefined
  }

/**
 * What the engine runs on: this process's saver, its embed server (where a
 * run executes) and what is kept of each run.
 *
 * @since 0.4.0
 */
export interface EngineOptions {
  readonly saver: EffectCheckpointSaver
  readonly embed: (request: Request) => Response | Promise<Response>
  /** What runs of `graph_id` left on a thread: its values as the API shows them, and whether it paused. */
  readonly left: (thread_id: string, graph_id: string) => Promise<Left>
  readonly runs?: RunLimits | undefined
  readonly place: ClusterPlace
}

/**
 * A run to start: the body the embed server takes (its `assistant_id` a
 * served graph's id), and its own fields.
 *
 * @since 0.4.0
 */
export interface StartRun {
  readonly thread_id: string
  /** Its id (default: a new one). */
  readonly run_id?: string | undefined
  readonly assistant_id: string
  readonly body: Record<string, unknown>
  readonly multitask_strategy: string
  readonly metadata: Record<string, unknown>
}

/**
 * The runs of every replica, as the routes use them.
 *
 * @since 0.4.0
 */
export interface Engine {
  /** Starts a run: its record, or the run going on that `reject` refused it for. */
  readonly start: (run: StartRun) => Promise<{ readonly run: RunRecord } | { readonly busy: string }>
  /** A run's events after `after`, as server-sent events, to its end (`onCancel`: the reader went away). */
  readonly events: (
    thread_id: string,
    run_id: string,
    after: number,
    onCancel?: () => void
  ) => ReadableStream<Uint8Array>
  /** Waits for a run's end: what it came to (see `RunLog.outcome`), undefined when its events are gone. */
  readonly outcome: (thread_id: string, run_id: string) => Promise<string | undefined>
  /** Stops a run where it executes, or drops it from its thread's queue: whether it was there. */
  readonly cancel: (thread_id: string, run_id: string) => Promise<boolean>
  /** Waits until a run's record says it ended. */
  readonly ended: (thread_id: string, run_id: string) => Promise<RunRecord | undefined>
  /** Sets a cron's tick `at` (epoch milliseconds) to fire, once, on whichever runner holds the cron. */
  readonly schedule: (cron_id: string, at: number) => Promise<void>
  /** Stops the engine (this runner's runs are handed to the others). */
  readonly close: () => Promise<void>
}

const FINAL: ReadonlySet<RunStatus> = new Set(["success", "error", "timeout", "interrupted"])

/** An event as the entity streams it. */
const EventSchema = Schema.Struct({ id: Schema.Number, event: Schema.String, data: Schema.String })

/** What `Events` streams last for a run that ended for good: no event of LangGraph's has no name. */
const END: RunEvent = { id: 0, event: "", data: "" }

const StartPayload = {
  run_id: Schema.String,
  assistant_id: Schema.String,
  /** The embed server's body, JSON text. */
  body: Schema.String,
  multitask_strategy: Schema.String,
  /** The run's metadata, JSON text. */
  metadata: Schema.String,
  created_at: Schema.Number,
  /** Its thread deleted once it ended (a stateless cron's). */
  delete_thread: Schema.optional(Schema.Boolean)
}

/**
 * The `Thread` entity's protocol (see the module's description).
 *
 * @since 0.4.0
 */
export const Thread = Entity.make("Thread", [
  Rpc.make("Start", {
    payload: StartPayload,
    success: Schema.Struct({ busy: Schema.optional(Schema.String) })
  }),
  Rpc.make("Execute", {
    payload: StartPayload,
    success: Schema.String,
    primaryKey: (payload) => payload.run_id
  }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("Events", {
    payload: { run_id: Schema.String, after: Schema.Number },
    success: EventSchema,
    stream: true
  }),
  Rpc.make("Cancel", { payload: { run_id: Schema.String }, success: Schema.Boolean })
])

/** What this process gives the entity's handlers. */
class Host extends Context.Service<Host, {
  readonly saver: EffectCheckpointSaver
  readonly embed: (request: Request) => Response | Promise<Response>
  readonly left: EngineOptions["left"]
  readonly logs: Registry
}>()("langgraph-checkpoint-effect/server/Engine/Host") {}

/** A run admitted on a thread, waiting for its turn or running. */
interface Admitted {
  readonly run_id: string
  /** Settles when it may run. */
  readonly turn: Deferred.Deferred<void>
  /** Stops it (a cancel): before its turn it is dropped, running it ends `interrupted`. */
  readonly cancel: AbortController
  /** Settles when it has ended. */
  readonly ended: Deferred.Deferred<void>
  /** Admitted by this runner's `Start` and not executed yet: its record says `pending`, read from nowhere. */
  fresh: boolean
}

type Payload = Schema.Struct.Type<typeof StartPayload>

const promise = <A>(f: () => Promise<A>) => Effect.promise(f)

/** The record of the run `payload` starts, as `status`. */
const runRecord = (thread_id: string, payload: Payload, status: RunStatus): RunRecord => ({
  thread_id,
  run_id: payload.run_id,
  assistant_id: payload.assistant_id,
  status,
  metadata: objectOf(JSON.parse(payload.metadata)),
  multitask_strategy: payload.multitask_strategy,
  created_at: new Date(payload.created_at),
  updated_at: new Date()
})

/** The entity's handlers, built once per thread: its queue of admitted runs lives here. */
const handlers = Thread.toLayer(
  Effect.gen(function*() {
    const { embed, left, logs, saver } = yield* Host
    const thread_id = (yield* Entity.CurrentAddress).entityId
    const self = (yield* Thread.client)(thread_id)
    /** Admitted runs, oldest first; the first is the one running (or next to). */
    const queue: Array<Admitted> = []
    const admit = (run_id: string): Admitted => {
      const found = queue.find((run) => run.run_id === run_id)
      if (found !== undefined) return found
      const admitted: Admitted = {
        run_id,
        turn: Deferred.makeUnsafe(),
        cancel: new AbortController(),
        ended: Deferred.makeUnsafe(),
        fresh: false
      }
      queue.push(admitted)
      logs.expect(run_id)
      if (queue.length === 1) Deferred.doneUnsafe(admitted.turn, Exit.void)
      return admitted
    }
    const leave = (admitted: Admitted) => {
      const at = queue.indexOf(admitted)
      if (at !== -1) queue.splice(at, 1)
      logs.unexpect(admitted.run_id)
      Deferred.doneUnsafe(admitted.ended, Exit.void)
      if (at === 0 && queue[0] !== undefined) Deferred.doneUnsafe(queue[0].turn, Exit.void)
    }
    // When the thread leaves this runner (its shard moved, the runner stops), its runs' events are no longer
    // to come here: readers waiting for them go on to wherever the runs go.
    yield* Effect.addFinalizer(() => Effect.sync(() => queue.forEach((run) => logs.unexpect(run.run_id))))
    // What another runner admitted or ran before it stopped: those `Execute`s are delivered again, in
    // order. A run recorded whose `Execute` was never stored (its runner died in between; its creator got
    // an error) will not run: it failed.
    const address = yield* Entity.CurrentAddress
    const messages = yield* MessageStorage.MessageStorage
    let orphans = 0
    for (const status of ["running", "pending"] as const) {
      const found = yield* stored(() => saver.listRuns(thread_id, { status, limit: 1000 }))
      for (const run of [...found].reverse()) {
        const sent = yield* messages.requestIdForPrimaryKey({ address, tag: "Execute", id: run.run_id }).pipe(
          Effect.orDie
        )
        if (Option.isSome(sent)) admit(run.run_id)
        else {
          orphans++
          yield* stored(() => saver.putRun({ ...run, status: "error", updated_at: new Date() }))
        }
      }
    }
    // Nothing left to run: the thread is not left busy with runs that will not happen.
    if (orphans > 0 && queue.length === 0) yield* stored(() => saver.setThreadState(thread_id, { status: "error" }))

    /** Records the run as `status`, and the thread's state with it. */
    const record = (payload: Payload, status: RunStatus, thread: ThreadState) =>
      stored(() => saver.putRun(runRecord(thread_id, payload, status), thread))

    /**
     * The thread's state once `admitted` leaves: busy while another run waits, else as the graph left it
     * (its failure, a pending interrupt, or idle).
     */
    const stateAfter = (admitted: Admitted, payload: Payload, failed: boolean, streamed?: Left) =>
      queue.some((run) => run !== admitted)
        ? Effect.succeed<ThreadState>({ status: "busy" })
        : (streamed === undefined ? promise(() => left(thread_id, payload.assistant_id)) : Effect.succeed(streamed))
          .pipe(
            Effect.catchDefect(() => Effect.succeed<Left>({ values: undefined, interrupted: false })),
            Effect.map((after): ThreadState => ({
              status: failed ? "error" : after.interrupted ? "interrupted" : "idle",
              ...(after.values === undefined ? {} : { values: after.values })
            }))
          )

    /** Runs the graph for `payload` through the embed server, its events into a new log. */
    const execute = (payload: Payload, admitted: Admitted, resumed: boolean) =>
      Effect.gen(function*() {
        // The thread claimed for the run, recorded running, the thread busy: one step.
        const epoch = yield* stored(() => saver.claimThread(thread_id, runRecord(thread_id, payload, "running")))
        const given = objectOf(JSON.parse(payload.body))
        const config = objectOf(given.config)
        const body = {
          ...given,
          // The run's id as its metadata's: executed again, LangGraph resumes instead of taking the input twice.
          metadata: { ...objectOf(JSON.parse(payload.metadata)), run_id: payload.run_id },
          config: { ...config, configurable: { ...objectOf(config.configurable), writer_epoch: epoch } }
        }
        const log = logs.add(payload.run_id, epoch * EPOCH_SPAN)
        let failed = false
        let stale = false
        const seen = Streamed.make()
        const rewrite = (event: string, data: string) => {
          seen.event(event, data)
          if (event === "metadata") return JSON.stringify({ run_id: payload.run_id, attempt: resumed ? 2 : 1 })
          if (event === "error") {
            failed = true
            stale ||= data.includes("ThreadConflict")
          }
          return data
        }
        const response = yield* promise(async () =>
          embed(
            new Request(new URL(`/threads/${thread_id}/runs/stream`, "http://engine.invalid"), {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify(body),
              signal: admitted.cancel.signal
            })
          )
        )
        if (response.body === null || !(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
          log.push("error", JSON.stringify({ error: "Error", message: `the run could not start (${response.status})` }))
          log.finish()
          failed = true
        } else {
          yield* promise(() => pump(response.body!, log, rewrite))
        }
        logs.finished(log)
        const cancelled = admitted.cancel.signal.aborted
        return { failed, stale, cancelled, log, left: failed || cancelled ? undefined : seen.left() }
      })

    return Thread.of({
      Start: ({ payload }) =>
        Effect.gen(function*() {
          const going = queue.filter((run) => run.run_id !== payload.run_id)
          const strategy = payload.multitask_strategy
          if (going.length > 0 && strategy !== "enqueue") {
            if (strategy !== "interrupt" && strategy !== "rollback") return { busy: going[0]!.run_id }
            for (const run of going) run.cancel.abort()
            yield* Effect.forEach(going, (run) => Deferred.await(run.ended), { discard: true })
            if (strategy === "rollback") yield* stored(() => saver.deleteForRuns(going.map((run) => run.run_id)))
          }
          // Recorded, then stored before the answer: from "created" on, the run happens whoever dies. Not
          // cut in between by the thread moving to another runner (whose first look would find it orphaned).
          yield* Effect.uninterruptible(Effect.gen(function*() {
            yield* record(payload, "pending", { status: "busy" })
            const admitted = admit(payload.run_id)
            admitted.fresh = true
            yield* self.Execute(payload, { discard: true }).pipe(
              Effect.onError(() => Effect.sync(() => leave(admitted)))
            )
          }))
          return {}
        }).pipe(Effect.orDie),

      Execute: ({ payload }) =>
        Effect.gen(function*() {
          // A run this runner's `Start` admitted is known; any other (delivered again) is read.
          const started = queue.find((run) => run.run_id === payload.run_id && run.fresh)
          const known = started === undefined ? yield* stored(() => saver.getRun(thread_id, payload.run_id)) : undefined
          if (known !== undefined && FINAL.has(known.status)) return known.status
          const admitted = started ?? admit(payload.run_id)
          admitted.fresh = false
          yield* Deferred.await(admitted.turn)
          if (admitted.cancel.signal.aborted && !(logs.get(payload.run_id)?.done === false)) {
            yield* record(payload, "interrupted", yield* stateAfter(admitted, payload, false))
            leave(admitted)
            return "interrupted"
          }
          const outcome = yield* execute(payload, admitted, known?.status === "running").pipe(
            // Stopped by the runner's shutdown (or its shard moving): handed over, left as it is.
            Effect.onInterrupt(() => Effect.sync(() => admitted.cancel.abort()))
          )
          if (outcome.stale) {
            // Another runner claimed the thread: the run is its now.
            leave(admitted)
            return "running"
          }
          const status: RunStatus = outcome.cancelled ? "interrupted" : outcome.failed ? "error" : "success"
          const recorded = yield* Effect.forkChild(Effect.gen(function*() {
            yield* record(payload, status, yield* stateAfter(admitted, payload, status === "error", outcome.left))
            leave(admitted)
            if (payload.delete_thread === true) yield* stored(() => saver.deleteThread(thread_id))
          }))
          // Its readers stop once the end is recorded (so what they read next agrees), or after two seconds
          // when the storage is away: the end is recorded when it is back.
          yield* Fiber.await(recorded).pipe(Effect.timeout("2 seconds"), Effect.ignore)
          outcome.log.settle()
          yield* Fiber.join(recorded)
          return status
        }).pipe(
          // However it stopped short of its end here, its readers go on to wherever it runs next.
          Effect.ensuring(Effect.sync(() => {
            logs.get(payload.run_id)?.abandon()
            logs.unexpect(payload.run_id)
          })),
          Effect.orDie
        ),

      Events: ({ payload }) =>
        Stream.unwrap(
          // A run admitted here and not started yet: its events from when it starts.
          Effect.map(promise(() => logs.logOf(payload.run_id)), (log) =>
            log === undefined ? Stream.empty : Stream.orDie(
              Stream.fromAsyncIterable(
                (async function*() {
                  yield* log.follow(payload.after)
                  // After the last event, the run's end when it ended here for good (not handed over).
                  if (await log.closed) yield END
                })(),
                (error) => error
              )
            ))
        ),

      Cancel: ({ payload }) =>
        Effect.sync(() => {
          const admitted = queue.find((run) => run.run_id === payload.run_id)
          if (admitted === undefined) return false
          admitted.cancel.abort()
          // Waiting for its turn, it is dropped at once.
          if (queue[0] !== admitted) Deferred.doneUnsafe(admitted.turn, Exit.void)
          return true
        })
    })
  }),
  { concurrency: "unbounded", maxIdleTime: "5 minutes" }
)

/** Shard locks and message polls short enough that a run whose runner died goes on within seconds. */
const TIMINGS: Partial<ShardingConfig.ShardingConfig["Service"]> = {
  shardLockExpiration: "6 seconds",
  shardLockRefreshInterval: "2 seconds",
  refreshAssignmentsInterval: "1 second",
  entityMessagePollInterval: "500 millis",
  entityReplyPollInterval: "200 millis",
  entityTerminationTimeout: "3 seconds"
}

/** The cluster's tables: apart from any cluster of the application's own on the same database. */
const PREFIX = "checkpoint_cluster"

/** The cluster of this process alone. */
const local = Sharding.layer.pipe(
  Layer.provideMerge(Runners.layerNoop),
  Layer.provideMerge(MessageStorage.layerMemory),
  Layer.provide([RunnerStorage.layerMemory, RunnerHealth.layerNoop]),
  Layer.provideMerge(ShardingConfig.layer(TIMINGS))
)

/** A runner of the database's cluster: listening first, then advertising the port it got. */
const overSql = (place: Extract<ClusterPlace, { readonly _tag: "Sql" }>) => {
  const host = place.advertise?.host ?? "127.0.0.1"
  const listen = place.listen ?? { host, port: place.advertise?.port ?? 0 }
  const config = Layer.unwrap(Effect.gen(function*() {
    const bound = (yield* SocketServer).address
    const port = place.advertise?.port ?? ("port" in bound ? bound.port : listen.port)
    return ShardingConfig.layer({
      ...TIMINGS,
      runnerAddress: Option.some(RunnerAddress.make(host, port)),
      shardLockDisableAdvisory: place.lockTable
    })
  }))
  const storage = Layer.mergeAll(
    SqlMessageStorage.layerWith({ prefix: PREFIX }),
    Layer.orDie(SqlRunnerStorage.layerWith({ prefix: PREFIX }))
  ).pipe(Layer.provide([Layer.orDie(place.client), NodeCrypto.layerDigest]))
  return SocketRunner.layer.pipe(
    Layer.provideMerge(storage),
    Layer.provide([RunnerHealth.layerNoop, NodeClusterSocket.layerClientProtocol]),
    Layer.provideMerge(config),
    Layer.provideMerge(Layer.orDie(NodeSocketServer.layer({ host: listen.host, port: listen.port }))),
    Layer.provide(RpcSerialization.layerSchemaBinary())
  )
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Runs a single process's runs left going when it stopped are over: recorded
 * as failed, their threads idle again (one process: nothing resumes them).
 */
const settleLeftOvers = async (saver: EffectCheckpointSaver) => {
  const busy = await saver.searchThreads({ status: "busy", limit: 1000 })
  for (const thread of busy.threads) {
    for (const status of ["running", "pending"] as const) {
      for (const run of await saver.listRuns(thread.thread_id, { status, limit: 1000 })) {
        await saver.putRun({ ...run, status: "error", updated_at: new Date() })
      }
    }
    await saver.setThreadState(thread.thread_id, { status: "error" })
  }
}

/**
 * Where the runs' cluster lives for a server on `database`: the database's
 * own tables (and its runners meeting over TCP) for PostgreSQL and
 * CockroachDB, this process alone for the others. Shard locks go in a table
 * rather than session advisory locks, which CockroachDB lacks and a
 * transaction pooler (PgBouncer) hands from client to client.
 *
 * @since 0.4.0
 */
export const placeOf = async (
  database: string | undefined,
  options: {
    readonly advertise?: { readonly host: string; readonly port?: number | undefined } | undefined
    readonly listen?: { readonly host: string; readonly port: number } | undefined
  } = {}
): Promise<ClusterPlace> => {
  const parsed = database === undefined ? undefined : ConnectionString.parse(database)
  if (parsed === undefined || Result.isFailure(parsed)) return { _tag: "Local" }
  const connection = parsed.success
  if (connection._tag !== "Postgres" && connection._tag !== "Cockroach") return { _tag: "Local" }
  const client: Layer.Layer<SqlClient.SqlClient, unknown> = connection._tag === "Postgres"
    ? (await import("../../postgres.ts")).layerSqlClient({ url: connection.url, poolSize: 4 })
    : (await import("../../cockroach.ts")).layerSqlClient({ url: connection.url, poolSize: 4 })
  return { _tag: "Sql", client, lockTable: true, advertise: options.advertise, listen: options.listen }
}

/**
 * Starts the engine: this process a runner of its cluster.
 *
 * @since 0.4.0
 */
export const make = async (options: EngineOptions): Promise<Engine> => {
  const { saver } = options
  if (options.place._tag === "Local") await settleLeftOvers(saver)
  const logs = new Registry(options.runs)
  const host = Layer.succeed(Host, { saver, embed: options.embed, left: options.left, logs })
  const cluster: Layer.Layer<Sharding.Sharding | MessageStorage.MessageStorage, unknown> =
    options.place._tag === "Local"
      ? local
      : overSql(options.place)
  /** A cron's tick starts its run as a client's request would, once: not again when delivered again. */
  const cronHost = Layer.effect(
    Crons.CronHost,
    Effect.map(Thread.client, (threads) => ({
      saver,
      start: (run: Crons.TickRun) =>
        Effect.gen(function*() {
          if ((yield* stored(() => saver.getRun(run.thread_id, run.run_id))) !== undefined) return
          yield* threads(run.thread_id).Start({
            run_id: run.run_id,
            assistant_id: run.assistant_id,
            body: JSON.stringify(run.body),
            multitask_strategy: run.multitask_strategy,
            metadata: JSON.stringify(run.metadata),
            created_at: Date.now(),
            delete_thread: run.delete_thread
          })
        }).pipe(Effect.orDie)
    }))
  )
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(handlers.pipe(Layer.provide(host)), Crons.handlers.pipe(Layer.provide(cronHost))).pipe(
      Layer.provideMerge(cluster)
    )
  )
  const context = await runtime.context()
  const client = await runtime.runPromise(Thread.client)
  const crons = await runtime.runPromise(Crons.Cron.client)
  const schedule = (cron_id: string, at: number) =>
    runtime.runPromise(crons(cron_id).Fire(new Crons.Tick({ at }), { discard: true }))
  // Every enabled cron's next tick, set again: a chain cut (a process that kept its cluster in memory, a
  // firing lost between its steps) goes on; one that is intact is the same message, stored once.
  for (let offset = 0;; offset += 1000) {
    const page = await saver.searchCrons({ enabled: true, limit: 1000, offset })
    for (const cron of page.crons) {
      if (cron.next_run_date !== undefined) await schedule(cron.cron_id, cron.next_run_date.getTime())
    }
    if (page.crons.length < 1000) break
  }

  /** The run's events after `after` to its end, from wherever it executes (again after a runner dies). */
  async function* eventsOf(thread_id: string, run_id: string, after: number): AsyncGenerator<RunEvent> {
    let cursor = after
    let read = 0
    for (;;) {
      if (logs.here(run_id)) {
        // Executed in this process: its log read as it is, not through the cluster.
        const log = await logs.logOf(run_id)
        if (log !== undefined) {
          for await (const event of log.follow(cursor)) {
            cursor = event.id
            read++
            yield event
          }
          if (await log.closed) return
        }
      } else {
        const stream = client(thread_id).Events({ run_id, after: cursor })
        for await (const event of Stream.toAsyncIterableWith(stream, context)) {
          if (event.event === "") return
          cursor = event.id
          read++
          yield event
        }
      }
      // No end: the run waits its turn, or its runner died (another takes it over), or its log is gone.
      const run = await saver.getRun(thread_id, run_id).catch(() => undefined)
      if (run === undefined) return
      if (FINAL.has(run.status)) {
        // Its log went with a runner that died after it ended: the latest run's values are the thread's.
        if (read === 0 && run.status === "success") {
          const [latest] = await saver.listRuns(thread_id, { limit: 1 })
          const thread = await saver.getThread(thread_id)
          if (latest?.run_id === run_id && thread?.values !== undefined) {
            yield { id: cursor + 1, event: "values", data: JSON.stringify(thread.values) }
          }
        }
        return
      }
      await sleep(250)
    }
  }

  return {
    start: async (run) => {
      const payload: Payload = {
        run_id: run.run_id ?? uuidv7(),
        assistant_id: run.assistant_id,
        body: JSON.stringify(run.body),
        multitask_strategy: run.multitask_strategy,
        metadata: JSON.stringify(run.metadata),
        created_at: Date.now()
      }
      for (let attempt = 1;; attempt++) {
        const exit = await runtime.runPromiseExit(client(run.thread_id).Start(payload))
        if (Exit.isSuccess(exit)) {
          const answer = exit.value
          return answer.busy !== undefined
            ? { busy: answer.busy }
            : { run: runRecord(run.thread_id, payload, "pending") }
        }
        // Cut short by the thread's shard moving (its runner stopping, the lock storage too slow to answer):
        // started or not, the run's record says (Start records it before anything else); not started, it is
        // asked again of the shard's next holder. Asking again a Start that took effect would record it anew.
        if (!Cause.hasInterruptsOnly(exit.cause) || attempt === 5) throw Cause.squash(exit.cause)
        if ((await saver.getRun(run.thread_id, payload.run_id)) !== undefined) {
          return { run: runRecord(run.thread_id, payload, "pending") }
        }
        await sleep(250 * attempt)
      }
    },
    events: (thread_id, run_id, after, onCancel) => {
      const events = eventsOf(thread_id, run_id, after)
      return new ReadableStream<Uint8Array>({
        async pull(controller) {
          const next = await events.next()
          if (next.done === true) controller.close()
          else controller.enqueue(frame(next.value))
        },
        async cancel() {
          await events.return(undefined)
          onCancel?.()
        }
      }, { highWaterMark: 0 })
    },
    outcome: async (thread_id, run_id) => {
      let last: RunEvent | undefined
      for await (const event of eventsOf(thread_id, run_id, 0)) {
        if (event.event === "values" || event.event === "error") last = event
      }
      return last === undefined ? undefined : last.event === "error" ? `{"__error__":${last.data}}` : last.data
    },
    cancel: (thread_id, run_id) => runtime.runPromise(client(thread_id).Cancel({ run_id })),
    ended: async (thread_id, run_id) => {
      for (;;) {
        const run = await saver.getRun(thread_id, run_id)
        if (run === undefined || FINAL.has(run.status)) return run
        await sleep(100)
      }
    },
    schedule,
    close: () => runtime.dispose()
  }
}
