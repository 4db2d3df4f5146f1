/**
 * The serializer as a service: turns channel values, pending writes and
 * metadata into typed bytes and back. It defaults to LangGraph's
 * `JsonPlusSerializer` format with safe revival (`SafeJsonPlusSerializer`),
 * so stored values are what LangGraph expects (LangChain messages,
 * `Uint8Array`, `Set`, `Map`, `DeltaSnapshot`, …) and stored data never
 * builds a class the user did not allow.
 *
 * @since 0.1.0
 */
import type { SerializerProtocol } from "@langchain/langgraph-checkpoint"
import { Context, Data, Effect, Layer } from "effect"
import { type JsonPlusOptions, SafeJsonPlusSerializer } from "./JsonPlus.ts"
import type { Revived } from "./Revival.ts"

/**
 * A serialized value: the serializer's type tag (`"json"`, `"bytes"`, …) and
 * its bytes. The tag is stored with the bytes, so a `Uint8Array` written as
 * `"bytes"` is read back as bytes, never parsed as JSON.
 *
 * @since 0.1.0
 */
export interface Serialized {
  readonly type: string
  readonly bytes: Uint8Array
}

/**
 * What a serializer in the `JsonPlusSerializer` format can do synchronously:
 * write a value's JSON text (what structural sharing stores per element) and
 * read JSON bytes under safe revival, saying how much was left inert.
 *
 * @since 0.1.0
 */
export interface JsonFormat {
  /** Throws an `Error` saying why a value cannot be written (`maxDepth`: see `Revival.MAX_DEPTH`). */
  readonly dump: (value: unknown, maxDepth?: number) => Uint8Array
  /** JSON text or bytes, or an array's elements' bytes (read as the array their joined text is). */
  readonly read: (json: Uint8Array | string | ReadonlyArray<Uint8Array>) => Revived
}

/**
 * @since 0.1.0
 */
export interface SerializerService {
  /** The LangGraph protocol object behind this service (the adapter's `serde`). */
  readonly protocol: SerializerProtocol
  readonly dump: (value: unknown) => Effect.Effect<Serialized, SerializerError>
  /**
   * `dump` done at once, throwing what it would fail with, when the
   * serializer can (the default one); `undefined` when only `dump` can.
   */
  readonly dumpNow: ((value: unknown) => Serialized) | undefined
  /** Bytes, or the text of a `json` value (as LangGraph's protocol also accepts). */
  readonly load: (
    value: { readonly type: string; readonly bytes: Uint8Array | string }
  ) => Effect.Effect<unknown, SerializerError>
  /** Present when the serializer writes and reads the `JsonPlusSerializer` format itself. */
  readonly json: JsonFormat | undefined
}

/**
 * What `JsonPlusSerializer` (through fast-safe-stringify) writes instead of a
 * value `JSON.stringify` throws on, such as a `BigInt`: the whole value would
 * silently become this string.
 */
const unserializable = new TextEncoder().encode(
  JSON.stringify("[unable to serialize, circular reference is too complex to analyze]")
)

const isUnserializable = ({ bytes, type }: Serialized): boolean =>
  type === "json" && bytes.length === unserializable.length && bytes.every((byte, i) => byte === unserializable[i])

/**
 * The serializer threw. Storage operations report it as `SerializationFailed`
 * (writing) or `CorruptedCheckpoint` (reading).
 *
 * @since 0.1.0
 */
export class SerializerError extends Data.TaggedError("SerializerError")<{ readonly cause: unknown }> {
  override get message(): string {
    return this.cause instanceof Error ? this.cause.message : String(this.cause)
  }
}

const asError = (cause: unknown) => new SerializerError({ cause })

/**
 * Wraps any LangGraph `SerializerProtocol` (e.g. an encrypting serializer).
 * A value the protocol can only replace by a placeholder string fails instead
 * of being stored as that string.
 *
 * @since 0.1.0
 */
export const fromProtocol = (protocol: SerializerProtocol): SerializerService => {
  if (protocol instanceof SafeJsonPlusSerializer) return fromJsonPlus(protocol)
  return {
    protocol,
    dump: (value) =>
      Effect.tryPromise({ try: () => protocol.dumpsTyped(value), catch: asError }).pipe(
        Effect.map(([type, bytes]) => ({ type, bytes })),
        Effect.filterOrFail(
          (serialized) => !isUnserializable(serialized),
          () =>
            new SerializerError({
              cause: "the value holds a circular reference or a BigInt, which JSON cannot represent"
            })
        )
      ),
    load: ({ bytes, type }) => Effect.tryPromise({ try: () => protocol.loadsTyped(type, bytes), catch: asError }),
    dumpNow: undefined,
    json: undefined
  }
}

const encoder = new TextEncoder()

/** The service over the safe serializer: synchronous, no promise per value. */
const fromJsonPlus = (protocol: SafeJsonPlusSerializer): SerializerService => {
  const json: JsonFormat = {
    dump: (value, maxDepth) => protocol.dumpJson(value, maxDepth),
    read: (bytes) => protocol.read(bytes)
  }
  const dumpNow = (value: unknown): Serialized =>
    value instanceof Uint8Array ? { type: "bytes", bytes: value } : { type: "json", bytes: json.dump(value) }
  return {
    protocol,
    json,
    dumpNow,
    dump: (value) => Effect.try({ try: () => dumpNow(value), catch: asError }),
    load: ({ bytes, type }) => {
      if (type === "bytes") return Effect.succeed(typeof bytes === "string" ? encoder.encode(bytes) : bytes)
      if (type !== "json") return Effect.fail(asError(new Error(`Unknown serialization type: ${type}`)))
      return Effect.try({ try: () => protocol.read(bytes).value, catch: asError })
    }
  }
}

/**
 * The serializer used by storage operations. Without a layer it is
 * `SafeJsonPlusSerializer` with the default allowlist.
 *
 * @since 0.1.0
 */
export const Serializer = Context.Reference<SerializerService>("langgraph-checkpoint-effect/Serializer", {
  defaultValue: () => fromProtocol(new SafeJsonPlusSerializer())
})

/**
 * Provides a serializer built from a LangGraph `SerializerProtocol`.
 *
 * @since 0.1.0
 */
export const layer = (protocol: SerializerProtocol): Layer.Layer<never> =>
  Layer.succeed(Serializer, fromProtocol(protocol))

/**
 * Provides the default serializer with its allowlist changed: classes to
 * revive besides LangChain's messages, or to stop reviving (see
 * `Revival.Allow`).
 *
 * @since 0.1.0
 */
export const layerJsonPlus = (options: JsonPlusOptions): Layer.Layer<never> =>
  layer(new SafeJsonPlusSerializer(options))
