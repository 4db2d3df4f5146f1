/**
 * Where the CLI keeps Node's compile cache (issue 36): a directory of the
 * user's own, made 0700, never the shared temporary directory's
 * `node-compile-cache` another user could make first; a directory planted
 * where the cache would go (a symbolic link, one others can write, another
 * user's) leaves the cache off rather than trusted.
 */
import { chmod, chown, lstat, mkdir, mkdtemp, readdir, rm, stat, symlink } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as CompileCache from "../../src/internal/cli/CompileCache.ts"

let base: string
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "lce-compile-cache-"))
})
afterAll(async () => {
  await rm(base, { recursive: true, force: true })
})

const uid = process.getuid?.() ?? 1000
const environment = (over: Partial<CompileCache.Environment> = {}): CompileCache.Environment => ({
  env: {},
  home: "/home/someone",
  tmp: "/tmp",
  uid,
  ...over
})

describe("the directory chosen", () => {
  it("is the user's cache directory: XDG_CACHE_HOME, else ~/.cache", () => {
    expect(CompileCache.directoryFor(environment({ env: { XDG_CACHE_HOME: "/xdg" } }))).toBe(
      "/xdg/langgraph-checkpoints/compile-cache"
    )
    expect(CompileCache.directoryFor(environment())).toBe("/home/someone/.cache/langgraph-checkpoints/compile-cache")
    // A relative XDG_CACHE_HOME is invalid (the XDG spec): ignored.
    expect(CompileCache.directoryFor(environment({ env: { XDG_CACHE_HOME: "cache" } }))).toBe(
      "/home/someone/.cache/langgraph-checkpoints/compile-cache"
    )
  })

  it("without a home, one of the temporary directory named with the uid, never Node's shared one", () => {
    for (const home of ["", "/"]) {
      const chosen = CompileCache.directoryFor(environment({ home }))
      expect(chosen).toBe(`/tmp/langgraph-checkpoints-${uid}/compile-cache`)
      expect(chosen).not.toBe("/tmp/node-compile-cache")
    }
  })

  it("is Node's own when NODE_COMPILE_CACHE names one, or there are no user ids", () => {
    expect(CompileCache.directoryFor(environment({ env: { NODE_COMPILE_CACHE: "/mine" } }))).toBeUndefined()
    expect(CompileCache.directoryFor(environment({ uid: undefined }))).toBeUndefined()
    expect(CompileCache.prepare(environment({ uid: undefined }))).toEqual({ _tag: "NodeDefault" })
  })
})

describe("prepare", () => {
  it("makes the directory and the one holding it 0700 and answers it", async () => {
    const home = join(base, "home")
    const chosen = CompileCache.prepare(environment({ home }))
    const path = join(home, ".cache", "langgraph-checkpoints", "compile-cache")
    expect(chosen).toEqual({ _tag: "Directory", path })
    for (const directory of [path, join(path, "..")]) {
      const stats = await stat(directory)
      expect(stats.isDirectory()).toBe(true)
      expect((stats.mode & 0o777).toString(8)).toBe("700")
      expect(stats.uid).toBe(uid)
    }
    // Again: the same directory, trusted as it is.
    expect(CompileCache.prepare(environment({ home }))).toEqual({ _tag: "Directory", path })
  })

  it("in the temporary directory, a symbolic link planted first leaves the cache off, and nothing is made through it", async () => {
    const tmp = join(base, "tmp-link")
    const elsewhere = join(base, "elsewhere")
    await mkdir(tmp)
    await mkdir(elsewhere, { mode: 0o700 })
    await symlink(elsewhere, join(tmp, `langgraph-checkpoints-${uid}`))
    const chosen = CompileCache.prepare(environment({ home: "", tmp }))
    expect(chosen).toEqual({ _tag: "Off", reason: `${join(tmp, `langgraph-checkpoints-${uid}`)} is a symbolic link` })
    expect(await readdir(elsewhere)).toEqual([])
  })

  it("a directory others can write leaves the cache off", async () => {
    const tmp = join(base, "tmp-open")
    const planted = join(tmp, `langgraph-checkpoints-${uid}`)
    await mkdir(planted, { recursive: true })
    await chmod(planted, 0o777)
    expect(CompileCache.prepare(environment({ home: "", tmp }))).toEqual({
      _tag: "Off",
      reason: `${planted} can be written by others (mode 777)`
    })
    await expect(lstat(join(planted, "compile-cache"))).rejects.toMatchObject({ code: "ENOENT" })
  })

  it.runIf(uid === 0)("another user's directory leaves the cache off", async () => {
    const tmp = join(base, "tmp-theirs")
    const planted = join(tmp, `langgraph-checkpoints-${uid}`)
    await mkdir(planted, { recursive: true, mode: 0o700 })
    await chown(planted, 65534, 65534)
    expect(CompileCache.prepare(environment({ home: "", tmp }))).toEqual({
      _tag: "Off",
      reason: `${planted} belongs to user 65534`
    })
  })

  it("makes nothing when NODE_DISABLE_COMPILE_CACHE is set", async () => {
    const home = join(base, "disabled")
    expect(CompileCache.prepare(environment({ home, env: { NODE_DISABLE_COMPILE_CACHE: "1" } }))).toEqual({
      _tag: "Off",
      reason: "NODE_DISABLE_COMPILE_CACHE is set"
    })
    await expect(lstat(home)).rejects.toMatchObject({ code: "ENOENT" })
  })
})
