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
import { ManagedRuntime, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { Client } from "pg"
import type { ScratchDatabases } from "./databases.ts"
import { jsonBytes } from "./workload.mjs"

/**
 * The delta floor: a table that gets one INSERT of each step's new message,
 * whose size is the information the steps added, as stored.
 */
export const makeDeltaFloor = async (databases: ScratchDatabases) => {
  const { url } = await databases.create("floor_delta")
  const client = new Client({ connectionString: url })
  await client.connect()
  await client.query("CREATE TABLE floor_delta (id bigserial PRIMARY KEY, data bytea)")
  return {
    insert: (bytes: Uint8Array) => client.query("INSERT INTO floor_delta (data) VALUES ($1)", [bytes]),
    bytes: async () => {
      await client.query("VACUUM ANALYZE floor_delta")
      const result = await client.query<{ bytes: string }>("SELECT pg_total_relation_size('floor_delta') AS bytes")
      return Number(result.rows[0]!.bytes)
    },
    close: () => client.end()
  }
}

/**
 * The two-commit floor as a saver a `ChatThread` can drive: each call is one
 * plain INSERT, by one connection of its own, of the bytes the call must
 * make durable. `putWrites` stores the writes as JSON (one commit of the
 * same bytes a `putWrites` makes durable); `put` the checkpoint with its
 * metadata and versions, its `messages` holding only the step's new message
 * (what the step added; the rest is already stored). A super-step is then
 * two commits of what it adds, with nothing else around them. The client is
 * node-postgres's `Client`, or (`"effect"`) the client stack this library
 * runs on: effect's `PgClient` over one connection, as its calls go.
 */
export class TwoCommitFloor extends BaseCheckpointSaver {
  readonly insert: (bytes: Uint8Array) => Promise<unknown>
  readonly close: () => Promise<void>

  private constructor(insert: (bytes: Uint8Array) => Promise<unknown>, close: () => Promise<void>) {
    super()
    this.insert = insert
    this.close = close
  }

  static async make(databases: ScratchDatabases, client: "node-postgres" | "effect" = "node-postgres") {
    const { url } = await databases.create(`floor_commits_${client.replace("-", "_")}`)
    const text = "INSERT INTO floor_commits (data) VALUES ($1)"
    if (client === "effect") {
      const runtime = ManagedRuntime.make(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 }))
      const statement = (query: string, parameters: ReadonlyArray<unknown> = []) =>
        runtime.runPromise(SqlClient.SqlClient.use((sql) => sql.unsafe(query, parameters)))
      await statement("CREATE TABLE floor_commits (id bigserial PRIMARY KEY, data bytea)")
      return new TwoCommitFloor((bytes) => statement(text, [bytes]), () => runtime.dispose())
    }
    const pg = new Client({ connectionString: url })
    await pg.connect()
    await pg.query("CREATE TABLE floor_commits (id bigserial PRIMARY KEY, data bytea)")
    return new TwoCommitFloor((bytes) => pg.query(text, [bytes]), () => pg.end())
  }

  override async putWrites(_config: RunnableConfig, writes: Array<PendingWrite>) {
    await this.insert(jsonBytes(writes))
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions
  ): Promise<RunnableConfig> {
    const messages = checkpoint.channel_values.messages
    const added = Array.isArray(messages) ? messages.slice(-1) : []
    await this.insert(
      jsonBytes({ checkpoint: { ...checkpoint, channel_values: { messages: added } }, metadata, newVersions })
    )
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
}
