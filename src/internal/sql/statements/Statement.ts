/**
 * The statement builder every part of the catalogue uses: a statement's
 * text names its parameters, and the builder numbers them, so nobody counts
 * `$1…$24`.
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
 * A statement from its parts. `params` gives the values it takes, by name;
 * `text` refers to each as `${param.name}`, which gives a name its `$n` the
 * first time the text uses it. Without `decode`, the rows are ignored.
 */
export const statement = <Input, Params extends object, Row extends object = never, Output = void>(parts: {
  readonly params: (input: Input) => Params
  readonly text: (param: { readonly [K in keyof Params]: string }) => string
  readonly decode?: (rows: ReadonlyArray<Row>, input: Input) => Output
}): Statement<Input, Row, Output> => {
  const names: Array<keyof Params> = []
  const placeholders = new Proxy({}, {
    get: (_, name) => {
      if (typeof name !== "string") return undefined
      const at = names.indexOf(name as keyof Params)
      return `$${at === -1 ? names.push(name as keyof Params) : at + 1}`
    }
  }) as { readonly [K in keyof Params]: string }
  return {
    text: parts.text(placeholders),
    params: (input) => {
      const values = parts.params(input)
      return names.map((name) => values[name])
    },
    decode: parts.decode ?? (() => undefined as Output)
  }
}
