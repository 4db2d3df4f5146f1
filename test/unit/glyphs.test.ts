/**
 * What the inspector prints and draws uses no glyph that needs an emoji or
 * symbol font: such a character (⏸, ✓, 🔍…) renders as an empty box on a
 * terminal or a system without one. Arrows, dashes and the ellipsis are in
 * every text font; the symbol blocks are not.
 */
import { readdir, readFile } from "node:fs/promises"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "..", "..")

/** Miscellaneous Technical, Symbols, Dingbats, more symbols and arrows, the emoji planes, the emoji selector. */
const NEEDS_A_SYMBOL_FONT = /[\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff\ufe0f]|[\u{1f000}-\u{1faff}]/gu

const sources = async (dir: string): Promise<Array<string>> => {
  const entries = await readdir(join(root, dir), { withFileTypes: true, recursive: true })
  return entries
    .filter((entry) => entry.isFile() && /\.(ts|css|html)$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name))
}

describe("the inspector's glyphs", () => {
  it("the CLI, the web page and the inspector hold none that needs a symbol font", async () => {
    const files = [
      ...await sources("src/internal/cli"),
      // The web page's too: src/internal/inspector/web/.
      ...await sources("src/internal/inspector")
    ]
    expect(files.length).toBeGreaterThan(10)
    const found: Array<string> = []
    for (const file of files) {
      for (const match of (await readFile(file, "utf8")).matchAll(NEEDS_A_SYMBOL_FONT)) {
        found.push(`${file.slice(root.length + 1)}: ${match[0]} (U+${match[0].codePointAt(0)!.toString(16)})`)
      }
    }
    expect(found).toEqual([])
  })
})
