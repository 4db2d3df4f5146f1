/**
 * JSON text in and out of `jsonb`, which cannot hold U+0000 or an unpaired
 * surrogate in a string (JavaScript strings can hold both).
 *
 * Metadata may contain either (LangGraph's own PostgreSQL saver fails `put`
 * on NUL). On the way in, each is replaced by U+E000 (a private-use
 * character) and a marker: NUL by `0`, a lone surrogate by `u` and its four
 * hex digits, and U+E000 itself by a second U+E000; the way out undoes it,
 * so any string survives exactly and `jsonb` comparisons still see equal
 * strings as equal. Both directions work on the JSON text `JSON.stringify`
 * writes: there NUL and lone surrogates only appear as `\u` escapes inside
 * strings, and U+E000 only inside strings.
 *
 * @since 0.1.0
 */

const mark = "\uE000"

/**
 * Encodes JSON text for a `jsonb` parameter.
 *
 * @since 0.1.0
 */
export const encode = (json: string): string =>
  !json.includes("\\u") && !json.includes(mark)
    ? json
    // An escaped backslash is matched first, so `\\u0000` (a backslash, then "u0000") is left alone.
    : json.replace(/\\\\|\\u0000|\\u(d[89a-f][0-9a-f]{2})|\uE000/gi, (match, surrogate: string | undefined) =>
      match === "\\\\"
        ? match
        : match === mark
        ? mark + mark
        : surrogate !== undefined
        ? `${mark}u${surrogate.toLowerCase()}`
        : `${mark}0`)

/**
 * Decodes JSON text read from a `jsonb` column.
 *
 * @since 0.1.0
 */
export const decode = (json: string): string =>
  !json.includes(mark)
    ? json
    : json.replace(/\uE000(?:\uE000|0|u(d[89a-f][0-9a-f]{2}))/g, (match, surrogate: string | undefined) =>
      match === mark + mark ? mark : surrogate !== undefined ? `\\u${surrogate}` : "\\u0000")

/**
 * Encodes one string the way it is stored inside `jsonb` (to compare with
 * the `->>` of a stored value).
 *
 * @since 0.1.0
 */
export const encodeText = (text: string): string => JSON.parse(encode(JSON.stringify(text))) as string

/**
 * Decodes one string taken out of `jsonb` with `->>`.
 *
 * @since 0.1.0
 */
export const decodeText = (text: string): string => JSON.parse(decode(JSON.stringify(text))) as string
