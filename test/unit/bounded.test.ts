/**
 * The one bounded memory every cache of a storage service is (`codec/Bounded.ts`):
 * by bytes, by number, by time, and all of a process's forgotten at once.
 */
import { describe, expect, it } from "vitest"
import * as Bounded from "../../src/internal/codec/Bounded.ts"

describe("Bounded", () => {
  it("over its budget or its number, the least recently used goes first; keys come oldest first", () => {
    const memory = Bounded.make<string, number>({ budget: 10, most: 3 })
    memory.set("a", 1, 4)
    memory.set("b", 2, 4)
    expect(memory.get("a")).toBe(1)
    memory.set("c", 3, 4)
    expect([...memory.keys()]).toEqual(["a", "c"])
    expect(memory.bytes()).toBe(8)
    memory.set("d", 4, 1)
    memory.set("e", 5, 1)
    expect([...memory.keys()]).toEqual(["c", "d", "e"])
    expect(memory.peek("a")).toBeUndefined()
  })

  it("an entry unused for idleMs goes; one grown in place is counted as it grew", () => {
    let now = 0
    const memory = Bounded.make<string, number>({ budget: 100, idleMs: 10, now: () => now })
    memory.set("a", 1, 1)
    now = 5
    memory.set("b", 2, 1)
    memory.resize("b", 50)
    expect(memory.bytes()).toBe(51)
    now = 12
    expect(memory.get("a")).toBeUndefined()
    expect(memory.get("b")).toBe(2)
    expect(memory.bytes()).toBe(50)
  })

  it("forgetAll empties every memory of the process, each before its next use", () => {
    const one = Bounded.make<string, number>({ budget: 100 })
    const two = Bounded.make<string, number>({ budget: 100 })
    one.set("a", 1, 1)
    two.set("b", 2, 1)
    Bounded.forgetAll()
    expect(one.get("a")).toBeUndefined()
    expect(two.bytes()).toBe(0)
    expect([...two.keys()]).toEqual([])
    one.set("a", 1, 1)
    expect(one.get("a")).toBe(1)
  })
})
