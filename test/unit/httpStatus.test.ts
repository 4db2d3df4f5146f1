/**
 * What each `CheckpointError` means over HTTP (`CheckpointError.httpStatus`,
 * declared on each error's class as Effect's `httpApiStatus`), and that both
 * HTTP faces answer it: the web inspector's router (`inspector/web/Router.ts`)
 * and the LangGraph server's app (`server/App.ts`), the same error the same
 * status, apart from the server's one stated override (400 is 422 there, as
 * LangGraph Platform answers).
 */
import { Cause, Effect, SchemaAST } from "effect"
import { Hono } from "hono"
import { describe, expect, it } from "vitest"
import * as Errors from "../../src/CheckpointError.ts"
import * as Router from "../../src/internal/inspector/web/Router.ts"
import * as App from "../../src/internal/server/App.ts"

const at = { thread_id: "t", checkpoint_ns: "", checkpoint_id: "c" }

/** One of each error of the union (the type makes the list whole). */
const samples: { readonly [Tag in Errors.CheckpointError["_tag"]]: Extract<Errors.CheckpointError, { _tag: Tag }> } = {
  InvalidConfig: new Errors.InvalidConfig({ operation: "get", detail: "no thread_id" }),
  InvalidInput: new Errors.InvalidInput({ operation: "put", argument: "metadata", detail: "not an object" }),
  SerializationFailed: new Errors.SerializationFailed({ operation: "put", path: "x", cause: new Error("BigInt") }),
  CorruptedCheckpoint: new Errors.CorruptedCheckpoint({ ...at, detail: "bad row" }),
  StorageFailure: new Errors.StorageFailure({
    operation: "get",
    retryable: true,
    cause: new Error("connect ECONNREFUSED 10.0.0.7:5432")
  }),
  IncompatibleSchema: new Errors.IncompatibleSchema({ found: 9, supported: 8 }),
  IncompatibleFormat: new Errors.IncompatibleFormat({ operation: "get", level: 9, supported: 8 }),
  ThreadNotFound: new Errors.ThreadNotFound({ operation: "copy", thread_id: "t" }),
  ThreadExists: new Errors.ThreadExists({ operation: "copy", thread_id: "t" }),
  CheckpointNotFound: new Errors.CheckpointNotFound({ operation: "put", ...at }),
  ThreadConflict: new Errors.ThreadConflict({ operation: "put", thread_id: "t", epoch: 1 }),
  DatabaseLocked: new Errors.DatabaseLocked({ directory: "/data", pid: 1 }),
  IncompatibleDirectory: new Errors.IncompatibleDirectory({ directory: "/data", found: "16", supported: "17" })
}

/** The statuses, written out: a change to one is a change to this table. */
const expected: { readonly [Tag in Errors.CheckpointError["_tag"]]: number } = {
  InvalidConfig: 400,
  InvalidInput: 400,
  SerializationFailed: 400,
  CorruptedCheckpoint: 500,
  StorageFailure: 503,
  IncompatibleSchema: 500,
  IncompatibleFormat: 500,
  ThreadNotFound: 404,
  ThreadExists: 409,
  CheckpointNotFound: 404,
  ThreadConflict: 409,
  DatabaseLocked: 503,
  IncompatibleDirectory: 500
}

/** What the web inspector answers a handler's failure with. */
const onPage = async (error: unknown) => {
  const response = await Effect.runPromise(Router.failed(Cause.fail(error)))
  return { status: response.status }
}

/** What the server answers a route that throws `error` with. */
const onServer = async (error: unknown) => {
  const app = new Hono()
  app.onError((thrown, c) => App.answer(c, thrown))
  app.get("/", () => {
    throw error
  })
  const response = await app.fetch(new Request("http://127.0.0.1/"))
  return { status: response.status, body: await response.json() as { readonly detail: string } }
}

describe("an error's HTTP status", () => {
  it("is declared on every error's class, as Effect's httpApiStatus", () => {
    const tags = Errors.CheckpointError.members.map((member) => member.identifier)
    expect(new Set(tags)).toEqual(new Set(Object.keys(samples)))
    for (const member of Errors.CheckpointError.members) {
      expect(SchemaAST.resolve(member.ast)?.httpApiStatus, member.identifier).toBe(
        expected[member.identifier as Errors.CheckpointError["_tag"]]
      )
    }
  })

  it("is the same on the web page and the server, but 422 for 400 on the server", async () => {
    for (const [tag, error] of Object.entries(samples)) {
      const status = expected[tag as keyof typeof expected]
      expect(Errors.httpStatus(error), tag).toBe(status)
      expect(await onPage(error), tag).toEqual({ status })
      expect((await onServer(error)).status, tag).toBe(status === 400 ? 422 : status)
      expect(App.platformStatus(status)).toBe(status === 400 ? 422 : status)
    }
  })

  it("goes by the tag: an error of another copy of the package, or decoded, answers the same", async () => {
    for (const [tag, status] of Object.entries(expected)) {
      // An Error that is not this copy's class (Hono hands its error handler only Errors).
      const copy = Object.assign(new Error("elsewhere"), { _tag: tag })
      expect(Errors.httpStatus(copy), tag).toBe(status)
      expect(await onPage(copy), tag).toEqual({ status })
      expect((await onServer(copy)).status, tag).toBe(App.platformStatus(status))
    }
    expect(Errors.httpStatus(new Error("x"))).toBeUndefined()
    expect(Errors.httpStatus({ _tag: "SomethingElse" })).toBeUndefined()
  })

  it("the server says what a client got wrong, and keeps back why it failed", async () => {
    expect(await onServer(samples.ThreadNotFound)).toEqual({
      status: 404,
      body: { detail: samples.ThreadNotFound.message }
    })
    expect(await onServer(samples.InvalidInput)).toEqual({
      status: 422,
      body: { detail: samples.InvalidInput.message }
    })
    // No address of the storage in a 503, nor anything of a 500.
    expect(await onServer(samples.StorageFailure)).toEqual({
      status: 503,
      body: { detail: "The storage cannot be reached now: try again later" }
    })
    expect(await onServer(samples.CorruptedCheckpoint)).toEqual({
      status: 500,
      body: { detail: "Internal server error" }
    })
  })

  it("what is none of the library's: the page's 400 for a request it cannot take, the server's 422 for LangGraph's", async () => {
    expect(await onPage({ _tag: "SchemaError" })).toEqual({ status: 400 })
    expect(await onPage(new Error("boom"))).toEqual({ status: 500 })
    expect((await onServer(Object.assign(new Error("no node"), { name: "InvalidUpdateError" }))).status).toBe(422)
    expect((await onServer(new Error("boom"))).status).toBe(500)
  })
})
