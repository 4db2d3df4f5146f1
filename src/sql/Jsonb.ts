/**
 * JSON text in and out of `jsonb`, which cannot hold U+0000 in a string.
 *
 * Metadata may contain NUL (LangGraph's own PostgreSQL saver fails `put` on
 * it). On the way in, every NUL becomes U+E000 followed by `0`, and every
 * U+E000 (a private-use character) becomes U+E000 U+E000; the way out undoes
 * both, so any string survives exactly and `jsonb` operators still compare
 * encoded values consistently. Both directions work on JSON text: NUL only
 * appears there as the escape `\u0000` inside a string, and U+E000 only
 * inside a string.
 *
 * @since 0.1.0
 */

const escape = "\uE000"

/**
 * Encodes JSON text for a `jsonb` parameter.
 *
 * @since 0.1.0
 */
export const encodeNul = (json: string): string =>
  !json.includes("\\u0000") && !json.includes(escape)
    ? json
    // An escaped backslash is matched first, so `\\u0000` (a backslash, then "u0000") is left alone.
    : json.replace(/\\\\|\\u0000|\uE000/g, (match) =>
      match === "\\\\" ? match : match === escape ? escape + escape : escape + "0"
    )

/**
 * Decodes JSON text read from a `jsonb` column.
 *
 * @since 0.1.0
 */
export const decodeNul = (json: string): string =>
  !json.includes(escape)
    ? json
    : json.replace(/\uE000[\uE0000]/g, (match) => match === escape + escape ? escape : "\\u0000")
