/**
 * Crons as cluster work: each cron is an entity (`Cron`, keyed by cron id)
 * whose schedule is a chain of persisted `Fire` messages, each delivered at
 * its tick (`DeliverAt`) to whichever runner holds the cron's shard. So a
 * tick fires once across every replica, and a replica that dies with a
 * tick due hands it to the next holder.
 *
 * A `Fire` for tick `at` acts only while the cron's record says
 * `next_run_date` is `at`: an update (a new schedule, disabled) or a delete
 * leaves the old chain's messages to find another date, and they stop. It
 * starts the tick's run (its ids derived from the cron and the tick, so a
 * `Fire` delivered again starts nothing twice), stores the next tick's
 * `Fire`, then moves `next_run_date` to it (compare-and-set: of two
 * firings of one tick, one moves it). A stateless cron runs each tick on a
 * thread of its own, deleted after the run unless `on_run_completed` is
 * `keep`.
 *
 * @since 0.4.0
 */
import { v5 as uuidv5 } from "@langchain/core/utils/uuid"
import { Context, Cron as Schedule, DateTime, Effect, PrimaryKey, Result, Schema } from "effect"
import { ClusterSchema, DeliverAt, Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import type { CronRecord } from "../../CheckpointStorage.ts"
import type { EffectCheckpointSaver } from "../../Saver.ts"
import { OWNER } from "./Auth.ts"
import { assistantId } from "./Graphs.ts"
import { objectOf } from "./Json.ts"
import { stored } from "./Stored.ts"

/** The namespace a tick's thread and run ids are derived in. */
const NAMESPACE_TICK = "0b6f7c2e-5d1a-5c8e-9f3b-6a4d2e1c7b90"

/**
 * A tick of a cron: when it is due (epoch milliseconds), which also makes
 * it one message per tick.
 *
 * @since 0.4.0
 */
export class Tick extends Schema.Class<Tick>("langgraph-checkpoint-effect/server/Crons/Tick")({
  at: Schema.Number
}) {
  [PrimaryKey.symbol](): string {
    return String(this.at)
  }
  [DeliverAt.symbol](): DateTime.DateTime {
    return DateTime.makeUnsafe(this.at)
  }
}

/**
 * The `Cron` entity's protocol (see the module's description).
 *
 * @since 0.4.0
 */
export const Cron = Entity.make("Cron", [
  Rpc.make("Fire", { payload: Tick }).annotate(ClusterSchema.Persisted, true)
])

/**
 * A tick's run, as the engine starts it: on `thread_id`, under `run_id`
 * (the same for every delivery of the tick), with the cron's body; the
 * thread deleted after it when `delete_thread`.
 *
 * @since 0.4.0
 */
export interface TickRun {
  readonly thread_id: string
  readonly run_id: string
  readonly assistant_id: string
  readonly body: Record<string, unknown>
  readonly multitask_strategy: string
  readonly metadata: Record<string, unknown>
  readonly delete_thread: boolean
}

/** What the cron entity's handlers are given by the engine. */
export class CronHost extends Context.Service<CronHost, {
  readonly saver: EffectCheckpointSaver
  /** Starts a tick's run, unless one of its ids was started already. */
  readonly start: (run: TickRun) => Effect.Effect<void>
}>()("langgraph-checkpoint-effect/server/Crons/CronHost") {}

/**
 * The next tick of `cron` after `after`, not before `now`; undefined when
 * there is none before its end (or its schedule no longer reads).
 *
 * @since 0.4.0
 */
export const nextTick = (
  cron: Pick<CronRecord, "schedule" | "timezone" | "end_time">,
  after: number,
  now = Date.now()
): number | undefined => {
  // What the storage refuses (a schedule or zone that does not parse) has no tick.
  const tried = Result.try(() => Schedule.parse(cron.schedule, cron.timezone))
  const parsed = Result.isSuccess(tried) && Result.isSuccess(tried.success) ? tried.success.success : undefined
  if (parsed === undefined) return undefined
  let next = Schedule.next(parsed, new Date(after)).getTime()
  // Behind (the cluster was down): the ticks missed fire once, now, and the schedule goes on from there.
  if (next < now) next = Schedule.next(parsed, new Date(now)).getTime()
  return cron.end_time !== undefined && next > cron.end_time.getTime() ? undefined : next
}

/** The ids of a tick's run (and thread, for a stateless cron): the same for every delivery of it. */
const tickIds = (cron_id: string, at: number) => ({
  run_id: uuidv5(`${cron_id}/${at}/run`, NAMESPACE_TICK),
  thread_id: uuidv5(`${cron_id}/${at}/thread`, NAMESPACE_TICK)
})

/**
 * The `Cron` entity's handlers.
 *
 * @since 0.4.0
 */
export const handlers = Cron.toLayer(
  Effect.gen(function*() {
    const { saver, start } = yield* CronHost
    const cron_id = (yield* Entity.CurrentAddress).entityId
    const self = (yield* Cron.client)(cron_id)
    return Cron.of({
      Fire: ({ payload: { at } }) =>
        Effect.gen(function*() {
          const cron = yield* stored(() => saver.getCron(cron_id))
          // Deleted, disabled or rescheduled since this tick was set: another chain, or none, goes on.
          if (cron === undefined || !cron.enabled || cron.next_run_date?.getTime() !== at) return
          const ids = tickIds(cron_id, at)
          const owner = cron.metadata[OWNER]
          const thread_id = cron.thread_id ?? ids.thread_id
          if (cron.thread_id === undefined) {
            const assistant = {
              graph_id: cron.assistant_id,
              assistant_id: assistantId(cron.assistant_id),
              ...(owner === undefined ? {} : { [OWNER]: owner })
            }
            yield* stored(() => saver.createThread(thread_id, assistant))
          }
          const body: Record<string, unknown> = { ...cron.payload, assistant_id: cron.assistant_id }
          yield* start({
            thread_id,
            run_id: ids.run_id,
            assistant_id: cron.assistant_id,
            body,
            multitask_strategy: typeof body.multitask_strategy === "string" ? body.multitask_strategy : "enqueue",
            metadata: { ...objectOf(body.metadata), cron_id },
            delete_thread: cron.thread_id === undefined && cron.on_run_completed === "delete"
          })
          // The next tick stored before the record moves to it: a firing cut in between is delivered again.
          const next = nextTick(cron, at)
          if (next !== undefined) yield* Effect.orDie(self.Fire(new Tick({ at: next }), { discard: true }))
          yield* stored(() => saver.advanceCron(cron_id, new Date(at), next === undefined ? undefined : new Date(next)))
        })
    })
  })
)
