/**
 * `serve` processes on one database, as a deployment runs them behind a
 * load balancer: each a child process of the test (`langgraph-checkpoints
 * serve`, from the sources) serving `replicaGraphs.ts`, on its own port,
 * forming one cluster through the database. `clients` answers LangGraph
 * SDK clients, one per replica, so a test can send each call elsewhere.
 */
import { Client } from "@langchain/langgraph-sdk"
import { type ChildProcess, spawn } from "node:child_process"
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const graphs = join(import.meta.dirname, "replicaGraphs.ts")

export interface Replica {
  readonly url: string
  readonly child: ChildProcess
  readonly client: Client
  /** Resolves with the exit's code or signal. */
  readonly exited: Promise<number | string>
  /** Its JavaScript heap in MiB after a full garbage collection (a replica started with `inspect` only). */
  readonly heapAfterGc: () => Promise<number>
}

/** Calls over V8's inspector protocol, on the replica's debugger socket. */
const inspector = (url: string) => async (methods: ReadonlyArray<string>): Promise<ReadonlyArray<unknown>> => {
  const socket = new WebSocket(url)
  await new Promise((resolve, reject) => {
    socket.addEventListener("open", resolve, { once: true })
    socket.addEventListener("error", reject, { once: true })
  })
  const replies = new Map<number, (result: unknown) => void>()
  socket.addEventListener("message", (message) => {
    const reply = JSON.parse(String(message.data)) as { id?: number; result?: unknown }
    if (reply.id !== undefined) replies.get(reply.id)?.(reply.result)
  })
  const results: Array<unknown> = []
  for (const [id, method] of methods.entries()) {
    results.push(
      await new Promise((resolve) => {
        replies.set(id, resolve)
        socket.send(JSON.stringify({ id, method }))
      })
    )
  }
  socket.close()
  return results
}

/**
 * A set of replicas on one database; `marks` is where the slow graph
 * records which process runs a thread. `checkout`: the repository whose
 * `serve` they run (default this one; a bench compares another release).
 */
export const replicas = (database: string, checkout = join(import.meta.dirname, "..")) => {
  // A checkout from before the sources moved under src/internal/ keeps the CLI at src/cli/main.ts.
  const main = [join(checkout, "src/internal/cli/main.ts"), join(checkout, "src/cli/main.ts")].find(existsSync)!
  const marks = mkdtempSync(join(tmpdir(), "lce-replicas-"))
  const running: Array<Replica> = []
  /** Starts a replica; `inspect`: with its debugger open on the loopback, so `heapAfterGc` can ask. */
  const start = ({ inspect = false }: { readonly inspect?: boolean } = {}) =>
    new Promise<Replica>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [
          ...(inspect ? ["--inspect=127.0.0.1:0"] : []),
          main,
          "serve",
          `${graphs}:chat`,
          `${graphs}:slow`,
          "--db",
          database,
          "--port",
          "0"
        ],
        { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, REPLICA_MARKS: marks, NO_COLOR: "1" } }
      )
      let stderr = ""
      child.stderr!.on("data", (chunk: Buffer) => void (stderr += chunk.toString()))
      if (process.env.REPLICA_LOG) {
        child.stderr!.on("data", (chunk: Buffer) => appendFileSync(process.env.REPLICA_LOG!, `[${child.pid}] ${chunk}`))
      }
      const exited = new Promise<number | string>((done) =>
        child.once("exit", (code, signal) => done(code ?? signal ?? "unknown"))
      )
      void exited.then((how) => reject(new Error(`a replica exited (${how}) before serving: ${stderr}`)))
      child.stdout!.on("data", (chunk: Buffer) => {
        const url = chunk.toString().trim().split("\n").find((line) => line.startsWith("http"))
        if (url === undefined) return
        const heapAfterGc = async () => {
          const debuggerUrl = /ws:\/\/\S+/.exec(stderr)?.[0]
          if (debuggerUrl === undefined) throw new Error("the replica was not started with inspect")
          const [, usage] = await inspector(debuggerUrl)(["HeapProfiler.collectGarbage", "Runtime.getHeapUsage"])
          return (usage as { readonly usedSize: number }).usedSize / 1024 / 1024
        }
        const replica: Replica = { url, child, client: new Client({ apiUrl: url }), exited, heapAfterGc }
        running.push(replica)
        resolve(replica)
      })
    })
  return {
    start,
    running,
    /** The pids of the processes that executed the slow graph on `thread_id`, in order. */
    executors: (thread_id: string): ReadonlyArray<number> => {
      const file = join(marks, thread_id)
      return existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").map(Number) : []
    },
    /** The running replica of `pid`. */
    byPid: (pid: number) => running.find((replica) => replica.child.pid === pid),
    /** Kills a replica with `signal` and waits for it to exit; it leaves `running`. */
    stop: async (replica: Replica, signal: NodeJS.Signals) => {
      replica.child.kill(signal)
      const how = await replica.exited
      running.splice(running.indexOf(replica), 1)
      return how
    },
    stopAll: async () => {
      for (const replica of running) replica.child.kill("SIGKILL")
      await Promise.all(running.map((replica) => replica.exited))
      running.length = 0
      rmSync(marks, { recursive: true, force: true })
    }
  }
}
