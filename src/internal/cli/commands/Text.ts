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

/**
 * Who a message is from: its role, then what tells it apart (its id when
 * asked, the tool and the call a tool's result answers, a failure's status).
 *
 * @since 0.1.0
 */
export const speaker = (message: Values.Message, withId = false): string => {
  const about = [
    withId && message.id !== undefined ? `id ${message.id}` : undefined,
    message.name === undefined ? undefined : `name ${message.name}`,
    message.tool_call_id === undefined ? undefined : `tool_call_id ${message.tool_call_id}`,
    message.status === undefined ? undefined : `status ${message.status}`
  ].filter((part) => part !== undefined)
  return Output.clean(about.length === 0 ? message.role : `${message.role} (${about.join(", ")})`)
}

/**
 * A message as lines: `role: text`, then one line per tool call it asks for
 * (name, arguments, id) and, with `metadata`, one per metadata field; the
 * lines after the first indented by two.
 *
 * @since 0.1.0
 */
export const messageLines = (
  message: Values.Message,
  max: number | undefined,
  { metadata = false, style = (text: string) => text }: {
    readonly metadata?: boolean
    /** How the speaker is set off (bold on a terminal). */
    readonly style?: (text: string) => string
  } = {}
): ReadonlyArray<string> => {
  const text = Output.cut(message.text, max)
  const lines = [`${style(speaker(message))}:${text === "" ? "" : ` ${text}`}`]
  for (const call of message.tool_calls ?? []) {
    const id = call.id === undefined ? "" : ` (id ${Output.clean(call.id)})`
    lines.push(`  tool call ${Output.clean(call.name)} ${textOf(call.args, max)}${id}`)
  }
  if (metadata) {
    for (const key of ["usage_metadata", "response_metadata", "additional_kwargs"] as const) {
      if (message[key] !== undefined) lines.push(`  ${key}: ${textOf(message[key], max)}`)
    }
  }
  return lines
}

/**
 * A field that changed inside a message: `path: before → after`, the values
 * as JSON (`(none)` where the field is missing).
 *
 * @since 0.1.0
 */
export const fieldChange = (change: Values.FieldChange, max: number): string => {
  const value = (v: unknown) => v === undefined ? "(none)" : Output.cut(JSON.stringify(v) ?? String(v), max)
  return `${Output.clean(change.path)}: ${value(change.before)} → ${value(change.after)}`
}
