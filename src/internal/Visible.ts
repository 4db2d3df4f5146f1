/**
 * Stored text made safe to show. Ids, namespaces, channel names, metadata
 * and values come from users and tools; where they are shown (an error's
 * message, a terminal, the web page), a control character could drive a
 * terminal (an escape sequence rewrites the screen or the clipboard), forge
 * a log line, and a bidirectional control could make text read other than
 * it is. Each such character is written as a visible escape instead.
 *
 * Hidden: every control (`\p{Cc}`: C0, DEL, C1; U+009B starts a CSI
 * sequence on some terminals), every bidirectional control
 * (`\p{Bidi_Control}`: U+061C, U+200E/F, U+202A–E, U+2066–9) and the line
 * and paragraph separators (U+2028/9). The one definition for the library's
 * errors, the command line and the web page.
 *
 * Imports nothing: the web page's script carries this module inlined
 * (`web/Assets.ts`), since a module the browser fetched would arrive without
 * the page's token.
 *
 * @since 0.1.0
 */

const HIDDEN = String.raw`\p{Cc}\p{Bidi_Control}\u2028\u2029`

const hidden = new RegExp(`[${HIDDEN}]`, "gu")
/** As `hidden`, but tab and line feed: a page lays them out as the text means them. */
const hiddenBesideLayout = new RegExp(`(?![\\t\\n])[${HIDDEN}]`, "gu")
/** As `hidden`, but JSON's whitespace between tokens (inside strings JSON has escaped C0 already). */
const hiddenInJson = new RegExp(`(?![\\t\\n\\r])[${HIDDEN}]`, "gu")

const named: Readonly<Record<string, string>> = { "\n": "\\n", "\t": "\\t", "\r": "\\r" }

const visible = (char: string): string => named[char] ?? `\\u{${char.codePointAt(0)!.toString(16)}}`

/**
 * `text` with every control, bidirectional control and line or paragraph
 * separator as a visible escape: `\n`, `\t`, `\r`, else `\u{…}` (U+061C
 * becomes `\u{61c}`). Other text, backslashes included, is left as it is.
 *
 * @since 0.1.0
 */
export const escape = (text: string): string => text.replace(hidden, visible)

/**
 * As {@link escape}, but tabs and line breaks stay: for text laid out as
 * it is written (a message on the web page).
 *
 * @since 0.1.0
 */
export const escapeKeepingLines = (text: string): string => text.replace(hiddenBesideLayout, visible)

/**
 * JSON text (as `JSON.stringify` writes it) with what `JSON.stringify`
 * leaves raw inside strings (DEL, C1, bidirectional controls, U+2028/9)
 * written as `\uXXXX`: the same JSON, the same strings, nothing hidden.
 *
 * @since 0.1.0
 */
export const escapeJson = (text: string): string =>
  text.replace(hiddenInJson, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`)
