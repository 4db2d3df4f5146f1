/**
 * The one statement builder every part of the catalogue uses: a statement's
 * text names its parameters, and the builder numbers them, so nobody counts
 * `$1…$24`. A parameter is named (`param.thread_id`) or, where a text
 * spells out many values (see `Rows`, which builds on this), taken by
 * position (`value(of)`), gathered with no lookup by name.
 *
 * @since 0.1.0
 */

/**
 * A statement: its text, its parameters from a named input, and what the
 * rows it returns mean.
 *
 * @since 0.1.0
 */
export interface Statement<Input, Row extends object, Output> {
  readonly text: string
  /** The parameters for `input`, in the order the text numbers them. */
  readonly params: (input: Input) => ReadonlyArray<unknown>
  readonly decode: (rows: ReadonlyArray<Row>, input: Input) => Output
}

/**
 * A statement as the catalogue declares it (see `Statements`): what it
 * takes and what it answers. Its rows are its own (any statement's rows
 * fit), unless they are a shape others read too (`Projection`'s), named as
 * `Row`.
 *
 * @since 0.4.0
 */
export type StatementOf<Input, Output, Row extends object = never> = Statement<Input, Row, Output>

/**
 * A statement from its parts. `params` gives the values it takes, by name,
 * once per input; `text` refers to each as `${param.name}`, which gives a
 * name its `$n` the first time the text uses it, or to a value worked out
 * from them as `${value(of)}`, a `$n` of its own each time. Without
 * `decode`, the rows are ignored.
 *
 * @since 0.1.0
 */
export const statement = <Input, Params extends object, Row extends object = never, Output = void>(parts: {
  readonly params: (input: Input) => Params
  readonly text: (
    param: { readonly [K in keyof Params]: string },
    value: (of: (params: Params, input: Input) => unknown) => string
  ) => string
  readonly decode?: (rows: ReadonlyArray<Row>, input: Input) => Output
}): Statement<Input, Row, Output> => {
  /** Each parameter's value, in the order the text numbers them. */
  const values: Array<(params: Params, input: Input) => unknown> = []
  const value = (of: (params: Params, input: Input) => unknown) => `$${values.push(of)}`
  const named = new Map<string, string>()
  const placeholders = new Proxy({}, {
    get: (_, name) => {
      if (typeof name !== "string") return undefined
      let placeholder = named.get(name)
      if (placeholder === undefined) named.set(name, placeholder = value((params) => params[name as keyof Params]))
      return placeholder
    }
  }) as { readonly [K in keyof Params]: string }
  return {
    text: parts.text(placeholders, value),
    params: (input) => {
      const params = parts.params(input)
      return values.map((value) => value(params, input))
    },
    decode: parts.decode ?? (() => undefined as Output)
  }
}
