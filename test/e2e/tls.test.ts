/**
 * Connection details managed clusters hand out: `sslmode=verify-full` with a
 * CA file, `verify-ca`, and the `options=--cluster=…` routing parameter,
 * against a throwaway server that requires TLS with a certificate signed by a
 * CA of its own (for `localhost` only, so that `127.0.0.1` fails the name
 * check), through the `cockroachdb://` path and plain PostgreSQL URLs.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, type Layer, Option, Schedule } from "effect"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll } from "vitest"
import { startThrowaway } from "../../harness/postgresServer.ts"
import * as Cockroach from "../../src/cockroach.ts"
import { CheckpointStorage, EffectCheckpointSaver } from "../../src/index.ts"
import * as Postgres from "../../src/postgres.ts"
import { checkpoint, metadata } from "../support/fixtures.ts"

const certificates = mkdtempSync(join(tmpdir(), "lce-tls-"))
const openssl = (...args: Array<string>) => execFileSync("openssl", args, { cwd: certificates, stdio: "pipe" })

/** A CA and a certificate it signs for `localhost`; a second CA that signs nothing here. */
const makeCertificates = () => {
  for (const ca of ["ca", "other-ca"]) {
    openssl(
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "2",
      "-subj",
      `/CN=${ca}`,
      "-keyout",
      `${ca}.key`,
      "-out",
      `${ca}.crt`
    )
  }
  openssl(
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    "/CN=localhost",
    "-keyout",
    "server.key",
    "-out",
    "server.csr"
  )
  writeFileSync(join(certificates, "san.ext"), "subjectAltName=DNS:localhost\n")
  openssl(
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    "san.ext",
    "-out",
    "server.crt"
  )
}

let server: Awaited<ReturnType<typeof startThrowaway>>
const caFile = join(certificates, "ca.crt")
const otherCaFile = join(certificates, "other-ca.crt")

beforeAll(async () => {
  makeCertificates()
  server = await startThrowaway({
    files: {
      "server.crt": readFileSync(join(certificates, "server.crt"), "utf8"),
      "server.key": readFileSync(join(certificates, "server.key"), "utf8")
    },
    settings: (dir) =>
      `-c listen_addresses=localhost -c ssl=on -c ssl_cert_file=${dir}/server.crt -c ssl_key_file=${dir}/server.key`,
    // TLS or nothing.
    hba: "local all all trust\nhostssl all all all trust\nhostnossl all all all reject\n"
  })
}, 60_000)
afterAll(() => {
  server?.stop()
  rmSync(certificates, { recursive: true, force: true })
})

const url = (host: string, query: string) => `cockroachdb://postgres@${host}:${server.port}/postgres?${query}`

/** Stores and reads a checkpoint through a layer; fails as the layer does (no retries). */
const roundTrip = (layer: Layer.Layer<CheckpointStorage.CheckpointStorage, unknown>) =>
  CheckpointStorage.CheckpointStorage.use((storage) =>
    storage.put({ thread_id: "tls" }, checkpoint({ a: 1 }), metadata(), { a: 1 }).pipe(
      Effect.andThen((ref) => storage.getTuple(ref))
    )
  ).pipe(Effect.provide(layer))

const noRetry = { retry: Schedule.recurs(0) }

describe("TLS and routing parameters of a connection URL", () => {
  it.live(
    "verify-full with the cluster's CA file connects, on the cockroachdb:// path and from fromConnString",
    () =>
      Effect.gen(function*() {
        const target = url("localhost", `sslmode=verify-full&sslrootcert=${encodeURIComponent(caFile)}`)
        const read = yield* roundTrip(Cockroach.layer({ url: target, ...noRetry }))
        expect(Option.getOrThrow(read).checkpoint.channel_values).toEqual({ a: 1 })
        const saver = yield* Effect.promise(() => EffectCheckpointSaver.fromConnString(target))
        const tuple = yield* Effect.promise(() => saver.getTuple({ configurable: { thread_id: "tls" } }))
        yield* Effect.promise(() => saver.close())
        expect(tuple?.checkpoint.channel_values).toEqual({ a: 1 })
      }),
    30_000
  )

  it.live("the server refuses a connection without TLS", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        roundTrip(Cockroach.layer({ url: url("localhost", "sslmode=disable"), ...noRetry }))
      )
      expect(String(error)).toMatch(/no pg_hba.conf entry|rejects|reject/i)
    }), 30_000)

  it.live(
    "a certificate from another CA, or a host name it was not issued for, fails verify-full",
    () =>
      Effect.gen(function*() {
        const wrongCa = yield* Effect.flip(roundTrip(Postgres.layer({
          url: url("localhost", `sslmode=verify-full&sslrootcert=${encodeURIComponent(otherCaFile)}`).replace(
            "cockroachdb://",
            "postgres://"
          ),
          ...noRetry
        })))
        expect(String(wrongCa)).toMatch(/certificate/i)
        // With the default retry window too: a certificate that does not verify is no transient failure.
        const started = Date.now()
        const refused = yield* Effect.flip(roundTrip(Postgres.layer({
          url: url("localhost", `sslmode=verify-full&sslrootcert=${encodeURIComponent(otherCaFile)}`).replace(
            "cockroachdb://",
            "postgres://"
          )
        })))
        expect(Date.now() - started).toBeLessThan(2_000)
        expect(refused).toMatchObject({ _tag: "InvalidConfig" })
        expect(String(refused)).toMatch(/certificate/i)
        const wrongName = yield* Effect.flip(roundTrip(Cockroach.layer({
          url: url("127.0.0.1", `sslmode=verify-full&sslrootcert=${encodeURIComponent(caFile)}`),
          ...noRetry
        })))
        expect(String(wrongName)).toMatch(/altnames|hostname|IP/i)
        // verify-ca checks the chain, not the name.
        const read = yield* roundTrip(Cockroach.layer({
          url: url("127.0.0.1", `sslmode=verify-ca&sslrootcert=${encodeURIComponent(caFile)}`),
          ...noRetry
        }))
        expect(Option.isSome(read)).toBe(true)
      }),
    30_000
  )

  it.live("options=--cluster=… reaches the server inside the TLS session", () =>
    Effect.gen(function*() {
      // PostgreSQL does not know CockroachDB's routing option: its refusal names it, so it was sent.
      const error = yield* Effect.flip(roundTrip(Cockroach.layer({
        url: url(
          "localhost",
          `sslmode=verify-full&sslrootcert=${encodeURIComponent(caFile)}&options=${
            encodeURIComponent("--cluster=tenant-7")
          }`
        ),
        ...noRetry
      })))
      expect(String(error)).toContain(`unrecognized configuration parameter "cluster"`)
    }), 30_000)

  it.live("parameters that cannot be honoured, and unreadable files, are InvalidConfig", () =>
    Effect.gen(function*() {
      const crl = yield* Effect.flip(roundTrip(Cockroach.layer({
        url: url("localhost", `sslmode=verify-full&sslrootcert=${encodeURIComponent(caFile)}&sslcrl=revoked.crl`),
        ...noRetry
      })))
      expect(crl).toMatchObject({ _tag: "InvalidConfig" })
      expect(String(crl)).toContain("sslcrl")
      const missing = yield* Effect.flip(roundTrip(Cockroach.layer({
        url: url("localhost", "sslmode=verify-full&sslrootcert=/nowhere/ca.crt"),
        ...noRetry
      })))
      expect(missing).toMatchObject({ _tag: "InvalidConfig" })
      expect(String(missing)).toContain("/nowhere/ca.crt")
    }), 30_000)
})
