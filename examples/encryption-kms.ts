/**
 * Envelope encryption with a KMS, and crypto-shredding: each tenant's data key
 * is kept only wrapped by the KMS and unwrapped once when the saver starts;
 * checkpoints are sealed locally. Dropping a tenant's key makes its threads
 * unreadable while the others still read. The KMS is a fake in this process,
 * in the shape of AWS KMS, GCP KMS or Vault transit.
 * `npm run example:encryption-kms`
 */
import { PGlite } from "@electric-sql/pglite"
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages"
import { MessagesAnnotation, START, StateGraph } from "@langchain/langgraph"
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint"
import { Console, Context, Data, Effect, Layer, Schema } from "effect"
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"
import { CheckpointError, EffectCheckpointSaver, Encryption } from "../src/index.ts"
import * as Pglite from "../src/pglite.ts"

class KmsError extends Data.TaggedError("KmsError")<{ readonly message: string }> {}

/**
 * A real KMS runs encrypt/decrypt remotely: its master key never reaches this
 * process. The fake holds one in memory, with AES-256-GCM as the KMS would.
 */
class FakeKms extends Context.Service<FakeKms, {
  readonly encrypt: (plaintext: Uint8Array) => Effect.Effect<Uint8Array>
  readonly decrypt: (ciphertext: Uint8Array) => Effect.Effect<Uint8Array, KmsError>
}>()("examples/FakeKms") {
  static readonly layer = Layer.sync(FakeKms, () => {
    const master = randomBytes(32)
    return FakeKms.of({
      encrypt: (plaintext) =>
        Effect.sync(() => {
          const nonce = randomBytes(12)
          const cipher = createCipheriv("aes-256-gcm", master, nonce)
          return Buffer.concat([nonce, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()])
        }),
      decrypt: (ciphertext) =>
        Effect.try({
          try: () => {
            const decipher = createDecipheriv("aes-256-gcm", master, ciphertext.subarray(0, 12))
            decipher.setAuthTag(ciphertext.subarray(-16))
            return Buffer.concat([decipher.update(ciphertext.subarray(12, -16)), decipher.final()])
          },
          catch: () => new KmsError({ message: "the KMS cannot decrypt this data key" })
        })
    })
  })
}

/** A keyring of the wrapped data keys, unwrapped through the KMS once, when the layer is built. */
const kmsCipher = (wrapped: Readonly<Record<string, Uint8Array>>) =>
  Effect.gen(function*() {
    const kms = yield* FakeKms
    const keys = new Map<string, Encryption.DataKey>()
    for (const [tenant, key] of Object.entries(wrapped)) keys.set(tenant, Encryption.aes256gcm(yield* kms.decrypt(key)))
    const cipher: Encryption.Cipher = {
      // "acme/ticket-1" is sealed under acme's key.
      keyFor: (thread_id) => thread_id.split("/")[0]!,
      key: (keyId) => keys.get(keyId)
    }
    return cipher
  })

/** A graph that answers without a model. */
const graphWith = (checkpointer: BaseCheckpointSaver) =>
  new StateGraph(MessagesAnnotation)
    .addNode("reply", (state) => ({ messages: [new AIMessage(`Noted: "${state.messages.at(-1)?.text}"`)] }))
    .addEdge(START, "reply")
    .compile({ checkpointer })

/** A thread's messages, read back from the checkpoints; the saver rejects with the storage's typed errors. */
const messagesOf = (graph: ReturnType<typeof graphWith>, thread_id: string) =>
  Effect.tryPromise({ try: () => graph.getState({ configurable: { thread_id } }), catch: (error) => error }).pipe(
    Effect.map((state): Array<BaseMessage> => state.values.messages)
  )

const threads = [["acme/ticket-1", "Where is my rocket?"], ["globex/ticket-7", "Is the device ready?"]] as const

const program = Effect.gen(function*() {
  const kms = yield* FakeKms
  // What configuration or a secrets manager would hold: the data keys, wrapped.
  const wrapped = { acme: yield* kms.encrypt(randomBytes(32)), globex: yield* kms.encrypt(randomBytes(32)) }
  const pglite = yield* Effect.promise(() => PGlite.create())
  yield* Effect.addFinalizer(() => Effect.promise(() => pglite.close()))

  // The graph over a saver on the shared database, whose keyring holds `keys`.
  const graphOver = (keys: Readonly<Record<string, Uint8Array>>) =>
    Effect.acquireRelease(
      Effect.sync(() =>
        EffectCheckpointSaver.fromLayer(
          Pglite.layer({ pglite }).pipe(
            Layer.provide(Encryption.layerCipher(kmsCipher(keys))),
            Layer.provide(Layer.succeed(FakeKms, kms))
          )
        )
      ),
      (saver) => Effect.promise(() => saver.close())
    ).pipe(Effect.map(graphWith))

  yield* Effect.scoped(Effect.gen(function*() {
    const graph = yield* graphOver(wrapped)
    for (const [thread_id, message] of threads) {
      yield* Effect.promise(() =>
        graph.invoke({ messages: [new HumanMessage(message)] }, { configurable: { thread_id } })
      )
      for (const said of yield* messagesOf(graph, thread_id)) {
        yield* Console.log(`${thread_id.padEnd(16)} ${said.getType().padEnd(5)} ${said.text}`)
      }
    }
  }))

  // Crypto-shredding: without globex's key, its checkpoints are noise; acme's still read.
  const { globex: _, ...acmeOnly } = wrapped
  yield* Effect.scoped(Effect.gen(function*() {
    const graph = yield* graphOver(acmeOnly)
    for (const [thread_id] of threads) {
      const outcome = yield* messagesOf(graph, thread_id).pipe(
        Effect.map((messages) => `still reads; last message: ${messages.at(-1)?.text}`),
        Effect.catchIf(
          Schema.is(CheckpointError.CorruptedCheckpoint),
          (error) => Effect.succeed(`${error._tag}: ${error.message}`)
        )
      )
      yield* Console.log(`without globex's key, ${thread_id}: ${outcome}`)
    }
  }))
})

Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(FakeKms.layer))).catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
