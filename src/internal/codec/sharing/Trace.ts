/**
 * Traces: when an element's JSON text may be reused. A trace records every
 * value an element's serialization reads (each object's class; a plain
 * object's or array's enumerable properties, deeply; what a LangChain
 * message's `toJSON` reads); an element whose trace is unchanged serializes
 * to the same text, so `Sharing` reuses it instead of serializing again.
 *
 * Objects whose serialization could read state a trace cannot see (a
 * `Date`, bytes, any other class or `toJSON`) have no trace and are
 * serialized at every step. (Assumed, as JSON itself does not promise it: a
 * `toJSON` answers the same whatever key the element is found under.)
 *
 * @since 0.1.0
 */
import { Serializable } from "@langchain/core/load/serializable"
import { BaseMessage } from "@langchain/core/messages"

/** Objects deeper than this are not traced (serialized at every step). */
const MAX_DEPTH = 64

/**
 * Whether a LangChain message serializes through `Serializable.toJSON`,
 * whose reads a trace follows.
 */
const isTraceableMessage = (value: object): value is BaseMessage =>
  value instanceof BaseMessage &&
  value.toJSON === Serializable.prototype.toJSON &&
  typeof value.lc_kwargs === "object" && value.lc_kwargs !== null &&
  Object.getPrototypeOf(value.lc_kwargs) === Object.prototype

/**
 * Every value JSON serialization of an element reads, depth first: each
 * object's class, then a plain object's or array's enumerable properties in
 * order, or what a LangChain message's `toJSON` reads. Recorded when an
 * element is first serialized, then walked again at each later step and
 * compared as it goes: equal traces mean equal text.
 *
 * @since 0.1.0
 */
export class Trace {
  readonly values: Array<unknown> = []
  private at = 0
  private recording = true

  /** Records `value`'s trace; false when serialization could read something a trace cannot see. */
  record(value: object): boolean {
    try {
      return this.walk(value, 0)
    } catch {
      return false
    }
  }

  /** Whether `value` still has the recorded trace. */
  matches(value: object): boolean {
    this.recording = false
    this.at = 0
    try {
      return this.walk(value, 0) && this.at === this.values.length
    } catch {
      return false
    }
  }

  private see(value: unknown): boolean {
    if (this.recording) {
      this.values.push(value)
      return true
    }
    return this.values[this.at++] === value
  }

  private walk(value: unknown, depth: number): boolean {
    if (typeof value !== "object" || value === null) return this.see(value)
    if (depth > MAX_DEPTH) return false
    const proto: unknown = Object.getPrototypeOf(value)
    if (!this.see(proto)) return false
    if (Array.isArray(value)) {
      // By index, as JSON reads an array (an own iterator is not what it writes).
      if (proto !== Array.prototype || !this.see(value.length)) return false
      for (let i = 0; i < value.length; i++) if (!this.walk(value[i], depth + 1)) return false
      return this.see(undefined)
    }
    if (proto !== Object.prototype && proto !== null) return this.walkMessage(value, depth)
    if (!this.see("toJSON" in value) || (this.recording && "toJSON" in value)) return false
    for (const key in value) {
      if (!this.see(key) || !this.walk((value as Record<string, unknown>)[key], depth + 1)) return false
    }
    // Ends the object, so that a property added at its end is seen.
    return this.see(Trace)
  }

  /**
   * A LangChain message (the only class recorded): what `Serializable.toJSON`
   * reads, that is each key of `lc_kwargs` and its value, taken from the
   * message itself when it has that key. Its class's own answers are fixed.
   */
  private walkMessage(value: object, depth: number): boolean {
    if (this.recording && !isTraceableMessage(value)) return false
    const message = value as BaseMessage
    // The `toJSON` called (own or inherited), rather than whether one is its own: one named read.
    if (!this.see(message.toJSON) || !this.see(message.lc_serializable)) return false
    if (!this.walk(message.lc_namespace, depth + 1)) return false
    const kwargs = message.lc_kwargs
    if (!this.see(Object.getPrototypeOf(kwargs))) return false
    for (const key in kwargs) {
      // `key in message` only when the message holds nothing there (a read that finds a value has it).
      let read = (message as unknown as Record<string, unknown>)[key]
      if (read === undefined && !(key in message)) read = kwargs[key]
      if (!this.see(key) || !this.walk(read, depth + 1)) return false
    }
    return this.see(Trace)
  }
}
