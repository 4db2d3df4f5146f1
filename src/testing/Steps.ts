/**
 * The contract kit's steps, one per operation tag: each applies its
 * operation to the saver and the model and checks what the saver reads back
 * (the compiler checks that every tag has its step).
 *
 * @since 0.1.0
 */
import { type BaseCheckpointSaver, type CheckpointTuple, uuid6 } from "@langchain/langgraph-checkpoint"
import type { StoredCheckpoint } from "./Model.ts"
import { names, type Operation } from "./Operations.ts"
import { actualTuple, configOf, type ExpectedTuple, expectedTuple, type Run, writesOf } from "./Run.ts"
import { type At, canonical, expectEqual, violation } from "./Violation.ts"

/**
 * The step for operations tagged `K`.
 *
 * @since 0.1.0
 */
export type Step<K extends Operation["_tag"]> = (
  operation: Extract<Operation, { readonly _tag: K }>,
  run: Run,
  at: At
) => Promise<void>

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

/** Whether a promise was rejected (the saver refused). */
const refused = (promise: Promise<unknown>): Promise<boolean> => promise.then(() => false, () => true)

const Put: Step<"Put"> = async (operation, run, at) => {
  const thread_id = names.threads[operation.thread]!
  const checkpoint_ns = names.namespaces[operation.ns]!
  const parent = operation.parent === "none"
    ? undefined
    : operation.parent === "latest"
    ? run.model.latest(thread_id, checkpoint_ns)
    : run.pick(run.model.of(thread_id, checkpoint_ns), operation.parent)
  const extra = Object.fromEntries(operation.metadata.map((m) => [names.metadataKeys[m.key]!, m.value]))
  const { returned, stored } = await run.putCheckpoint(thread_id, checkpoint_ns, parent, operation.changes, extra)
  expectEqual(at, "the config put returns", configOf(stored).configurable, {
    thread_id: returned.configurable?.thread_id,
    checkpoint_ns: returned.configurable?.checkpoint_ns,
    checkpoint_id: returned.configurable?.checkpoint_id
  })
}

const PutWrites: Step<"PutWrites"> = async (operation, run, at) => {
  const target = run.pick(run.model.checkpoints, operation.target)
  if (target === undefined) return
  const task = names.tasks[operation.task]!
  const path = names.taskPaths[operation.path]!
  for (const batch of [operation.writes, operation.again ?? []]) {
    if (batch.length === 0) continue
    const writes = writesOf({ writes: batch })
    await run.saver.putWrites(configOf(target), writes, task, path)
    run.model.putWrites(target, writes, task, path)
    const actual = (await run.saver.getTuple(configOf(target)))?.pendingWrites ?? []
    expectEqual(at, "the writes", run.model.writes(target), actual)
  }
}

const GetTuple: Step<"GetTuple"> = async (operation, run, at) => {
  const thread_id = names.threads[operation.thread]!
  const checkpoint_ns = names.namespaces[operation.ns]!
  const target = operation.target === "latest"
    ? run.model.latest(thread_id, checkpoint_ns)
    : run.pick(run.model.of(thread_id, checkpoint_ns), operation.target)
  const config = operation.target === "latest" || target === undefined
    ? {
      configurable: {
        thread_id,
        checkpoint_ns,
        ...(target === undefined && operation.target !== "latest" ? { checkpoint_id: uuid6(-2) } : {})
      }
    }
    : configOf(target)
  const actual = actualTuple(await run.saver.getTuple(config))
  expectEqual(at, "the tuple", target === undefined ? undefined : expectedTuple(run.model, target), actual)
}

const List: Step<"List"> = async (operation, run, at) => {
  const thread_id = operation.thread === "any" ? undefined : names.threads[operation.thread]!
  const checkpoint_ns = operation.ns === "any" ? undefined : names.namespaces[operation.ns]!
  const scope = run.model.checkpoints.filter((c) =>
    (thread_id === undefined || c.thread_id === thread_id) &&
    (checkpoint_ns === undefined || c.checkpoint_ns === checkpoint_ns)
  )
  const before = operation.before === null
    ? undefined
    : run.pick([...scope].sort((a, b) => a.id < b.id ? -1 : 1), operation.before)
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
    const tuple of run.saver.list(
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
  const byPlace = (items: Array<ExpectedTuple>) =>
    ordered ? items : [...items].sort((a, b) => canonical(a.config) < canonical(b.config) ? -1 : 1)
  expectEqual(
    at,
    "the listed tuples",
    byPlace(expected.map((c) => expectedTuple(run.model, c))),
    byPlace(actual.map((t) => actualTuple(t)!) as Array<ExpectedTuple>)
  )
}

const DeleteThread: Step<"DeleteThread"> = async (operation, run) => {
  const thread_id = names.threads[operation.thread]!
  await run.saver.deleteThread(thread_id)
  run.model.deleteThread(thread_id)
}

const DeltaHistory: Step<"DeltaHistory"> = async (operation, run, at) => {
  const target = run.pick(run.model.checkpoints, operation.target)
  if (target === undefined) return
  const channels = [...new Set(operation.channels.map((c) => names.channels[c]!))]
  const actual = await run.saver.getDeltaChannelHistory({ config: configOf(target), channels })
  expectEqual(at, "the delta channel history", run.model.deltaHistory(target, channels), actual)
}

const CopyThread: Step<"CopyThread"> = async (operation, run, at) => {
  const saver = run.saver
  if (!hasLifecycle(saver)) return
  const source = names.threads[operation.thread]!
  const target = names.threads[operation.target]!
  const sourceExists = run.model.checkpoints.some((c) => c.thread_id === source)
  const targetExists = run.model.checkpoints.some((c) => c.thread_id === target)
  const allowed = source !== target && sourceExists && (!targetExists || operation.replace)
  const failed = await refused(saver.copyThread(source, target, { replace: operation.replace }))
  if (failed === allowed) throw violation(at, allowed ? "the copy failed" : "the copy should have been refused")
  if (allowed) {
    run.model.deleteThread(target)
    run.model.copyThread(source, target)
  }
  await run.expectThread(at, source)
  await run.expectThread(at, target)
}

const Prune: Step<"Prune"> = async (operation, run, at) => {
  const saver = run.saver
  if (!hasLifecycle(saver)) return
  const thread_id = names.threads[operation.thread]!
  const before = run.model.checkpoints.filter((c) => c.thread_id === thread_id)
  const failed = await refused(saver.prune([thread_id], { strategy: operation.strategy }))
  if (failed !== (before.length === 0)) {
    throw violation(at, before.length === 0 ? "pruning an unknown thread should be refused" : "the prune failed")
  }
  if (operation.strategy === "delete") {
    run.model.deleteThread(thread_id)
    return run.expectThread(at, thread_id)
  }
  // It removed exactly what no latest checkpoint reads (see `keptByPrune`); it kept the delta history
  // LangGraph reads of it (its channels with a version and no stored value), and every
  // checkpoint it kept reads back as before.
  const heads = new Set(
    [...new Set(before.map((c) => c.checkpoint_ns))].map((ns) => run.model.latest(thread_id, ns)!)
  )
  const histories = new Map(
    [...heads].map((head) => [
      head,
      run.model.deltaHistory(head, Object.keys(head.versions).filter((channel) => !head.values.has(channel)))
    ])
  )
  const kept = run.model.keptByPrune(thread_id)
  const remaining = new Set<string>()
  for await (const tuple of saver.list({ configurable: { thread_id } })) {
    remaining.add(canonical([tuple.config.configurable?.checkpoint_ns, tuple.config.configurable?.checkpoint_id]))
  }
  for (const c of before) {
    const stayed = remaining.has(canonical([c.checkpoint_ns, c.id]))
    if (stayed && !kept.has(c)) throw violation(at, `checkpoint ${c.id} stayed, though nothing kept reads it`)
    if (stayed) continue
    if (kept.has(c)) throw violation(at, `checkpoint ${c.id} was removed, though a latest checkpoint reads it`)
    run.model.remove(c)
  }
  // A kept checkpoint whose parent went names no parent: no link dangles.
  for (const c of run.model.checkpoints.filter((c) => c.thread_id === thread_id)) {
    if (c.parent !== undefined && run.model.find(thread_id, c.checkpoint_ns, c.parent) === undefined) {
      run.model.reparent(c, undefined)
    }
  }
  await run.expectThread(at, thread_id)
  for (const [head, history] of histories) {
    const actual = await saver.getDeltaChannelHistory({ config: configOf(head), channels: Object.keys(history) })
    expectEqual(at, `the delta history of the latest checkpoint ${head.id}`, history, actual)
  }
}

const DeleteForRuns: Step<"DeleteForRuns"> = async (operation, run, at) => {
  const saver = run.saver
  if (!hasLifecycle(saver)) return
  const model = run.model
  const runs = new Set([
    ...operation.of.flatMap((index) => {
      const run_id = run.pick(model.checkpoints, index)?.metadata.run_id
      return typeof run_id === "string" ? [run_id] : []
    }),
    ...(operation.unknown ? ["no such run"] : [])
  ])
  const failed = await refused(saver.deleteForRuns([...runs]))
  if (failed !== (runs.size === 0)) {
    throw violation(at, runs.size === 0 ? "an empty run list should be refused" : "deleteForRuns failed")
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
  for (const thread_id of threads) await run.expectThread(at, thread_id)
}

const Concurrent: Step<"Concurrent"> = async (operation, run, at) => {
  const target = run.pick(run.model.checkpoints, operation.target)
  if (target === undefined) return
  // Distinct tasks, as in one superstep; siblings are new checkpoints with the same parent.
  const writers = operation.writers
    .filter((w) => w.writes.length > 0)
    .map((w, i) => ({ task: `${names.tasks[w.task]}#${i}`, path: names.taskPaths[w.path]!, writes: writesOf(w) }))
  await Promise.all([
    ...writers.map((w) => run.saver.putWrites(configOf(target), w.writes, w.task, w.path)),
    ...operation.siblings.map((changes) =>
      run.putCheckpoint(target.thread_id, target.checkpoint_ns, target, changes, {})
    )
  ])
  for (const w of writers) run.model.putWrites(target, w.writes, w.task, w.path)
  const actual = (await run.saver.getTuple(configOf(target)))?.pendingWrites ?? []
  expectEqual(at, "the writes after concurrent writers", run.model.writes(target), actual)
}

/**
 * Every step, by the tag of the operation it applies.
 *
 * @since 0.1.0
 */
export const steps: { readonly [K in Operation["_tag"]]: Step<K> } = {
  Put,
  PutWrites,
  GetTuple,
  List,
  DeleteThread,
  DeltaHistory,
  CopyThread,
  Prune,
  DeleteForRuns,
  Concurrent
}

/**
 * Applies one operation with its step.
 *
 * @since 0.1.0
 */
export const apply = (run: Run, at: At): Promise<void> =>
  // The table pairs each tag with its step, which the compiler cannot follow through the lookup.
  (steps[at.operation._tag] as Step<Operation["_tag"]>)(at.operation, run, at)
