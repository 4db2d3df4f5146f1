/** The history graph's layout (`inspector/Tree.ts`), as lanes and as text. */
import { describe, expect, it } from "vitest"
import * as Tree from "../../src/inspector/Tree.ts"

interface Entry {
  readonly id: string
  readonly parent?: string
}
const draw = (entries: ReadonlyArray<Entry>) =>
  Tree.text(Tree.layout(entries, (e) => e.id, (e) => e.parent)).map((line) =>
    `${line.graph}${line.entry === undefined ? "" : ` ${line.entry.id}`}`
  )

describe("layout", () => {
  it("a linear history is one lane, its newest the only head", () => {
    const rows = Tree.layout(
      [{ id: "3", parent: "2" }, { id: "2", parent: "1" }, { id: "1" }],
      (e) => e.id,
      (e) => e.parent
    )
    expect(rows.map((row) => [row.lane, row.head, row.open, row.joins])).toEqual([
      [0, true, [0], []],
      [0, false, [0], []],
      [0, false, [0], []]
    ])
  })

  it("a fork's branches take lanes side by side and join at the parent they share", () => {
    const rows = Tree.layout(
      [{ id: "b", parent: "1" }, { id: "a", parent: "1" }, { id: "1" }],
      (e) => e.id,
      (e) => e.parent
    )
    expect(rows.map((row) => ({ id: row.entry.id, lane: row.lane, head: row.head, joins: row.joins }))).toEqual([
      { id: "b", lane: 0, head: true, joins: [] },
      { id: "a", lane: 1, head: true, joins: [] },
      { id: "1", lane: 0, head: false, joins: [1] }
    ])
  })

  it("a lane freed by a join is reused by the next head", () => {
    const rows = Tree.layout(
      [{ id: "x", parent: "1" }, { id: "y", parent: "1" }, { id: "1" }, { id: "z" }],
      (e) => e.id,
      (e) => e.parent
    )
    expect(rows.at(-1)).toMatchObject({ lane: 0, head: true, open: [0] })
  })
})

describe("text", () => {
  it("draws a fork as git log --graph does", () => {
    expect(draw([{ id: "c", parent: "b" }, { id: "x", parent: "a" }, { id: "b", parent: "a" }, { id: "a" }])).toEqual([
      "* c",
      "| * x",
      "* | b",
      "| /",
      "* a"
    ])
  })

  it("draws nothing for nothing", () => {
    expect(draw([])).toEqual([])
  })
})
