/**
 * The numbers and durations the layers and the saver are configured with,
 * checked once, where a layer is built: a bad one is an `InvalidConfig`
 * naming the option and the value, before anything connects or is opened.
 *
 * Unchecked, each failed late or quietly: `Duration` reads `NaN` and `{}`
 * as zero (a `statementTimeout` that fails every statement), throws a plain
 * `Error` for "5 parsecs" at the first statement, and an `Infinity` retry
 * window kept `fromConnString` on an unreachable server from ever settling;
 * a pool of 0 or `NaN` connections, or a group commit of `NaN` slots, waited
 * forever; a `pageSize` of 0 listed nothing.
 *
 * What is accepted (a duration is a `Duration`, milliseconds, a string such
 * as `"30 seconds"`, a `[seconds, nanos]` pair or a `{ seconds, … }` object,
 * always finite):
 *
 * | option | accepts |
 * |---|---|
 * | `idleTimeout`, `connectionTTL`, `statementTimeout` | a duration > 0 (leave it out for the default, or for no limit) |
 * | `retryWindow` | a duration from 0 to 1 hour; 0 turns retries off |
 * | `groupCommit.window` | a duration ≥ 0; 0 waits for no company |
 * | `poolSize`, `pageSize`, `maxMessageSize`, `groupCommit.concurrency`, `groupCommit.maxBatch` | an integer ≥ 1 |
 * | `port` | an integer from 1 to 65535 |
 * | retention's `inactiveFor` / `keepLast` | a duration > 0 / an integer ≥ 1 |
 *
 * @since 0.1.0
 */
import { Duration, Effect, Option, Schema, SchemaIssue, SchemaTransformation } from "effect"
import { formatIssue, InvalidConfig } from "../CheckpointError.ts"

const objectFields: ReadonlySet<string> = new Set([
  "weeks",
  "days",
  "hours",
  "minutes",
  "seconds",
  "milliseconds",
  "microseconds",
  "nanoseconds"
])

const isNumber = (value: unknown): value is number => typeof value === "number" && !Number.isNaN(value)

/**
 * What `Duration.fromInput` would read `input` as, refusing what it reads
 * as zero without saying so: `NaN` anywhere, an object with no known field.
 */
const parse = (input: unknown): Duration.Duration | undefined => {
  if (Duration.isDuration(input)) return input
  if (typeof input === "object" && input !== null) {
    const fields = Object.entries(input).filter(([, value]) => value !== undefined)
    const wellFormed = Array.isArray(input)
      ? input.length === 2 && input.every(isNumber)
      : fields.length > 0 && fields.every(([field, value]) => objectFields.has(field) && isNumber(value))
    if (!wellFormed) return undefined
  } else if (typeof input === "number" ? Number.isNaN(input) : typeof input !== "string" && typeof input !== "bigint") {
    return undefined
  }
  return Option.getOrUndefined(Duration.fromInput(input as Duration.Input))
}

/** A value as a message shows it: `NaN`, `Infinity`, `"ten seconds"`, `{ seconds: NaN }`. */
const show = (input: unknown, depth = 0): string => {
  if (typeof input === "string") return JSON.stringify(input)
  if (typeof input === "bigint") return `${input}n`
  if (typeof input !== "object" || input === null || Duration.isDuration(input)) return String(input)
  if (depth > 0) return Array.isArray(input) ? "[…]" : "{…}"
  if (Array.isArray(input)) return `[${input.map((item) => show(item, depth + 1)).join(", ")}]`
  const fields = Object.entries(input).map(([field, value]) => `${field}: ${show(value, depth + 1)}`)
  return fields.length === 0 ? "{}" : `{ ${fields.join(", ")} }`
}

/**
 * A duration option as the public API takes it (`Duration.Input`), decoded
 * to a finite `Duration`: greater than 0, or (`least: "zero"`) 0 or more;
 * at most `most` when given.
 *
 * @since 0.1.0
 */
export const DurationSetting = (least: "zero" | "positive", most?: Duration.Duration) => {
  const expected = (least === "zero" ? "a finite duration of 0 or more" : "a finite duration greater than 0") +
    (most === undefined ? "" : ` and at most ${Duration.format(most)}`)
  return Schema.Unknown.pipe(Schema.decodeTo(
    Schema.Duration,
    SchemaTransformation.transformEffect({
      decode: (input: unknown) => {
        const duration = parse(input)
        const fits = duration !== undefined && Duration.isFinite(duration) &&
          (least === "zero" ? !Duration.isNegative(duration) : Duration.isPositive(duration)) &&
          (most === undefined || Duration.isLessThanOrEqualTo(duration, most))
        return fits ? Effect.succeed(duration) : Effect.fail(
          new SchemaIssue.InvalidValue({
            message: `Expected ${expected} (e.g. "30 seconds"), got ${show(input)}`
          })
        )
      },
      encode: (duration: Duration.Duration) => Effect.succeed<unknown>(duration)
    })
  ))
}

/**
 * An environment variable holding a duration (`"30 seconds"`), checked as
 * {@link DurationSetting}: for `Config.schema`.
 *
 * @since 0.1.0
 */
export const DurationString = (least: "zero" | "positive", most?: Duration.Duration) =>
  Schema.String.pipe(Schema.decodeTo(DurationSetting(least, most)))

/**
 * The longest retry window: a checkpoint write is not worth retrying past
 * an hour, and a window that never ends keeps a call from ever settling.
 *
 * @since 0.4.0
 */
export const MAX_RETRY_WINDOW: Duration.Duration = Duration.hours(1)

/**
 * A count: an integer of 1 or more.
 *
 * @since 0.1.0
 */
export const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))

const Positive = DurationSetting("positive")
const NonNegative = DurationSetting("zero")

/**
 * The numeric and duration options of every layer, by the name they have
 * there (a layer checks the ones it has; the others are absent).
 *
 * @since 0.1.0
 */
export const LayerSettings = Schema.Struct({
  poolSize: Schema.optional(Count),
  idleTimeout: Schema.optional(Positive),
  connectionTTL: Schema.optional(Positive),
  statementTimeout: Schema.optional(Positive),
  retryWindow: Schema.optional(DurationSetting("zero", MAX_RETRY_WINDOW)),
  pageSize: Schema.optional(Count),
  maxMessageSize: Schema.optional(Count),
  port: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 65535 }))),
  groupCommit: Schema.optional(Schema.Union([
    Schema.Literal(false),
    Schema.Struct({
      concurrency: Schema.optional(Count),
      window: Schema.optional(NonNegative),
      maxBatch: Schema.optional(Count)
    })
  ])),
  maxBytes: Schema.optional(Count)
})

/**
 * A retention policy's settings.
 *
 * @since 0.1.0
 */
export const RetentionSettings = Schema.Struct({
  inactiveFor: Schema.optional(Positive),
  keepLast: Schema.optional(Count)
})

/**
 * `options` with their numbers and durations checked (durations decoded),
 * or the `InvalidConfig` of `operation` naming the first that is not.
 *
 * @since 0.1.0
 */
export const check = <Options extends object>(
  operation: string,
  options: Options
): Effect.Effect<Options, InvalidConfig> =>
  Schema.decodeUnknownEffect(LayerSettings)(options, { reportInput: true }).pipe(
    Effect.mapError((error) => new InvalidConfig({ operation, detail: formatIssue(error.issue) })),
    // Decoded durations are `Duration`s: still what each option's type accepts.
    Effect.map((valid) => ({ ...options, ...valid }) as Options)
  )
