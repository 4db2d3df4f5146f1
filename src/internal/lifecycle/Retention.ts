/**
 * Retention planned once, for `applyRetention` (which carries it out) and
 * the inspector's `plan.retention` (which shows what it would do): a thread
 * whose latest put is older than `inactiveFor` goes whole; with `keepLast`,
 * every other thread is trimmed to its newest `keepLast` checkpoints of each
 * namespace and what they need (`Prune.keepingLast`, planned from the
 * thread's index by whoever holds it).
 *
 * Pure: the caller gives the time and the threads, in the order it wants
 * them done.
 *
 * @since 0.2.0
 */
import { Duration } from "effect"

/**
 * A retention policy, decoded (see `Settings.RetentionSettings`).
 *
 * @since 0.2.0
 */
export interface Policy {
  readonly inactiveFor?: Duration.Duration | undefined
  readonly keepLast?: number | undefined
}

/**
 * What retention does to the threads it is given.
 *
 * @since 0.2.0
 */
export interface Plan<T> {
  /** Those whose latest put is older than `inactiveFor`: deleted whole. */
  readonly deleted: ReadonlyArray<T>
  /** With `keepLast`, the others: each trimmed to `keepLast` per namespace. */
  readonly trimmed: ReadonlyArray<T>
}

/**
 * The plan of `policy` at `now` (milliseconds since the epoch) for
 * `threads`, each kept in the order given.
 *
 * @since 0.2.0
 */
export const plan = <T extends { readonly last_activity: Date }>(
  policy: Policy,
  now: number,
  threads: Iterable<T>
): Plan<T> => {
  const cutoff = policy.inactiveFor === undefined ? undefined : now - Duration.toMillis(policy.inactiveFor)
  const deleted: Array<T> = []
  const trimmed: Array<T> = []
  for (const thread of threads) {
    if (cutoff !== undefined && thread.last_activity.getTime() < cutoff) deleted.push(thread)
    else if (policy.keepLast !== undefined) trimmed.push(thread)
  }
  return { deleted, trimmed }
}
