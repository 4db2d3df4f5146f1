/**
 * Thread keys: the data key a thread's new rows are sealed under, found
 * through the keyring and kept per process, with the keyed hash that makes
 * the thread's piece addresses (HMAC-SHA-256 under a key derived from the
 * thread's key and id, so addresses reveal nothing checkable about content
 * and differ between threads).
 *
 * @since 0.1.0
 */
import { createHmac } from "node:crypto"
import { type Cipher, isKeyId } from "../../../Encryption.ts"
import { HASH_BYTES } from "../../StorageFormat.ts"
import * as Bounded from "../Bounded.ts"
import type { Address, Element } from "../sharing/Elements.ts"
import { headOf, type Sealer } from "./Frames.ts"

/** The bytes of thread keys kept per process (each costs a derivation). */
const KEPT_THREAD_KEY_BYTES = 1024 * 1024
/** What a thread key retains besides its cache key's text: its objects, its head, its address key and memo. */
const THREAD_KEY_BYTES = 512
const utf8 = new TextEncoder()

/**
 * The key a thread's new rows are sealed under, with what makes its
 * addresses.
 *
 * @since 0.1.0
 */
export interface ThreadKey extends Sealer {
  readonly id: string
  readonly address: Address
}

/** A thread's piece addresses under `addressKey`, each element's computed once. */
const addressesUnder = (addressKey: Uint8Array): Address => {
  // Keyed by the elements the encoder holds (see `Elements`): an address goes with its element.
  const addresses = new WeakMap<Element, string>()
  return (element) => {
    let address = addresses.get(element)
    if (address === undefined) {
      address = createHmac("sha256", addressKey).update(element.key, "latin1").digest().toString(
        "latin1",
        0,
        HASH_BYTES
      )
      addresses.set(element, address)
    }
    return address
  }
}

/**
 * The thread keys of one storage service over `cipher`: the key
 * `thread_id`'s rows are sealed under, or a string when the keyring does
 * not hold it.
 *
 * @since 0.1.0
 */
export const makeThreadKeys = (cipher: Cipher) => {
  const threadKeys = Bounded.make<string, ThreadKey>({ budget: KEPT_THREAD_KEY_BYTES, idleMs: Bounded.IDLE_MS })
  return (thread_id: string): ThreadKey | string => {
    const id = cipher.keyFor(thread_id)
    const cacheKey = JSON.stringify([id, thread_id])
    const known = threadKeys.get(cacheKey)
    if (known !== undefined) return known
    if (!isKeyId(id)) return `its key id ${JSON.stringify(id)} is not 1-64 letters, digits or ._:-`
    const key = cipher.key(id)
    if (key === undefined) return `its key "${id}" is not in the keyring`
    // Addresses are keyed per thread: equal elements of two threads get unrelated addresses.
    const address = addressesUnder(key.mac(utf8.encode(`thread ${thread_id}`)))
    const found: ThreadKey = { id, key, head: headOf(id), address }
    threadKeys.set(cacheKey, found, THREAD_KEY_BYTES + 2 * cacheKey.length)
    return found
  }
}
