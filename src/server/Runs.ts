/**
 * Runs that outlive their request: each streaming run is started through the
 * embed server's own `POST /threads/:id/runs/stream` (so its events are
 * LangGraph's, byte for byte), but under a signal of this module's, and its
 * events are read as fast as they come into a bounded log. Clients then
 * read the log: the one that started the run, and any that rejoin it
 * (`GET …/runs/:run_id/stream`, from `Last-Event-ID`), as the SDK does after
 * a dropped connection or a reload. So:
 *
 * - a run is never held up by a client that reads slowly or not at all, and
 *   what it buffers for them is capped (`RunLimits`): a reader that falls
 *   behind the log's window goes on from its oldest event;
 * - `cancel` really stops a run that is streaming (the embed server's only
 *   drops runs that have not started), and `action=rollback` then removes
 *   what the run stored (`deleteForRuns`);
 * - a client that disconnects leaves its run going unless it asked for
 *   `on_disconnect: "cancel"` (LangGraph Platform's rule).
 *
 * @since 0.2.0
 */
import { randomUUID } from "node:crypto"
import type { RunLimits } from "./Options.ts"

/** The limits with their defaults applied. */
type Limits = { readonly [K in keyof RunLimits]-?: number }

/** @since 0.2.0 */
export type RunState = "pending" | "running" | "success" | "error" | "interrupted"

/** One server-sent event, numbered in its run. */
interface RunEvent {
  readonly id: number
  readonly event: string
  readonly data: string
  readonly bytes: number
}

/**
 * A run as LangGraph's API answers it.
 *
 * @since 0.2.0
 */
export interface RunJson {
  readonly run_id: string
  readonly thread_id: string
  readonly assistant_id: string
  readonly created_at: string
  readonly updated_at: string
  readonly status: RunState
  readonly metadata: Record<string, unknown>
  readonly multitask_strategy: string
}

/**
 * A run going on or finished, and its log.
 *
 * @since 0.2.0
 */
export class Run {
  readonly run_id: string
  readonly thread_id: string
  readonly #limits: Limits
  readonly #controller = new AbortController()
  readonly #events: Array<RunEvent> = []
  #bytes = 0
  #next = 1
  #status: RunState = "running"
  #failed = false
  #wake: Array<() => void> = []
  readonly #created = new Date()
  #updated = this.#created
  readonly #json: Omit<RunJson, "status" | "created_at" | "updated_at">
  /** Settles when the run has ended, whichever way. */
  readonly ended: Promise<void>
  #end!: () => void

  constructor(run_id: string, thread_id: string, body: Record<string, unknown>, limits: Limits) {
    this.run_id = run_id
    this.thread_id = thread_id
    this.#limits = limits
    this.ended = new Promise((resolve) => {
      this.#end = resolve
    })
    this.#json = {
      run_id,
      thread_id,
      assistant_id: typeof body.assistant_id === "string" ? body.assistant_id : "",
      metadata: typeof body.metadata === "object" && body.metadata !== null
        ? body.metadata as Record<string, unknown>
        : {},
      multitask_strategy: typeof body.multitask_strategy === "string" ? body.multitask_strategy : "reject"
    }
  }

  get signal(): AbortSignal {
    return this.#controller.signal
  }

  get status(): RunState {
    return this.#status
  }

  get done(): boolean {
    return this.#status !== "running"
  }

  /** What the log holds now (its events and their bytes). */
  get held(): { readonly events: number; readonly bytes: number } {
    return { events: this.#events.length, bytes: this.#bytes }
  }

  json(): RunJson {
    return {
      ...this.#json,
      status: this.#status,
      created_at: this.#created.toISOString(),
      updated_at: this.#updated.toISOString()
    }
  }

  /** Stops the run (nothing if it has ended). */
  cancel(): void {
    if (!this.done) this.#controller.abort()
  }

  push(event: string, data: string): void {
    if (event === "error") this.#failed = true
    const bytes = Buffer.byteLength(data)
    this.#events.push({ id: this.#next++, event, data, bytes })
    this.#bytes += bytes
    while (
      this.#events.length > 1 &&
      (this.#events.length > this.#limits.maxEvents || this.#bytes > this.#limits.maxBytes)
    ) this.#bytes -= this.#events.shift()!.bytes
    this.#notify()
  }

  finish(): void {
    if (this.done) return
    this.#status = this.#controller.signal.aborted ? "interrupted" : this.#failed ? "error" : "success"
    this.#updated = new Date()
    this.#notify()
    this.#end()
  }

  /**
   * What the run came to, as LangGraph's server answers a wait or a join:
   * its error as `{"__error__": …}`, else its last `values` event still
   * held (JSON text); undefined when it has neither.
   */
  outcome(): string | undefined {
    const last = this.#events.findLast((event) => event.event === "error" || event.event === "values")
    return last?.event === "error" ? `{"__error__":${last.data}}` : last?.data
  }

  /** The first event after `id` still held (a reader left behind goes on from the oldest). */
  after(id: number): RunEvent | undefined {
    const first = this.#events[0]
    if (first === undefined) return undefined
    return this.#events[Math.max(0, id + 1 - first.id)]
  }

  /** Settles at the next event or the end. */
  changed(): Promise<void> {
    return this.done ? Promise.resolve() : new Promise((resolve) => this.#wake.push(resolve))
  }

  #notify(): void {
    const waiting = this.#wake
    this.#wake = []
    for (const resume of waiting) resume()
  }
}

const encoder = new TextEncoder()

/** An event as `text/event-stream` frames it. */
const frame = ({ data, event, id }: RunEvent): Uint8Array =>
  encoder.encode(`id: ${id}\nevent: ${event}\n${data.split("\n").map((line) => `data: ${line}\n`).join("")}\n`)

/**
 * The log of `run` after event `from`, as a server-sent event stream that
 * follows it to its end. `onCancel`: the reader went away.
 *
 * @since 0.2.0
 */
export const follow = (run: Run, from: number, onCancel?: () => void): ReadableStream<Uint8Array> => {
  let cursor = from
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const next = run.after(cursor)
        if (next !== undefined) {
          cursor = next.id
          controller.enqueue(frame(next))
          return
        }
        if (run.done) return controller.close()
        await run.changed()
      }
    },
    cancel() {
      onCancel?.()
    }
  }, { highWaterMark: 0 })
}

/**
 * Reads an event stream's events into `run` until it ends.
 *
 * @since 0.2.0
 */
export const pump = async (body: ReadableStream<Uint8Array>, run: Run): Promise<void> => {
  const decoder = new TextDecoder()
  let buffered = ""
  const flush = (block: string) => {
    let event = "message"
    const data: Array<string> = []
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) event = line.slice(6).trim()
      else if (line.startsWith("data:")) data.push(line.slice(line.startsWith("data: ") ? 6 : 5))
    }
    if (data.length > 0) run.push(event, data.join("\n"))
  }
  try {
    for await (const chunk of body) {
      buffered += decoder.decode(chunk, { stream: true })
      let end: number
      while ((end = buffered.indexOf("\n\n")) !== -1) {
        flush(buffered.slice(0, end))
        buffered = buffered.slice(end + 2)
      }
    }
    if (buffered.trim() !== "") flush(buffered)
  } catch {
    // The stream broke off (the run was cancelled): what arrived is in the log.
  } finally {
    run.finish()
  }
}

/**
 * Every run of this server still known, by id, with finished ones forgotten
 * oldest first beyond `keepFinished` runs or `keepFinishedBytes` of their logs.
 *
 * @since 0.2.0
 */
export class Registry {
  readonly limits: Limits
  readonly #runs = new Map<string, Run>()
  readonly #active = new Map<string, Run>()
  readonly #finished: Array<Run> = []
  #finishedBytes = 0

  constructor(limits: RunLimits = {}) {
    this.limits = {
      maxEvents: limits.maxEvents ?? 10_000,
      maxBytes: limits.maxBytes ?? 4 * 1024 * 1024,
      keepFinished: limits.keepFinished ?? 1_000,
      keepFinishedBytes: limits.keepFinishedBytes ?? 64 * 1024 * 1024
    }
  }

  /** A new run of `thread_id` (its id the embed server's, else a new one). */
  add(run_id: string | undefined, thread_id: string, body: Record<string, unknown>): Run {
    const run = new Run(run_id ?? randomUUID(), thread_id, body, this.limits)
    this.#runs.set(run.run_id, run)
    this.#active.set(thread_id, run)
    void run.ended.then(() => {
      if (this.#active.get(thread_id) === run) this.#active.delete(thread_id)
      this.#finished.push(run)
      this.#finishedBytes += run.held.bytes
      while (
        this.#finished.length > this.limits.keepFinished ||
        (this.#finished.length > 1 && this.#finishedBytes > this.limits.keepFinishedBytes)
      ) {
        const oldest = this.#finished.shift()!
        this.#finishedBytes -= oldest.held.bytes
        this.#runs.delete(oldest.run_id)
      }
    })
    return run
  }

  get(thread_id: string, run_id: string): Run | undefined {
    const run = this.#runs.get(run_id)
    return run?.thread_id === thread_id ? run : undefined
  }

  /** The thread's run going on, if any. */
  active(thread_id: string): Run | undefined {
    return this.#active.get(thread_id)
  }

  busy(thread_id: string): boolean {
    return this.#active.has(thread_id)
  }

  ofThread(thread_id: string): ReadonlyArray<Run> {
    return [...this.#runs.values()].filter((run) => run.thread_id === thread_id)
  }

  remove(run: Run): void {
    if (!run.done) return
    this.#runs.delete(run.run_id)
    const at = this.#finished.indexOf(run)
    if (at !== -1) this.#finishedBytes -= this.#finished.splice(at, 1)[0]!.held.bytes
  }

  /** Stops every run and waits for them to end. */
  async close(): Promise<void> {
    const going = [...this.#active.values()]
    for (const run of going) run.cancel()
    await Promise.all(going.map((run) => run.ended))
  }
}
