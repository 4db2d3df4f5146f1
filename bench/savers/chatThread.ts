/**
 * A chat thread of 300 super-steps on every subject and the two-commit floors,
 * taking turns: latency and CPU per call, storage against the delta floor; then
 * list (limit 10, and full) of that thread.
 */
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint"
import { makeDeltaFloor, TwoCommitFloor } from "../support/floors.ts"
import { mib, ms, p50, type Sample, sample } from "../support/measure.ts"
import { ChatThread, jsonBytes, rotated, serializedSize, time } from "../support/workload.mjs"
import type { Run } from "./context.ts"

export const chatThread = async (run: Run): Promise<void> => {
  const {
    n,
    databases,
    subjects,
    memorySubject,
    encryptedIndex,
    sections,
    verdicts,
    goals,
    measuredSpeedUps,
    measuredStorage,
    putCpu,
    table,
    target,
    ratioOf,
    notSlower,
    encryptedVs,
    log
  } = run
  const steps = n(300)
  log(`chat thread: ${steps} super-steps, interleaved with the two-commit floors`)
  const delta = await makeDeltaFloor(databases)
  // The floors take their turns among the savers, as two more threads: each of their calls then
  // finds the machine as the savers' do (a connection idle while the others ran).
  const floors = [
    { name: "two-commit floor (node-postgres)", saver: await TwoCommitFloor.make(databases, "node-postgres") },
    { name: "two-commit floor (effect's PgClient)", saver: await TwoCommitFloor.make(databases, "effect") }
  ]
  const rotation = [...subjects, ...floors]
  const threads = await Promise.all(rotation.map((subject) => new ChatThread(subject.saver, "chat-300").start()))
  const calls = rotation.map(() => ({
    putWrites: [] as Array<Sample>,
    put: [] as Array<Sample>,
    steps: [] as Array<number>
  }))
  const totals = rotation.map(() => 0)
  let information = 0
  for (let step = 0; step < steps; step++) {
    for (const [i, thread] of rotated(threads, step)) {
      const next = thread.nextMessage()
      const write = await sample(() => thread.putWrites(next))
      const put = await sample(() => thread.put(next))
      calls[i]!.putWrites.push(write)
      calls[i]!.put.push(put)
      calls[i]!.steps.push(write.ms + put.ms)
      totals[i]! += write.ms + put.ms
    }
    const added = threads[0]!.messages.at(-1)
    information += serializedSize(added)
    await delta.insert(jsonBytes(added))
  }
  await Promise.all(floors.map(({ saver }) => saver.close()))
  const deltaFloor = await delta.bytes()
  await delta.close()
  table(
    `Chat thread: ${steps} super-steps (putWrites + put), messages growing ~800 bytes a step`,
    rotation.map((subject, i) => ({ name: subject.name, samples: calls[i]!.steps, total: totals[i]! })),
    "super-step"
  )
  const indexOf = (name: string) => rotation.findIndex((subject) => subject.name === name)
  const [nodeFloor, effectFloor] = floors.map(({ name }) => calls[indexOf(name)]!)
  const ours = calls[0]!
  const memoryCalls = calls[indexOf(memorySubject.name)]!
  const ms50 = (samples: ReadonlyArray<Sample>) => p50(samples.map((s) => s.ms))
  const cpu50 = (samples: ReadonlyArray<Sample>) => p50(samples.map((s) => s.cpu))
  /** The last 100 steps (at full scale): the put of a 200- to 300-message state. */
  const last = <A>(samples: ReadonlyArray<A>) => samples.slice(-Math.max(2, Math.round(steps / 3)))
  sections.push([
    "Each call's latency beside the CPU this process spent on it (user and system: serializing, hashing,",
    "building and sending the statement, reading the answer; the database's work runs in its own process).",
    "The floors' calls are one INSERT each, of the bytes the call must make durable.",
    "",
    "| saver | putWrites p50 ms | its CPU p50 ms | put p50 ms | its CPU p50 ms | put CPU p50 ms, last " +
    `${last(ours.put).length} steps |`,
    "|---|---:|---:|---:|---:|---:|",
    ...rotation.map((subject, i) => {
      const c = calls[i]!
      return `| ${subject.name} | ${ms(ms50(c.putWrites))} | ${ms(cpu50(c.putWrites))} | ${ms(ms50(c.put))} | ${
        ms(cpu50(c.put))
      } | ${ms(cpu50(last(c.put)))} |`
    })
  ].join("\n"))
  const storage = await Promise.all(subjects.map((subject) => subject.storageBytes()))
  sections.push(
    `Storage after the thread: ${subjects.map((s, i) => `${s.name} ${mib(storage[i]!)} MiB`).join(", ")}. ` +
      `The steps added ${mib(information)} MiB of messages; stored one INSERT a step in a plain table (the ` +
      `delta floor) they take ${mib(deltaFloor)} MiB. Against that floor: ` +
      subjects.map((s, i) => `${s.name} ${(storage[i]! / deltaFloor).toFixed(1)}x`).join(", ") + "."
  )
  const commit = ms50(nodeFloor!.putWrites)
  const floorStep = p50(nodeFloor!.steps)
  const ourStep = p50(ours.steps)
  goals.superStep = {
    value: `${(ourStep / floorStep).toFixed(2)}x (${ms(ourStep)} ms vs ${ms(floorStep)} ms; a commit here: ` +
      `${ms(commit)} ms)`,
    target: "≤ 2x, where a commit ≤ 0.3 ms",
    met: ourStep <= 2 * floorStep
  }
  const writes = ms50(ours.putWrites)
  goals.putWrites = {
    value: `${(writes / ms50(effectFloor!.putWrites)).toFixed(2)}x (${ms(writes)} ms vs ${
      ms(ms50(effectFloor!.putWrites))
    } ms through the same client; ${(writes / commit).toFixed(2)}x node-postgres's ${ms(commit)} ms)`,
    target: "≤ 1.5x",
    met: writes <= 1.5 * ms50(effectFloor!.putWrites)
  }
  putCpu.push({
    steps,
    ours: cpu50(last(ours.put)),
    memory: cpu50(last(memoryCalls.put)),
    floor: cpu50(last(nodeFloor!.put))
  })
  measuredStorage["chat thread, 300 steps"] = storage[0]!
  measuredSpeedUps["chat thread super-step"] = p50(calls[1]!.steps) / ourStep
  verdicts.push(
    `| storage of the chat thread, vs the delta floor | ${(storage[0]! / deltaFloor).toFixed(1)}x ` +
      `(official ${(storage[1]! / deltaFloor).toFixed(1)}x) | ≤ 2x | ${
        storage[0]! <= 2 * deltaFloor ? "met" : "**missed**"
      } |`
  )
  encryptedVs("storage of the chat thread", storage[encryptedIndex]! / storage[0]!, 1.3)

  // Reads of the same thread, once the server has caught up with its writes.
  await databases.settle()
  const reads = n(60)
  const listRows = subjects.map((subject) => ({ name: subject.name, samples: [] as Array<number> }))
  const listAllRows = subjects.map((subject) => ({ name: subject.name, samples: [] as Array<number> }))
  const drain = async (saver: BaseCheckpointSaver, limit?: number) => {
    let count = 0
    for await (
      const _ of saver.list({ configurable: { thread_id: "chat-300" } }, limit === undefined ? {} : { limit })
    ) {
      count++
    }
    return count
  }
  for (let round = 0; round < reads; round++) {
    for (const [i, subject] of rotated(subjects, round)) {
      listRows[i]!.samples.push(await time(() => drain(subject.saver, 10)))
    }
  }
  for (let round = 0; round < Math.max(2, Math.round(reads / 20)); round++) {
    for (const [i, subject] of rotated(subjects, round)) {
      listAllRows[i]!.samples.push(await time(() => drain(subject.saver)))
    }
  }
  table(`list, limit 10 (thread of ${steps} checkpoints)`, listRows, "list")
  table(`list, full (${steps} checkpoints)`, listAllRows, "list")
  target("full list", ratioOf(listAllRows), 20)
  measuredSpeedUps["list, limit 10 (300 checkpoints)"] = ratioOf(listRows)
  measuredSpeedUps["list, full (300 checkpoints)"] = ratioOf(listAllRows)
  notSlower("list, limit 10", listRows)
  notSlower("full list", listAllRows)
}
