/** A history grouped by namespace (`inspector/Namespaces.ts`): the root first, each under its parent. */
import { describe, expect, it } from "vitest"
import * as Namespaces from "../../src/internal/inspector/Namespaces.ts"

describe("groups", () => {
  it("groups in one pass, the root first, keeping each namespace's order, each under its parent", () => {
    const entries = [
      { checkpoint_ns: "child:1|inner:2", checkpoint_id: "5" },
      { checkpoint_ns: "", checkpoint_id: "4" },
      { checkpoint_ns: "child:1", checkpoint_id: "3" },
      { checkpoint_ns: "", checkpoint_id: "2" },
      { checkpoint_ns: "child:1", checkpoint_id: "1" }
    ]
    expect(
      Namespaces.groups(entries).map(({ entries, name, parent }) => ({
        name,
        parent,
        ids: entries.map((entry) => entry.checkpoint_id)
      }))
    ).toEqual([
      { name: "", parent: null, ids: ["4", "2"] },
      { name: "child:1", parent: "", ids: ["3", "1"] },
      { name: "child:1|inner:2", parent: "child:1", ids: ["5"] }
    ])
  })

  it("nothing for nothing", () => {
    expect(Namespaces.groups([])).toEqual([])
  })
})
