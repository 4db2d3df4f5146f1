/**
 * Connection strings, parsed once: every scheme the adapter and the command
 * line accept, and the unsupported ones with their credentials masked.
 */
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import * as ConnectionString from "../../src/ConnectionString.ts"

const parsed = (url: string) => Result.getOrThrow(ConnectionString.parse(url))

describe("ConnectionString", () => {
  it("names each backend, schemes case-insensitive", () => {
    expect(parsed("memory:")).toEqual({ _tag: "Memory", scheme: "memory:" })
    expect(parsed("pglite:")).toEqual({ _tag: "Pglite", scheme: "pglite:", dataDir: undefined })
    expect(parsed("pglite:./data")).toEqual({ _tag: "Pglite", scheme: "pglite:", dataDir: "./data" })
    expect(parsed("PGlite:///tmp/x")).toEqual({ _tag: "Pglite", scheme: "pglite:", dataDir: "/tmp/x" })
    expect(parsed("postgresql://u@h/db")).toEqual({
      _tag: "Postgres",
      scheme: "postgresql:",
      url: "postgresql://u@h/db"
    })
    expect(parsed("cockroachdb://u@h:26257/db?sslmode=disable")).toEqual({
      _tag: "Cockroach",
      scheme: "cockroachdb:",
      url: "postgres://u@h:26257/db?sslmode=disable"
    })
    expect(parsed("cockroach://h/db")).toMatchObject({ _tag: "Cockroach", url: "postgres://h/db" })
  })

  it("refuses other schemes without printing credentials", () => {
    const result = ConnectionString.parse("mysql://user:secret@host/db")
    expect(Result.isFailure(result)).toBe(true)
    if (Result.isFailure(result)) {
      expect(result.failure.redacted).toBe("mysql://***@host/db")
      expect(ConnectionString.unsupported("connect", result.failure, "x").message).toBe(
        `connect: invalid config: unsupported connection string "mysql://***@host/db": expected x`
      )
    }
  })

  it("tells a connection string from a thread id", () => {
    expect(ConnectionString.looksLikeOne("postgres://h/db")).toBe(true)
    expect(ConnectionString.looksLikeOne("pglite:data")).toBe(true)
    expect(ConnectionString.looksLikeOne("user:42")).toBe(false)
    expect(ConnectionString.looksLikeOne("memory:")).toBe(false)
  })
})
