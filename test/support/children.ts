/**
 * Child processes that talk in lines: what a test sends on stdin, and each
 * line they print on stdout, waited for by content. Every line and all of
 * stderr are kept, to show in a failing assertion.
 */
import { type ChildProcess, spawn, type SpawnOptions } from "node:child_process"
import { join } from "node:path"
import { EffectCheckpointSaver } from "../../src/index.ts"

export interface Lines {
  readonly child: ChildProcess
  readonly pid: number
  /** Every stdout line so far. */
  readonly lines: Array<string>
  readonly stderr: () => string
  readonly send: (line: string) => void
  /** The first line not yet taken that `match`es (later lines stay to be taken). */
  readonly take: (match: (line: string) => boolean, timeout?: number) => Promise<string>
  /** The exit, once it comes. */
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  /** Everything it printed, for a message. */
  readonly describe: () => string
}

export const spawnLines = (command: string, args: ReadonlyArray<string>, options: SpawnOptions = {}): Lines => {
  const child = spawn(command, args, { ...options, stdio: ["pipe", "pipe", "pipe"] })
  const lines: Array<string> = []
  const taken = new Set<number>()
  let stderr = ""
  let partial = ""
  const listeners = new Set<() => void>()
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    const parts = (partial + chunk).split("\n")
    partial = parts.pop()!
    lines.push(...parts)
    for (const listener of listeners) listener()
  })
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => void (stderr += chunk))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => {
      resolve({ code, signal })
      for (const listener of listeners) listener()
    })
  )
  const describe = () => `--- stdout ---\n${lines.join("\n")}${partial}\n--- stderr ---\n${stderr}`
  const take = (match: (line: string) => boolean, timeout = 60_000) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const index = lines.findIndex((line, i) => !taken.has(i) && match(line))
        if (index !== -1) {
          taken.add(index)
          done()
          resolve(lines[index]!)
        } else if (child.exitCode !== null || child.signalCode !== null) {
          done()
          reject(new Error(`the process ended without the line awaited\n${describe()}`))
        }
      }
      const timer = setTimeout(() => {
        done()
        reject(new Error(`no line awaited within ${timeout} ms\n${describe()}`))
      }, timeout)
      const done = () => {
        clearTimeout(timer)
        listeners.delete(check)
      }
      listeners.add(check)
      check()
    })
  return {
    child,
    pid: child.pid!,
    lines,
    stderr: () => stderr,
    send: (line) => void child.stdin!.write(`${line}\n`),
    take,
    exited,
    describe
  }
}

const script = join(import.meta.dirname, "pgliteChild.ts")

/** `test/support/pgliteChild.ts` in `mode` on `dir`, under this Node. */
export const pgliteChild = (mode: "app" | "open" | "lock", dir: string): Lines =>
  spawnLines(process.execPath, [script, mode, dir])

/** The checkpoints an application acknowledged so far: `thread checkpoint_id`. */
export const acks = (app: Lines) => app.lines.filter((line) => line.startsWith("ack ")).map((line) => line.slice(4))

/** Waits until the application has acknowledged `count` more checkpoints than `since`. */
export const moreAcks = async (app: Lines, since: number, count: number) => {
  await app.take((line) => line.startsWith("ack ") && acks(app).length >= since + count, 120_000)
}

/** Every checkpoint of the database, as `thread checkpoint_id`, read by this library's saver. */
export const stored = async (dataDir: string): Promise<Set<string>> => {
  const saver = await EffectCheckpointSaver.fromConnString(`pglite:${dataDir}`)
  try {
    const found = new Set<string>()
    for (const thread_id of ["app-0", "app-1", "app-2"]) {
      for await (const tuple of saver.list({ configurable: { thread_id } })) {
        found.add(`${thread_id} ${tuple.config.configurable?.checkpoint_id}`)
      }
    }
    return found
  } finally {
    await saver.close()
  }
}

/** The acknowledged checkpoints missing from the database. */
export const missing = (acknowledged: ReadonlyArray<string>, found: Set<string>) =>
  acknowledged.filter((ack) => !found.has(ack))
