/**
 * Caller input decoded by its Schema, failures turned into the typed errors
 * that name the operation and the field.
 *
 * @since 0.1.0
 */
import { Effect, Exit, Schema, type SchemaIssue, SchemaParser } from "effect"
import { CheckpointIdRef, CheckpointRef, locate, type Location } from "../Checkpoint.ts"
import { formatIssue, InvalidConfig, InvalidInput } from "../CheckpointError.ts"

/** @since 0.1.0 */
export const invalidConfig = (operation: string) => (error: Schema.SchemaError) =>
  new InvalidConfig({ operation, detail: formatIssue(error.issue) })

/** @since 0.1.0 */
export const invalidInput = (operation: string, argument: string) => (error: Schema.SchemaError) =>
  new InvalidInput({ operation, argument, detail: formatIssue(error.issue) })

/**
 * A decoder of `schema` that answers at once, as an `Exit` (an effect a
 * generator yields without a fiber step): the value, or the error `refuse`
 * makes of the issue. Decoders of the operations on the hot path are built
 * once, so a call only runs them.
 *
 * @since 0.2.0
 */
export const decoder = <S extends Schema.ConstraintDecoder<unknown>, E>(
  schema: S,
  refuse: (issue: SchemaIssue.Issue) => E
): (input: unknown) => Exit.Exit<S["Type"], E> => {
  const decode = SchemaParser.decodeUnknownExit(schema)
  return (input) => Exit.mapError(decode(input), refuse)
}

/**
 * A decoder of an operation's argument: its failure is `InvalidInput` naming both.
 *
 * @since 0.2.0
 */
export const argumentDecoder = <S extends Schema.ConstraintDecoder<unknown>>(
  schema: S,
  operation: string,
  argument: string
) => decoder(schema, (issue) => new InvalidInput({ operation, argument, detail: formatIssue(issue) }))

const refDecoder = decoder(CheckpointRef, (issue) => issue)
const idRefDecoder = decoder(CheckpointIdRef, (issue) => issue)

/** @since 0.1.0 */
export const decodeRef = (operation: string, ref: CheckpointRef): Exit.Exit<Location, InvalidConfig> =>
  Exit.mapBoth(refDecoder(ref), {
    onFailure: (issue) => new InvalidConfig({ operation, detail: formatIssue(issue) }),
    onSuccess: locate
  })

/** @since 0.1.0 */
export const decodeIdRef = (
  operation: string,
  ref: CheckpointIdRef
): Exit.Exit<typeof CheckpointIdRef.Type, InvalidConfig> =>
  Exit.mapError(idRefDecoder(ref), (issue) => new InvalidConfig({ operation, detail: formatIssue(issue) }))

/**
 * The writer epoch a config carries (`writer_epoch`, see `ThreadRuns`):
 * undefined when it carries none, else a non-negative integer
 * (`InvalidConfig` otherwise).
 *
 * @since 0.4.0
 */
export const writerEpochOf = (operation: string, ref: object): Exit.Exit<number | undefined, InvalidConfig> => {
  const epoch: unknown = (ref as { readonly writer_epoch?: unknown }).writer_epoch
  return epoch === undefined || (typeof epoch === "number" && Number.isSafeInteger(epoch) && epoch >= 0)
    ? Exit.succeed(epoch)
    : Exit.fail(
      new InvalidConfig({
        operation,
        detail: `writer_epoch must be a non-negative integer (what claimThread answers), got ${
          JSON.stringify(epoch) ?? typeof epoch
        }`
      })
    )
}

/**
 * A thread id, decoded: as part of a config (`InvalidConfig`), or, given
 * `argument`, as an argument the caller passed (`InvalidInput` naming it).
 *
 * @since 0.1.0
 */
export function decodeThreadId(operation: string, thread_id: string): Effect.Effect<string, InvalidConfig>
export function decodeThreadId(
  operation: string,
  thread_id: string,
  argument: string
): Effect.Effect<string, InvalidInput>
export function decodeThreadId(
  operation: string,
  thread_id: string,
  argument?: string
): Effect.Effect<string, InvalidConfig | InvalidInput> {
  return Schema.decodeUnknownEffect(CheckpointRef.fields.thread_id)(thread_id).pipe(
    Effect.mapError((error) =>
      argument === undefined ? invalidConfig(operation)(error) : invalidInput(operation, argument)(error)
    )
  )
}

/**
 * The bounds of a JSON object a caller gives (a thread record's metadata):
 * containers nested at most `depth` deep, at most `bytes` of JSON text (UTF-8).
 *
 * @since 0.2.0
 */
export const JSON_OBJECT_BOUNDS: JsonBounds = { depth: 32, bytes: 256 * 1024 }

/**
 * How deep and how long a JSON object a caller gives may be.
 *
 * @since 0.4.0
 */
export interface JsonBounds {
  readonly depth: number
  readonly bytes: number
}

/**
 * The bounds of a thread's values (what a graph's state holds): as deep as
 * `put` stores, and up to 16 MiB of JSON text.
 *
 * @since 0.4.0
 */
export const JSON_VALUES_BOUNDS: JsonBounds = { depth: 500, bytes: 16 * 1024 * 1024 }

/** A path's next step, as JavaScript would write it. */
const step = (path: string, key: string) =>
  /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`

const kindOf = (value: unknown) => {
  if (typeof value !== "object" || value === null) return typeof value
  const name: unknown = Object.getPrototypeOf(value)?.constructor?.name
  return typeof name === "string" && name !== "" ? `an instance of ${name}` : "an object of another prototype"
}

/**
 * What keeps `value` (at `path`, inside `depth` containers) from being
 * plain JSON, if anything: a value JSON has no place for (a function, a
 * symbol, a bigint, `undefined` in an array), a number that is not finite,
 * an instance of a class, a container holding itself, or one nested deeper
 * than {@link JSON_OBJECT_BOUNDS}. `undefined` values of properties are
 * left out, as `JSON.stringify` leaves them.
 */
const notJson = (
  value: unknown,
  path: string,
  depth: number,
  open: Set<object>,
  bounds: JsonBounds
): string | undefined => {
  if (value === null || typeof value === "string" || typeof value === "boolean") return undefined
  if (typeof value === "number") return Number.isFinite(value) ? undefined : `${path} is ${value}, not a finite number`
  if (typeof value !== "object") {
    return `${path} is ${typeof value === "undefined" ? "undefined" : `a ${typeof value}`}, not JSON`
  }
  if (open.has(value)) return `${path} holds itself (a cycle)`
  if (depth >= bounds.depth) return `${path} is nested deeper than ${bounds.depth} levels`
  const prototype: unknown = Object.getPrototypeOf(value)
  open.add(value)
  try {
    if (Array.isArray(value)) {
      if (prototype !== Array.prototype) return `${path} is ${kindOf(value)}, not a plain array`
      for (let i = 0; i < value.length; i++) {
        const problem = notJson(value[i], `${path}[${i}]`, depth + 1, open, bounds)
        if (problem !== undefined) return problem
      }
      return undefined
    }
    if (prototype !== Object.prototype && prototype !== null) return `${path} is ${kindOf(value)}, not a plain object`
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined) continue
      const problem = notJson(item, step(path, key), depth + 1, open, bounds)
      if (problem !== undefined) return problem
    }
    return undefined
  } finally {
    open.delete(value)
  }
}

/**
 * The JSON text of a plain JSON object a caller gives as `argument`, within
 * `bounds` (default {@link JSON_OBJECT_BOUNDS}); `InvalidInput` naming what is wrong
 * otherwise: not an object, a value JSON cannot hold, a class instance, a
 * cycle, too deep or too long.
 *
 * @since 0.2.0
 */
export const encodeJsonObject = (
  operation: string,
  argument: string,
  value: unknown,
  bounds: JsonBounds = JSON_OBJECT_BOUNDS
): Effect.Effect<string, InvalidInput> =>
  Effect.suspend(() => {
    const fail = (detail: string) => Effect.fail(new InvalidInput({ operation, argument, detail }))
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return fail(`expected an object of JSON values, got ${Array.isArray(value) ? "an array" : kindOf(value)}`)
    }
    let problem: string | undefined
    let text: string
    try {
      problem = notJson(value, argument, 0, new Set(), bounds)
      text = problem === undefined ? JSON.stringify(value) : ""
    } catch (error) {
      // A getter or a proxy that throws.
      return fail(`cannot be read: ${error instanceof Error ? error.message : String(error)}`)
    }
    if (problem !== undefined) return fail(problem)
    if (text.length > bounds.bytes || new TextEncoder().encode(text).byteLength > bounds.bytes) {
      return fail(`its JSON text is longer than ${bounds.bytes} bytes`)
    }
    return Effect.succeed(text)
  })

/**
 * A stored JSON object read back (a thread record's metadata): parsed with
 * `JSON.parse` alone, so an own `__proto__` key stays a plain property and
 * nothing becomes a class instance; text that is not a JSON object (stored
 * data is untrusted) reads as `{}`.
 *
 * @since 0.2.0
 */
export const readJsonObject = (text: string): Record<string, unknown> => {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : {}
  } catch {
    return {}
  }
}

const Name = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(256))

/**
 * An id or name a caller gives as `argument`: a non-empty string of at
 * most 256 characters, without NUL; `InvalidInput` otherwise.
 *
 * @since 0.4.0
 */
export const nameOf = (operation: string, argument: string, value: unknown): Effect.Effect<string, InvalidInput> =>
  Schema.decodeUnknownEffect(Name)(value).pipe(
    Effect.mapError(invalidInput(operation, argument)),
    Effect.flatMap((name) =>
      name.includes("\u0000")
        ? Effect.fail(new InvalidInput({ operation, argument, detail: "holds the NUL character (U+0000)" }))
        : Effect.succeed(name)
    )
  )
