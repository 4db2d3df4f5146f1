/** The history graph's layout (`inspector/Tree.ts`), as lanes and as text, and the words for each checkpoint. */
import { describe, expect, it } from "vitest"
import * as Tree from "../../src/internal/inspector/Tree.ts"

interface Entry {
  readonly id: string
  readonly parent?: string
}
const lay = (entries: ReadonlyArray<Entry>) => Tree.layout(entries, (e) => e.id, (e) => e.parent)
const draw = (entries: ReadonlyArray<Entry>) =>
  Tree.text(lay(entries)).map((line) => `${line.graph}${line.row === undefined ? "" : ` ${line.row.entry.id}`}`)

/** `n` forks of checkpoint "1" (as edit/regenerate in a chat make), newest first, then "1" and its parent "0". */
const forks = (n: number): Array<Entry> => [
  ...Array.from({ length: n }, (_, i) => ({ id: `f${n - i}`, parent: "1" })),
  { id: "1", parent: "0" },
  { id: "0" }
]

describe("layout", () => {
  it("a linear history is one lane: its newest the head, its oldest the root", () => {
    const rows = lay([{ id: "3", parent: "2" }, { id: "2", parent: "1" }, { id: "1" }])
    expect(rows.map((row) => [row.lane, row.labels, row.open, row.joins])).toEqual([
      [0, ["head"], [0], []],
      [0, [], [0], []],
      [0, ["root"], [0], []]
    ])
  })

  it("a fork's branches take lanes side by side and join at the fork point", () => {
    const rows = lay([{ id: "b", parent: "1" }, { id: "a", parent: "1" }, { id: "1" }])
    expect(rows.map((row) => ({ id: row.entry.id, lane: row.lane, labels: row.labels, joins: row.joins }))).toEqual([
      { id: "b", lane: 0, labels: ["head"], joins: [] },
      { id: "a", lane: 1, labels: ["branch"], joins: [] },
      { id: "1", lane: 0, labels: ["fork point", "root"], joins: [1] }
    ])
  })

  it("after a time-travel edit the original line is a branch, the edited one holds the head", () => {
    // 0 → 1 → 2 → 3 (the original conversation); an edit at 1 made 4, then the run went on to 5.
    const rows = lay([
      { id: "5", parent: "4" },
      { id: "4", parent: "1" },
      { id: "3", parent: "2" },
      { id: "2", parent: "1" },
      { id: "1", parent: "0" },
      { id: "0" }
    ])
    expect(Object.fromEntries(rows.map((row) => [row.entry.id, row.labels]))).toEqual({
      "5": ["head"],
      "4": [],
      "3": ["branch"],
      "2": [],
      "1": ["fork point"],
      "0": ["root"]
    })
  })

  it("a lane freed by a join is reused by the next tree, which starts apart", () => {
    const rows = lay([{ id: "x", parent: "1" }, { id: "y", parent: "1" }, { id: "1" }, { id: "z" }])
    expect(rows.at(-1)).toMatchObject({ lane: 0, labels: ["branch", "root"], open: [0], separate: true })
    expect(rows.slice(0, -1).map((row) => row.separate)).toEqual([false, false, false])
  })

  it("a chain whose parent is not in the history (removed) is a root of its own tree", () => {
    // delete-runs removed the shared trunk "t": two chains left, parentless.
    const rows = lay([{ id: "b2", parent: "b1" }, { id: "b1", parent: "t" }, { id: "a2", parent: "a1" }, {
      id: "a1",
      parent: "t"
    }])
    expect(rows.map((row) => [row.entry.id, row.labels, row.separate])).toEqual([
      ["b2", ["head"], false],
      ["b1", ["root"], false],
      ["a2", ["branch"], true],
      ["a1", ["root"], false]
    ])
  })

  it("20,000 forks of one checkpoint: at most LANES lanes, the rest in the overflow column, counted where they join", () => {
    const n = 20_000
    const rows = lay(forks(n))
    expect(rows).toHaveLength(n + 2)
    expect(Math.max(...rows.map((row) => row.open.length))).toBeLessThanOrEqual(Tree.LANES + 1)
    expect(Math.max(...rows.map((row) => row.lane))).toBe(Tree.LANES)
    expect(rows.slice(0, Tree.LANES).map((row) => row.lane)).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
    expect(rows.slice(Tree.LANES, n).every((row) => row.overflow && row.lane === Tree.LANES)).toBe(true)
    const point = rows[n]!
    expect(point).toMatchObject({ lane: 0, overflow: false, folded: n - Tree.LANES, children: n })
    expect(point.labels).toEqual(["fork point"])
    expect(point.joins).toEqual([1, 2, 3, 4, 5, 6, 7])
    expect(rows[n + 1]).toMatchObject({ lane: 0, open: [0], labels: ["root"] })
    // One line per row, plus the line where the branches join.
    expect(Tree.text(rows)).toHaveLength(n + 3)
  })

  it("an overflow branch longer than one checkpoint stays in the overflow column down to its fork point", () => {
    const entries: Array<Entry> = [
      ...Array.from({ length: Tree.LANES }, (_, i) => ({ id: `f${i}`, parent: "1" })),
      { id: "g2", parent: "g1" },
      { id: "g1", parent: "1" },
      { id: "1" }
    ]
    const rows = lay(entries)
    expect(rows.slice(Tree.LANES).map((row) => [row.entry.id, row.lane, row.folded])).toEqual([
      ["g2", Tree.LANES, 0],
      ["g1", Tree.LANES, 0],
      ["1", 0, 1]
    ])
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

  it("separates two trees with an empty line", () => {
    expect(draw([{ id: "b", parent: "a" }, { id: "a" }, { id: "y", parent: "x" }, { id: "x" }])).toEqual([
      "* b",
      "* a",
      "",
      "* y",
      "* x"
    ])
  })

  it("draws overflow branches as dots in the last column, joining their fork point", () => {
    const lines = draw(forks(Tree.LANES + 2))
    expect(lines.slice(Tree.LANES, Tree.LANES + 2)).toEqual([
      "| | | | | | | | . f2",
      "| | | | | | | | . f1"
    ])
    expect(lines.slice(Tree.LANES + 2)).toEqual([
      "| / / / / / / / /",
      "* 1",
      "* 0"
    ])
  })

  it("draws nothing for nothing", () => {
    expect(draw([])).toEqual([])
  })
})
