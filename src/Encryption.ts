/**
 * Encryption at rest: the keys checkpoints are sealed under, as a service.
 *
 * A {@link Cipher} names the key a thread's new data is sealed under
 * (`keyFor`, one primary key by default, or a tenant's key) and holds the
 * {@link DataKey}s of a ring: writes use the thread's key, reads use whichever
 * key a ciphertext names. The default keyring is AES-256-GCM on
 * `node:crypto` with keys from options or `Config` (`Redacted`, never
 * logged). A KMS plugs in as envelope encryption: data keys wrapped by the
 * KMS are unwrapped once, when the layer is built ({@link layerCipher}), and
 * the rows are sealed locally.
 *
 * What is sealed and how each ciphertext is bound to its place is the
 * codec's part (`Sealing`); this module is keys and the cipher only.
 *
 * @since 0.1.0
 */
import { Config, Context, Effect, Layer, Redacted, Schema, SchemaIssue } from "effect"
import { createCipheriv, createDecipheriv, createHmac, createSecretKey, hkdfSync, randomBytes } from "node:crypto"
import { formatIssue, InvalidConfig } from "./CheckpointError.ts"

/**
 * One data key: authenticated encryption and a keyed hash. `seal`'s output
 * is opaque to the library (it adds the key id around it); `open` answers
 * `undefined` when the ciphertext or its additional data was altered.
 *
 * @since 0.1.0
 */
export interface DataKey {
  readonly seal: (plaintext: Uint8Array, aad: Uint8Array) => Uint8Array
  readonly open: (sealed: Uint8Array, aad: Uint8Array) => Uint8Array | undefined
  /** A keyed hash (32 bytes) under a key of its own derived from this one: what piece addresses are made of. */
  readonly mac: (data: Uint8Array) => Uint8Array
}

/**
 * The keys of a ring and which one a thread's new data is sealed under.
 *
 * @since 0.1.0
 */
export interface Cipher {
  /** The id of the key `thread_id`'s new data is sealed under. */
  readonly keyFor: (thread_id: string) => string
  /** The key under an id; `undefined` when the ring does not hold it (removed, or never known). */
  readonly key: (keyId: string) => DataKey | undefined
}

/**
 * @since 0.1.0
 */
export interface EncryptionOptions {
  /** Key ids and their keys: the base64 of 32 random bytes each (`openssl rand -base64 32`). */
  readonly keys: Readonly<Record<string, string | Redacted.Redacted<string>>>
  /** The key new data is sealed under, unless `keyFor` says otherwise. */
  readonly primary: string
  /** The key of a thread's tenant (per-tenant keys; removing one erases that tenant's threads). */
  readonly keyFor?: ((thread_id: string) => string) | undefined
  /**
   * The metadata keys stored in plaintext, which `list({ filter })` can
   * match (default: `source`, `step`, `parents`, `run_id`). Every other key
   * is sealed.
   */
  readonly plaintextMetadata?: ReadonlyArray<string> | undefined
  /**
   * Read rows written before encryption was turned on (default `false`:
   * an unencrypted row is an error). Counted by the
   * `langgraph_checkpoint_plaintext_rows` metric; `reencrypt` seals them.
   */
  readonly allowPlaintext?: boolean | undefined
}

/**
 * The metadata keys stored in plaintext by default: those LangGraph writes,
 * and `run_id`, which `deleteForRuns` finds checkpoints by.
 *
 * @since 0.1.0
 */
export const defaultPlaintextMetadata: ReadonlyArray<string> = ["source", "step", "parents", "run_id"]

/**
 * The metadata key holding the sealed part of a checkpoint's metadata; no
 * user key is ever stored under it in plaintext.
 *
 * @since 0.1.0
 */
export const SEALED_METADATA = "$sealed"

/**
 * Encryption at rest, as a service: the {@link Cipher} (which key seals a
 * thread's new rows, and the ring that opens old ones), the metadata keys
 * left in plaintext for `list` filters, and whether unsealed rows may be
 * read. Provided to a storage layer, it makes the codec seal every channel
 * value, pending write, piece and non-plaintext metadata key for its place
 * (see `Sealing`); absent, nothing is sealed.
 *
 * Build it with {@link layer} (keys in options), {@link layerConfig} (keys
 * from the environment) or {@link layerCipher} (a KMS or any other cipher).
 *
 * @since 0.1.0
 */
export class Encryption extends Context.Service<Encryption, {
  /** Which key seals a thread's new rows, and the ring that opens any row. */
  readonly cipher: Cipher
  /** Metadata keys stored in plaintext, which `list` can filter on; every other key is sealed. */
  readonly plaintextMetadata: ReadonlySet<string>
  /** Whether rows stored without a seal (before encryption was on) may be read. */
  readonly allowPlaintext: boolean
}>()("langgraph-checkpoint-effect/Encryption") {}

const NONCE_BYTES = 12
const TAG_BYTES = 16
const KEY_BYTES = 32

/** Nonces come from a pool of random bytes refilled 4 KiB at a time: a call into OpenSSL per seal costs more than the seal. */
const noncePool = { bytes: new Uint8Array(0), at: 0 }

const nonce = (): Uint8Array => {
  if (noncePool.at + NONCE_BYTES > noncePool.bytes.byteLength) {
    noncePool.bytes = randomBytes(4096)
    noncePool.at = 0
  }
  return noncePool.bytes.subarray(noncePool.at, noncePool.at += NONCE_BYTES)
}

/**
 * AES-256-GCM under a 32-byte key: a random 96-bit nonce per seal (output:
 * nonce, ciphertext, tag), and HMAC-SHA-256 under a key derived with HKDF
 * for `mac`. The key bytes are copied into `KeyObject`s and not kept.
 *
 * @since 0.1.0
 */
export const aes256gcm = (key: Uint8Array): DataKey => {
  if (key.byteLength !== KEY_BYTES) throw new RangeError(`an AES-256 key has ${KEY_BYTES} bytes, not ${key.byteLength}`)
  const secret = createSecretKey(key)
  const macKey = createSecretKey(
    Buffer.from(hkdfSync("sha256", key, new Uint8Array(), "langgraph-checkpoint-effect piece address", KEY_BYTES))
  )
  return {
    seal: (plaintext, aad) => {
      const iv = nonce()
      const cipher = createCipheriv("aes-256-gcm", secret, iv)
      cipher.setAAD(aad)
      return Buffer.concat([iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()])
    },
    open: (sealed, aad) => {
      if (sealed.byteLength < NONCE_BYTES + TAG_BYTES) return undefined
      const decipher = createDecipheriv("aes-256-gcm", secret, sealed.subarray(0, NONCE_BYTES))
      decipher.setAAD(aad)
      decipher.setAuthTag(sealed.subarray(sealed.byteLength - TAG_BYTES))
      try {
        return Buffer.concat([
          decipher.update(sealed.subarray(NONCE_BYTES, sealed.byteLength - TAG_BYTES)),
          decipher.final()
        ])
      } catch {
        return undefined
      }
    },
    mac: (data) => createHmac("sha256", macKey).update(data).digest()
  }
}

/** Key ids go into every ciphertext's header: short, printable, no separators. */
const KEY_ID = /^[A-Za-z0-9._:-]{1,64}$/

/**
 * Whether a key id can name a key: 1-64 letters, digits or `._:-` (it is
 * written into every ciphertext).
 *
 * @since 0.1.0
 */
export const isKeyId = (keyId: string): boolean => KEY_ID.test(keyId)

const invalid = (detail: string) => new InvalidConfig({ operation: "encryption", detail })

/** A key's bytes from its base64; the message never shows the key. */
const decodeKey = (keyId: string, value: string | Redacted.Redacted<string>) => {
  const text = (Redacted.isRedacted(value) ? Redacted.value(value) : value).trim()
  const bytes = /^[A-Za-z0-9+/]+={0,2}$/.test(text) ? Buffer.from(text, "base64") : undefined
  return bytes?.byteLength === KEY_BYTES
    ? Effect.succeed(bytes)
    : Effect.fail(invalid(`key "${keyId}" is not the base64 of ${KEY_BYTES} bytes`))
}

/**
 * Checks a cipher's key ids: the primary (and every id `keyFor` answers)
 * must be in the ring, or nothing could be written.
 */
const checkIds = (ids: ReadonlyArray<string>, primary: string) =>
  Effect.gen(function*() {
    if (ids.length === 0) return yield* invalid("no key given")
    const bad = ids.find((id) => !isKeyId(id))
    if (bad !== undefined) {
      return yield* invalid(`key id ${JSON.stringify(bad)} is not 1-64 letters, digits or ._:-`)
    }
    if (!ids.includes(primary)) return yield* invalid(`the primary key "${primary}" is not among the keys`)
  })

/**
 * The default keyring: AES-256-GCM keys by id; new data under `keyFor`'s key
 * (default: the primary).
 *
 * @since 0.1.0
 */
export const keyring = (options: Pick<EncryptionOptions, "keys" | "primary" | "keyFor">) =>
  Effect.gen(function*() {
    yield* checkIds(Object.keys(options.keys), options.primary)
    const keys = new Map<string, DataKey>()
    for (const [id, value] of Object.entries(options.keys)) keys.set(id, aes256gcm(yield* decodeKey(id, value)))
    const primary = options.primary
    return {
      keyFor: options.keyFor ?? (() => primary),
      key: (keyId: string) => keys.get(keyId)
    } satisfies Cipher
  })

/**
 * The service over any cipher (a KMS-backed one, say), with the options
 * besides keys.
 *
 * **When to use**
 *
 * When the keys do not sit in configuration: envelope encryption with a
 * KMS, per-tenant keys kept elsewhere, or a `DataKey` of your own.
 *
 * **Details**
 *
 * `cipher` runs once, when the layer is built: unwrap the data keys there
 * (`aes256gcm(raw)` makes one), so no call reaches the KMS per row. Each
 * thread's new rows are sealed under `cipher.keyFor(thread_id)`; a read
 * opens with whichever key its ciphertext names.
 *
 * **Gotchas**
 *
 * A key id `keyFor` answers that `key` does not hold makes that thread
 * unwritable (`InvalidConfig` on `put`). Removing a key from the ring makes
 * every row sealed under it unreadable for good: that is how a tenant is
 * erased, and also how data is lost by mistake; run `reencrypt` first when
 * rotating. `plaintextMetadata` cannot name `$sealed`.
 *
 * @since 0.1.0
 */
export const layerCipher = <E, R>(
  cipher: Effect.Effect<Cipher, E, R>,
  options: Pick<EncryptionOptions, "plaintextMetadata" | "allowPlaintext"> = {}
): Layer.Layer<Encryption, E | InvalidConfig, R> =>
  Layer.effect(
    Encryption,
    Effect.gen(function*() {
      const plaintextMetadata = options.plaintextMetadata ?? defaultPlaintextMetadata
      if (plaintextMetadata.includes(SEALED_METADATA)) {
        return yield* invalid(`"${SEALED_METADATA}" is where sealed metadata is kept: it cannot be plaintext`)
      }
      return Encryption.of({
        cipher: yield* cipher,
        plaintextMetadata: new Set(plaintextMetadata),
        allowPlaintext: options.allowPlaintext === true
      })
    })
  )

/**
 * The service with the default AES-256-GCM keyring.
 *
 * **When to use**
 *
 * When the application holds its keys (as `Redacted` values, say) and
 * passes them in: one primary key, or several for rotation and per-tenant
 * keys (`keyFor`).
 *
 * **Details**
 *
 * `keys` maps ids (1-64 letters, digits or `._:-`, written into every
 * ciphertext) to the base64 of 32 random bytes; new rows are sealed under
 * `keyFor`'s key, by default `primary`. A malformed key, or a `primary` not
 * among `keys`, is `InvalidConfig` when the layer is built, never showing a
 * key.
 *
 * **Gotchas**
 *
 * To rotate, add the new key as `primary` and keep the old one in `keys`
 * until `reencrypt` reports no thread `unreadable`. Nonces are random:
 * rotate a key before it seals 2³² values. Rows written before encryption
 * was on fail to read unless `allowPlaintext` is set.
 *
 * @since 0.1.0
 */
export const layer = (options: EncryptionOptions): Layer.Layer<Encryption, InvalidConfig> =>
  layerCipher(keyring(options), options)

/** A key ring read from the environment, before its ids are checked. */
interface ConfiguredKeys {
  readonly entries: ReadonlyArray<readonly [string, Redacted.Redacted<string>]>
  readonly primary: string
}

/** The options of configured keys, refusing an id given twice (which would silently keep the last key). */
const uniqueIds = ({ entries, primary }: ConfiguredKeys): Effect.Effect<EncryptionOptions, Config.ConfigError> => {
  const seen = new Set<string>()
  // "" (a pair without ":") is left to the keyring, which refuses it as an id.
  const repeated = entries.find(([id]) => id !== "" && seen.size === seen.add(id).size)
  return repeated === undefined
    ? Effect.succeed({ keys: Object.fromEntries(entries), primary })
    : Effect.fail(
      new Config.ConfigError(
        new Schema.SchemaError(
          new SchemaIssue.Pointer(
            ["CHECKPOINT_ENCRYPTION_KEYS"],
            new SchemaIssue.InvalidValue({
              message: `the key id ${JSON.stringify(repeated[0])} is given more than once (each id names one key)`
            })
          )
        )
      )
    )
}

/**
 * The keys from the environment: `CHECKPOINT_ENCRYPTION_KEYS` as
 * `id:base64` pairs separated by commas, `CHECKPOINT_ENCRYPTION_PRIMARY`
 * (default: the first id); or, as LangGraph's `EncryptedSerializer` reads
 * it, `LANGGRAPH_AES_KEY` alone (key id `default`), base64 of 32 bytes or 32
 * characters taken as bytes. An id given twice is refused, by its id.
 *
 * @since 0.1.0
 */
export const defaultConfig: Config.Config<EncryptionOptions> = Config.all({
  keys: Config.Redacted("CHECKPOINT_ENCRYPTION_KEYS"),
  primary: Config.option(Config.String("CHECKPOINT_ENCRYPTION_PRIMARY"))
}).pipe(
  Config.map(({ keys, primary }): ConfiguredKeys => {
    // A pair without ":" gets the id "", which the keyring rejects by name.
    const entries = Redacted.value(keys).split(",").filter((pair) => pair.trim() !== "").map((pair) => {
      const at = Math.max(0, pair.indexOf(":"))
      return [pair.slice(0, at).trim(), Redacted.make(pair.slice(at + 1))] as const
    })
    return { entries, primary: primary._tag === "Some" ? primary.value : entries[0]?.[0] ?? "" }
  }),
  Config.orElse(() =>
    Config.Redacted("LANGGRAPH_AES_KEY").pipe(
      Config.map((key): ConfiguredKeys => {
        const text = Redacted.value(key)
        return {
          entries: [[
            "default",
            Redacted.make(text.length === KEY_BYTES ? Buffer.from(text).toString("base64") : text)
          ]],
          primary: "default"
        }
      })
    )
  ),
  // After the fallback, which would otherwise take this failure for absent keys.
  Config.mapEffect(uniqueIds)
)

/**
 * The service with the default keyring, its keys from `Config` (default
 * {@link defaultConfig}).
 *
 * **When to use**
 *
 * When keys come from the environment or a secret store behind a
 * `ConfigProvider`, as a deployment usually has them.
 *
 * **Details**
 *
 * {@link defaultConfig} reads `CHECKPOINT_ENCRYPTION_KEYS` (`id:base64`
 * pairs separated by commas) and `CHECKPOINT_ENCRYPTION_PRIMARY`, or
 * `LANGGRAPH_AES_KEY` alone as LangGraph's `EncryptedSerializer` reads it;
 * pass another `Config` to choose other names. Keys are read as `Redacted`.
 *
 * **Gotchas**
 *
 * A missing or malformed key, or a key id given twice, is `InvalidConfig`
 * naming the setting (never showing a key) when the layer is built, not a
 * storage without encryption (nor one keeping the last of two keys). Options besides keys (`plaintextMetadata`, `allowPlaintext`,
 * `keyFor`) are not read from `Config`: use {@link layer} or
 * {@link layerCipher} for them.
 *
 * @since 0.1.0
 */
export const layerConfig = (
  config: Config.Config<EncryptionOptions> = defaultConfig
): Layer.Layer<Encryption, InvalidConfig> =>
  Layer.unwrap(
    config.pipe(
      Effect.mapError((error) =>
        invalid(
          `the encryption keys are missing or malformed: ${
            Schema.isSchemaError(error.cause) ? formatIssue(error.cause.issue) : error.message
          }`
        )
      ),
      Effect.map(layer)
    )
  )
