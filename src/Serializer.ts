/**
 * The serializer as a service: turns channel values, pending writes and
 * metadata into typed bytes and back. It defaults to LangGraph's
 * `JsonPlusSerializer` format, so stored values are exactly what LangGraph expects
 * (LangChain messages, `Uint8Array`, `Set`, `Map`, `DeltaSnapshot`, …).
 *
 * @since 0.1.0
 */
import type { SerializerProtocol } from "@langchain/langgraph-checkpoint"
import { Context, Data, Effect, Layer } from "effect"
import { FastJsonPlusSerializer } from "./FastJsonPlus.ts"

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
 * @since 0.1.0
 */
export interface SerializerService {
  /** The LangGraph protocol object behind this service (the adapter's `serde`). */
  readonly protocol: SerializerProtocol
  readonly dump: (value: unknown) => Effect.Effect<Serialized, SerializerError>
  /** Bytes, or the text of a `json` value (as LangGraph's protocol also accepts). */
  readonly load: (
    value: { readonly type: string; readonly bytes: Uint8Array | string }
  ) => Effect.Effect<unknown, SerializerError>
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
export const fromProtocol = (protocol: SerializerProtocol): SerializerService => ({
  protocol,
  dump: (value) =>
    Effect.tryPromise({
      try: () => protocol.dumpsTyped(value),
      catch: asError
    }).pipe(
      Effect.map(([type, bytes]) => ({ type, bytes })),
      Effect.filterOrFail(
        (serialized) => !isUnserializable(serialized),
        () => new SerializerError({ cause: "the value holds something JSON cannot represent (such as a BigInt)" })
      )
    ),
  load: ({ bytes, type }) =>
    Effect.tryPromise({
      try: () => protocol.loadsTyped(type, bytes),
      catch: asError
    })
})

/**
 * The serializer used by storage operations. Without a layer it is LangGraph's
 * `JsonPlusSerializer` (with faster reading, see `FastJsonPlus`).
 *
 * @since 0.1.0
 */
export const Serializer = Context.Reference<SerializerService>("langgraph-checkpoint-effect/Serializer", {
  defaultValue: () => fromProtocol(new FastJsonPlusSerializer())
})

/**
 * Provides a serializer built from a LangGraph `SerializerProtocol`.
 *
 * @since 0.1.0
 */
export const layer = (protocol: SerializerProtocol): Layer.Layer<never> =>
  Layer.succeed(Serializer, fromProtocol(protocol))
