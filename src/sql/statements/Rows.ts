/**
 * Rows a write statement takes: a few spelled out as a `VALUES` list of
 * scalar parameters, more as one array per column that the statement
 * `unnest`s. A scalar parameter costs the server next to nothing to decode;
 * an array costs it the element type's lookups and a copy, for every array
 * of every execution (tens of microseconds for a put's twenty arrays, more
 * than the rest of its work). So a lone call's statement spells its rows
 * out, one statement text per shape (how many rows of each kind: few
 * shapes, each prepared once per connection), and a batch's takes arrays.
 *
 * @since 0.3.0
 */

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
 * A kind of row: its name (its parameters are named after it) and each
 * column's SQL type and value in a row.
 *
 * @since 0.3.0
 */
export interface Kind<Row> {
  readonly name: string
  readonly columns: Readonly<Record<string, readonly [type: string, value: (row: Row) => unknown]>>
}

/**
 * The parameters of `rows`: `<kind>_<column>` arrays, or `<kind><i>_<column>`
 * scalars when spelled out.
 *
 * @since 0.3.0
 */
export const rowParams = <Row>(kind: Kind<Row>, rows: ReadonlyArray<Row>, count: Count): Record<string, unknown> => {
  const params: Record<string, unknown> = {}
  for (const [column, [, value]] of Object.entries(kind.columns)) {
    if (count === "arrays") params[`${kind.name}_${column}`] = rows.map(value)
    else for (let i = 0; i < rows.length; i++) params[`${kind.name}${i}_${column}`] = value(rows[i]!)
  }
  return params
}

/**
 * The rows as what a statement selects from, `AS alias (columns)`: a
 * `VALUES` list, the arrays `unnest`ed, or no row at all (a `VALUES` list
 * cannot be empty).
 *
 * @since 0.3.0
 */
export const rowSource = <Row>(
  kind: Kind<Row>,
  count: Count,
  param: Readonly<Record<string, string>>,
  alias: string
): string => {
  const columns = Object.entries(kind.columns)
  const named = `${alias} (${columns.map(([column]) => column).join(", ")})`
  if (count === "arrays") {
    return `unnest(${
      columns.map(([column, [type]]) => `${param[`${kind.name}_${column}`]}::${type}[]`).join(", ")
    }) AS ${named}`
  }
  if (count === 0) return `(SELECT ${columns.map(([, [type]]) => `NULL::${type}`).join(", ")} WHERE false) AS ${named}`
  const rows = Array.from(
    { length: count },
    (_, i) => `(${columns.map(([column, [type]]) => `${param[`${kind.name}${i}_${column}`]}::${type}`).join(", ")})`
  )
  return `(VALUES ${rows.join(", ")}) AS ${named}`
}

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
