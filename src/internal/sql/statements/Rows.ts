/**
 * Write statements over rows: a few rows of a kind spelled out as a
 * `VALUES` list of scalar parameters, more as one array per column that the
 * statement `unnest`s. A scalar parameter costs the server next to nothing
 * to decode; an array costs it the element type's lookups and a copy, for
 * every array of every execution (tens of microseconds for a put's twenty
 * arrays, more than the rest of its work). So a lone call's statement spells
 * its rows out, one statement text per shape (how many rows of each kind:
 * few shapes, each prepared once per connection), and a batch's takes
 * arrays.
 *
 * Built on `Statement`'s builder: the parameters are numbered as the text
 * names the rows, and their values gathered in that order by position, with
 * no lookup by name (a put's parameters are gathered at every call).
 *
 * @since 0.3.0
 */
import { type Statement, statement } from "./Statement.ts"

/**
 * The most rows of one kind a statement spells out; more go as arrays.
 *
 * @since 0.3.0
 */
export const SPELLED = 4

/**
 * How a statement takes rows of one kind: that many spelled out, or as arrays.
 *
 * @since 0.3.0
 */
export type Count = number | "arrays"

/**
 * How a lone call's statement takes `n` rows.
 *
 * @since 0.3.0
 */
export const countOf = (n: number): Count => n <= SPELLED ? n : "arrays"

/**
 * A kind of row: each column's SQL type and value in a row.
 *
 * @since 0.3.0
 */
export type Kind<Row> = Readonly<Record<string, readonly [type: string, value: (row: Row) => unknown]>>

/**
 * `kind`'s columns, over rows that hold one of its rows (`row` finds it).
 *
 * @since 0.3.0
 */
export const over = <Row, Outer>(kind: Kind<Row>, row: (outer: Outer) => Row): Kind<Outer> =>
  Object.fromEntries(
    Object.entries(kind).map(([column, [type, value]]) =>
      [column, [type, (outer: Outer) => value(row(outer))]] as const
    )
  )

/**
 * A statement over rows of several kinds. `text` names each kind's rows
 * where it selects from them, with `source(kind, alias)`: `AS alias
 * (columns)`, as a `VALUES` list, the arrays `unnest`ed, or no row at all
 * (a `VALUES` list cannot be empty); and a value of the input itself with
 * `value(type, of)`, a parameter the text may name as often as it needs.
 * `rows` gives an input's rows, each kind as many as its count says.
 *
 * @since 0.3.0
 */
export const rowStatement = <Input, Rows extends Record<string, ReadonlyArray<unknown>>, Row extends object, Output>(
  parts: {
    readonly kinds: { readonly [K in keyof Rows]: Kind<Rows[K][number]> }
    readonly counts: { readonly [K in keyof Rows]: Count }
    readonly rows: (input: Input) => Rows
    readonly text: (
      source: (kind: keyof Rows & string, alias: string) => string,
      value: (type: string, of: (input: Input) => unknown) => string
    ) => string
    readonly decode: (rows: ReadonlyArray<Row>, input: Input) => Output
  }
): Statement<Input, Row, Output> =>
  statement({
    params: parts.rows,
    text: (_, value) => {
      const parameter = (type: string, of: (rows: Rows, input: Input) => unknown) => `${value(of)}::${type}`
      const source = (kind: keyof Rows & string, alias: string) => {
        const columns = Object.entries(parts.kinds[kind])
        const count = parts.counts[kind]
        const named = `${alias} (${columns.map(([column]) => column).join(", ")})`
        if (count === "arrays") {
          const arrays = columns.map(([, [type, value]]) => parameter(`${type}[]`, (rows) => rows[kind]!.map(value)))
          return `unnest(${arrays.join(", ")}) AS ${named}`
        }
        if (count === 0) {
          return `(SELECT ${columns.map(([, [type]]) => `NULL::${type}`).join(", ")} WHERE false) AS ${named}`
        }
        const spelled = Array.from(
          { length: count },
          (_, i) =>
            `(${columns.map(([, [type, value]]) => parameter(type, (rows) => value(rows[kind]![i]))).join(", ")})`
        )
        return `(VALUES ${spelled.join(", ")}) AS ${named}`
      }
      return parts.text(source, (type, of) => parameter(type, (_, input) => of(input)))
    },
    decode: parts.decode
  })

/**
 * Statements built once per shape (see {@link Count}), on first use.
 *
 * @since 0.3.0
 */
export const byShape = <S>(make: (...counts: ReadonlyArray<Count>) => S) => {
  const built = new Map<string, S>()
  return (...counts: ReadonlyArray<Count>): S => {
    const key = counts.join()
    let statement = built.get(key)
    if (statement === undefined) built.set(key, statement = make(...counts))
    return statement
  }
}
