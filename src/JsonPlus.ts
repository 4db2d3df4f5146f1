/**
 * The serializer for channel values, pending writes and metadata:
 * LangGraph's `JsonPlusSerializer` format, written so that data stays data
 * and read through safe revival (see `Revival`).
 *
 * Writing produces the very bytes `JsonPlusSerializer` writes, except for
 * plain objects with an `lc` key: those could be mistaken for a LangChain or
 * LangGraph record by any reader, so they are stored escaped, as
 * `{"lc":2,"type":"escaped","entries":[[key, value], …]}`, which reads back
 * as the same plain object here and as that inert record-free object in
 * LangGraph's own savers. Where `JsonPlusSerializer` would store a placeholder
 * string instead of the value (a circular reference, a `BigInt`) or a value
 * too deep to read back, writing fails and says why.
 *
 * @since 0.1.0
 */
import { DeltaSnapshot, JsonPlusSerializer } from "@langchain/langgraph-checkpoint"
import { type Allow, allowlist, type Constructor, define, ESCAPED, MAX_DEPTH, read, type Revived } from "./Revival.ts"

const encoder = new TextEncoder()
const decoder = new TextDecoder()

const constructorRecord = (name: string, method: string | null, args: Array<unknown>) => ({
  lc: 2,
  type: "constructor",
  id: [name],
  method,
  args,
  kwargs: {}
})

/** What `JsonPlusSerializer` writes for the values JSON has no form for (its `_default`). */
const special = (value: unknown): unknown => {
  if (value === undefined) return { lc: 2, type: "undefined" }
  if (typeof value !== "object" || value === null) return value
  if (value instanceof DeltaSnapshot) return { lc: 2, type: "delta_snapshot", value: value.value }
  if (value instanceof Set || value instanceof Map) {
    return constructorRecord(value.constructor.name, null, [Array.from(value)])
  }
  if (value instanceof RegExp) return constructorRecord("RegExp", null, [value.source, value.flags])
  if (value instanceof Error) return constructorRecord("Error", null, [value.message])
  if ((value as { lg_name?: unknown }).lg_name === "Send") {
    const send = value as { node: unknown; args: unknown; timeout?: unknown }
    return { node: send.node, args: send.args, ...(send.timeout === undefined ? {} : { timeout: send.timeout }) }
  }
  if (value instanceof Uint8Array) return constructorRecord("Uint8Array", "from", [Array.from(value)])
  return value
}

/** Whether a value holds an own `__proto__` key in a plain object or array, stopping at class instances. */
const hasProtoKey = (value: unknown, depth = 0): boolean => {
  if (typeof value !== "object" || value === null || depth > MAX_DEPTH) return false
  if (Array.isArray(value)) return value.some((item) => hasProtoKey(item, depth + 1))
  const prototype: unknown = Object.getPrototypeOf(value)
  if (prototype !== Object.prototype && prototype !== null) return false
  return Object.hasOwn(value, "__proto__") || Object.values(value).some((item) => hasProtoKey(item, depth + 1))
}

/** LangChain's `escapeIfNeeded`, defining `__proto__` as an own key instead of assigning it. */
const escapeKwarg = (value: unknown): unknown => {
  if (typeof value !== "object" || value === null) return value
  if (Array.isArray(value)) return value.map(escapeKwarg)
  if ("lc_serializable" in value && typeof (value as { toJSON?: unknown }).toJSON === "function") return value
  if ("lc" in value || (Object.keys(value).length === 1 && "__lc_escaped__" in value)) return { __lc_escaped__: value }
  const copy = {}
  for (const [key, item] of Object.entries(value)) define(copy, key, escapeKwarg(item))
  return copy
}

/** LangChain's `keyToJson`: a field's kwargs key. */
const snakeCase = (key: string): string =>
  key.replace(/([A-Z]+)([A-Z][a-z0-9]+)/g, "$1_$2").replace(/([a-z0-9])([A-Z])/g, "$1_$2").replace(/[-_\s]+/g, "_")
    .toLowerCase()

/**
 * A LangChain record as `toJSON` wrote it, with the kwargs that held own
 * `__proto__` keys written again: `toJSON` copies kwargs by assignment, which
 * turns such a key into the copy's prototype and drops it.
 */
const withProtoKeys = (instance: object, record: unknown): unknown => {
  const fields = (instance as { lc_kwargs?: unknown }).lc_kwargs
  if (typeof fields !== "object" || fields === null || typeof record !== "object" || record === null) return record
  const kwargs = (record as { kwargs?: unknown }).kwargs
  if (typeof kwargs !== "object" || kwargs === null) return record
  const aliases = (instance as { lc_aliases?: Record<string, string> }).lc_aliases ?? {}
  let rebuilt: Record<string, unknown> | undefined
  for (const field of Object.keys(fields)) {
    const value = field in instance
      ? (instance as Record<string, unknown>)[field]
      : (fields as Record<string, unknown>)[field]
    if (!hasProtoKey(value)) continue
    const jsonKey = aliases[field] ?? snakeCase(field)
    if (!Object.hasOwn(kwargs, jsonKey)) continue
    rebuilt ??= { ...kwargs }
    rebuilt[jsonKey] = escapeKwarg(value)
  }
  return rebuilt === undefined ? record : { ...record, kwargs: rebuilt }
}

/**
 * The replacer: `value` is what `toJSON` returned when the original (the
 * holder's property) has one. An object that serializes as itself and has an
 * `lc` key is escaped; what a LangChain object's `toJSON` returned (its
 * record) is kept, with own `__proto__` keys it dropped written back; what
 * another `toJSON` returned goes through `special` as `JsonPlusSerializer`
 * does (a `Send` is stored as `{ node, args }`).
 */
function replacer(this: unknown, key: string, value: unknown): unknown {
  const original = (this as Record<string, unknown>)[key]
  if (original !== value) {
    return typeof original === "object" && original !== null && "lc_serializable" in original
      ? withProtoKeys(original, value)
      : special(value)
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value) && Object.hasOwn(value, "lc")) {
    return { lc: 2, type: ESCAPED, entries: Object.entries(value) }
  }
  return special(value)
}

/**
 * The deepest nesting of arrays and objects in JSON text (linear, whatever
 * the depth: no parse).
 *
 * @since 0.1.0
 */
export const depthOf = (text: string): number => {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (inString) {
      if (code === 92) i++ // a backslash escapes the next character
      else if (code === 34) inString = false
    } else if (code === 34) inString = true
    else if (code === 123 || code === 91) deepest = Math.max(deepest, ++depth)
    else if (code === 125 || code === 93) depth--
  }
  return deepest
}

/**
 * The JSON text of a value, as `JsonPlusSerializer` writes it with plain
 * objects escaped (see the module header). Throws an `Error` saying why a
 * value cannot be written.
 *
 * @since 0.1.0
 */
export const dumpJson = (value: unknown, maxDepth = MAX_DEPTH): Uint8Array => {
  let text: string | undefined
  try {
    text = JSON.stringify(value, replacer)
  } catch (cause) {
    throw new Error(
      cause instanceof RangeError
        ? `the value nests deeper than ${MAX_DEPTH} levels`
        : cause instanceof TypeError && /circular/i.test(cause.message)
        ? "the value holds a circular reference"
        : cause instanceof TypeError && /BigInt/i.test(cause.message)
        ? "the value holds a BigInt, which JSON cannot represent"
        : `the value cannot be written as JSON: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause }
    )
  }
  // A function or symbol alone: JSON.stringify writes nothing.
  if (text === undefined) return new Uint8Array()
  // Each level takes two characters, its bracket and the one closing it: only long texts need the scan.
  if (text.length > 2 * maxDepth + 1 && depthOf(text) > maxDepth) {
    throw new Error(`the value nests deeper than ${MAX_DEPTH} levels (arrays and objects)`)
  }
  return encoder.encode(text)
}

/**
 * @since 0.1.0
 */
export interface JsonPlusOptions {
  /** Classes to revive besides LangChain's messages, or (`false`) to stop reviving (see `Revival.Allow`). */
  readonly allow?: Allow | undefined
}

/**
 * LangGraph's `SerializerProtocol` over {@link dumpJson} and safe revival,
 * for LangGraph code that takes a serializer. The storage uses its
 * synchronous `dumpJson` and `read` directly.
 *
 * @since 0.1.0
 */
export class SafeJsonPlusSerializer extends JsonPlusSerializer {
  readonly #classes: ReadonlyMap<string, Constructor>

  constructor(options: JsonPlusOptions = {}) {
    super()
    this.#classes = allowlist(options.allow)
  }

  /**
   * The JSON text `dumpsTyped` writes for a value that is not a `Uint8Array`
   * (`maxDepth` below `MAX_DEPTH` for an array's element).
   */
  dumpJson(value: unknown, maxDepth = MAX_DEPTH): Uint8Array {
    return dumpJson(value, maxDepth)
  }

  /** Reads JSON text or bytes, or an array's elements' bytes, counting what was left inert. */
  read(json: string | Uint8Array | ReadonlyArray<Uint8Array>): Revived {
    return read(
      typeof json === "string"
        ? json
        : json instanceof Uint8Array
        ? decoder.decode(json)
        : json.map((element) => decoder.decode(element)),
      this.#classes
    )
  }

  protected override _dumps(value: unknown): Uint8Array {
    return dumpJson(value)
  }

  protected override async _loads(data: string): Promise<unknown> {
    return this.read(data).value
  }
}
