/**
 * A call to the storage that must land (a run's record, a thread's status,
 * a cron's next tick): tried again while the database is away, up to a
 * minute, beyond the saver's own retry window; then a defect, and the
 * cluster delivers the message that made it again.
 *
 * @since 0.4.0
 */
import { Duration, Effect, Schedule } from "effect"

/**
 * @since 0.4.0
 */
export const stored = <A>(f: () => Promise<A>): Effect.Effect<A> =>
  Effect.tryPromise(f).pipe(
    Effect.retry(
      Schedule.exponential("100 millis").pipe(
        Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(2)))),
        Schedule.upTo({ duration: "1 minute" })
      )
    ),
    Effect.orDie
  )
