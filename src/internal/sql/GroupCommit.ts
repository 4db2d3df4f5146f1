/**
 * Group commit: concurrent `put`s and `putWrites` share statements.
 *
 * A call made while a slot is free goes out at once, alone: no added
 * latency when idle. Calls made while every slot is busy are requests to one
 * `RequestResolver`: they gather in the next batch until a slot frees, then
 * go out together, so with many threads writing at once the server sees a
 * few statements and commits instead of one per call. (Effect's resolver
 * expresses this directly: its `delay` is an effect, here "wait for a free
 * slot", during which the batch collects.)
 *
 * A thread's puts leave in the order they were made: a put waits for the
 * thread's previous put (its parent, usually) to be stored, so two slots
 * never race one thread's chain. (LangGraph already awaits each put before
 * the next, so in a graph nothing waits here.)
 *
 * A batch runs as rounds: a thread's calls keep their order, one per round
 * (a later put of a thread may need the earlier one as its parent); each
 * round is one statement for the writes and one for the puts. Every call
 * gets its own outcome (a put whose parent or base is gone concerns that put
 * only), and a failure is isolated: a statement of several calls is run
 * again whole only when the endpoint failed (a lost session, a read-only
 * endpoint: no member caused it); any other failure splits it in halves,
 * each run the same way, down to calls alone, which the retry policy runs
 * again. One failing row (a serialization failure, a value the server
 * refuses) so costs its batch a few statements, never its members' success:
 * each call's chance is what it would be alone. Every statement is
 * idempotent, so running a call again after a failed batch cannot store it
 * twice.
 *
 * @since 0.1.0
 */
import { Deferred, Duration, Effect, Exit, Metric, Request, RequestResolver, Semaphore } from "effect"
import type { Request as Call } from "effect/Request"
import type { StorageFailure } from "../../CheckpointError.ts"
import { batchSizes } from "../../Metrics.ts"
import type { GroupCommitOptions } from "../../SqlOptions.ts"
import type { PutOutcome } from "../../StorageDriver.ts"
import type { PutCall, WritesCall, WritesOutcome } from "./Calls.ts"

/** What a call learns: its outcome and the size of the batch it rode in. */
interface Rode<A> {
  readonly value: A
  readonly batch: number
}

interface PutRequest extends Call<Rode<PutOutcome>, StorageFailure> {
  readonly _tag: "Put"
  readonly call: PutCall
}

interface WritesRequest extends Call<Rode<WritesOutcome>, StorageFailure> {
  readonly _tag: "Writes"
  readonly call: WritesCall
}

const PutRequest = Request.tagged<PutRequest>("Put")
const WritesRequest = Request.tagged<WritesRequest>("Writes")

type Entry = Request.Entry<PutRequest | WritesRequest>

/** How calls of one kind are stored: several in one statement tried once, or one alone, retried. */
interface CallKind<A, C> {
  readonly many: (calls: ReadonlyArray<C>) => Effect.Effect<ReadonlyArray<A>, StorageFailure>
  readonly one: (call: C) => Effect.Effect<A, StorageFailure>
}

const isPut = (entry: Entry): entry is Request.Entry<PutRequest> => entry.request._tag === "Put"
const isWrites = (entry: Entry): entry is Request.Entry<WritesRequest> => entry.request._tag === "Writes"

const threadOf = ({ request }: Entry) =>
  request._tag === "Put" ? request.call.row.thread_id : request.call.checkpoint.thread_id

/**
 * The batch's calls in rounds: each thread's calls in order, at most one a
 * round, so that a put finds the parent an earlier put of its thread wrote
 * and no row is written twice by one statement.
 */
const roundsOf = (entries: ReadonlyArray<Entry>): Array<Array<Entry>> => {
  const rounds: Array<Array<Entry>> = []
  const next = new Map<string, number>()
  for (const entry of entries) {
    const thread = threadOf(entry)
    const round = next.get(thread) ?? 0
    next.set(thread, round + 1)
    ;(rounds[round] ??= []).push(entry)
  }
  return rounds
}

/**
 * The statements a batch runs: several calls' writes at once, or several
 * puts at once answering each put's outcome in order, run again only when
 * the endpoint failed; and one call alone, retried by the policy.
 *
 * @since 0.1.0
 */
export interface Batches {
  readonly putWrites: (
    calls: ReadonlyArray<WritesCall>
  ) => Effect.Effect<ReadonlyArray<WritesOutcome>, StorageFailure>
  readonly put: (calls: ReadonlyArray<PutCall>) => Effect.Effect<ReadonlyArray<PutOutcome>, StorageFailure>
  /** One call's writes, retried. */
  readonly putWritesOne: (call: WritesCall) => Effect.Effect<WritesOutcome, StorageFailure>
  /** One put (the same statement, planned for one), retried. */
  readonly putOne: (call: PutCall) => Effect.Effect<PutOutcome, StorageFailure>
}

/**
 * The group-commit front of a driver's writes: `put` and `putWrites` that
 * batch with concurrent calls, annotating the caller's span with the size of
 * the batch they rode in. The calls are those the driver hands on (`Calls`).
 *
 * @since 0.1.0
 */
export const make = (statements: Batches, options: GroupCommitOptions = {}) => {
  const slots = Semaphore.makeUnsafe(Math.max(1, options.concurrency ?? 4))
  const maxBatch = Math.max(1, options.maxBatch ?? 16)
  const window = options.window === undefined ? undefined : Duration.fromInputUnsafe(options.window)
  const freeSlot = slots.withPermits(1)(Effect.void)

  /**
   * Settles calls of one kind: alone, by the retried statement; together, by
   * one statement tried once, split in halves when it fails.
   */
  const settle = <A, C>(
    entries: ReadonlyArray<Request.Entry<Call<Rode<A>, StorageFailure> & { readonly call: C }>>,
    batch: number,
    kind: CallKind<A, C>
  ): Effect.Effect<void> => {
    const complete = (entry: (typeof entries)[number], exit: Exit.Exit<A, StorageFailure>) =>
      entry.completeUnsafe(Exit.map(exit, (value) => ({ value, batch })))
    if (entries.length === 0) return Effect.void
    if (entries.length === 1) {
      const entry = entries[0]!
      return Effect.map(Effect.exit(kind.one(entry.request.call)), (exit) => complete(entry, exit))
    }
    return Effect.flatMap(Effect.exit(kind.many(entries.map((entry) => entry.request.call))), (exit) => {
      if (Exit.isSuccess(exit)) {
        entries.forEach((entry, i) => complete(entry, Exit.succeed(exit.value[i]!)))
        return Effect.void
      }
      const half = Math.ceil(entries.length / 2)
      return Effect.andThen(settle(entries.slice(0, half), batch, kind), settle(entries.slice(half), batch, kind))
    })
  }
  const writes: CallKind<WritesOutcome, WritesCall> = { many: statements.putWrites, one: statements.putWritesOne }
  const puts: CallKind<PutOutcome, PutCall> = { many: statements.put, one: statements.putOne }

  const resolver = RequestResolver.makeWith<PutRequest | WritesRequest>({
    batchKey: () => resolverKey,
    // Until a slot frees (with `window`, at least that long): meanwhile the batch gathers.
    delay: window === undefined
      ? Effect.andThen(Effect.yieldNow, freeSlot)
      : Effect.andThen(Effect.sleep(window), freeSlot),
    collectWhile: (entries) => entries.size < maxBatch,
    runAll: (entries) =>
      slots.withPermits(1)(
        Effect.gen(function*() {
          yield* Metric.update(batchSizes, entries.length)
          for (const round of roundsOf(entries)) {
            yield* settle(round.filter(isWrites), entries.length, writes)
            yield* settle(round.filter(isPut), entries.length, puts)
          }
        })
      )
  })

  const single = alone(statements)

  /** A call's span says the size of the batch it rode in (the batch counted it in the metric, once). */
  const rodeIn = (batch: number) => Effect.annotateCurrentSpan("checkpoint.batch_size", batch)
  /** A call alone is a batch of one. */
  const rodeAlone = Effect.andThen(Metric.update(batchSizes, 1), rodeIn(1))

  /** Calls waiting in batches: while any wait, a new call joins them rather than overtake them alone. */
  let waiting = 0
  const join = <A>(batched: Effect.Effect<Rode<A>, StorageFailure>) =>
    Effect.suspend(() => {
      waiting++
      return Effect.ensuring(batched, Effect.sync(() => waiting--))
    })

  /** A call alone when a slot is free and no batch waits, else with the next batch; its span says which. */
  const send = <A>(
    by: () => Effect.Effect<A, StorageFailure>,
    batched: () => Effect.Effect<Rode<A>, StorageFailure>
  ): Effect.Effect<A, StorageFailure> =>
    Effect.suspend(() => {
      const together = () => Effect.flatMap(join(batched()), ({ batch, value }) => Effect.as(rodeIn(batch), value))
      return waiting > 0 ? together() : Effect.flatMap(
        slots.withPermitsIfAvailable(1)(by()),
        (sent) => sent._tag === "Some" ? Effect.as(rodeAlone, sent.value) : together()
      )
    })

  /** Each thread's latest put still on its way: the next put of the thread waits for it. */
  const lastPut = new Map<string, Deferred.Deferred<void>>()
  const afterPrevious = <A, E>(thread_id: string, put: Effect.Effect<A, E>) =>
    Effect.suspend(() => {
      const previous = lastPut.get(thread_id)
      const done = Deferred.makeUnsafe<void>()
      lastPut.set(thread_id, done)
      return (previous === undefined ? put : Effect.andThen(Deferred.await(previous), put)).pipe(
        Effect.ensuring(Effect.sync(() => {
          Deferred.doneUnsafe(done, Exit.void)
          if (lastPut.get(thread_id) === done) lastPut.delete(thread_id)
        }))
      )
    })

  return {
    put: (call: PutCall) =>
      afterPrevious(
        call.row.thread_id,
        send(() => single.put(call), () => Effect.request(PutRequest({ call }), resolver))
      ),
    putWrites: (call: WritesCall) =>
      send(() => single.putWrites(call), () => Effect.request(WritesRequest({ call }), resolver))
  }
}

const resolverKey = {}

/**
 * Each call in a statement of its own (inside a caller's transaction, or
 * with group commit off).
 *
 * @since 0.1.0
 */
export const alone = (statements: Batches) => ({
  put: statements.putOne,
  putWrites: statements.putWritesOne
})
