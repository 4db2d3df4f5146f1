/**
 * Differential testing against LangGraph's own saver: a scenario runs a real
 * graph through a `Probe`, which records everything a user can observe
 * (invoke results, every stream mode, `getState` with subgraphs,
 * `getStateHistory`, `list` and `getTuple`). Run once on `MemorySaver` and
 * once on a driver, the two recordings must be equal once ids and
 * timestamps, which differ between any two runs, are normalised.
 */
import type { RunnableConfig } from "@langchain/core/runnables"
import type { BaseCheckpointSaver, CheckpointTuple } from "@langchain/langgraph-checkpoint"
import type { SaverOptions } from "../../src/Saver.ts"

/** A config with LangGraph's own options. */
export type GraphConfig = RunnableConfig & { readonly durability?: "sync" | "async" | "exit" }

/** What a scenario needs of a compiled graph (a `CompiledStateGraph` or an `entrypoint`). */
export interface Runnable {
  invoke(input: unknown, config?: GraphConfig): Promise<unknown>
  stream(
    input: unknown,
    config?: GraphConfig & { readonly streamMode: Array<string>; readonly subgraphs: boolean }
  ): Promise<AsyncIterable<unknown>>
  getState(config: RunnableConfig, options?: { readonly subgraphs?: boolean }): Promise<unknown>
  getStateHistory(config: RunnableConfig, options?: Record<string, unknown>): AsyncIterableIterator<unknown>
  updateState(config: RunnableConfig, values: unknown, asNode?: string): Promise<RunnableConfig>
}

const STREAM_MODES = ["values", "updates", "debug", "messages", "checkpoints", "tasks", "custom"] as const

/** One observation: what was asked, and what came back (or the error it failed with). */
export type Observation = readonly [label: string, value: unknown]

export class Probe {
  readonly observations: Array<Observation> = []
  readonly #threads: Array<string> = []
  readonly saver: BaseCheckpointSaver

  constructor(saver: BaseCheckpointSaver) {
    this.saver = saver
  }

  /** A config for a new thread, whose checkpoints the final view lists. */
  thread(extra: Record<string, unknown> = {}): RunnableConfig & { configurable: { thread_id: string } } {
    const thread_id = `thread-${crypto.randomUUID()}`
    this.#threads.push(thread_id)
    return { configurable: { thread_id, ...extra } }
  }

  record(label: string, value: unknown): void {
    this.observations.push([label, value])
  }

  /** Records what a call returns, or the error it rejects with, and returns it. */
  async attempt<A>(label: string, run: () => Promise<A>): Promise<A | undefined> {
    try {
      const value = await run()
      this.record(label, value)
      return value
    } catch (error) {
      this.record(label, { $rejected: error })
      return undefined
    }
  }

  invoke(label: string, graph: Runnable, input: unknown, config: GraphConfig) {
    return this.attempt(`${label}: invoke`, () => graph.invoke(input, config))
  }

  /**
   * Every stream mode at once, subgraphs included: each namespace's chunks
   * in the order they came. (How the chunks of tasks running at once
   * interleave depends on timing, and a slower saver changes it; within a
   * namespace, the order is LangGraph's.) A stream that fails loses the
   * chunks still queued, depending on timing too: steps expected to fail are
   * better observed with `invoke`.
   */
  stream(label: string, graph: Runnable, input: unknown, config: GraphConfig) {
    return this.attempt(`${label}: stream`, async () => {
      const namespaces = new Map<string, Array<unknown>>()
      const stream = await graph.stream(input, { ...config, streamMode: [...STREAM_MODES], subgraphs: true })
      for await (const chunk of stream) {
        const [namespace, ...rest] = chunk as [Array<string>, ...Array<unknown>]
        const key = namespace.join("|")
        const chunks = namespaces.get(key) ?? []
        namespaces.set(key, chunks)
        chunks.push(rest)
      }
      // Namespaces in a stable order: by name without ids (a stable sort: then as first seen).
      const masked = (namespace: string) => namespace.replace(UUID, "<id>")
      return [...namespaces].map(([namespace, chunks]) => ({ namespace, chunks }))
        .sort((a, b) => compare(masked(a.namespace), masked(b.namespace)))
    })
  }

  /** The graph's view of a thread: its state with subgraphs, and its history. */
  async state(label: string, graph: Runnable, config: RunnableConfig) {
    const state = await this.attempt(`${label}: getState`, () => graph.getState(config, { subgraphs: true }))
    await this.attempt(`${label}: getStateHistory`, async () => {
      const history: Array<unknown> = []
      for await (const snapshot of graph.getStateHistory(config)) history.push(snapshot)
      return history
    })
    return state
  }

  /**
   * The saver's view of every thread the scenario made: all checkpoints
   * (`list` without a namespace, in id order: across namespaces, savers
   * order differently and LangGraph promises nothing), each namespace's
   * `list` in the saver's own order, and `getTuple` of every checkpoint and
   * of each namespace's latest.
   */
  async storage() {
    for (const thread_id of this.#threads) {
      const all = await collect(this.saver, { configurable: { thread_id } })
      all.sort((a, b) => compare(idOf(b), idOf(a)) || compare(nsOf(a), nsOf(b)))
      this.record(`storage ${thread_id}: list`, all)
      const namespaces = [...new Set(all.map(nsOf))]
      for (const checkpoint_ns of namespaces) {
        const config = { configurable: { thread_id, checkpoint_ns } }
        this.record(`storage ${thread_id} ns ${checkpoint_ns}: list`, await collect(this.saver, config))
        this.record(`storage ${thread_id} ns ${checkpoint_ns}: latest`, await this.saver.getTuple(config))
        this.record(
          `storage ${thread_id} ns ${checkpoint_ns}: list limit 2 before the latest`,
          await collect(this.saver, config, {
            limit: 2,
            before: all.find((tuple) => nsOf(tuple) === checkpoint_ns)!.config
          })
        )
      }
      for (const tuple of all) this.record(`storage getTuple ${idOf(tuple)}`, await this.saver.getTuple(tuple.config))
    }
  }
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
const idOf = (tuple: CheckpointTuple) => String(tuple.config.configurable?.checkpoint_id)
const nsOf = (tuple: CheckpointTuple) => String(tuple.config.configurable?.checkpoint_ns ?? "")

const collect = async (
  saver: BaseCheckpointSaver,
  config: RunnableConfig,
  options?: Parameters<BaseCheckpointSaver["list"]>[1]
) => {
  const tuples: Array<CheckpointTuple> = []
  for await (const tuple of saver.list(config, options)) tuples.push(tuple)
  return tuples
}

/** A scenario: a program over a probe, the same for every saver. */
export interface Scenario {
  readonly name: string
  readonly run: (probe: Probe) => Promise<void>
  /** The saver to compare with (default: a new `MemorySaver`). */
  readonly oracle?: () => BaseCheckpointSaver
  /** Options of the saver under test. */
  readonly options?: SaverOptions
}

/** Runs a scenario on a saver and returns its recording, normalised. */
export const observe = async (scenario: Scenario, saver: BaseCheckpointSaver): Promise<unknown> => {
  const probe = new Probe(saver)
  await scenario.run(probe)
  await probe.storage()
  return normalise(probe.observations)
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g
/** An interrupt's id: XXH3 of its namespace, which holds task ids. */
const HASH = /^[0-9a-f]{16}$|^[0-9a-f]{32}$/
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/
/**
 * Channel versions: LangGraph only compares them, and a saver may add a
 * fraction that keeps forks apart (this library's `nextVersion` does), so
 * they compare by their integer part.
 */
const VERSIONS = new Set(["channel_versions", "versions_seen"])

/**
 * A recording as plain data: ids (UUIDs anywhere in a string, interrupt
 * hashes) become `<id:n>` numbered by first appearance, so two recordings
 * agree exactly when their ids are used in the same places; timestamps
 * become `<ts>`; class instances keep their class name; keys are sorted and
 * `undefined` properties dropped, as `toEqual` does. A config's `callbacks`
 * (the stream's own handlers, passed to tasks) are not stored data and are
 * left out, and so are LangGraph's run-time keys in a `configurable`
 * (`__pregel_*`: the saver, functions, scratchpads, never stored), which
 * `MemorySaver` echoes back from the config it was asked with.
 */
export const normalise = (recording: unknown): unknown => {
  const ids = new Map<string, string>()
  const id = (raw: string) => {
    let named = ids.get(raw)
    if (named === undefined) ids.set(raw, named = `<id:${ids.size + 1}>`)
    return named
  }
  const seen = new Set<object>()
  const walk = (value: unknown, versions: boolean, internal = false): unknown => {
    switch (typeof value) {
      case "string":
        if (TIMESTAMP.test(value)) return "<ts>"
        if (HASH.test(value)) return id(value)
        return value.replace(UUID, id)
      case "number":
        return versions ? Math.floor(value) : value
      case "bigint":
        return `${value}n`
      case "function":
        return `<function ${value.name}>`
      case "symbol":
        return value.toString()
      case "object":
        break
      default:
        return value
    }
    if (value === null) return null
    if (value instanceof Date) return "<ts>"
    if (value instanceof Uint8Array) return { $bytes: Buffer.from(value).toString("base64") }
    if (seen.has(value)) return "<cycle>"
    seen.add(value)
    try {
      if (Array.isArray(value)) return value.map((item) => walk(item, versions))
      if (value instanceof Map) return { $map: [...value].map((entry) => walk(entry, versions)) }
      if (value instanceof Set) return { $set: [...value].map((item) => walk(item, versions)) }
      const out: Record<string, unknown> = {}
      const prototype = Object.getPrototypeOf(value)
      if (prototype !== Object.prototype && prototype !== null) out.$class = prototype.constructor?.name
      if (value instanceof Error) Object.assign(out, { name: value.name, message: walk(value.message, false) })
      // Ids are numbered in the order they are met: walk keys sorted as they would be without ids.
      const object = isCheckpoint(value) ? withVersionedValues(value) : value as Record<string, unknown>
      const keys = Object.keys(object).map((key) => [key.replace(UUID, "<id>"), key] as const).sort(byFirst)
      for (const [, key] of keys) {
        const item = object[key]
        if (item === undefined || key === "callbacks" || (internal && key.startsWith("__pregel_"))) continue
        out[walk(key, false) as string] = walk(item, versions || VERSIONS.has(key), key === "configurable")
      }
      return out
    } finally {
      seen.delete(value)
    }
  }
  return walk(recording, false)
}

interface CheckpointLike {
  readonly channel_values: Record<string, unknown>
  readonly channel_versions: Record<string, unknown>
}

const isCheckpoint = (value: object): value is CheckpointLike =>
  "channel_values" in value && "channel_versions" in value && typeof value.channel_values === "object" &&
  value.channel_values !== null && typeof value.channel_versions === "object" && value.channel_versions !== null

/**
 * A checkpoint's values of the channels it has a version of. A channel
 * without a version was never written: its value is the channel's initial
 * one, which `MemorySaver` keeps and LangGraph's `PostgresSaver` (like this
 * library) does not store, and LangGraph reads the same either way.
 */
const withVersionedValues = (checkpoint: CheckpointLike): Record<string, unknown> => ({
  ...checkpoint,
  channel_values: Object.fromEntries(
    Object.entries(checkpoint.channel_values).filter(([channel]) => Object.hasOwn(checkpoint.channel_versions, channel))
  )
})

/** A difference between two normalised recordings: where, and each side's value there. */
export interface Difference {
  readonly path: string
  readonly oracle: unknown
  readonly subject: unknown
}

const MISSING = Symbol("missing")

const byFirst = (a: readonly [string, string], b: readonly [string, string]) =>
  compare(a[0], b[0]) || compare(a[1], b[1])

/**
 * Where a saver may hold more than the oracle: a delta channel's
 * `DeltaSnapshot` in a checkpoint that did not carry one. Savers that store a
 * value per channel version (LangGraph's `PostgresSaver`, this library)
 * return, for a delta channel unchanged since the checkpoint that stored its
 * snapshot, that snapshot: the channel's value at that version, which
 * LangGraph reads as it reads the delta history `MemorySaver` makes it walk
 * (the recorded states compare the values).
 */
const mayHoldMore = (path: string, subject: unknown) =>
  /\.channel_values\.[^.]+$/.test(path) && typeof subject === "object" && subject !== null &&
  (subject as { $class?: unknown }).$class === "DeltaSnapshot"

/** The first path (depth first, in order) where two normalised values differ. */
export const firstDifference = (oracle: unknown, subject: unknown, path = "$"): Difference | undefined => {
  if (Object.is(oracle, subject)) return undefined
  if (oracle === MISSING && mayHoldMore(path, subject)) return undefined
  const isObject = (value: unknown): value is object => typeof value === "object" && value !== null
  if (!isObject(oracle) || !isObject(subject) || Array.isArray(oracle) !== Array.isArray(subject)) {
    return { path, oracle, subject }
  }
  if (Array.isArray(oracle) && Array.isArray(subject)) {
    for (let i = 0; i < Math.max(oracle.length, subject.length); i++) {
      const found = firstDifference(
        i < oracle.length ? oracle[i] : MISSING,
        i < subject.length ? subject[i] : MISSING,
        // A recording's entries are [label, value]: name them by label.
        path === "$" && Array.isArray(oracle[i])
          ? `$[${i}] (${String((oracle[i] as Array<unknown>)[0])})`
          : `${path}[${i}]`
      )
      if (found !== undefined) return found
    }
    return undefined
  }
  const a = oracle as Record<string, unknown>
  const b = subject as Record<string, unknown>
  for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    const found = firstDifference(
      Object.hasOwn(a, key) ? a[key] : MISSING,
      Object.hasOwn(b, key) ? b[key] : MISSING,
      `${path}.${key}`
    )
    if (found !== undefined) return found
  }
  return undefined
}

/** A difference as a test failure's message. */
export const describeDifference = (difference: Difference) => {
  const show = (value: unknown) => value === MISSING ? "(missing)" : JSON.stringify(value, undefined, 1)?.slice(0, 800)
  return `first difference at ${difference.path}\n  MemorySaver: ${show(difference.oracle)}\n  this saver:  ${
    show(difference.subject)
  }`
}
