/**
 * A run's events, on the runner that executes it: read from the embed
 * server's event stream as fast as they come into a bounded log, which
 * readers follow (the client that started the run, and any that join it,
 * from any replica, through the `Thread` entity's `Events`; see `Engine`).
 * So a run is never held up by a client that reads slowly or not at all,
 * and what it buffers for them is capped (`RunLimits`): a reader that falls
 * behind the log's window goes on from its oldest event.
 *
 * Event ids grow across a run's executions: an execution's ids start at
 * its writer epoch times {@link EPOCH_SPAN}, so a reader that comes back
 * with the id of an execution that died (`Last-Event-ID`) reads the
 * execution that took over from its start.
 *
 * @since 0.2.0
 */
import type { RunLimits } from "../../ServerOptions.ts"

/** The limits with their defaults applied. */
export type Limits = { readonly [K in keyof RunLimits]-?: number }

/**
 * The ids of one execution's events: its epoch's span.
 *
 * @since 0.4.0
 */
export const EPOCH_SPAN = 1_000_000

/**
 * One server-sent event, numbered in its run.
 *
 * @since 0.4.0
 */
export interface RunEvent {
  readonly id: number
  readonly event: string
  readonly data: string
}

interface Held extends RunEvent {
  readonly bytes: number
}

/**
 * A run's log: the events of its execution on this runner.
 *
 * @since 0.2.0
 */
export class RunLog {
  readonly run_id: string
  readonly #limits: Limits
  readonly #events: Array<Held> = []
  #bytes = 0
  #next: number
  #done = false
  /** How its execution here ended: for good (settled), or not (abandoned); undefined while it goes on. */
  #ending: "settled" | "abandoned" | undefined
  readonly #closed = Promise.withResolvers<boolean>()
  #wake: Array<() => void> = []

  constructor(run_id: string, base: number, limits: Limits) {
    this.run_id = run_id
    this.#next = base + 1
    this.#limits = limits
  }

  get done(): boolean {
    return this.#done
  }

  /** What the log holds now (its events and their bytes). */
  get held(): { readonly events: number; readonly bytes: number } {
    return { events: this.#events.length, bytes: this.#bytes }
  }

  push(event: string, data: string): void {
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
    if (this.#done) return
    this.#done = true
    this.#notify()
  }

  /** The run ended here for good: its readers may stop (whatever its record says yet). */
  settle(): void {
    this.#end("settled")
  }

  /** The run's execution here stopped without an end (handed over, or it failed): no-op once settled. */
  abandon(): void {
    this.#end("abandoned")
  }

  #end(ending: "settled" | "abandoned"): void {
    if (this.#ending !== undefined) return
    this.#ending = ending
    this.finish()
    this.#closed.resolve(ending === "settled")
  }

  /** Whether the run's execution here stopped without an end (see `abandon`). */
  get abandoned(): boolean {
    return this.#ending === "abandoned"
  }

  /** Settles once the log settled (true) or was abandoned (false). */
  get closed(): Promise<boolean> {
    return this.#closed.promise
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
    const held = this.#events[Math.max(0, id + 1 - first.id)]
    return held === undefined ? undefined : { id: held.id, event: held.event, data: held.data }
  }

  /** Settles at the next event or the end. */
  changed(): Promise<void> {
    return this.#done ? Promise.resolve() : new Promise((resolve) => this.#wake.push(resolve))
  }

  /** The events after `from`, following the log to its end. */
  async *follow(from: number): AsyncGenerator<RunEvent> {
    let cursor = from
    for (;;) {
      const next = this.after(cursor)
      if (next !== undefined) {
        cursor = next.id
        yield next
        continue
      }
      if (this.#done) return
      await this.changed()
    }
  }

  #notify(): void {
    const waiting = this.#wake
    this.#wake = []
    for (const resume of waiting) resume()
  }
}

const encoder = new TextEncoder()

/**
 * An event as `text/event-stream` frames it.
 *
 * @since 0.2.0
 */
export const frame = ({ data, event, id }: RunEvent): Uint8Array =>
  encoder.encode(`id: ${id}\nevent: ${event}\n${data.split("\n").map((line) => `data: ${line}\n`).join("")}\n`)

/**
 * Reads an event stream's events into `log` until it ends (`rewrite` may
 * change an event's data first).
 *
 * @since 0.2.0
 */
export const pump = async (
  body: ReadableStream<Uint8Array>,
  log: RunLog,
  rewrite: (event: string, data: string) => string = (_, data) => data
): Promise<void> => {
  const decoder = new TextDecoder()
  let buffered = ""
  const flush = (block: string) => {
    let event = "message"
    const data: Array<string> = []
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) event = line.slice(6).trim()
      else if (line.startsWith("data:")) data.push(line.slice(line.startsWith("data: ") ? 6 : 5))
    }
    if (data.length > 0) log.push(event, rewrite(event, data.join("\n")))
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
    // The stream broke off (the run was cancelled or handed over): what arrived is in the log.
  } finally {
    log.finish()
  }
}

/**
 * The logs of the runs this runner executes or executed, by run id, with
 * finished ones forgotten oldest first beyond `keepFinished` runs or
 * `keepFinishedBytes` of their logs.
 *
 * @since 0.2.0
 */
export class Registry {
  readonly limits: Limits
  readonly #logs = new Map<string, RunLog>()
  /** Runs admitted here that have no log yet, each settling when it has one or leaves without. */
  readonly #expected = new Map<string, PromiseWithResolvers<void>>()
  readonly #finished: Array<RunLog> = []
  #finishedBytes = 0

  constructor(limits: RunLimits = {}) {
    this.limits = {
      maxEvents: limits.maxEvents ?? 10_000,
      maxBytes: limits.maxBytes ?? 4 * 1024 * 1024,
      keepFinished: limits.keepFinished ?? 1_000,
      keepFinishedBytes: limits.keepFinishedBytes ?? 64 * 1024 * 1024
    }
  }

  /** A new log for an execution of `run_id` (replacing an earlier execution's). */
  add(run_id: string, base: number): RunLog {
    const log = new RunLog(run_id, base, this.limits)
    this.#logs.set(run_id, log)
    this.unexpect(run_id)
    return log
  }

  get(run_id: string): RunLog | undefined {
    return this.#logs.get(run_id)
  }

  /** A run admitted here: its log will be here when it starts (see `logOf`). */
  expect(run_id: string): void {
    if (!this.#expected.has(run_id)) this.#expected.set(run_id, Promise.withResolvers())
  }

  /** A run admitted here left without a log (cancelled before its turn). */
  unexpect(run_id: string): void {
    this.#expected.get(run_id)?.resolve()
    this.#expected.delete(run_id)
  }

  /** Whether the run's events are here: it was admitted here, or its log goes on or ended here for good. */
  here(run_id: string): boolean {
    const log = this.#logs.get(run_id)
    return this.#expected.has(run_id) || (log !== undefined && !log.abandoned)
  }

  /** The run's log here, once a run admitted here starts; undefined when it has none. */
  async logOf(run_id: string): Promise<RunLog | undefined> {
    await this.#expected.get(run_id)?.promise
    return this.#logs.get(run_id)
  }

  /** Keeps a finished log within the bounds, forgetting the oldest. */
  finished(log: RunLog): void {
    this.#finished.push(log)
    this.#finishedBytes += log.held.bytes
    while (
      this.#finished.length > this.limits.keepFinished ||
      (this.#finished.length > 1 && this.#finishedBytes > this.limits.keepFinishedBytes)
    ) {
      const oldest = this.#finished.shift()!
      this.#finishedBytes -= oldest.held.bytes
      if (this.#logs.get(oldest.run_id) === oldest) this.#logs.delete(oldest.run_id)
    }
  }

  /** Forgets a run's log. */
  remove(run_id: string): void {
    const log = this.#logs.get(run_id)
    if (log === undefined || !log.done) return
    this.#logs.delete(run_id)
    const at = this.#finished.indexOf(log)
    if (at !== -1) this.#finishedBytes -= this.#finished.splice(at, 1)[0]!.held.bytes
  }
}
