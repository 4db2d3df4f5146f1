/**
 * How the contract kit judges a result: values compared by a canonical
 * text, and the error a difference from the model becomes.
 *
 * @since 0.1.0
 */
import { Data } from "effect"
import { describe } from "./Describe.ts"
import type { Operation } from "./Operations.ts"

/**
 * A result that differs from the model.
 *
 * @since 0.1.0
 */
export class ContractViolation extends Data.TaggedError("ContractViolation")<{
  readonly step: number
  readonly operation: string
  readonly detail: string
}> {
  override get message(): string {
    return `step ${this.step} (${this.operation}): ${this.detail}`
  }
}

/**
 * A canonical text for comparing values: sorted keys, bytes tagged, undefined kept.
 *
 * @since 0.1.0
 */
export const canonical = (value: unknown): string =>
  JSON.stringify(value, function(this: unknown, key: string, current: unknown) {
    const raw = key === "" ? value : (this as Record<string, unknown>)[key]
    if (raw instanceof Uint8Array) return { $bytes: Buffer.from(raw).toString("base64") }
    if (raw === undefined) return { $undefined: true }
    if (current !== null && typeof current === "object" && !Array.isArray(current)) {
      return Object.fromEntries(Object.keys(current).sort().map((k) => [k, (current as Record<string, unknown>)[k]]))
    }
    return current
  }) ?? "undefined"

/**
 * The step being checked: its place in the sequence and its operation.
 *
 * @since 0.1.0
 */
export interface At {
  readonly step: number
  readonly operation: Operation
}

/**
 * A violation at a step.
 *
 * @since 0.1.0
 */
export const violation = (at: At, detail: string): ContractViolation =>
  new ContractViolation({ step: at.step, operation: describe(at.operation), detail })

/**
 * Throws a violation naming `what` when `actual` differs from `expected` (by their canonical text).
 *
 * @since 0.1.0
 */
export const expectEqual = (at: At, what: string, expected: unknown, actual: unknown): void => {
  const e = canonical(expected)
  const a = canonical(actual)
  if (e !== a) throw violation(at, `${what}\n  expected: ${clip(e)}\n  actual:   ${clip(a)}`)
}

const clip = (text: string) => text.length > 600 ? `${text.slice(0, 600)}…` : text
