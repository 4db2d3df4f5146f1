/**
 * Safe revival: turning stored JSON back into values without ever building
 * something the user did not allow.
 *
 * Graph state holds text from users and tools, so stored data is untrusted.
 * LangChain's generic `load()` builds any class it can reach by name (a
 * tracer holding the LangSmith key, runnables, prompt templates), resolves
 * secrets from the environment, renames classes process-wide, and throws on
 * anything it does not know, which makes a whole thread unreadable. Here:
 *
 * - LangChain records (`lc: 1`) are built only for classes on an allowlist
 *   (LangChain's message classes by default, plus what the user adds),
 *   directly with their constructor: no lookup by name, no environment, no
 *   global touched.
 * - LangGraph's own records (`lc: 2`: `undefined`, `Set`, `Map`, `RegExp`,
 *   `Error`, `Uint8Array`, `DeltaSnapshot`) are built by their exact shape.
 * - Everything else that looks like a record (another class, a secret,
 *   `not_implemented`, a malformed record, one nested deeper than
 *   {@link MAX_DEPTH}) stays the inert plain data it was parsed as, and is
 *   counted; it never fails the read.
 * - A plain object escaped by the writer (see `JsonPlus`) is rebuilt with
 *   exactly its own keys, `__proto__` included.
 *
 * @since 0.1.0
 */
import * as Messages from "@langchain/core/messages"
import { DeltaSnapshot } from "@langchain/langgraph-checkpoint"

/**
 * The deepest nesting of JSON arrays and objects a value may have: `put`
 * rejects deeper values, and reads keep deeper parts as inert data.
 *
 * @since 0.1.0
 */
export const MAX_DEPTH = 500

/**
 * The record the writer stores a plain object as when its keys could be
 * mistaken for a record (it has an `lc` key): its entries, so that no reader
 * (this one or LangGraph's own) sees an object shaped like a record.
 *
 * @since 0.1.0
 */
export const ESCAPED = "escaped"

/** The key LangChain's `toJSON` wraps user objects in within a record's kwargs. */
const LC_ESCAPED = "__lc_escaped__"

/**
 * A class stored records may be built into, by the id LangChain serializes it
 * under (`lc_namespace` and class name, joined by `/`).
 *
 * @since 0.1.0
 */
export type Constructor = new(...args: Array<never>) => unknown

/**
 * Classes to add to the default allowlist, or (with `false`) to remove from
 * it, by serialized id, e.g.
 * `{ "my_app/models/Quote": Quote, "langchain_core/messages/SystemMessage": false }`.
 *
 * @since 0.1.0
 */
export type Allow = Readonly<Record<string, Constructor | false>>

const messages = [
  Messages.AIMessage,
  Messages.AIMessageChunk,
  Messages.ChatMessage,
  Messages.ChatMessageChunk,
  Messages.FunctionMessage,
  Messages.FunctionMessageChunk,
  Messages.HumanMessage,
  Messages.HumanMessageChunk,
  Messages.RemoveMessage,
  Messages.SystemMessage,
  Messages.SystemMessageChunk,
  Messages.ToolMessage,
  Messages.ToolMessageChunk
]

const messageClasses: ReadonlySet<Constructor> = new Set(messages)

/**
 * The classes revived by default: LangChain's messages.
 *
 * @since 0.1.0
 */
export const defaultAllowlist: ReadonlyMap<string, Constructor> = new Map(
  messages.map((message) => [`langchain_core/messages/${message.name}`, message])
)

/**
 * The allowlist with the user's changes.
 *
 * @since 0.1.0
 */
export const allowlist = (allow: Allow = {}): ReadonlyMap<string, Constructor> => {
  const classes = new Map(defaultAllowlist)
  for (const [id, constructor] of Object.entries(allow)) {
    if (constructor === false) classes.delete(id)
    else classes.set(id, constructor)
  }
  return classes
}

/**
 * A value read back, and how many record-shaped parts of it were left as
 * inert data.
 *
 * @since 0.1.0
 */
export interface Revived {
  readonly value: unknown
  readonly inert: number
}

type Json = null | boolean | number | string | Array<Json> | { [key: string]: Json }
type JsonObject = { [key: string]: Json }

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Sets an own property as JSON.parse would: `__proto__` stays an ordinary key.
 *
 * @since 0.1.0
 */
export const define = (target: object, key: string, value: unknown): void => {
  if (key === "__proto__") {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
  } else (target as Record<string, unknown>)[key] = value
}

/** LangChain's rule for kwargs keys: a class's aliases, else camelCase (see `@langchain/core/load`). */
const camelCase = (key: string): string => {
  const trimmed = key.trim()
  if (!/[-_\s]/.test(trimmed)) return trimmed
  return trimmed.replace(/[-_\s]+/g, "_").toLowerCase().replace(
    /_+([a-z0-9])/g,
    (_, char: string) => char.toUpperCase()
  )
}

// Weak: keyed by the allowlist's classes, which it holds.
const aliasCache = new WeakMap<Constructor, Record<string, string>>()

/** The constructor field each serialized kwargs key is for (LangChain's `lc_aliases`, inverted). */
const aliasesOf = (constructor: Constructor): Record<string, string> => {
  const cached = aliasCache.get(constructor)
  if (cached !== undefined) return cached
  const aliases: Record<string, string> = {}
  for (let current: unknown = constructor; typeof current === "function"; current = Object.getPrototypeOf(current)) {
    const prototype: unknown = (current as { prototype?: unknown }).prototype
    if (typeof prototype !== "object" || prototype === null) break
    const own = Reflect.get(prototype, "lc_aliases") as Record<string, string> | undefined
    for (const [field, key] of Object.entries(own ?? {})) if (!(key in aliases)) aliases[key] = field
  }
  aliasCache.set(constructor, aliases)
  return aliases
}

const isConstructorRecord = (node: JsonObject, name: string) =>
  Array.isArray(node.id) && node.id.length === 1 && node.id[0] === name

const noMethod = (node: JsonObject) => node.method === undefined || node.method === null

const singleArray = (node: JsonObject): Array<Json> | undefined =>
  Array.isArray(node.args) && node.args.length === 1 && Array.isArray(node.args[0]) ? node.args[0] : undefined

/**
 * Reads JSON text: `JSON.parse`, then revival under `classes`; or an
 * array's elements' texts, parsed one by one (the same value as their
 * joined text, without building it). Never throws for what the text holds
 * (only for text that is not JSON).
 *
 * @since 0.1.0
 */
export const read = (text: string | ReadonlyArray<string>, classes: ReadonlyMap<string, Constructor>): Revived => {
  let inert = 0

  /** Leaves a record-shaped node as the plain data it was parsed as. */
  const keep = (node: Json): Json => {
    inert++
    return node
  }

  /** A plain object escaped by the writer: its entries, each value revived by `child`. */
  const unescape = (node: JsonObject, child: (value: Json) => unknown): unknown => {
    const entries = node.entries
    if (!Array.isArray(entries) || !entries.every((entry) => Array.isArray(entry) && typeof entry[0] === "string")) {
      return undefined
    }
    const object = {}
    for (const entry of entries as Array<[string, Json]>) define(object, entry[0], child(entry[1]))
    return object
  }

  /**
   * What LangChain's `toJSON` wrapped as `{ __lc_escaped__: … }` within a
   * record's kwargs: a user object whose own keys are literal (never a
   * record), its values revived as any other.
   */
  const literal = (node: Json, depth: number): unknown => {
    if (!isObject(node)) return revive(node, depth)
    if (node.lc === 2 && node.type === ESCAPED) return unescape(node, (value) => revive(value, depth + 3)) ?? node
    for (const key of Object.keys(node)) define(node, key, revive(node[key]!, depth + 1))
    return node
  }

  const lcTwo = (node: JsonObject, depth: number): unknown => {
    switch (node.type) {
      case ESCAPED:
        return unescape(node, (value) => revive(value, depth + 2)) ?? keep(node)
      case "undefined":
        return undefined
      case "delta_snapshot":
        return Object.hasOwn(node, "value") ? new DeltaSnapshot(revive(node.value!, depth)) : keep(node)
      case "constructor":
        return lcTwoConstructor(node, depth) ?? keep(node)
    }
    return keep(node)
  }

  /** LangGraph's closed set of constructor records, by their exact shape (as `JsonPlusSerializer` reads them). */
  const lcTwoConstructor = (node: JsonObject, depth: number): object | undefined => {
    const args = node.args
    if (isConstructorRecord(node, "Set") && noMethod(node)) {
      const items = singleArray(node)
      return items && new Set(items.map((item) => revive(item, depth + 2)))
    }
    if (isConstructorRecord(node, "Map") && noMethod(node)) {
      const entries = singleArray(node)
      if (!entries?.every((entry) => Array.isArray(entry) && entry.length === 2)) return undefined
      return new Map((entries as Array<[Json, Json]>).map(([k, v]) => [revive(k, depth + 3), revive(v, depth + 3)]))
    }
    if (isConstructorRecord(node, "Uint8Array") && (noMethod(node) || node.method === "from")) {
      const bytes = singleArray(node)
      const isByte = (item: Json) => typeof item === "number" && Number.isInteger(item) && item >= 0 && item <= 255
      return bytes?.every(isByte) ? new Uint8Array(bytes as Array<number>) : undefined
    }
    if (isConstructorRecord(node, "Error") && noMethod(node)) {
      return Array.isArray(args) && args.length === 1 && typeof args[0] === "string" ? new Error(args[0]) : undefined
    }
    if (isConstructorRecord(node, "RegExp") && noMethod(node)) {
      if (!Array.isArray(args) || args.length !== 2 || typeof args[0] !== "string" || typeof args[1] !== "string") {
        return undefined
      }
      try {
        return new RegExp(args[0], args[1])
      } catch {
        return undefined
      }
    }
    return undefined
  }

  /** A LangChain record of an allowed class, built directly; anything else stays data. */
  const lcOne = (node: JsonObject, depth: number): unknown => {
    const { id, kwargs } = node
    if (node.type !== "constructor" || !Array.isArray(id) || !id.every((part) => typeof part === "string")) {
      return keep(node)
    }
    const constructor = classes.get(id.join("/"))
    if (constructor === undefined || !isObject(kwargs)) return keep(node)
    const aliases = aliasesOf(constructor)
    // Messages take their snake_case kwargs as they are (LangChain's camelCase
    // rule would drop e.g. a ToolMessageChunk's `tool_call_id`).
    const message = messageClasses.has(constructor) || constructor.prototype instanceof Messages.BaseMessage
    const fields: Record<string, unknown> = {}
    for (const key of Object.keys(kwargs)) {
      const field = Object.hasOwn(aliases, key) ? aliases[key]! : message ? key : camelCase(key)
      define(fields, field, revive(kwargs[key]!, depth + 1, true))
    }
    try {
      return new (constructor as new(fields: Record<string, unknown>) => unknown)(fields)
    } catch {
      return keep(node)
    }
  }

  /**
   * Revives a value `depth` levels down. Within a record's kwargs, LangChain
   * wraps user objects as `{ __lc_escaped__: … }`: those are data as they were.
   */
  const revive = (value: Json, depth: number, kwargs = false): unknown => {
    if (typeof value !== "object" || value === null) return value
    if (depth > MAX_DEPTH) return keep(value)
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) value[i] = revive(value[i]!, depth + 1, kwargs) as Json
      return value
    }
    if (kwargs && Object.hasOwn(value, LC_ESCAPED) && Object.keys(value).length === 1) {
      return literal(value[LC_ESCAPED]!, depth + 1)
    }
    // Records are marked `lc: 1` (LangChain) or `lc: 2` (LangGraph); other `lc` values are plain data.
    if (value.lc === 2 && Object.hasOwn(value, "lc")) return lcTwo(value, depth + 1)
    if (value.lc === 1 && Object.hasOwn(value, "lc")) return lcOne(value, depth + 1)
    for (const key of Object.keys(value)) define(value, key, revive(value[key]!, depth + 1, kwargs))
    return value
  }

  const parsed = typeof text === "string" ? JSON.parse(text) : text.map((element) => JSON.parse(element))
  const value = revive(parsed as Json, 0)
  return { value, inert }
}
