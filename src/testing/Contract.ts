/**
 * The property-based contract kit: runs generated sequences of operations
 * against any `BaseCheckpointSaver` and checks every result against the
 * reference {@link Model}. A failure shrinks to a minimal sequence and is
 * reported as a readable script with the token that replays it.
 *
 * @since 0.1.0
 */
import type { RunnableConfig } from "@langchain/core/runnables"
import { type BaseCheckpointSaver, type CheckpointTuple, uuid6 } from "@langchain/langgraph-checkpoint"
import { Arbitrary, Data, Effect, type Layer } from "effect"
import type { CheckpointStorage } from "../CheckpointStorage.ts"
import { EffectCheckpointSaver } from "../Saver.ts"
import { Model, type StoredCheckpoint } from "./Model.ts"
import { names, type Operation, operations, type Value } from "./Operations.ts"

/**
 * A result that differs from the model.
 *
 * @since 0.1.0
 */
export class ContractViolation extends Data.TaggedError("ContractViolation")<{
  readonly step: number
  readonly operation: string
  readonly detail: string
}> {
  override get message(): string {
    return `step ${this.step} (${this.operation}): ${this.detail}`
  }
}

/**
 * A canonical text for comparing values: sorted keys, bytes tagged, undefined kept.
 *
 * @since 0.1.0
 */
export const canonical = (value: unknown): string =>
  JSON.stringify(value, function(this: unknown, key: string, current: unknown) {
    const raw = key === "" ? value : (this as Record<string, unknown>)[key]
    if (raw instanceof Uint8Array) return { $bytes: Buffer.from(raw).toString("base64") }
    if (raw === undefined) return { $undefined: true }
    if (current !== null && typeof current === "object" && !Array.isArray(current)) {
      return Object.fromEntries(Object.keys(current).sort().map((k) => [k, (current as Record<string, unknown>)[k]]))
    }
    return current
  }) ?? "undefined"

const tagged = <T extends "Large" | "List">(value: Value, tag: T): value is Extract<Value, { readonly _tag: T }> =>
  typeof value === "object" && value !== null && !Array.isArray(value) && "_tag" in value && value._tag === tag

/** Element `i` of the sequence lists are cut from (large enough to be shared): every seventh holds bytes. */
const listElement = (i: number): unknown =>
  i % 7 === 3
    ? { id: i, bytes: new Uint8Array([i, 255 - i, 0]) }
    : { id: i, text: `element ${i} of a list \u{1F600}`.padEnd(80, " ·") }

/** A generated value as LangGraph would hold it (JSON normalised, large strings and lists built). */
const materialize = (value: Value): unknown => {
  if (value instanceof Uint8Array) return new Uint8Array(value)
  if (tagged(value, "Large")) return "x".repeat(Number(value.size))
  if (tagged(value, "List")) {
    return Array.from({ length: value.length }, (_, i) => i).filter((i) => i !== value.without).map(listElement)
  }
  // Through JSON once: -0 becomes 0, as any JSON store returns it; "__proto__" keys are left out.
  return JSON.parse(JSON.stringify(value, (key, current: unknown) => key === "__proto__" ? undefined : current))
}

const describeValue = (value: Value): string => {
  const text = value instanceof Uint8Array
    ? `Uint8Array(${value.length})`
    : tagged(value, "Large")
    ? `"x" x ${String(value.size)}`
    : tagged(value, "List")
    ? `list(${value.length}${value.without === null ? "" : ` without ${value.without}`})`
    : JSON.stringify(value)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

const describeWrites = (writes: ReadonlyArray<{ readonly channel: number; readonly value: Value }>) =>
  `[${writes.map((w) => `${names.writeChannels[w.channel]}: ${describeValue(w.value)}`).join(", ")}]`

/**
 * One operation as a line of a reproduction script.
 *
 * @since 0.1.0
 */
export const describe = (operation: Operation): string => {
  const at = (target: number | "last") => target === "last" ? "the last checkpoint" : `checkpoint #${target}`
  const thread = (i: number) => JSON.stringify(names.threads[i])
  const ns = (i: number) => JSON.stringify(names.namespaces[i])
  switch (operation._tag) {
    case "Put":
      return `put thread ${thread(operation.thread)} ns ${ns(operation.ns)} after ${operation.parent} ` +
        `set {${
          operation.changes.map((c) =>
            `${names.channels[c.channel]}: ${c.value === null ? "<none>" : describeValue(c.value)}`
          ).join(", ")
        }}` +
        (operation.metadata.length === 0
          ? ""
          : ` metadata {${
            operation.metadata.map((m) => `${names.metadataKeys[m.key]}: ${JSON.stringify(m.value)}`).join(", ")
          }}`)
    case "PutWrites":
      return `putWrites to ${at(operation.target)} task ${names.tasks[operation.task]} path ${
        JSON.stringify(names.taskPaths[operation.path])
      } ` +
        describeWrites(operation.writes) + (operation.again === null ? "" : `, then ${describeWrites(operation.again)}`)
    case "GetTuple":
      return `getTuple thread ${thread(operation.thread)} ns ${ns(operation.ns)} ${
        operation.target === "latest" ? "latest" : operation.target === "last" ? "last put" : `#${operation.target}`
      }`
    case "List":
      return `list thread ${operation.thread === "any" ? "any" : thread(operation.thread)} ns ${
        operation.ns === "any" ? "any" : ns(operation.ns)
      }` +
        `${operation.before === null ? "" : ` before ${at(operation.before)}`}${
          operation.limit === null ? "" : ` limit ${operation.limit}`
        }` +
        `${
          operation.filter === null
            ? ""
            : ` filter ${names.metadataKeys[operation.filter.key]}=${JSON.stringify(operation.filter.value)}`
        }`
    case "DeleteThread":
      return `deleteThread ${thread(operation.thread)}`
    case "DeltaHistory":
      return `getDeltaChannelHistory of ${at(operation.target)} for [${
        operation.channels.map((c) => names.channels[c]).join(", ")
      }]`
    case "CopyThread":
      return `copyThread ${thread(operation.thread)} to ${thread(operation.target)}${
        operation.replace ? " (replace)" : ""
      }`
    case "Prune":
      return `prune ${thread(operation.thread)} ${operation.strategy}`
    case "DeleteForRuns":
      return `deleteForRuns of the runs of ${operation.of.map(at).join(", ") || "no checkpoint"}${
        operation.unknown ? " and an unknown run" : ""
      }`
    case "Concurrent":
      return `at once, on ${at(operation.target)}: ` +
        operation.writers.map((w, i) => `task ${names.tasks[w.task]}#${i} writes ${describeWrites(w.writes)}`).join(
          "; "
        ) +
        (operation.siblings.length === 0 ? "" : `; ${operation.siblings.length} sibling checkpoint(s)`)
  }
}

/** Savers with the thread lifecycle methods of EffectCheckpointSaver. */
interface Lifecycle {
  copyThread(source: string, target: string, options: { readonly replace: boolean }): Promise<void>
  prune(threads: Array<string>, options: { readonly strategy: "keep_latest" | "delete" }): Promise<void>
  deleteForRuns(runIds: Array<string>): Promise<void>
}

const hasLifecycle = (saver: BaseCheckpointSaver): saver is BaseCheckpointSaver & Lifecycle =>
  typeof (saver as Partial<Lifecycle>).copyThread === "function" &&
  typeof (saver as Partial<Lifecycle>).prune === "function" &&
  typeof (saver as Partial<Lifecycle>).deleteForRuns === "function"

const namespacesOf = (
  checkpoints: ReadonlyArray<StoredCheckpoint>
) => [...new Set(checkpoints.map((c) => c.checkpoint_ns))]

const configOf = (c: StoredCheckpoint): RunnableConfig => ({
  configurable: { thread_id: c.thread_id, checkpoint_ns: c.checkpoint_ns, checkpoint_id: c.id }
})

/** What a tuple of the model looks like through the contract. */
const expectedTuple = (model: Model, c: StoredCheckpoint) => ({
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

const actualTuple = (tuple: CheckpointTuple | undefined) =>
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

const clip = (text: string) => text.length > 600 ? `${text.slice(0, 600)}…` : text

/**
 * Runs one sequence against a saver, checking every read against the model.
 * Fails with the first {@link ContractViolation} (or the saver's own error).
 *
 * @since 0.1.0
 */
export const check = (
  saver: BaseCheckpointSaver,
  sequence: ReadonlyArray<Operation>
): Effect.Effect<void, ContractViolation> =>
  Effect.tryPromise({
    try: () => run(saver, sequence),
    catch: (error) =>
      error instanceof ContractViolation
        ? error
        : new ContractViolation({ step: sequence.length, operation: "the whole sequence", detail: String(error) })
  })

const run = async (saver: BaseCheckpointSaver, sequence: ReadonlyArray<Operation>): Promise<void> => {
  const model = new Model()
  let counter = 0
  const nextId = () => uuid6(counter++)

  const expectEqual = (step: number, operation: Operation, what: string, expected: unknown, actual: unknown) => {
    const e = canonical(expected)
    const a = canonical(actual)
    if (e !== a) {
      throw new ContractViolation({
        step,
        operation: describe(operation),
        detail: `${what}\n  expected: ${clip(e)}\n  actual:   ${clip(a)}`
      })
    }
  }

  let last: StoredCheckpoint | undefined
  const pick = <A>(items: ReadonlyArray<A>, index: number | "last"): A | undefined =>
    items.length === 0
      ? undefined
      : index === "last"
      ? (items.includes(last as A) ? last as A : items.at(-1))
      : items[index % items.length]

  const putCheckpoint = async (
    thread_id: string,
    checkpoint_ns: string,
    parent: StoredCheckpoint | undefined,
    changes: ReadonlyArray<{ readonly channel: number; readonly value: Value | null }>,
    extra: Record<string, unknown>
  ) => {
    const values = new Map(parent?.values ?? [])
    const versions: Record<string, number | string> = { ...parent?.versions }
    const newVersions: Record<string, number | string> = {}
    for (const change of changes) {
      const channel = names.channels[change.channel]!
      if (change.value === null) values.delete(channel)
      else values.set(channel, materialize(change.value))
      const next = saver.getNextVersion(versions[channel] as never) as number | string
      versions[channel] = next
      newVersions[channel] = next
    }
    const stored: StoredCheckpoint = {
      thread_id,
      checkpoint_ns,
      id: nextId(),
      parent: parent?.id,
      values,
      versions,
      versionsSeen: parent === undefined ? {} : { node: parent.versions },
      ts: new Date().toISOString(),
      metadata: { source: "loop", step: counter, parents: {}, ...extra }
    }
    const returned = await saver.put(
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
    model.put(stored)
    last = stored
    return { stored, returned }
  }

  /** Every checkpoint of a thread reads back as the model has it. */
  const expectThread = async (step: number, operation: Operation, thread_id: string) => {
    const expected = model.checkpoints.filter((c) => c.thread_id === thread_id).map((c) => expectedTuple(model, c))
    const actual: Array<ReturnType<typeof expectedTuple>> = []
    for await (const tuple of saver.list({ configurable: { thread_id } })) {
      actual.push(actualTuple(tuple) as ReturnType<typeof expectedTuple>)
    }
    const byPlace = (items: Array<ReturnType<typeof expectedTuple>>) =>
      [...items].sort((a, b) => canonical(a.config) < canonical(b.config) ? -1 : 1)
    expectEqual(
      step,
      operation,
      `the checkpoints of thread ${JSON.stringify(thread_id)}`,
      byPlace(expected),
      byPlace(actual)
    )
  }

  const writesOf = (spec: { readonly writes: ReadonlyArray<{ readonly channel: number; readonly value: Value }> }) =>
    spec.writes.map(({ channel, value }) => [names.writeChannels[channel]!, materialize(value)] as [string, unknown])

  for (const [step, operation] of sequence.entries()) {
    try {
      await apply(step, operation)
    } catch (error) {
      if (error instanceof ContractViolation) throw error
      throw new ContractViolation({
        step,
        operation: describe(operation),
        detail: `the saver failed: ${error instanceof Error ? error.message : String(error)}`
      })
    }
  }

  async function apply(step: number, operation: Operation): Promise<void> {
    switch (operation._tag) {
      case "Put": {
        const thread_id = names.threads[operation.thread]!
        const checkpoint_ns = names.namespaces[operation.ns]!
        const parent = operation.parent === "none"
          ? undefined
          : operation.parent === "latest"
          ? model.latest(thread_id, checkpoint_ns)
          : pick(model.of(thread_id, checkpoint_ns), operation.parent)
        const extra = Object.fromEntries(operation.metadata.map((m) => [names.metadataKeys[m.key]!, m.value]))
        const { returned, stored } = await putCheckpoint(thread_id, checkpoint_ns, parent, operation.changes, extra)
        expectEqual(step, operation, "the config put returns", configOf(stored).configurable, {
          thread_id: returned.configurable?.thread_id,
          checkpoint_ns: returned.configurable?.checkpoint_ns,
          checkpoint_id: returned.configurable?.checkpoint_id
        })
        break
      }
      case "PutWrites": {
        const target = pick(model.checkpoints, operation.target)
        if (target === undefined) break
        const task = names.tasks[operation.task]!
        const path = names.taskPaths[operation.path]!
        for (const batch of [operation.writes, operation.again ?? []]) {
          if (batch.length === 0) continue
          const writes = writesOf({ writes: batch })
          await saver.putWrites(configOf(target), writes, task, path)
          model.putWrites(target, writes, task, path)
          expectEqual(
            step,
            operation,
            "the writes",
            model.writes(target),
            (await saver.getTuple(configOf(target)))?.pendingWrites ?? []
          )
        }
        break
      }
      case "GetTuple": {
        const thread_id = names.threads[operation.thread]!
        const checkpoint_ns = names.namespaces[operation.ns]!
        const target = operation.target === "latest"
          ? model.latest(thread_id, checkpoint_ns)
          : pick(model.of(thread_id, checkpoint_ns), operation.target)
        const config = operation.target === "latest" || target === undefined
          ? {
            configurable: {
              thread_id,
              checkpoint_ns,
              ...(target === undefined && operation.target !== "latest" ? { checkpoint_id: uuid6(-2) } : {})
            }
          }
          : configOf(target)
        const actual = actualTuple(await saver.getTuple(config))
        expectEqual(
          step,
          operation,
          "the tuple",
          target === undefined ? undefined : expectedTuple(model, target),
          actual
        )
        break
      }
      case "List": {
        const thread_id = operation.thread === "any" ? undefined : names.threads[operation.thread]!
        const checkpoint_ns = operation.ns === "any" ? undefined : names.namespaces[operation.ns]!
        const scope = model.checkpoints.filter((c) =>
          (thread_id === undefined || c.thread_id === thread_id) &&
          (checkpoint_ns === undefined || c.checkpoint_ns === checkpoint_ns)
        )
        const before = operation.before === null
          ? undefined
          : pick([...scope].sort((a, b) => a.id < b.id ? -1 : 1), operation.before)
        const filter = operation.filter === null
          ? undefined
          : { [names.metadataKeys[operation.filter.key]!]: operation.filter.value }
        // Only one namespace of one thread has an order the contract defines.
        const ordered = thread_id !== undefined && checkpoint_ns !== undefined
        const limit = ordered && operation.limit !== null ? operation.limit : undefined
        let expected = scope
          .filter((c) => before === undefined || c.id < before.id)
          .filter((c) => filter === undefined || Object.entries(filter).every(([k, v]) => c.metadata[k] === v))
          .sort((a, b) => a.id > b.id ? -1 : a.id < b.id ? 1 : 0)
        if (limit !== undefined) expected = expected.slice(0, limit)
        const actual: Array<CheckpointTuple> = []
        for await (
          const tuple of saver.list(
            {
              configurable: {
                ...(thread_id === undefined ? {} : { thread_id }),
                ...(checkpoint_ns === undefined ? {} : { checkpoint_ns })
              }
            },
            {
              ...(before === undefined ? {} : { before: configOf(before) }),
              ...(limit === undefined ? {} : { limit }),
              ...(filter === undefined ? {} : { filter })
            }
          )
        ) actual.push(tuple)
        const byPlace = <
          A extends {
            readonly config: {
              readonly checkpoint_ns: string
              readonly thread_id: string
              readonly checkpoint_id: string
            }
          }
        >(items: Array<A>) =>
          ordered ? items : [...items].sort((a, b) => canonical(a.config) < canonical(b.config) ? -1 : 1)
        expectEqual(
          step,
          operation,
          "the listed tuples",
          byPlace(expected.map((c) => expectedTuple(model, c))),
          byPlace(actual.map((t) => actualTuple(t)!) as Array<ReturnType<typeof expectedTuple>>)
        )
        break
      }
      case "DeleteThread": {
        const thread_id = names.threads[operation.thread]!
        await saver.deleteThread(thread_id)
        model.deleteThread(thread_id)
        break
      }
      case "DeltaHistory": {
        const target = pick(model.checkpoints, operation.target)
        if (target === undefined) break
        const channels = [...new Set(operation.channels.map((c) => names.channels[c]!))]
        const actual = await saver.getDeltaChannelHistory({ config: configOf(target), channels })
        expectEqual(step, operation, "the delta channel history", model.deltaHistory(target, channels), actual)
        break
      }
      case "CopyThread": {
        if (!hasLifecycle(saver)) break
        const source = names.threads[operation.thread]!
        const target = names.threads[operation.target]!
        const sourceExists = model.checkpoints.some((c) => c.thread_id === source)
        const targetExists = model.checkpoints.some((c) => c.thread_id === target)
        const allowed = source !== target && sourceExists && (!targetExists || operation.replace)
        const failed = await saver.copyThread(source, target, { replace: operation.replace }).then(
          () => false,
          () => true
        )
        if (failed === allowed) {
          throw new ContractViolation({
            step,
            operation: describe(operation),
            detail: allowed ? "the copy failed" : "the copy should have been refused"
          })
        }
        if (allowed) {
          model.deleteThread(target)
          model.copyThread(source, target)
        }
        await expectThread(step, operation, source)
        await expectThread(step, operation, target)
        break
      }
      case "Prune": {
        if (!hasLifecycle(saver)) break
        const thread_id = names.threads[operation.thread]!
        const before = model.checkpoints.filter((c) => c.thread_id === thread_id)
        const failed = await saver.prune([thread_id], { strategy: operation.strategy }).then(() => false, () => true)
        if (failed !== (before.length === 0)) {
          throw new ContractViolation({
            step,
            operation: describe(operation),
            detail: before.length === 0 ? "pruning an unknown thread should be refused" : "the prune failed"
          })
        }
        if (operation.strategy === "delete") {
          model.deleteThread(thread_id)
          await expectThread(step, operation, thread_id)
          break
        }
        // Whatever it removed, it kept each namespace's latest checkpoint, with its delta history,
        // and every checkpoint it kept reads back as before.
        const heads = new Set(namespacesOf(before).map((ns) => model.latest(thread_id, ns)!))
        const histories = new Map(
          [...heads].map((head) => [head, model.deltaHistory(head, Object.keys(head.versions))])
        )
        const remaining = new Set<string>()
        for await (const tuple of saver.list({ configurable: { thread_id } })) {
          remaining.add(canonical([tuple.config.configurable?.checkpoint_ns, tuple.config.configurable?.checkpoint_id]))
        }
        for (const c of before) {
          if (!remaining.has(canonical([c.checkpoint_ns, c.id]))) {
            if (heads.has(c)) {
              throw new ContractViolation({
                step,
                operation: describe(operation),
                detail: `the latest checkpoint ${c.id} was removed`
              })
            }
            model.remove(c)
          }
        }
        // A kept checkpoint whose parent went names no parent: no link dangles.
        for (const c of model.checkpoints.filter((c) => c.thread_id === thread_id)) {
          if (c.parent !== undefined && model.find(thread_id, c.checkpoint_ns, c.parent) === undefined) {
            model.reparent(c, undefined)
          }
        }
        await expectThread(step, operation, thread_id)
        for (const [head, history] of histories) {
          const channels = Object.keys(history)
          expectEqual(
            step,
            operation,
            `the delta history of the latest checkpoint ${head.id}`,
            history,
            await saver.getDeltaChannelHistory({ config: configOf(head), channels })
          )
        }
        break
      }
      case "DeleteForRuns": {
        if (!hasLifecycle(saver)) break
        const runs = new Set([
          ...operation.of.flatMap((index) => {
            const run_id = pick(model.checkpoints, index)?.metadata.run_id
            return typeof run_id === "string" ? [run_id] : []
          }),
          ...(operation.unknown ? ["no such run"] : [])
        ])
        const failed = await saver.deleteForRuns([...runs]).then(() => false, () => true)
        if (failed !== (runs.size === 0)) {
          throw new ContractViolation({
            step,
            operation: describe(operation),
            detail: runs.size === 0 ? "an empty run list should be refused" : "deleteForRuns failed"
          })
        }
        // The runs' checkpoints go; a survivor whose parent went gets its nearest surviving ancestor.
        const gone = new Set(model.checkpoints.filter((c) => runs.has(c.metadata.run_id as string)))
        const survivingAncestor = (c: StoredCheckpoint) => {
          let parent = model.find(c.thread_id, c.checkpoint_ns, c.parent)
          while (parent !== undefined && gone.has(parent)) {
            parent = model.find(parent.thread_id, parent.checkpoint_ns, parent.parent)
          }
          return parent?.id
        }
        const threads = new Set([...gone].map((c) => c.thread_id))
        for (const c of model.checkpoints.filter((c) => !gone.has(c))) {
          const parent = model.find(c.thread_id, c.checkpoint_ns, c.parent)
          if (parent !== undefined && gone.has(parent)) model.reparent(c, survivingAncestor(c))
        }
        for (const c of gone) model.remove(c)
        for (const thread_id of threads) await expectThread(step, operation, thread_id)
        break
      }
      case "Concurrent": {
        const target = pick(model.checkpoints, operation.target)
        if (target === undefined) break
        // Distinct tasks, as in one superstep; siblings are new checkpoints with the same parent.
        const writers = operation.writers
          .filter((w) => w.writes.length > 0)
          .map((w, i) => ({ task: `${names.tasks[w.task]}#${i}`, path: names.taskPaths[w.path]!, writes: writesOf(w) }))
        await Promise.all([
          ...writers.map((w) => saver.putWrites(configOf(target), w.writes, w.task, w.path)),
          ...operation.siblings.map((changes) =>
            putCheckpoint(target.thread_id, target.checkpoint_ns, target, changes, {})
          )
        ])
        for (const w of writers) model.putWrites(target, w.writes, w.task, w.path)
        expectEqual(
          step,
          operation,
          "the writes after concurrent writers",
          model.writes(target),
          (await saver.getTuple(configOf(target)))?.pendingWrites ?? []
        )
        break
      }
    }
  }
}

/**
 * @since 0.1.0
 */
export interface ContractOptions<S extends BaseCheckpointSaver> {
  /** A name for the report. */
  readonly name: string
  /** A fresh, empty saver for one sequence. */
  readonly create: () => S | Promise<S>
  /** Releases a saver `create` made. */
  readonly destroy?: ((saver: S) => void | Promise<void>) | undefined
  /** How many sequences to try (default 50). */
  readonly runs?: number | undefined
  /** A seed, for a reproducible run. */
  readonly seed?: string | number | undefined
  /** A replay token from an earlier report, to run exactly its failing sequence. */
  readonly replay?: string | undefined
  /** How large sequences grow (default 60: about 30 operations on average). */
  readonly size?: number | undefined
}

/**
 * @since 0.1.0
 */
export interface ContractReport {
  readonly name: string
  readonly passed: boolean
  readonly runs: number
  /** On failure: the minimal failing sequence as a script, and how to replay it. */
  readonly failure?: {
    readonly message: string
    readonly steps: ReadonlyArray<string>
    readonly replay: string
    readonly script: string
  }
}

/**
 * The contract for an Effect `CheckpointStorage` layer: each sequence runs on
 * a fresh build of it, through the adapter.
 *
 * @since 0.1.0
 */
export const runContractOnLayer = (
  options: Omit<ContractOptions<EffectCheckpointSaver>, "create" | "destroy"> & {
    readonly layer: Layer.Layer<CheckpointStorage, unknown>
  }
): Promise<ContractReport> =>
  runContract({
    ...options,
    create: () => EffectCheckpointSaver.fromLayer(options.layer),
    destroy: (saver) => saver.close()
  })

/**
 * Runs the contract against a saver: `runs` generated sequences, each on a
 * fresh saver. Works outside any test runner.
 *
 * @since 0.1.0
 */
export const runContract = <S extends BaseCheckpointSaver>(options: ContractOptions<S>): Promise<ContractReport> =>
  Effect.runPromise(Effect.gen(function*() {
    const result = yield* Arbitrary.checkEffect(
      operations,
      (sequence) =>
        Effect.acquireUseRelease(
          Effect.promise(async () => options.create()),
          (saver) => Effect.as(check(saver, sequence), true),
          (saver) => Effect.promise(async () => options.destroy?.(saver))
        ),
      {
        runs: options.runs ?? 50,
        size: options.size ?? 60,
        ...(options.seed === undefined ? {} : { seed: options.seed }),
        ...(options.replay === undefined ? {} : { replay: options.replay as never })
      }
    )
    if (result._tag === "Passed") return { name: options.name, passed: true, runs: result.runs }
    if (result._tag !== "Falsified") {
      return {
        name: options.name,
        passed: false,
        runs: "runs" in result ? result.runs : 0,
        failure: { message: Arbitrary.formatCheckFailure(result) ?? result._tag, steps: [], replay: "", script: "" }
      }
    }
    const error = result.failure._tag === "ReturnedFalse" ? "returned false" : result.failure.error
    // Steps after the one that failed play no part.
    const failed = error instanceof ContractViolation ? error.step + 1 : result.shrunkInput.length
    const steps = result.shrunkInput.slice(0, failed).map((operation, i) => `${i}. ${describe(operation)}`)
    const message = error instanceof Error ? error.message : String(error)
    const script = [
      `${options.name} breaks the checkpointer contract after ${result.runs} run(s) (shrunk ${result.shrinks} times):`,
      message,
      "steps:",
      ...steps.map((step) => `  ${step}`),
      `replay: runContract({ ..., replay: ${JSON.stringify(String(result.replay))} })`
    ].join("\n")
    return {
      name: options.name,
      passed: false,
      runs: result.runs,
      failure: { message, steps, replay: String(result.replay), script }
    }
  }))
