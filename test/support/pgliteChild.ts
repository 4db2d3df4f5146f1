/**
 * A process for the one-owner tests (`test/pglite.owner.test.ts`), run with
 * `node test/support/pgliteChild.ts <mode> <dir>`, talking in lines (stdin
 * in, stdout out):
 *
 * - `app`: an application on `pglite:<dir>`, a real LangGraph graph taking
 *   turns in a loop on a few threads. Prints `ready <pid>` once open, then
 *   `ack <thread> <checkpoint_id>` for every checkpoint `put` acknowledged;
 *   on `stop`, finishes its turn, closes the saver and prints `closed`.
 * - `open`: prints `loaded`; on `go`, opens the directory with
 *   `Pglite.layer`: prints `owner` (then on `stop` closes and prints
 *   `closed`) or `locked <pid> <directory>`.
 * - `lock`: only the ownership (`Owner.acquire`), round after round: prints
 *   `loaded`; on `go`, prints `owner` or `locked <pid>`; an owner releases
 *   on `release` and prints `released`; `exit` ends it.
 *
 * Anything unexpected is printed as `error <message>`.
 */
import { HumanMessage } from "@langchain/core/messages"
import { Cause, Effect, Exit, ManagedRuntime, Option, Scope } from "effect"
import { createInterface } from "node:readline"
import { chatGraph } from "../../harness/inspectedGraph.ts"
import { EffectCheckpointSaver } from "../../src/index.ts"
import * as Owner from "../../src/internal/pglite/Owner.ts"
import * as Pglite from "../../src/pglite.ts"

const [mode, dir] = process.argv.slice(2) as [string, string]
const say = (line: string) => void process.stdout.write(`${line}\n`)
const lines = createInterface({ input: process.stdin })
const waiting: Array<(line: string) => void> = []
const queued: Array<string> = []
lines.on("line", (line) => {
  const next = waiting.shift()
  if (next === undefined) queued.push(line)
  else next(line)
})
const nextLine = (): Promise<string> =>
  queued.length > 0 ? Promise.resolve(queued.shift()!) : new Promise((resolve) => waiting.push(resolve))
const expectLine = async (expected: string) => {
  const line = await nextLine()
  if (line !== expected) throw new Error(`expected "${expected}", got "${line}"`)
}

const app = async () => {
  const saver = await EffectCheckpointSaver.fromConnString(`pglite:${dir}`)
  const put = saver.put.bind(saver)
  saver.put = async (...args) => {
    const stored = await put(...args)
    say(`ack ${stored.configurable?.thread_id} ${stored.configurable?.checkpoint_id}`)
    return stored
  }
  const graph = chatGraph(saver)
  say(`ready ${process.pid}`)
  let stopping = false
  void expectLine("stop").then(() => void (stopping = true))
  for (let turn = 0; !stopping; turn++) {
    // A model's answer takes a while, and the event loop turns meanwhile (a graph on PGlite alone would
    // run on microtasks, leaving the owner's socket unanswered until it stops).
    await new Promise((resolve) => setTimeout(resolve, 20))
    await graph.invoke({ messages: [new HumanMessage(`turn ${turn}`)] }, {
      configurable: { thread_id: `app-${turn % 3}` }
    })
  }
  await saver.close()
  say("closed")
}

const open = async () => {
  say("loaded")
  await expectLine("go")
  const runtime = ManagedRuntime.make(Pglite.layer({ dataDir: dir }))
  const opened = await runtime.context().then(() => undefined, (error: unknown) => error)
  if (opened === undefined) {
    say("owner")
    await expectLine("stop")
    await runtime.dispose()
    return say("closed")
  }
  if (typeof opened === "object" && opened !== null && "_tag" in opened && opened._tag === "DatabaseLocked") {
    const { directory, pid } = opened as unknown as { directory: string; pid: number }
    return say(`locked ${pid} ${directory}`)
  }
  throw opened
}

const lock = async () => {
  say("loaded")
  for (;;) {
    const line = await nextLine()
    if (line === "exit") return
    if (line !== "go") throw new Error(`expected "go", got "${line}"`)
    const scope = Effect.runSync(Scope.make())
    const exit = await Effect.runPromiseExit(Owner.acquire(dir).pipe(Scope.provide(scope)))
    if (Exit.isSuccess(exit)) {
      say("owner")
      await expectLine("release")
      await Effect.runPromise(Scope.close(scope, Exit.void))
      say("released")
      continue
    }
    await Effect.runPromise(Scope.close(scope, Exit.void))
    const error = Cause.findErrorOption(exit.cause)
    if (Option.isSome(error) && error.value._tag === "DatabaseLocked") say(`locked ${error.value.pid}`)
    else throw new Error(`acquire failed: ${Cause.pretty(exit.cause)}`)
  }
}

const modes: Record<string, () => Promise<void>> = { app, open, lock }
modes[mode]!().then(() => process.exit(0), (error: unknown) => {
  say(`error ${error instanceof Error ? error.message : String(error)}`.replace(/\n/g, " "))
  process.exit(1)
})
