/**
 * What the page reads from the web inspector's API (`../Api.ts`), as the
 * page uses it. Types only: the page's script imports them with
 * `import type`, which leaves nothing behind, so the served script stays
 * one file with no import (a module the browser fetched would arrive
 * without the token and be refused).
 *
 * @since 0.1.0
 */
import type { ChannelDiff, Message } from "../../Shapes.ts"

export type { FieldChange, Message, ToolCall } from "../../Shapes.ts"
/** `GET /api/threads/:thread/storage` answers the storage's own report. */
export type { StorageSection, ThreadStorage as Storage } from "../../../../Reports.ts"

/**
 * `GET /api/info`.
 *
 * @since 0.1.0
 */
export interface Info {
  readonly write: boolean
  readonly layout: string
  /** Only when what is served is a snapshot of a PGlite directory (`pid`: the process that holds it, if one does). */
  readonly snapshot?: { readonly directory: string; readonly pid?: number; readonly takenAt: string }
}

/**
 * A thread in the list.
 *
 * @since 0.1.0
 */
export interface Thread {
  readonly thread_id: string
  readonly namespaces: ReadonlyArray<string>
  readonly checkpoints: number
  readonly latest_step?: number
  readonly last_activity: string
  readonly interrupts: number
  /** What its latest checkpoint wrote, one line of untrusted text (empty when it could not be read). */
  readonly preview: string
}

/**
 * `GET /api/threads`: a page of threads and the cursor of the next one.
 *
 * @since 0.1.0
 */
export interface ThreadPage {
  readonly threads: ReadonlyArray<Thread>
  readonly next: string | null
}

/**
 * A checkpoint of the history, laid out in lanes.
 *
 * @since 0.1.0
 */
export interface Row {
  readonly checkpoint_id: string
  readonly parent_checkpoint_id?: string
  readonly ts: string
  readonly step?: number
  readonly source?: string
  readonly next: ReadonlyArray<string>
  readonly changed: ReadonlyArray<string>
  /** The nodes that ran in the step that made it. */
  readonly nodes: ReadonlyArray<string>
  /** One line of what they wrote. */
  readonly preview: string
  readonly interrupts: ReadonlyArray<unknown>
  readonly lane: number
  readonly open: ReadonlyArray<number>
  readonly joins: ReadonlyArray<number>
  /** What it is in its namespace's history: "head", "branch", "fork point", "root" (`inspector/Tree.ts`). */
  readonly labels: ReadonlyArray<string>
  readonly children: number
  /** Drawn in the overflow column (beyond the lanes drawn). */
  readonly overflow: boolean
  /** Overflow branches that join here. */
  readonly folded: number
  /** Starts a tree of its own: nothing above it is open. */
  readonly separate: boolean
}

/**
 * `GET /api/threads/:thread/history`: namespace by namespace, the root first.
 *
 * @since 0.1.0
 */
export interface History {
  /** False when asked `since` a cursor and nothing is newer: nothing else is sent. */
  readonly changed: boolean
  /** What to ask `since` at the next poll. */
  readonly cursor: string
  /** The lane of the overflow column: branches beyond the lanes drawn. */
  readonly overflowLane: number
  /** Checkpoints in all, every namespace. */
  readonly total: number
  /** The next page's `after`, or null at the last. */
  readonly next: string | null
  readonly namespaces: ReadonlyArray<{
    readonly name: string
    readonly parent: string | null
    /** Its checkpoints in all (this page shows some). */
    readonly total: number
    /** The parent namespace's checkpoint that started this subgraph. */
    readonly startedAt: { readonly checkpoint_id: string; readonly step?: number } | null
    readonly rows: ReadonlyArray<Row>
  }>
}

/**
 * `GET /api/threads/:thread/checkpoints/:ref`.
 *
 * @since 0.1.0
 */
export interface Checkpoint {
  readonly checkpoint_id: string
  readonly checkpoint_ns: string
  readonly parent_checkpoint_id: string | null
  readonly checkpoint: { readonly ts: string; readonly channel_values?: Readonly<Record<string, unknown>> }
  readonly metadata?: Readonly<Record<string, unknown>>
  readonly pendingWrites?: ReadonlyArray<readonly [string, string, unknown]>
  readonly next: ReadonlyArray<string>
  readonly interrupts: ReadonlyArray<unknown>
  /** The messages of each channel that holds a list of them. */
  readonly messages: Readonly<Record<string, ReadonlyArray<Message>>>
}

/**
 * How a channel differs between two checkpoints.
 *
 * @since 0.1.0
 */
export type Change = ChannelDiff

/**
 * `GET /api/threads/:thread/diff`.
 *
 * @since 0.1.0
 */
export interface Diff {
  readonly a: { readonly checkpoint_id: string }
  readonly b: { readonly checkpoint_id: string }
  readonly channels: ReadonlyArray<Change>
}

/**
 * `GET /api/threads/:thread/plan`: what an action would remove.
 *
 * @since 0.1.0
 */
export interface Plan {
  readonly removals: ReadonlyArray<{ readonly checkpoints: number; readonly whole: boolean }>
}
