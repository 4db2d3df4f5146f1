/**
 * The reference model of the checkpointer contract: what every read must
 * return after any sequence of writes. Written from the contract
 * (`BaseCheckpointSaver` and LangGraph's validation suite), independently of
 * any driver in this library.
 *
 * @since 0.1.0
 */
import {
  type CheckpointPendingWrite,
  compareWritesSortKeys,
  type DeltaChannelHistory,
  WRITES_IDX_MAP,
  writesSortKey
} from "@langchain/langgraph-checkpoint"

/**
 * A checkpoint as it was put.
 *
 * @since 0.1.0
 */
export interface StoredCheckpoint {
  readonly thread_id: string
  readonly checkpoint_ns: string
  readonly id: string
  readonly parent: string | undefined
  readonly values: ReadonlyMap<string, unknown>
  readonly versions: Readonly<Record<string, number | string>>
  readonly versionsSeen: Readonly<Record<string, Readonly<Record<string, number | string>>>>
  readonly ts: string
  readonly metadata: Readonly<Record<string, unknown>>
}

interface StoredWrite {
  readonly task_id: string
  readonly task_path: string
  readonly idx: number
  readonly channel: string
  readonly value: unknown
}

const key = (...parts: ReadonlyArray<string | number>) => JSON.stringify(parts)

/** LangGraph's trigger channels: never DeltaChannels, so never read back. */
const isTrigger = (channel: string) =>
  channel === "__start__" || channel === "__pregel_tasks" || channel.startsWith("branch:to:") ||
  channel.startsWith("join:")

/**
 * The reference checkpointer: checkpoints and pending writes as the contract
 * says every saver must return them.
 *
 * @since 0.1.0
 */
export class Model {
  readonly checkpoints: Array<StoredCheckpoint> = []
  readonly #writes = new Map<string, Map<string, StoredWrite>>()

  /** The checkpoints of a namespace, oldest first. */
  of(thread_id: string, checkpoint_ns: string): Array<StoredCheckpoint> {
    return this.checkpoints
      .filter((c) => c.thread_id === thread_id && c.checkpoint_ns === checkpoint_ns)
      .sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  }

  latest(thread_id: string, checkpoint_ns: string): StoredCheckpoint | undefined {
    return this.of(thread_id, checkpoint_ns).at(-1)
  }

  find(thread_id: string, checkpoint_ns: string, id: string | undefined): StoredCheckpoint | undefined {
    return id === undefined ? undefined : this.of(thread_id, checkpoint_ns).find((c) => c.id === id)
  }

  put(checkpoint: StoredCheckpoint): void {
    const index = this.checkpoints.findIndex((c) =>
      c.thread_id === checkpoint.thread_id && c.checkpoint_ns === checkpoint.checkpoint_ns && c.id === checkpoint.id
    )
    if (index >= 0) this.checkpoints.splice(index, 1, checkpoint)
    else this.checkpoints.push(checkpoint)
  }

  /** LangGraph's rule: special channels replace the task's earlier write; ordinary writes keep the first. */
  putWrites(
    target: StoredCheckpoint,
    writes: ReadonlyArray<readonly [string, unknown]>,
    task_id: string,
    task_path: string
  ) {
    const stored = this.#writes.get(key(target.thread_id, target.checkpoint_ns, target.id)) ?? new Map()
    this.#writes.set(key(target.thread_id, target.checkpoint_ns, target.id), stored)
    writes.forEach(([channel, value], index) => {
      const idx = Object.hasOwn(WRITES_IDX_MAP, channel) ? WRITES_IDX_MAP[channel]! : index
      const writeKey = key(task_id, idx)
      if (idx >= 0 && stored.has(writeKey)) return
      stored.set(writeKey, { task_id, task_path, idx, channel, value })
    })
  }

  /** The pending writes of a checkpoint, in `writesSortKey` order. */
  writes(target: StoredCheckpoint): Array<CheckpointPendingWrite> {
    return Array.from(this.#writes.get(key(target.thread_id, target.checkpoint_ns, target.id))?.values() ?? [])
      .map((write) => ({ write, sortKey: writesSortKey(write.task_path, write.task_id, write.idx) }))
      .sort((a, b) => compareWritesSortKeys(a.sortKey, b.sortKey))
      .map(({ write }) => [write.task_id, write.channel, write.value])
  }

  copyThread(source: string, target: string): void {
    for (const c of this.checkpoints.filter((c) => c.thread_id === source)) {
      this.checkpoints.push({ ...c, thread_id: target })
      const writes = this.#writes.get(key(source, c.checkpoint_ns, c.id))
      if (writes !== undefined) this.#writes.set(key(target, c.checkpoint_ns, c.id), new Map(writes))
    }
  }

  /** Points a checkpoint at another parent. */
  reparent(target: StoredCheckpoint, parent: string | undefined): void {
    this.checkpoints.splice(this.checkpoints.indexOf(target), 1, { ...target, parent })
  }

  /** Forgets one checkpoint and its writes (what a prune removed). */
  remove(target: StoredCheckpoint): void {
    this.checkpoints.splice(this.checkpoints.indexOf(target), 1)
    this.#writes.delete(key(target.thread_id, target.checkpoint_ns, target.id))
  }

  deleteThread(thread_id: string): void {
    for (let i = this.checkpoints.length - 1; i >= 0; i--) {
      if (this.checkpoints[i]!.thread_id === thread_id) this.checkpoints.splice(i, 1)
    }
    for (const writesKey of this.#writes.keys()) {
      if ((JSON.parse(writesKey) as Array<string>)[0] === thread_id) this.#writes.delete(writesKey)
    }
  }

  /**
   * What `prune` keep_latest keeps of a thread: each namespace's latest
   * checkpoint and, for each channel LangGraph reads back from it (a version
   * and no stored value, not a trigger channel), its ancestors up to the
   * nearest one storing the channel, else up to the farthest one writing to it.
   */
  keptByPrune(thread_id: string): Set<StoredCheckpoint> {
    const kept = new Set<StoredCheckpoint>()
    for (
      const checkpoint_ns of new Set(
        this.checkpoints.filter((c) => c.thread_id === thread_id).map((c) => c.checkpoint_ns)
      )
    ) {
      const head = this.latest(thread_id, checkpoint_ns)!
      kept.add(head)
      const chain: Array<StoredCheckpoint> = []
      for (let at = this.find(thread_id, checkpoint_ns, head.parent); at !== undefined && !chain.includes(at);) {
        chain.push(at)
        at = this.find(thread_id, checkpoint_ns, at.parent)
      }
      let depth = 0
      for (const channel of Object.keys(head.versions)) {
        if (head.values.has(channel) || isTrigger(channel)) continue
        const seed = chain.findIndex((c) => c.values.has(channel))
        const end = seed >= 0 ? seed : chain.findLastIndex((c) => this.writes(c).some(([, ch]) => ch === channel))
        depth = Math.max(depth, end + 1)
      }
      for (const c of chain.slice(0, depth)) kept.add(c)
    }
    return kept
  }

  /** `getDeltaChannelHistory`: writes on the parent chain back to the nearest stored value. */
  deltaHistory(target: StoredCheckpoint, channels: ReadonlyArray<string>): Record<string, DeltaChannelHistory> {
    const collected = new Map(channels.map((channel) => [channel, [] as Array<CheckpointPendingWrite>]))
    const seeds = new Map<string, unknown>()
    const remaining = new Set(channels)
    let current = this.find(target.thread_id, target.checkpoint_ns, target.parent)
    while (current !== undefined && remaining.size > 0) {
      const writes = this.writes(current).filter(([, channel]) => remaining.has(channel))
      for (const write of writes.reverse()) collected.get(write[1])!.push(write)
      for (const channel of Array.from(remaining)) {
        if (current.values.has(channel)) {
          seeds.set(channel, current.values.get(channel))
          remaining.delete(channel)
        }
      }
      current = this.find(current.thread_id, current.checkpoint_ns, current.parent)
    }
    return Object.fromEntries(channels.map((channel) => {
      const writes = collected.get(channel)!.reverse()
      return [channel, seeds.has(channel) ? { writes, seed: seeds.get(channel) } : { writes }]
    }))
  }
}
