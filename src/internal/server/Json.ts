/**
 * JSON objects as the server reads them from bodies, records and the embed
 * server's answers: a client's `metadata` or `config` may be anything.
 *
 * @since 0.4.0
 */

/**
 * Whether `value` is a JSON object (not null, not an array).
 *
 * @since 0.4.0
 */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * `value` if it is a JSON object, else `{}`.
 *
 * @since 0.4.0
 */
export const objectOf = (value: unknown): Record<string, unknown> => isObject(value) ? value : {}
