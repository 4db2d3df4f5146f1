/**
 * The guards both HTTP faces share (`src/internal/Loopback.ts`): which
 * `Host` headers name a server (the web inspector: the address it printed;
 * the LangGraph server on loopback: any loopback name), and the missing
 * package both the saver's connection strings and the server's entry
 * explain (`src/internal/MissingPackage.ts`).
 */
import { describe, expect, it } from "vitest"
import { InvalidConfig } from "../../src/CheckpointError.ts"
import * as Loopback from "../../src/internal/Loopback.ts"
import { explainMissing, missingPackage } from "../../src/internal/MissingPackage.ts"

describe("a Host header", () => {
  it("names its host (lower case, an IPv6 address without brackets) and its port", () => {
    expect(Loopback.hostOf("LocalHost:2024")).toEqual({ name: "localhost", port: 2024 })
    expect(Loopback.hostOf("[::1]:80")).toEqual({ name: "::1", port: 80 })
    expect(Loopback.hostOf("127.0.0.1")).toEqual({ name: "127.0.0.1", port: undefined })
    for (const malformed of ["::1", "localhost:", "localhost:x", "[::1", "a:1:2"]) {
      expect(Loopback.hostOf(malformed), malformed).toBeUndefined()
    }
  })

  it("the web inspector answers only to the address it printed; bound to every interface, to any", () => {
    const names = Loopback.printedAddress("127.0.0.1", 4000)!
    expect(Loopback.namesServer(names, "127.0.0.1:4000")).toBe(true)
    for (const other of ["localhost:4000", "127.0.0.1:4001", "127.0.0.1", "evil.example:4000", undefined, ""]) {
      expect(Loopback.namesServer(names, other), String(other)).toBe(false)
    }
    expect(Loopback.namesServer(Loopback.printedAddress("::1", 4000)!, "[::1]:4000")).toBe(true)
    expect(Loopback.printedAddress("0.0.0.0", 4000)).toBeUndefined()
    expect(Loopback.printedAddress("::", 4000)).toBeUndefined()
  })

  it("the LangGraph server on loopback answers to any loopback name, on any port; beyond it, to any", () => {
    const names = Loopback.loopbackNames("127.0.0.1")!
    for (const host of ["localhost:2024", "127.0.0.1:1", "[::1]:2024", "LOCALHOST"]) {
      expect(Loopback.namesServer(names, host), host).toBe(true)
    }
    for (const host of ["rebound.example:2024", "127.0.0.2:2024", "", undefined]) {
      expect(Loopback.namesServer(names, host), String(host)).toBe(false)
    }
    expect(Loopback.loopbackNames("0.0.0.0")).toBeUndefined()
  })

  it("a URL writes an IPv6 host in brackets", () => {
    expect(Loopback.urlHost("::1")).toBe("[::1]")
    expect(Loopback.urlHost("[::1]")).toBe("[::1]")
    expect(Loopback.urlHost("127.0.0.1")).toBe("127.0.0.1")
  })
})

describe("a missing package", () => {
  const notFound = (message: string, code = "ERR_MODULE_NOT_FOUND") => Object.assign(new Error(message), { code })

  it("is named without its subpath, ESM's and CommonJS's", () => {
    expect(missingPackage(notFound("Cannot find package 'hono' imported from /x.js"))).toBe("hono")
    expect(missingPackage(notFound("Cannot find package '@langchain/langgraph-api' imported from /x.js"))).toBe(
      "@langchain/langgraph-api"
    )
    expect(missingPackage(notFound("Cannot find module '@hono/node-server/dist/x'", "MODULE_NOT_FOUND"))).toBe(
      "@hono/node-server"
    )
  })

  it("is no file of the program, nor another error", () => {
    expect(missingPackage(notFound("Cannot find module '/app/graph.ts' imported from /x.js"))).toBeUndefined()
    expect(missingPackage(notFound("Cannot find module './Foo.js' imported from /x.js"))).toBeUndefined()
    expect(missingPackage(new Error("Cannot find package 'hono'"))).toBeUndefined()
    expect(missingPackage("Cannot find package 'hono'")).toBeUndefined()
  })

  it("is explained as an InvalidConfig of the operation; anything else is left to the caller", () => {
    const explained = explainMissing(
      notFound("Cannot find package 'hono' imported from /x.js"),
      "serve",
      (name) => `needs ${name}`
    )
    expect(explained).toBeInstanceOf(InvalidConfig)
    expect(explained).toMatchObject({ operation: "serve", detail: "needs hono" })
    expect(explainMissing(new Error("boom"), "serve", (name) => name)).toBeUndefined()
  })
})
