/**
 * The floors the savers are read against: what the same bytes cost written
 * as plainly as PostgreSQL allows.
 */
import { PgClient } from "@effect/sql-pg"
import type { RunnableConfig } from "@langchain/core/runnables"
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite
} from "@langchain/langgraph-checkpoint"
import { type Effect, ManagedRuntime, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { Client } from "pg"
import { admin } from "../test/support/databases.ts"
import type { ScratchDatabases } from "./databases.ts"
import { jsonBytes } from "./workload.mjs"

/**
 * One plain INSERT of the same bytes, through the same client stack as this
 * library (effect's PgClient); and the delta floor, a table that gets one
 * INSERT of each step's new message, whose size is the information the
 * steps added as stored.
 */
export const makeInsertFloor = async (databases: ScratchDatabases) => {
  const { url } = await databases.create("floor")
  const runtime = ManagedRuntime.make(PgClient.layer({ url: Redacted.make(url), maxConnections: 10 }))
  const run = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) => runtime.runPromise(effect)
  const statement = (text: string, parameters: ReadonlyArray<unknown> = []) =>
    run(SqlClient.SqlClient.use((sql) => sql.unsafe(text, parameters)))
  await statement("CREATE TABLE floor (id bigserial PRIMARY KEY, data bytea)")
  await statement("CREATE TABLE floor_delta (id bigserial PRIMARY KEY, data bytea)")
  return {
    insert: (bytes: Uint8Array) => statement("INSERT INTO floor (data) VALUES ($1)", [bytes]),
    insertDelta: (bytes: Uint8Array) => statement("INSERT INTO floor_delta (data) VALUES ($1)", [bytes]),
    deltaBytes: () =>
      admin(async (client) => {
        await client.query("VACUUM ANALYZE floor_delta")
        const result = await client.query<{ bytes: string }>("SELECT pg_total_relation_size('floor_delta') AS bytes")
        return Number(result.rows[0]!.bytes)
      }, url),
    close: () => runtime.dispose()
  }
}

/**
 * The two-commit floor as a saver a `ChatThread` can drive: each call is one
 * plain INSERT, by one node-postgres `Client`, of the bytes the call must make
 * durable. `putWrites` stores the writes as JSON; `put` the checkpoint with
 * its metadata and versions, its `messages` holding only the step's new
 * message (what the step added; the rest is already stored). A super-step
 * is then two commits of what it adds, with nothing else around them.
 */
export class TwoCommitFloor extends BaseCheckpointSaver {
  readonly client: Client

  private constructor(client: Client) {
    super()
    this.client = client
  }

  static async make(databases: ScratchDatabases) {
    const { url } = await databases.create("floor_commits")
    const client = new Client({ connectionString: url })
    await client.connect()
    await client.query("CREATE TABLE floor_commits (id bigserial PRIMARY KEY, data bytea)")
    return new TwoCommitFloor(client)
  }

  private async insert(value: unknown) {
    await this.client.query("INSERT INTO floor_commits (data) VALUES ($1)", [jsonBytes(value)])
  }

  override async putWrites(_config: RunnableConfig, writes: Array<PendingWrite>) {
    await this.insert(writes)
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions
  ): Promise<RunnableConfig> {
    const messages = checkpoint.channel_values.messages
    const added = Array.isArray(messages) ? messages.slice(-1) : []
    await this.insert({ checkpoint: { ...checkpoint, channel_values: { messages: added } }, metadata, newVersions })
    return { configurable: { ...config.configurable, checkpoint_id: checkpoint.id } }
  }

  override getTuple(): Promise<CheckpointTuple | undefined> {
    return Promise.reject(new Error("the two-commit floor only writes"))
  }

  // oxlint-disable-next-line require-yield -- the floor has nothing to list
  override async *list(): AsyncGenerator<CheckpointTuple> {
    throw new Error("the two-commit floor only writes")
  }

  override async deleteThread() {}

  close() {
    return this.client.end()
  }
}
