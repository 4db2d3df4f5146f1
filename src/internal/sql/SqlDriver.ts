/**
 * The one SQL driver: a {@link StorageDriver} over `effect/sql`'s `SqlClient`,
 * serving PostgreSQL, PGlite and CockroachDB. Every operation is a single
 * statement (see `Statements`), so each is atomic on its own and costs one
 * round trip:
 *
 * - `put`: a data-modifying CTE locks the threads' rows, checks each put's
 *   parent and the blobs its shared lists rely on, inserts the new pieces
 *   and the changed channels' blobs (from `unnest` over parallel arrays),
 *   touches the threads' last activity and upserts the checkpoint rows; one
 *   put, or the puts of many threads at once (`GroupCommit`).
 * - `putWrites`: one upsert whose `WHERE` applies LangGraph's rule: special
 *   channels replace, ordinary writes keep the first; batched the same way.
 * - `getTuple` and each `list` page: one query; blobs and writes come back as
 *   parallel one-dimensional arrays (`bytea[]` in the binary protocol), and
 *   the pieces their shared lists refer to once per page (see `Projection`).
 * - `ancestors`: one recursive query that stops once every channel is seeded,
 *   or where parent links that loop come back (see `Statements`); a seed the
 *   caller already holds comes as its digest only.
 * - `deleteThread`: one statement deleting from every table (the thread's
 *   record with its row), run holding the thread's row.
 * - thread records: one statement each; a search's page and its count of
 *   matches come back together.
 *
 * This module only runs them: retries, joining a caller's transaction, and
 * `exclusive`'s transaction holding a thread. Its statement runner
 * (`runner`) is the one every SQL reader uses, the inspector's too. The
 * write calls it hands on are `Calls`; `decorators/` wraps it where the
 * storage asks (a sole writer's latest reads, a read-only open).
 *
 * @since 0.1.0
 */
import { Context, Duration, Effect, Option, Stream } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { StorageFailure } from "../../CheckpointError.ts"
import * as Retry from "../../Retry.ts"
import type { Dialect, SqlDriverOptions } from "../../SqlOptions.ts"
import type { StorageDriver, StoredCheckpoint } from "../../StorageDriver.ts"
import * as GroupCommit from "./GroupCommit.ts"
import * as Migrations from "./Migrations.ts"
import * as RetryLoop from "./RetryLoop.ts"
import { type Statement, statements } from "./Statements.ts"
import type { Tables } from "./Tables.ts"

/** The failure of a statement that outlived `statementTimeout`. */
const timedOut = (timeout: Duration.Duration) =>
  new SqlError.SqlError({
    reason: new SqlError.StatementTimeoutError({
      cause: new Error(`statement timed out after ${Duration.format(timeout)} (statementTimeout)`),
      message: `statement timed out after ${Duration.format(timeout)} (statementTimeout)`,
      operation: "query"
    })
  })

/**
 * Set inside a transaction the driver opened itself (`exclusive`): its
 * statements need no savepoint of their own there.
 */
const OwnTransaction = Context.Reference<boolean>("langgraph-checkpoint-effect/sql/OwnTransaction", {
  defaultValue: () => false
})

/**
 * Runs one {@link Statement} and decodes its rows; `retryable` narrows which
 * failures are retried (default: every retryable one).
 *
 * @since 0.1.0
 */
export type Runner = <Input, Row extends object, Output>(
  operation: string,
  statement: Statement<Input, Row, Output>,
  input: Input,
  retryable?: (error: SqlError.SqlError) => boolean
) => Effect.Effect<Output, StorageFailure>

/**
 * The statement runner over the `SqlClient` in context, the one every SQL
 * reader shares (the driver and the inspector). One statement on its own is
 * retried by the policy. Inside a transaction the caller opened it joins that
 * transaction (in a savepoint, so a failure leaves the transaction usable)
 * and fails at once: the caller decides, and its own retry restarts its whole
 * transaction.
 *
 * @since 0.1.0
 */
export const runner = Effect.fnUntraced(function*(
  options: Pick<SqlDriverOptions, "statementTimeout"> = {}
) {
  const sql = yield* SqlClient.SqlClient
  const policy = yield* Retry.RetryPolicy
  const reconnect = yield* RetryLoop.Reconnect
  const timeout = options.statementTimeout === undefined
    ? undefined
    : Duration.fromInputUnsafe(options.statementTimeout)
  const bounded = <A, R>(statement: Effect.Effect<A, SqlError.SqlError, R>) =>
    timeout === undefined
      ? statement
      : Effect.timeoutOrElse(statement, { duration: timeout, orElse: () => Effect.fail(timedOut(timeout)) })

  const run: Runner = <Input, Row extends object, Output>(
    operation: string,
    { decode, params, text }: Statement<Input, Row, Output>,
    input: Input,
    retryable?: (error: SqlError.SqlError) => boolean
  ) => {
    const statement = bounded(sql.unsafe<Row>(text, params(input)))
    const rows = Effect.contextWith((context: Context.Context<never>) =>
      Option.isNone(Context.getOption(context, sql.transactionService))
        ? statement.pipe(RetryLoop.retrying(operation, policy, reconnect, retryable))
        : Context.get(context, OwnTransaction)
        ? statement.pipe(Effect.mapError((cause) => RetryLoop.failure(operation, cause)))
        : sql.withTransaction(statement).pipe(Effect.mapError((cause) => RetryLoop.failure(operation, cause)))
    )
    return Effect.map(rows, (rows) => decode(rows, input))
  }
  return run
})

/**
 * Builds the driver over the `SqlClient` in context.
 *
 * @since 0.1.0
 */
export const make = Effect.fnUntraced(function*(
  tables: Tables,
  options: SqlDriverOptions & { readonly dialect?: Dialect | undefined } = {}
) {
  const sql = yield* SqlClient.SqlClient
  const q = statements(tables, options.dialect)
  const pageSize = options.pageSize ?? 100
  const policy = yield* Retry.RetryPolicy
  const reconnect = yield* RetryLoop.Reconnect
  const run = yield* runner(options)

  /**
   * Writes as statements of many calls each, or one alone. Many are run
   * again only when the endpoint failed (a failure one of them may have
   * caused, group commit answers by splitting them).
   */
  const batches: GroupCommit.Batches = {
    put: (calls) => run("put", q.put(calls), calls, Retry.isEndpointFailure),
    putOne: (call) => Effect.map(run("put", q.putOne(call), [call]), (outcomes) => outcomes[0]!),
    putWrites: (calls) => run("putWrites", q.putWrites(calls), calls, Retry.isEndpointFailure),
    putWritesOne: (call) => Effect.map(run("putWrites", q.putWritesOne(call), [call]), (outcomes) => outcomes[0]!)
  }
  const alone = GroupCommit.alone(batches)
  const grouped = options.groupCommit === false ? alone : GroupCommit.make(batches, options.groupCommit)
  /** Inside a caller's transaction a call goes alone: it commits (or not) with that transaction. */
  const writing = <A>(write: (writer: typeof alone) => Effect.Effect<A, StorageFailure>) =>
    Effect.contextWith((context: Context.Context<never>) =>
      write(Option.isSome(Context.getOption(context, sql.transactionService)) ? alone : grouped)
    )

  const driver: StorageDriver = {
    put: (row, blobs, shared, epoch) => writing((writer) => writer.put({ row, blobs, shared, epoch })),

    putWrites: (checkpoint, writes, pieces, epoch) =>
      writes.length === 0
        ? Effect.succeed("stored")
        : writing((writer) => writer.putWrites({ checkpoint, writes, pieces, epoch })),

    getTuple: (location, known) =>
      run("getTuple", location.checkpoint_id === undefined ? q.getLatest : q.getTuple, { ...location, known }),

    list: (selection) =>
      // Keyset pages: each page resumes after the last row of the previous one.
      Stream.paginate(
        { after: undefined as StoredCheckpoint["row"] | undefined, left: selection.limit ?? Infinity },
        ({ after, left }) => {
          const limit = Math.min(pageSize, left)
          return run("list", selection.thread_id === undefined ? q.listAll : q.listThread, { selection, after, limit })
            .pipe(Effect.map((page) => {
              const last = page.at(-1)?.row
              const more = page.length === limit && left - page.length > 0 && last !== undefined
              return [page, more ? Option.some({ after: last, left: left - page.length }) : Option.none()] as const
            }))
        }
      ),

    channelWrites: (checkpoint, channel) => run("getTuple", q.channelWrites, { ...checkpoint, channel }),

    ancestors: (location, channels, known) =>
      run(
        "getDeltaChannelHistory",
        location.checkpoint_id === undefined ? q.ancestorsOfLatest : q.ancestorsOf,
        { ...location, channels, known }
      ),

    // Holding the thread, so that no put is between its checks and its commit.
    deleteThread: (thread_id) => driver.exclusive(thread_id, run("deleteThread", q.deleteThread, { thread_id })),

    threadExists: (thread_id) => run("threadExists", q.threadExists, { thread_id }),

    threadIndex: (thread_id) => run("threadIndex", q.threadIndex, { thread_id }),

    setParents: (thread_id, checkpoints) =>
      checkpoints.length === 0 ? Effect.void : run("setParents", q.setParents, { thread_id, checkpoints }),

    threads: run("threads", q.threads, {}),

    threadsOfRuns: (run_ids) => run("deleteForRuns", q.threadsOfRuns, { run_ids }),

    remove: (thread_id, checkpoints) => run("remove", q.remove, { thread_id, checkpoints }),

    threadRows: (thread_id) => run("threadRows", q.threadRows, { thread_id }),

    writeThread: (rows) => run("writeThread", q.writeThread, rows),

    threadRecord: (thread_id) => run("getThread", q.threadRecord, { thread_id }),

    setThreadRecord: (thread_id, metadata, merge) =>
      run("setThread", merge ? q.mergeThreadRecord : q.setThreadRecord, { thread_id, metadata }),

    createThreadRecord: (thread_id, metadata) => run("createThread", q.createThreadRecord, { thread_id, metadata }),

    searchThreadRecords: (query) => run("searchThreads", q.searchThreadRecords(query), query),

    claimThread: (thread_id, row) =>
      row === undefined
        ? run("claimThread", q.claimThread, { thread_id })
        : run("claimThread", q.claimThreadForRun, { row }),

    setThreadState: (thread_id, status, values) =>
      run("setThreadState", q.setThreadState, { thread_id, status, values }),

    putRunRecord: (row, thread) => run("putRun", q.putRunRecord, { row, thread }),

    runRecord: (thread_id, run_id) => run("getRun", q.runRecord, { thread_id, run_id }),

    runRecords: (thread_id, query) => run("listRuns", q.runRecords(query.status), { thread_id, ...query }),

    deleteRunRecord: (thread_id, run_id) => run("deleteRun", q.deleteRunRecord, { thread_id, run_id }),

    putCronRecord: (row) => run("putCron", q.putCronRecord, row),

    cronRecord: (cron_id) => run("getCron", q.cronRecord, { cron_id }),

    cronRecords: (query) => run("searchCrons", q.cronRecords, query),

    deleteCronRecord: (cron_id) => run("deleteCron", q.deleteCronRecord, { cron_id }),

    advanceCronRecord: (cron_id, from, to) => run("advanceCron", q.advanceCronRecord, { cron_id, from, to }),

    enableThreadRecords: Migrations.enableThreadRecords(tables, options.dialect).pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.provideService(Retry.RetryPolicy, policy),
      Effect.provideService(RetryLoop.Reconnect, reconnect)
    ),

    formatStatus: Effect.provideService(Migrations.status(tables), SqlClient.SqlClient, sql),

    raiseFormat: (level) =>
      Migrations.raise(tables, options.dialect, level).pipe(
        Effect.andThen(Migrations.status(tables)),
        Effect.provideService(SqlClient.SqlClient, sql),
        Effect.provideService(Retry.RetryPolicy, policy),
        Effect.provideService(RetryLoop.Reconnect, reconnect)
      ),

    exclusive: (thread_id, effect) => {
      const transaction = sql.withTransaction(
        run("lockThread", q.lockThread, { thread_id }).pipe(
          Effect.andThen(effect),
          Effect.provideService(OwnTransaction, true)
        )
      )
      // Run again whole on a retryable failure (a 40001 of one of its
      // statements or of COMMIT), unless it joins a transaction already open:
      // then the outer one decides. Its work reads before it writes, so a
      // second run redoes it from what is stored then.
      const retried = transaction.pipe(
        Effect.map((value) => ({ ok: true as const, value })),
        Effect.catch((error) => {
          if (SqlError.isSqlError(error)) return Effect.fail(error)
          return error instanceof StorageFailure && error.retryable && SqlError.isSqlError(error.cause)
            ? Effect.fail(error.cause)
            : Effect.succeed({ ok: false as const, error })
        }),
        RetryLoop.retrying("exclusive", policy, reconnect),
        Effect.flatMap((outcome) => outcome.ok ? Effect.succeed(outcome.value) : Effect.fail(outcome.error))
      )
      return Effect.flatMap(
        Effect.serviceOption(sql.transactionService),
        (open) =>
          Option.isSome(open)
            ? transaction.pipe(
              Effect.mapError((error) => SqlError.isSqlError(error) ? RetryLoop.failure("exclusive", error) : error)
            )
            : retried
      )
    }
  }
  return driver
})
