/**
 * The web inspector's statuses for what a request gets wrong (issue 36),
 * served in-process over a real PostgreSQL database, without a browser: a
 * NUL or a lone surrogate in a thread id, namespace, checkpoint reference,
 * prefix or copy target, and a cursor this server did not give (a bad date
 * in it would otherwise reach the database's cast), are each 400 naming the
 * argument, never a 500 from the database; what is missing stays 404, what
 * exists 409.
 */
import { Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createDatabase, withSaverOn } from "../../harness/databases.ts"
import { writeApproval, writeChat } from "../../harness/inspectedGraph.ts"
import * as Database from "../../src/internal/cli/Database.ts"
import * as Server from "../../src/internal/inspector/web/Server.ts"

let database: Awaited<ReturnType<typeof createDatabase>>
let scope: Scope.Closeable
let served: Server.Running

beforeAll(async () => {
  database = await createDatabase("web_status")
  await withSaverOn(database.url, async (saver) => {
    await writeChat(saver)
    await writeApproval(saver)
  })
  scope = Effect.runSync(Scope.make())
  served = await Effect.runPromise(Effect.gen(function*() {
    const services = yield* Layer.buildWithScope(Database.layer(database.url, "write"), scope)
    return yield* Server.start({ write: true }).pipe(Effect.provideContext(services), Scope.provide(scope))
  }))
}, 120_000)

afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  await database?.drop()
})

const call = async (path: string, body?: unknown) => {
  const response = await fetch(`http://127.0.0.1:${served.port}${path}`, {
    headers: { [Server.TOKEN_HEADER]: served.token, "content-type": "application/json" },
    ...(body === undefined ? {} : { method: "POST", body: JSON.stringify(body) })
  })
  return { status: response.status, error: ((await response.json()) as { readonly error?: string }).error }
}

/** A cursor as the page would send one, built by hand: its activity and id. */
const forged = (activity: unknown, thread_id: unknown) =>
  Buffer.from(JSON.stringify([activity, thread_id])).toString("base64url")

describe("what a request gets wrong is 400, naming it", () => {
  const NUL = "%00"
  const cases: ReadonlyArray<readonly [string, string, unknown, RegExp]> = [
    ["a NUL in a thread id (history)", `/api/threads/a${NUL}b/history`, undefined, /^history: invalid thread_id: /],
    ["a NUL in a thread id (show)", `/api/threads/a${NUL}b/checkpoints/x`, undefined, /^show: invalid thread_id: /],
    ["a NUL in a thread id (diff)", `/api/threads/a${NUL}b/diff?a=x&b=y`, undefined, /^diff: invalid thread_id: /],
    [
      "a NUL in a thread id (plan)",
      `/api/threads/a${NUL}b/plan?action=delete`,
      undefined,
      /^delete: invalid thread_id/
    ],
    ["a NUL in a namespace", `/api/threads/chat/checkpoints/x?ns=a${NUL}`, undefined, /invalid checkpoint_ns: /],
    ["a NUL in a checkpoint", `/api/threads/chat/checkpoints/a${NUL}`, undefined, /^show: invalid checkpoint: /],
    ["a NUL in a diff's checkpoint", `/api/threads/chat/diff?a=x${NUL}&b=y`, undefined, /^diff: invalid checkpoint: /],
    ["a NUL in a prefix", `/api/threads?prefix=a${NUL}`, undefined, /^threads: invalid prefix: /],
    ["a bad date in a cursor", `/api/threads?after=${forged("not a date", "chat")}`, undefined, /not a cursor/],
    ["a NUL in a cursor's id", `/api/threads?after=${forged("2025-01-01 00:00:00+00", "a\0")}`, undefined, /cursor/],
    ["a NUL in a copy target", "/api/threads/chat/copy", { target: "a\u0000b" }, /^copyThread: invalid config: /],
    ["a lone surrogate in a copy target", "/api/threads/chat/copy", { target: "a\ud800" }, /^copyThread: invalid/],
    ["a NUL in a copied thread", `/api/threads/a${NUL}b/copy`, { target: "x" }, /^copyThread: invalid config: /],
    ["a NUL in a pruned thread", `/api/threads/a${NUL}b/prune`, { strategy: "delete" }, /invalid thread_id/],
    ["a NUL in a deleted thread", `/api/threads/a${NUL}b/delete`, {}, /invalid thread_id/]
  ]
  for (const [what, path, body, error] of cases) {
    it(what, async () => {
      const answer = await call(path, body)
      expect(answer, `${path}: ${answer.error}`).toMatchObject({ status: 400, error: expect.stringMatching(error) })
      expect(answer.error).not.toMatch(/storage failed|SQLSTATE/)
    })
  }

  it("a cursor the server gave still pages; missing is 404, existing 409", async () => {
    const first = await fetch(`http://127.0.0.1:${served.port}/api/threads?limit=1`, {
      headers: { [Server.TOKEN_HEADER]: served.token }
    }).then((response) => response.json() as Promise<{ threads: ReadonlyArray<{ thread_id: string }>; next: string }>)
    expect(first.threads).toHaveLength(1)
    const rest = await fetch(`http://127.0.0.1:${served.port}/api/threads?after=${first.next}`, {
      headers: { [Server.TOKEN_HEADER]: served.token }
    }).then((response) => response.json() as Promise<{ threads: ReadonlyArray<{ thread_id: string }> }>)
    expect([...first.threads, ...rest.threads].map((thread) => thread.thread_id).sort()).toEqual(["approval", "chat"])
    // The same cursor with its signature changed is not one this server gave.
    const tampered = `${first.next.slice(0, -1)}${first.next.endsWith("A") ? "B" : "A"}`
    expect(await call(`/api/threads?after=${tampered}`)).toMatchObject({ status: 400 })
    expect(await call("/api/threads/nobody/history")).toMatchObject({ status: 404 })
    expect(await call("/api/threads/chat/copy", { target: "approval" })).toMatchObject({ status: 409 })
  })
})
