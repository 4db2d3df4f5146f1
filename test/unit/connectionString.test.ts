/**
 * Connection strings, parsed once: every scheme the adapter and the command
 * line accept, and the unsupported ones with their credentials masked; and
 * `redact`, which masks every password a string can carry before a message
 * quotes it.
 */
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import * as ConnectionString from "../../src/internal/ConnectionString.ts"

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

  describe("redact", () => {
    const masked = (url: string, secrets: ReadonlyArray<string>) => {
      const shown = ConnectionString.redact(url)
      for (const secret of secrets) expect(shown, `${url} → ${shown}`).not.toContain(secret)
      return shown
    }

    it("masks the user information up to the LAST @, a password holding @ included", () => {
      expect(masked("postgresql://u:pA@ssW0rd@127.0.0.1:1/db", ["pA", "ssW0rd"])).toBe(
        "postgresql://***@127.0.0.1:1/db"
      )
      expect(masked("postgres://user:secret@host:5432/db?sslmode=require", ["secret"])).toBe(
        "postgres://***@host:5432/db?sslmode=require"
      )
      // The user name too (a provider may put a token there), and a percent-encoded @ is no delimiter.
      expect(ConnectionString.redact("postgres://postgres@127.0.0.1:1/none")).toBe("postgres://***@127.0.0.1:1/none")
      expect(masked("postgres://u%40tenant:p%40ss@h/db", ["tenant", "p%40ss"])).toBe("postgres://***@h/db")
      // A password holding the URL's own delimiters: the last @ still ends it.
      for (const password of ["p/ss", "p?ss", "p#ss", "p:ss", "p ss"]) {
        expect(masked(`postgres://u:${password}@h/db`, [password])).toBe("postgres://***@h/db")
      }
    })

    it("masks password and sslpassword in the query, whatever their case or encoding, and keeps the rest", () => {
      expect(masked("postgresql://127.0.0.1:1/db?user=u&password=S3cret", ["S3cret"])).toBe(
        "postgresql://127.0.0.1:1/db?user=u&password=***"
      )
      expect(
        masked("postgres://h/db?sslpassword=k3y&sslkey=/k.pem&passfile=/p&sslmode=verify-full", ["k3y"])
      ).toBe("postgres://h/db?sslpassword=***&sslkey=/k.pem&passfile=/p&sslmode=verify-full")
      expect(masked("postgres://h/db?%70assword=x1&PassWord=x2&password+=x3&password=", ["x1", "x2", "x3"]))
        .toBe("postgres://h/db?%70assword=***&PassWord=***&password+=***&password=")
      // A name that does not decode could be anything: masked.
      expect(masked("postgres://h/db?pass%zzword=x4", ["x4"])).toBe("postgres://h/db?pass%zzword=***")
      // A password given twice, or after a second ?.
      expect(masked("postgres://h/db?password=a1&password=a2", ["a1", "a2"])).toBe(
        "postgres://h/db?password=***&password=***"
      )
      expect(masked("postgres://h/db?x=1?password=a3", ["a3"])).toBe("postgres://h/db?x=1?password=***")
    })

    it("masks more when unsure: an @ in the query, a password with & or ?, libpq's keyword=value form", () => {
      // The user information runs to the last @: here into the query, and the password's value is masked too.
      expect(masked("postgresql://127.0.0.1:1/db?password=S@cret&sslmode=require", ["S", "cret"])).toBe(
        "postgresql://***&sslmode=require"
      )
      expect(masked("postgresql://u:p?x=1&password=2@h/db", ["p?x", "2"])).toBe("postgresql://***")
      expect(masked("postgres://h/db password=kv1", ["kv1"])).toBe("postgres://h/db password=***")
      expect(masked("host=h user=u password='a b\\' c' dbname=d", ["a b", " c'"])).toBe(
        "host=h user=u password=*** dbname=d"
      )
      expect(masked("host=h password = ab&cd sslpassword=ef port=1", ["ab", "cd", "ef"])).toBe(
        "host=h password = *** sslpassword=*** port=1"
      )
      // No scheme://: everything before the last @ (which part is the password is a guess).
      expect(masked("mysql:u:p4ss@h", ["p4ss"])).toBe("***@h")
      expect(masked("u:p4ss@h/db", ["p4ss"])).toBe("***@h/db")
    })

    it("leaves strings without credentials as they are", () => {
      for (const url of ["postgres://h:5432/db?sslmode=disable", "pglite:./data", "memory:", "", "@", "thread-1"]) {
        expect(ConnectionString.redact(url)).toBe(url)
      }
    })

    it("UnsupportedScheme quotes the string redacted, and escaped", () => {
      const result = ConnectionString.parse("mysql://h/db?password=S3cret&x=\u202e")
      expect(Result.isFailure(result)).toBe(true)
      if (Result.isFailure(result)) {
        expect(result.failure.redacted).toBe("mysql://h/db?password=***&x=\u202e")
        expect(result.failure.message).toBe(`unsupported connection string "mysql://h/db?password=***&x=\\u{202e}"`)
      }
    })
  })
})
