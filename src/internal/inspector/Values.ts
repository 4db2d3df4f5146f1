/**
 * What the inspector reads out of a checkpoint, as plain data: values made
 * printable (messages as role, text and tool calls, or whole in LangChain's
 * serialized form; values the serializer cannot read as a placeholder), the
 * nodes that run next, the interrupts waiting, the channels a checkpoint
 * changed, and the difference between two checkpoints.
 *
 * Everything here is pure and works on values already decoded under safe
 * revival: nothing builds an object from stored data or runs stored code (a
 * revived message's `toJSON` is LangChain's own).
 *
 * @since 0.1.0
 */
import type { CheckpointTuple } from "@langchain/langgraph-checkpoint"
import { Effect } from "effect"
import type { ChannelDiff, FieldChange, Message, ToolCall } from "./Shapes.ts"

export type { ChannelDiff, FieldChange, Message, ToolCall } from "./Shapes.ts"

/**
 * A stored value the serializer cannot read (Python's `msgpack`, a custom
 * serializer's type): shown as `<type, N bytes>`, never a crash.
 *
 * @since 0.1.0
 */
export class Unreadable {
  readonly type: string
  readonly bytes: number
  constructor(type: string, bytes: number) {
    this.type = type
    this.bytes = bytes
  }
  toString(): string {
    return `<${this.type}, ${this.bytes} bytes>`
  }
  toJSON(): { readonly $unreadable: string; readonly bytes: number } {
    return { $unreadable: this.type, bytes: this.bytes }
  }
}

/**
 * What {@link lenient} needs of a serializer: how it loads a stored value
 * (the codec's `SerializerService` is one, taken by shape so that this
 * module needs nothing of the codec).
 *
 * @since 0.1.0
 */
export interface Loader {
  readonly load: (
    value: { readonly type: string; readonly bytes: Uint8Array | string }
  ) => Effect.Effect<unknown, unknown>
}

/**
 * The serializer in context, made lenient for reading: a value it cannot
 * load becomes an {@link Unreadable} instead of failing the checkpoint.
 *
 * @since 0.1.0
 */
export const lenient = <S extends Loader>(serializer: S): S => ({
  ...serializer,
  load: (value) =>
    serializer.load(value).pipe(
      Effect.catch(() => Effect.succeed(new Unreadable(value.type, value.bytes.length)))
    )
})

/**
 * The value is an object (a record, an array, a class instance).
 *
 * @since 0.1.0
 */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null

const roles: Record<string, string> = {
  HumanMessage: "human",
  AIMessage: "ai",
  ToolMessage: "tool",
  SystemMessage: "system",
  FunctionMessage: "function",
  ChatMessage: "chat",
  RemoveMessage: "remove"
}

/** How deep {@link toPlain} follows stored data, messages inside values included; deeper is `"[too deep]"`. */
const MAX_DEPTH = 64

/** A message's content as text: strings as they are, parts by their text, anything else as its plain JSON. */
const textOf = (content: unknown, depth: number): string => {
  if (typeof content === "string") return content
  if (Array.isArray(content)) {
    return content.map((part) =>
      typeof part === "string" ?
        part :
        isRecord(part) && typeof part.text === "string" ?
        part.text :
        `[${isRecord(part) && typeof part.type === "string" ? part.type : "part"}]`
    ).join("")
  }
  return content === undefined ? "" : JSON.stringify(plain(content, depth + 1, false)) ?? ""
}

const isEmpty = (value: unknown) =>
  value === undefined || value === null || value === "" ||
  (isRecord(value) && Object.keys(value).length === 0)

/** The tool calls of an AI message, each as its name, arguments and id. */
const toolCallsOf = (value: unknown, depth: number): ReadonlyArray<ToolCall> =>
  Array.isArray(value)
    ? value.filter(isRecord).map((call) => ({
      name: String(call.name),
      args: plain(call.args, depth + 1, false),
      ...(typeof call.id === "string" && call.id !== "" ? { id: call.id } : {})
    }))
    : []

/** The model's metadata a message carries, shown on demand. */
const METADATA = ["usage_metadata", "response_metadata", "additional_kwargs"] as const

/**
 * A message from its role and its fields (an inert message's `kwargs`, or a
 * revived message itself): what users of LangChain read in it, empty
 * fields left out; what it holds made plain below `depth`, the message's own.
 */
const messageOf = (role: string, fields: Record<string, unknown>, depth: number): Message => {
  const message: { -readonly [K in keyof Message]: Message[K] } = {
    id: typeof fields.id === "string" ? fields.id : undefined,
    role,
    text: textOf(fields.content, depth)
  }
  const toolCalls = toolCallsOf(fields.tool_calls, depth)
  if (toolCalls.length > 0) message.tool_calls = toolCalls
  if (typeof fields.tool_call_id === "string" && fields.tool_call_id !== "") message.tool_call_id = fields.tool_call_id
  if (typeof fields.name === "string" && fields.name !== "") message.name = fields.name
  if (typeof fields.status === "string" && fields.status !== "success") message.status = fields.status
  for (const key of METADATA) if (!isEmpty(fields[key])) message[key] = plain(fields[key], depth + 1, false)
  return message
}

/** Serialized (inert) form: `{ lc: 1, type: "constructor", id: [..., "HumanMessage"], kwargs }`. */
const isSerialized = (value: Record<string, unknown>): value is Record<string, unknown> & {
  readonly id: ReadonlyArray<unknown>
  readonly kwargs: Record<string, unknown>
} => value.lc === 1 && value.type === "constructor" && Array.isArray(value.id) && isRecord(value.kwargs)

/** A revived message: `getType()` names its role. */
const isRevived = (value: Record<string, unknown>) =>
  "content" in value && typeof value.getType === "function" && "lc_kwargs" in value

/**
 * The value as a message, or `undefined` when it is not one.
 *
 * @since 0.1.0
 */
export const asMessage = (value: unknown): Message | undefined => messageAt(value, 0)

/** {@link asMessage} of a value `depth` levels into stored data: a message's fields count on from there. */
const messageAt = (value: unknown, depth: number): Message | undefined => {
  if (!isRecord(value)) return undefined
  if (isSerialized(value)) {
    const role = roles[String(value.id[value.id.length - 1])]
    return role === undefined ? undefined : messageOf(role, value.kwargs, depth)
  }
  if (isRevived(value)) {
    const role = (value.getType as () => unknown).call(value)
    return messageOf(typeof role === "string" ? role : "message", value, depth)
  }
  return undefined
}

/**
 * The messages of a value that is a list of them, else `undefined`.
 *
 * @since 0.1.0
 */
export const asMessages = (value: unknown): ReadonlyArray<Message> | undefined => {
  if (!Array.isArray(value) || value.length === 0) return undefined
  const messages = value.map(asMessage)
  return messages.every((message) => message !== undefined) ? messages as ReadonlyArray<Message> : undefined
}

/** Whether `value` holds containers nested more than `limit` deep (walked without recursion). */
const nestsDeeper = (value: unknown, limit: number): boolean => {
  const pending: Array<readonly [unknown, number]> = [[value, 0]]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next
    if (!isRecord(item)) continue
    if (depth > limit) return true
    for (const child of Array.isArray(item) ? item : Object.values(item)) pending.push([child, depth + 1])
  }
  return false
}

/**
 * A message in LangChain's serialized form: what a revived message's
 * `toJSON()` gives and `load` from `@langchain/core/load` revives; an inert
 * one is already in it. LangChain's `toJSON` recurses through the fields, so
 * a message nested past what is shown keeps its fields as they are (and is
 * cut where it gets too deep) rather than overflowing the stack.
 */
const serializedOf = (value: Record<string, unknown>, depth: number): unknown =>
  isSerialized(value) || typeof value.toJSON !== "function" || nestsDeeper(value.lc_kwargs, MAX_DEPTH - depth)
    ? value
    : (value.toJSON as () => unknown).call(value)

const plain = (value: unknown, depth: number, whole: boolean): unknown => {
  if (value === null || typeof value !== "object") {
    return typeof value === "bigint" ? value.toString() : typeof value === "function" ? "[function]" : value
  }
  if (depth > MAX_DEPTH) return "[too deep]"
  if (value instanceof Unreadable) return value.toJSON()
  if (value instanceof Uint8Array) return { $bytes: value.length }
  if (value instanceof Date) return value.toISOString()
  const message = messageAt(value, depth)
  if (message !== undefined && !whole) return message
  if (Array.isArray(value)) return value.map((item) => plain(item, depth + 1, whole))
  if (value instanceof Map) {
    return [...value].map(([k, v]) => [plain(k, depth + 1, whole), plain(v, depth + 1, whole)])
  }
  if (value instanceof Set) return [...value].map((item) => plain(item, depth + 1, whole))
  // A message whole: its serialized form's fields, each made plain (none of them is a message again).
  const record = message === undefined ? value : serializedOf(value as Record<string, unknown>, depth)
  return isRecord(record)
    ? Object.fromEntries(Object.entries(record).map(([key, item]) => [key, plain(item, depth + 1, whole)]))
    : plain(record, depth + 1, whole)
}

/**
 * A value as plain JSON data: messages as a {@link Message} (role, text,
 * tool calls, …), unreadable values as `{ $unreadable, bytes }`, bytes as
 * `{ $bytes: length }`, maps and sets as arrays; cycles and depth cut.
 *
 * @since 0.1.0
 */
export const toPlain = (value: unknown): unknown => plain(value, 0, false)

/**
 * A value as plain JSON data like {@link toPlain}, but each message whole,
 * in LangChain's serialized form (`{ lc, type: "constructor", id, kwargs }`),
 * as `load` from `@langchain/core/load` revives it.
 *
 * @since 0.1.0
 */
export const toJson = (value: unknown): unknown => plain(value, 0, true)

const INTERRUPT = "__interrupt__"
/**
 * The channel an input is written to, and the node that reads it.
 *
 * @since 0.1.0
 */
export const START = "__start__"

/**
 * A channel version's integer part: LangGraph gives every channel a step
 * writes the same next one (savers may add a fraction, `"00000002.0123"`).
 *
 * @since 0.1.0
 */
export const major = (version: number | string): number => Math.floor(Number.parseFloat(String(version)))

/**
 * The nodes a checkpoint runs next: those whose trigger channel holds a
 * value newer than they last saw. LangGraph's graphs trigger a node through
 * its `branch:to:<node>` channel (the entry through `__start__`), emptied
 * once the node has read it, so this reads the checkpoint alone, without the
 * graph.
 *
 * @since 0.1.0
 */
export const nextNodes = (checkpoint: CheckpointTuple["checkpoint"]): ReadonlyArray<string> => {
  const next: Array<string> = []
  for (const [channel, version] of Object.entries(checkpoint.channel_versions)) {
    const node = channel === START ? START : channel.startsWith("branch:to:") ? channel.slice(10) : undefined
    if (node === undefined || !Object.hasOwn(checkpoint.channel_values, channel)) continue
    const seen = checkpoint.versions_seen[node]?.[channel]
    if (seen === undefined || compareVersions(seen, version) < 0) next.push(node)
  }
  return next.sort()
}

/** Versions are integers, or strings whose leading number orders them (`"00000002.0123"`). */
const compareVersions = (a: number | string, b: number | string) => {
  const x = typeof a === "number" ? a : Number.parseFloat(a)
  const y = typeof b === "number" ? b : Number.parseFloat(b)
  return Number.isNaN(x) || Number.isNaN(y) ? String(a).localeCompare(String(b)) : x - y
}

/**
 * The interrupts waiting at a checkpoint: the values its pending writes put
 * on `__interrupt__` (an `Interrupt`'s `value`, when it has one).
 *
 * @since 0.1.0
 */
export const interrupts = (tuple: CheckpointTuple): ReadonlyArray<unknown> =>
  (tuple.pendingWrites ?? []).filter(([, channel]) => channel === INTERRUPT).flatMap(([, , value]) =>
    (Array.isArray(value) ? value : [value]).map((interrupt) =>
      isRecord(interrupt) && "value" in interrupt ? interrupt.value : interrupt
    )
  )

/**
 * The channels a checkpoint's step wrote: LangGraph gives every channel a
 * step updates the same next version (its integer part, here), so they are
 * those at the checkpoint's highest version. Read from the checkpoint alone.
 *
 * @since 0.1.0
 */
export const changedChannels = (checkpoint: CheckpointTuple["checkpoint"]): ReadonlyArray<string> => {
  // The top is taken over every channel, triggers included: an input writes `__start__` alone, and changes no state.
  const versions = Object.entries(checkpoint.channel_versions).map(([channel, version]) =>
    [channel, major(version)] as const
  )
  const top = Math.max(...versions.map(([, version]) => version))
  return versions.filter(([channel, version]) =>
    version === top && !channel.startsWith("branch:to:") && channel !== START
  ).map(([channel]) => channel).sort()
}

/**
 * Channel by channel, what changed from `a` to `b`: channels added, removed or
 * changed (as plain values); lists of messages as messages appended, removed
 * and edited (matched by id, else by position; an edit with the fields that
 * changed inside the message). Unchanged channels are left out.
 *
 * @since 0.1.0
 */
export const diff = (
  a: CheckpointTuple["checkpoint"],
  b: CheckpointTuple["checkpoint"]
): ReadonlyArray<ChannelDiff> => {
  // Trigger channels (`branch:to:…`) are what `nextNodes` reads, not state.
  const channels = [...new Set([...Object.keys(a.channel_values), ...Object.keys(b.channel_values)])].filter((
    channel
  ) => !channel.startsWith("branch:to:")).sort()
  const diffs: Array<ChannelDiff> = []
  for (const channel of channels) {
    const had = Object.hasOwn(a.channel_values, channel)
    const has = Object.hasOwn(b.channel_values, channel)
    const before = toPlain(a.channel_values[channel])
    const after = toPlain(b.channel_values[channel])
    if (!has) diffs.push({ channel, change: "removed", before })
    else if (!had) diffs.push({ channel, change: "added", after })
    else if (JSON.stringify(before) !== JSON.stringify(after)) {
      const old = asMessages(a.channel_values[channel]) ??
        (Array.isArray(before) && before.length === 0 ? [] : undefined)
      const now = asMessages(b.channel_values[channel]) ?? (Array.isArray(after) && after.length === 0 ? [] : undefined)
      diffs.push(
        old !== undefined && now !== undefined
          ? { channel, change: "messages", ...messageDiff(old, now) }
          : { channel, change: "changed", before, after }
      )
    }
  }
  return diffs
}

/**
 * Where two plain values differ, path by path: records key by key, lists
 * item by item, anything else as a whole.
 */
const changes = (path: string, before: unknown, after: unknown): ReadonlyArray<FieldChange> => {
  if (Array.isArray(before) && Array.isArray(after)) {
    return Array.from(
      { length: Math.max(before.length, after.length) },
      (_, i) => changes(`${path}[${i}]`, before[i], after[i])
    ).flat()
  }
  if (isRecord(before) && isRecord(after) && !Array.isArray(before) && !Array.isArray(after)) {
    return [...new Set([...Object.keys(before), ...Object.keys(after)])].flatMap((key) =>
      changes(path === "" ? key : `${path}.${key}`, before[key], after[key])
    )
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ path, before, after }]
}

/** What differs inside a message, field by field; its text under the name LangChain gives it, `content`. */
const messageChanges = (before: Message, after: Message): ReadonlyArray<FieldChange> => {
  const fields = ({ text, ...message }: Message) => ({ ...message, content: text })
  return changes("", fields(before), fields(after))
}

const messageDiff = (before: ReadonlyArray<Message>, after: ReadonlyArray<Message>) => {
  const key = (message: Message, i: number) => message.id ?? `#${i}`
  const old = new Map(before.map((message, i) => [key(message, i), message]))
  const now = new Map(after.map((message, i) => [key(message, i), message]))
  return {
    appended: after.filter((message, i) => !old.has(key(message, i))),
    removed: before.filter((message, i) => !now.has(key(message, i))),
    edited: after.flatMap((message, i) => {
      const was = old.get(key(message, i))
      const fields = was === undefined ? [] : messageChanges(was, message)
      return was !== undefined && fields.length > 0 ? [{ before: was, after: message, fields }] : []
    })
  }
}
