/**
 * One sequence's run against a saver: the model it builds up beside the
 * saver, and what every step shares (picking targets, putting a checkpoint
 * on both, reading a thread back, tuples as the contract compares them).
 *
 * @since 0.1.0
 */
import type { RunnableConfig } from "@langchain/core/runnables"
import { type BaseCheckpointSaver, type CheckpointTuple, uuid6 } from "@langchain/langgraph-checkpoint"
import { Model, type StoredCheckpoint } from "./Model.ts"
import { names, type Value } from "./Operations.ts"
import { materialize } from "./Values.ts"
import { type At, canonical, expectEqual } from "./Violation.ts"

/**
 * The state of one sequence's run.
 *
 * @since 0.1.0
 */
export class Run {
  /** The saver under test. */
  readonly saver: BaseCheckpointSaver
  /** What every read must return. */
  readonly model = new Model()
  #counter = 0
  /** The checkpoint put last. */
  #last: StoredCheckpoint | undefined

  constructor(saver: BaseCheckpointSaver) {
    this.saver = saver
  }

  /** The item at `index` (modulo their number), or the last one put if among them (else the last item). */
  pick<A>(items: ReadonlyArray<A>, index: number | "last"): A | undefined {
    const last = this.#last as A
    return items.length === 0
      ? undefined
      : index === "last"
      ? (items.includes(last) ? last : items.at(-1))
      : items[index % items.length]
  }

  /** Puts a checkpoint after `parent` on the saver and the model. */
  async putCheckpoint(
    thread_id: string,
    checkpoint_ns: string,
    parent: StoredCheckpoint | undefined,
    changes: ReadonlyArray<{ readonly channel: number; readonly value: Value | null }>,
    extra: Record<string, unknown>
  ): Promise<{ readonly stored: StoredCheckpoint; readonly returned: RunnableConfig }> {
    const values = new Map(parent?.values ?? [])
    const versions: Record<string, number | string> = { ...parent?.versions }
    const newVersions: Record<string, number | string> = {}
    for (const change of changes) {
      const channel = names.channels[change.channel]!
      if (change.value === null) values.delete(channel)
      else values.set(channel, materialize(change.value))
      const next = this.saver.getNextVersion(versions[channel] as never) as number | string
      versions[channel] = next
      newVersions[channel] = next
    }
    const stored: StoredCheckpoint = {
      thread_id,
      checkpoint_ns,
      id: uuid6(this.#counter++),
      parent: parent?.id,
      values,
      versions,
      versionsSeen: parent === undefined ? {} : { node: parent.versions },
      ts: new Date().toISOString(),
      metadata: { source: "loop", step: this.#counter, parents: {}, ...extra }
    }
    const returned = await this.saver.put(
      { configurable: { thread_id, checkpoint_ns, ...(parent === undefined ? {} : { checkpoint_id: parent.id }) } },
      {
        v: 4,
        id: stored.id,
        ts: stored.ts,
        channel_values: Object.fromEntries(values),
        channel_versions: versions,
        versions_seen: stored.versionsSeen
      },
      stored.metadata as never,
      newVersions
    )
    this.model.put(stored)
    this.#last = stored
    return { stored, returned }
  }

  /** Every checkpoint of a thread reads back as the model has it. */
  async expectThread(at: At, thread_id: string): Promise<void> {
    const expected = this.model.checkpoints.filter((c) => c.thread_id === thread_id).map((c) =>
      expectedTuple(this.model, c)
    )
    const actual: Array<ExpectedTuple> = []
    for await (const tuple of this.saver.list({ configurable: { thread_id } })) {
      actual.push(actualTuple(tuple) as ExpectedTuple)
    }
    const byPlace = (items: Array<ExpectedTuple>) =>
      [...items].sort((a, b) => canonical(a.config) < canonical(b.config) ? -1 : 1)
    expectEqual(at, `the checkpoints of thread ${JSON.stringify(thread_id)}`, byPlace(expected), byPlace(actual))
  }
}

/**
 * The config that names a checkpoint of the model.
 *
 * @since 0.1.0
 */
export const configOf = (c: StoredCheckpoint): RunnableConfig => ({
  configurable: { thread_id: c.thread_id, checkpoint_ns: c.checkpoint_ns, checkpoint_id: c.id }
})

/**
 * A generated batch of writes as `putWrites` takes them.
 *
 * @since 0.1.0
 */
export const writesOf = (
  spec: { readonly writes: ReadonlyArray<{ readonly channel: number; readonly value: Value }> }
): Array<[string, unknown]> =>
  spec.writes.map(({ channel, value }) => [names.writeChannels[channel]!, materialize(value)] as [string, unknown])

/**
 * What a tuple of the model looks like through the contract.
 *
 * @since 0.1.0
 */
export const expectedTuple = (model: Model, c: StoredCheckpoint) => ({
  config: { thread_id: c.thread_id, checkpoint_ns: c.checkpoint_ns, checkpoint_id: c.id },
  checkpoint: {
    v: 4,
    id: c.id,
    ts: c.ts,
    channel_values: Object.fromEntries(c.values),
    channel_versions: c.versions,
    versions_seen: c.versionsSeen
  },
  metadata: c.metadata,
  parentConfig: c.parent === undefined
    ? undefined
    : { thread_id: c.thread_id, checkpoint_ns: c.checkpoint_ns, checkpoint_id: c.parent },
  pendingWrites: model.writes(c)
})

/**
 * A tuple of the model as the contract compares it.
 *
 * @since 0.1.0
 */
export type ExpectedTuple = ReturnType<typeof expectedTuple>

/**
 * A saver's tuple in the shape of {@link expectedTuple}.
 *
 * @since 0.1.0
 */
export const actualTuple = (tuple: CheckpointTuple | undefined) =>
  tuple === undefined ? undefined : {
    config: {
      thread_id: tuple.config.configurable?.thread_id,
      checkpoint_ns: tuple.config.configurable?.checkpoint_ns ?? "",
      checkpoint_id: tuple.config.configurable?.checkpoint_id
    },
    checkpoint: tuple.checkpoint,
    metadata: tuple.metadata,
    parentConfig: tuple.parentConfig?.configurable === undefined ? undefined : {
      thread_id: tuple.parentConfig.configurable.thread_id,
      checkpoint_ns: tuple.parentConfig.configurable.checkpoint_ns ?? "",
      checkpoint_id: tuple.parentConfig.configurable.checkpoint_id
    },
    pendingWrites: tuple.pendingWrites ?? []
  }
