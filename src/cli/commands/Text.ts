/**
 * How the commands word what is stored: checkpoint ids shortened, dates,
 * and any value as one line.
 *
 * @since 0.1.0
 */
import * as Values from "../../inspector/Values.ts"
import * as Output from "../Output.ts"

/**
 * A checkpoint or task id by its last 12 characters (where ids differ),
 * escaped: ids are stored text too.
 *
 * @since 0.1.0
 */
export const short = (id: string): string => Output.clean(id.slice(-12))

/**
 * A date to the second, UTC.
 *
 * @since 0.1.0
 */
export const date = (value: Date): string => value.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z")

/**
 * A value as one line of text, cut at `max` characters.
 *
 * @since 0.1.0
 */
export const textOf = (value: unknown, max: number | undefined): string => {
  if (value instanceof Values.Unreadable) return Output.cut(String(value), max)
  const plain = Values.toPlain(value)
  return Output.cut(typeof plain === "string" ? plain : JSON.stringify(plain) ?? "undefined", max)
}
