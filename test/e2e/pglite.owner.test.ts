/**
 * One owner per PGlite directory, with real processes: an application (a
 * real LangGraph graph writing turns on `pglite:<dir>`, in a child process)
 * holds its directory; a second opener, in another process or in this one,
 * read-only or not, gets `DatabaseLocked` naming the directory and the
 * holder's pid; the built `langgraph-checkpoints` reads a labelled snapshot
 * instead (its commands, and `web` in a real browser) and refuses to write;
 * every checkpoint the application acknowledged is there after `web` came
 * and went (the bug this guards against: a second embedded Postgres over the
 * same files erased them when it closed); a holder killed with SIGKILL
 * blocks nobody; openers at the same moment: exactly one wins; a snapshot's
 * file stays until its reader hangs up, however long the reader takes, and
 * the CLI reads one every time on a directory whose path is too long for a
 * socket's address.
 */
import { Cause, Duration, Effect, Exit, Layer, ManagedRuntime, Option } from "effect"
import { mkdir, mkdtemp, readdir, realpath, rm, stat } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launch } from "../../harness/browser.ts"
import { CheckpointStorage, EffectCheckpointSaver } from "../../src/index.ts"
import * as Owner from "../../src/internal/pglite/Owner.ts"
import * as Protocol from "../../src/internal/pglite/Protocol.ts"
import * as Pglite from "../../src/pglite.ts"
import { acks, type Lines, missing, moreAcks, pgliteChild, stored } from "../support/children.ts"
import { buildCli, type BuiltCli, describeResult } from "../support/cli.ts"

const inOrder = (timeout: number) => ({ concurrent: false, timeout })

let cli: BuiltCli | undefined
let base = ""
const started: Array<Lines> = []

beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "lce-owner-")))
})

afterAll(async () => {
  for (const child of started) if (child.child.exitCode === null) child.child.kill("SIGKILL")
  await cli?.dispose()
  await rm(base, { recursive: true, force: true })
})

const child = (mode: "app" | "open" | "lock", dir: string) => {
  const lines = pgliteChild(mode, dir)
  started.push(lines)
  return lines
}

/** What opening the directory in this process fails with. */
const openHere = (options: Pglite.PgliteOptions) =>
  Effect.runPromiseExit(Layer.build(Pglite.layer(options)).pipe(Effect.scoped))

const lockedBy = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Cause.findErrorOption(exit.cause)) : "opened"

describe("an application holding its directory", () => {
  let dataDir = ""
  let app: Lines
  let acknowledgedBefore: ReadonlyArray<string> = []

  beforeAll(async () => {
    dataDir = join(base, "app")
    app = child("app", dataDir)
    cli = await buildCli()
    await app.take((line) => line.startsWith("ready "), 120_000)
    await moreAcks(app, 0, 20)
  }, 180_000)

  it(
    "(a) another process opening it gets DatabaseLocked naming the directory and the holder's pid, read-only too, and fromConnString rejects with it",
    inOrder(60_000),
    async () => {
      for (const readOnly of [false, true]) {
        expect(lockedBy(await openHere({ dataDir, readOnly }))).toMatchObject({
          _tag: "DatabaseLocked",
          directory: dataDir,
          pid: app.pid
        })
      }
      const rejected = await EffectCheckpointSaver.fromConnString(`pglite:${dataDir}`).then(
        () => undefined,
        (error: unknown) => error
      )
      expect(rejected).toMatchObject({ _tag: "DatabaseLocked", directory: dataDir, pid: app.pid })
      // Only its user can reach the holder's socket.
      const sockets = (await readdir(dataDir)).filter((name) => name.startsWith(".pglite-"))
      expect(sockets).toHaveLength(1)
      expect((await stat(join(dataDir, sockets[0]!))).mode & 0o777).toBe(0o600)
      expect((rejected as Error).message).toBe(
        `connect: the PGlite database at ${dataDir} is in use by process ${app.pid}: PGlite is one process's ` +
          "database (stop that process, or read a snapshot: Pglite.snapshot, or langgraph-checkpoints' reading commands)"
      )
    }
  )

  it(
    "a snapshot larger than the reader takes is refused by the holder, and leaves nothing behind",
    inOrder(60_000),
    async () => {
      const refused = await Effect.runPromise(Effect.flip(Pglite.snapshot(dataDir, { maxBytes: 1_000_000 })))
      expect(refused._tag).toBe("StorageFailure")
      expect(refused.message).toMatch(
        new RegExp(
          `^snapshot: storage failed: process ${app.pid}, which holds ${dataDir}, took no snapshot: it takes \\d+ ` +
            "bytes, more than 1000000$"
        )
      )
      expect((await readdir(dataDir)).filter((name) => name.startsWith(".pglite-snapshot."))).toEqual([])
    }
  )

  it(
    "(f) the CLI reads a snapshot the holder takes, says so with the time and the pid, and refuses to write",
    inOrder(120_000),
    async () => {
      const threads = await cli!.run(["threads", `pglite:${dataDir}`, "--json"])
      expect(threads.code, describeResult(["threads"], threads)).toBe(0)
      const note = new RegExp(
        `^note: the PGlite database at ${dataDir} is in use by process ${app.pid}: reading a snapshot it took at ` +
          `(\\S+) \\(later changes are not in it\\)\\n$`
      )
      expect(threads.stderr).toMatch(note)
      const takenAt = Date.parse(note.exec(threads.stderr)![1]!)
      expect(Math.abs(Date.now() - takenAt)).toBeLessThan(120_000)
      const listed = JSON.parse(threads.stdout) as Array<{ thread_id: string; checkpoints: number }>
      expect(listed.map((thread) => thread.thread_id).sort()).toEqual(["app-0", "app-1", "app-2"])
      expect(listed.every((thread) => thread.checkpoints > 0)).toBe(true)

      for (const args of [["delete", `pglite:${dataDir}`, "app-0", "--yes"], ["web", `pglite:${dataDir}`, "--write"]]) {
        const refused = await cli!.run(args)
        expect(refused.code, describeResult(args, refused)).toBe(1)
        expect(refused.stderr).toBe(
          `error: connect: the PGlite database at ${dataDir} is in use by process ${app.pid}: PGlite is one process's ` +
            "database (stop that process, or read a snapshot: Pglite.snapshot, or langgraph-checkpoints' reading " +
            "commands)\n"
        )
      }
      // Nothing was left behind: only the holder's socket.
      expect((await readdir(dataDir)).filter((name) => name.startsWith(".pglite-"))).toEqual([
        expect.stringMatching(new RegExp(`^\\.pglite-owner\\.${app.pid}\\.[0-9a-f]{12}$`))
      ])
    }
  )

  it(
    "(e) web opened and used while the application writes, which finishes before web is stopped: a labelled read-only snapshot, and every checkpoint the application acknowledged is still there",
    inOrder(180_000),
    async () => {
      const web = cli!.start(["web", `pglite:${dataDir}`])
      started.push(web)
      const url = await web.take((line) => line.startsWith("http://"), 120_000)
      // stderr and stdout are separate pipes: the note, printed first, may arrive second.
      await expect.poll(() => web.stderr()).toMatch(
        new RegExp(`^note: the PGlite database at ${dataDir} is in use by process ${app.pid}: reading a snapshot`)
      )
      const token = new URL(url).searchParams.get("token")!
      const get = <A>(path: string): Promise<A> =>
        fetch(new URL(path, url), { headers: { "x-inspector-token": token } }).then((response) =>
          response.json() as Promise<A>
        )
      const info = await get<{ snapshot: { takenAt: string } }>("/api/info")
      expect(info).toMatchObject({ write: false, snapshot: { directory: dataDir, pid: app.pid } })
      const listed = await get<{ threads: Array<{ thread_id: string }> }>("/api/threads")
      expect(listed.threads.map((thread) => thread.thread_id).sort()).toEqual([
        "app-0",
        "app-1",
        "app-2"
      ])

      const browser = await launch()
      try {
        const page = await browser.newPage()
        await page.goto(url)
        const banner = page.locator("#snapshot")
        await banner.waitFor({ state: "visible" })
        expect(await banner.textContent()).toBe(
          `Snapshot: the PGlite database at ${dataDir} is in use by process ${app.pid}. This page shows a copy it ` +
            `took at ${info.snapshot.takenAt}; later changes are not in it, and nothing can be written here. ` +
            "Restart the command for a newer one."
        )
        await expect.poll(() => page.locator("#mode").textContent()).toMatch(/^snapshot, read-only/)
        await page.locator(".thread-row").first().waitFor()
        // A thread of the snapshot says nothing new appears in it (the banner says so too).
        await page.goto(`${url}#/thread/app-1`)
        await page.locator("#thread-id").waitFor()
        expect(await page.locator("section.thread p.status").textContent()).toContain(
          "This is a snapshot: checkpoints written after it do not appear."
        )
      } finally {
        await browser.close()
      }

      // The application finishes while the page is still open, then Ctrl-C stops the page. Whichever of two
      // Postgres over the same files closes last overwrites the other's work: without the lock, the page's
      // would erase what the application wrote since the page opened (measured: 65 of 399 checkpoints).
      await moreAcks(app, acks(app).length, 20)
      app.send("stop")
      await app.take((line) => line === "closed", 60_000)
      expect(await app.exited).toMatchObject({ code: 0 })
      web.child.kill("SIGINT")
      // Interrupted, as Ctrl-C leaves a command.
      expect(await web.exited).toMatchObject({ code: 130 })

      acknowledgedBefore = acks(app)
      const found = await stored(dataDir)
      expect(missing(acknowledgedBefore, found)).toEqual([])
      expect(acknowledgedBefore.length).toBeGreaterThan(40)
    }
  )

  it(
    "(b) a second layer in the same process gets DatabaseLocked with this process's pid; the first's close releases it",
    inOrder(60_000),
    async () => {
      const first = ManagedRuntime.make(Pglite.layer({ dataDir }))
      await first.context()
      try {
        for (const readOnly of [false, true]) {
          expect(lockedBy(await openHere({ dataDir, readOnly }))).toMatchObject({
            _tag: "DatabaseLocked",
            directory: dataDir,
            pid: process.pid
          })
        }
        // The first layer is untouched by the refusal.
        const threads = await first.runPromise(
          CheckpointStorage.CheckpointStorage.use((storage) => storage.getTuple({ thread_id: "app-0" }))
        )
        expect(threads._tag).toBe("Some")
      } finally {
        await first.dispose()
      }
      expect(Exit.isSuccess(await openHere({ dataDir }))).toBe(true)
    }
  )

  it(
    "(c) a holder killed with SIGKILL blocks nobody: the next start opens the directory, and what it had committed is there",
    inOrder(180_000),
    async () => {
      const killed = child("app", dataDir)
      await killed.take((line) => line.startsWith("ready "), 120_000)
      await moreAcks(killed, 0, 20)
      killed.child.kill("SIGKILL")
      expect(await killed.exited).toMatchObject({ signal: "SIGKILL" })
      const acknowledged = acks(killed)
      // Its socket is still there, refusing connections.
      expect((await readdir(dataDir)).filter((name) => name.startsWith(".pglite-owner."))).toHaveLength(1)

      const found = await stored(dataDir)
      expect(missing([...acknowledgedBefore, ...acknowledged], found)).toEqual([])
      expect((await readdir(dataDir)).filter((name) => name.startsWith(".pglite-"))).toEqual([])
    }
  )

  it(
    "(g) web opened first on the free directory never keeps the application from starting: it serves a copy, and says so",
    inOrder(180_000),
    async () => {
      const web = cli!.start(["web", `pglite:${dataDir}`])
      started.push(web)
      const url = await web.take((line) => line.startsWith("http://"), 120_000)
      // The page left the directory free: the application opens it.
      const later = child("app", dataDir)
      expect(await later.take((line) => line.startsWith("ready ") || line.startsWith("error"), 120_000)).toMatch(
        /^ready /
      )
      await moreAcks(later, 0, 5)
      const token = new URL(url).searchParams.get("token")!
      const info = await fetch(new URL("/api/info", url), { headers: { "x-inspector-token": token } })
        .then((response) => response.json() as Promise<{ snapshot: { takenAt: string; pid?: number } }>)
      expect(info).toMatchObject({ write: false, snapshot: { directory: dataDir } })
      expect(info.snapshot.pid).toBeUndefined()
      const browser = await launch()
      try {
        const page = await browser.newPage()
        await page.goto(url)
        const banner = page.locator("#snapshot")
        await banner.waitFor({ state: "visible" })
        expect(await banner.textContent()).toBe(
          `Snapshot: this page shows a copy of the PGlite database at ${dataDir} taken at ${info.snapshot.takenAt}, ` +
            "so that an application can open the directory meanwhile; later changes are not in it, and nothing " +
            "can be written here. Restart the command for a newer one."
        )
      } finally {
        await browser.close()
      }
      later.send("stop")
      await later.take((line) => line === "closed", 60_000)
      web.child.kill("SIGINT")
      expect(await web.exited).toMatchObject({ code: 130 })
      // Nothing to say on stderr: no process held the directory when the page copied it.
      expect(web.stderr()).toBe("")
      expect(missing(acks(later), await stored(dataDir))).toEqual([])
    }
  )
})

describe("openers at the same moment", () => {
  it(
    "(d) two processes opening a new directory: exactly one owns it, the other gets DatabaseLocked naming it",
    inOrder(180_000),
    async () => {
      const dataDir = join(base, "race")
      const racers = [child("open", dataDir), child("open", dataDir)]
      await Promise.all(racers.map((racer) => racer.take((line) => line === "loaded", 60_000)))
      for (const racer of racers) racer.send("go")
      const results = await Promise.all(
        racers.map((racer) => racer.take((line) => line === "owner" || line.startsWith("locked "), 120_000))
      )
      const winner = racers[results.indexOf("owner")]
      expect(results.filter((result) => result === "owner"), results.join(", ")).toHaveLength(1)
      expect(results.find((result) => result !== "owner")).toBe(`locked ${winner!.pid} ${dataDir}`)
      winner!.send("stop")
      await winner!.take((line) => line === "closed", 60_000)
    }
  )

  it(
    "(d) three processes taking the lock alone, 25 times over, one holder's socket left by SIGKILL among them: one owner every time",
    inOrder(120_000),
    async () => {
      const dir = join(base, "lock")
      await rm(dir, { recursive: true, force: true })
      await mkdir(dir)
      const dead = child("lock", dir)
      await dead.take((line) => line === "loaded")
      dead.send("go")
      await dead.take((line) => line === "owner")
      dead.child.kill("SIGKILL")
      await dead.exited

      const racers = [child("lock", dir), child("lock", dir), child("lock", dir)]
      await Promise.all(racers.map((racer) => racer.take((line) => line === "loaded", 60_000)))
      for (let round = 0; round < 25; round++) {
        for (const racer of racers) racer.send("go")
        const results = await Promise.all(
          racers.map((racer) => racer.take((line) => line === "owner" || line.startsWith("locked "), 30_000))
        )
        const owners = racers.filter((_, i) => results[i] === "owner")
        expect(owners, `round ${round}: ${results.join(", ")}`).toHaveLength(1)
        expect(results.filter((result) => result !== "owner")).toEqual([
          `locked ${owners[0]!.pid}`,
          `locked ${owners[0]!.pid}`
        ])
        owners[0]!.send("release")
        await owners[0]!.take((line) => line === "released")
      }
      for (const racer of racers) racer.send("exit")
      await Promise.all(racers.map((racer) => racer.exited))
      // The dead holder's socket was removed by the first opener after it.
      expect((await readdir(dir)).filter((name) => name.startsWith(".pglite-"))).toEqual([])
    }
  )

  it(
    "a directory whose path is too long for a socket's address is locked the same way (through /proc/self/fd)",
    inOrder(60_000),
    async () => {
      const dir = join(base, "a-directory-name-long-enough".repeat(4), "db")
      expect(Buffer.byteLength(dir)).toBeGreaterThan(107)
      await mkdir(dir, { recursive: true })
      const [first, second] = [child("lock", dir), child("lock", dir)]
      await Promise.all([first, second].map((racer) => racer.take((line) => line === "loaded", 60_000)))
      first.send("go")
      await first.take((line) => line === "owner")
      expect((await readdir(dir)).filter((name) => name.startsWith(".pglite-owner."))).toHaveLength(1)
      second.send("go")
      expect(await second.take((line) => line.startsWith("locked "))).toBe(`locked ${first.pid}`)
      first.child.kill("SIGKILL")
      await first.exited
      second.send("go")
      await second.take((line) => line === "owner")
      second.send("release")
      await second.take((line) => line === "released")
      second.send("exit")
      await second.exited
      expect((await readdir(dir)).filter((name) => name.startsWith(".pglite-"))).toEqual([])
    }
  )
})

describe("a snapshot's file lasts until its reader hangs up", () => {
  /** A directory whose path is too long for a socket's address: its sockets are reached through /proc/self/fd. */
  const longDirectory = (name: string) => join(base, "a-directory-whose-path-is-longer-than-an-address".repeat(2), name)

  it(
    "a reader that takes its time before reading still finds the file; it goes when the reader hangs up",
    inOrder(120_000),
    async () => {
      const dataDir = longDirectory("slow-reader")
      expect(Buffer.byteLength(dataDir)).toBeGreaterThan(107)
      const owner = ManagedRuntime.make(Pglite.layer({ dataDir }))
      await owner.context()
      try {
        const file = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
          const place = yield* Protocol.place(dataDir)
          const [name] = Owner.ownerNames(yield* place.names)
          const reply = yield* Protocol.ask(place.address(name!), "snapshot 1000000000", 60_000)
          expect(reply._tag).toBe("Answered")
          const header = (reply as { readonly header: { readonly file: string; readonly bytes: number } }).header
          const path = join(dataDir, header.file)
          // The owner has answered and ended its side; this reader is slow to come to the file.
          yield* Effect.sleep(Duration.millis(500))
          const size = yield* Effect.promise(() => stat(path).then((found) => found.size))
          expect(size).toBe(header.bytes)
          return path
        })))
        // Hung up: the owner removes it.
        await expect.poll(() => stat(file).then(() => "there", () => "gone"), { timeout: 10_000 }).toBe("gone")
      } finally {
        await owner.dispose()
      }
    }
  )

  it(
    "the CLI reads the snapshot of an application on a long directory path, run after run",
    inOrder(240_000),
    async () => {
      const dataDir = longDirectory("app")
      const app = child("app", dataDir)
      cli ??= await buildCli()
      await app.take((line) => line.startsWith("ready "), 120_000)
      await moreAcks(app, 0, 5)
      try {
        for (let run = 0; run < 4; run++) {
          const args = ["threads", `pglite:${dataDir}`, "--json"]
          const threads = await cli.run(args)
          expect(threads.code, `run ${run}: ${describeResult(args, threads)}`).toBe(0)
          expect(threads.stderr).toMatch(/reading a snapshot it took at/)
          const snapshot = await Effect.runPromise(Pglite.snapshot(dataDir))
          expect(snapshot.pid).toBe(app.pid)
        }
        // Each went when its reader hung up (the owner hears of it a moment later).
        await expect.poll(
          async () => (await readdir(dataDir)).filter((name) => name.startsWith(".pglite-snapshot.")),
          { timeout: 10_000 }
        ).toEqual([])
      } finally {
        app.send("stop")
        await app.take((line) => line === "closed", 60_000)
      }
    }
  )
})
