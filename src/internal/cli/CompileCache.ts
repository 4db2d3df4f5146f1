/**
 * Where the CLI keeps Node's compile cache, and why not where Node would.
 *
 * Node's default is one directory of the system's temporary directory,
 * shared by every user of the machine: whoever creates it first owns it, and
 * a cache another user can write is code this process runs. So the cache
 * goes to a directory of this user's own — `$XDG_CACHE_HOME`, else
 * `~/.cache`, then `langgraph-checkpoints/compile-cache`; without a home, a
 * directory of the temporary directory named with the uid — created 0700,
 * and used only if it is a directory (not a symbolic link) that this user
 * owns and no one else can write. Anything else leaves the cache off: the
 * command runs as it would without one, only slower to start.
 *
 * `NODE_COMPILE_CACHE` still names the directory (Node reads it), and
 * `NODE_DISABLE_COMPILE_CACHE=1` still turns the cache off. Only Node's own
 * modules are loaded here: this runs before anything else.
 *
 * @since 0.1.0
 */
import { lstatSync, mkdirSync } from "node:fs"
import { homedir, tmpdir } from "node:os"
import { dirname, isAbsolute, join } from "node:path"

/**
 * What the choice reads of the process.
 *
 * @since 0.1.0
 */
export interface Environment {
  readonly env: Readonly<Record<string, string | undefined>>
  /** The user's home directory ("" when there is none). */
  readonly home: string
  readonly tmp: string
  /** The user's id; undefined where there are none (Windows). */
  readonly uid: number | undefined
}

/** The process's own environment. */
const current = (): Environment => {
  let home = ""
  try {
    home = homedir()
  } catch {
    // No home: the temporary directory's fallback.
  }
  return { env: process.env, home, tmp: tmpdir(), uid: process.getuid?.() }
}

/**
 * The directory to give Node, or `undefined` to leave Node's own choice:
 * when `NODE_COMPILE_CACHE` names one, or on a system without user ids
 * (Windows, whose temporary directory is the user's own).
 *
 * @since 0.1.0
 */
export const directoryFor = (environment: Environment): string | undefined => {
  const { env, home, tmp, uid } = environment
  if ((env.NODE_COMPILE_CACHE ?? "") !== "" || uid === undefined) return undefined
  const xdg = env.XDG_CACHE_HOME ?? ""
  // The XDG spec: a relative XDG_CACHE_HOME is invalid and ignored.
  if (isAbsolute(xdg)) return join(xdg, "langgraph-checkpoints", "compile-cache")
  if (home !== "" && home !== "/") return join(home, ".cache", "langgraph-checkpoints", "compile-cache")
  return join(tmp, `langgraph-checkpoints-${uid}`, "compile-cache")
}

/**
 * Why `path` is not a directory to trust, if it is not: it must be a
 * directory itself (not a link to one), this user's, and writable by no one
 * else.
 *
 * @since 0.1.0
 */
export const distrust = (path: string, uid: number): string | undefined => {
  const stats = lstatSync(path)
  if (stats.isSymbolicLink()) return "is a symbolic link"
  if (!stats.isDirectory()) return "is not a directory"
  if (stats.uid !== uid) return `belongs to user ${stats.uid}`
  if ((stats.mode & 0o022) !== 0) return `can be written by others (mode ${(stats.mode & 0o777).toString(8)})`
  return undefined
}

/**
 * What to do with the compile cache: use `path`; leave Node its own choice
 * (see `directoryFor`); or keep it off, for `reason`.
 *
 * @since 0.1.0
 */
export type Choice =
  | { readonly _tag: "Directory"; readonly path: string }
  | { readonly _tag: "NodeDefault" }
  | { readonly _tag: "Off"; readonly reason: string }

/**
 * Makes the cache directory for `environment`, 0700, the directory that
 * holds it first; answers it once both pass `distrust`. Nothing is made
 * when `NODE_DISABLE_COMPILE_CACHE` is set.
 *
 * @since 0.1.0
 */
export const prepare = (environment: Environment = current()): Choice => {
  if ((environment.env.NODE_DISABLE_COMPILE_CACHE ?? "") !== "") {
    return { _tag: "Off", reason: "NODE_DISABLE_COMPILE_CACHE is set" }
  }
  const path = directoryFor(environment)
  const uid = environment.uid
  if (path === undefined || uid === undefined) return { _tag: "NodeDefault" }
  try {
    // The parent first: in the temporary directory, it is what another user could have made before us.
    for (const directory of [dirname(path), path]) {
      mkdirSync(directory, { recursive: true, mode: 0o700 })
      const wrong = distrust(directory, uid)
      if (wrong !== undefined) return { _tag: "Off", reason: `${directory} ${wrong}` }
    }
    return { _tag: "Directory", path }
  } catch (cause) {
    return { _tag: "Off", reason: cause instanceof Error ? cause.message : String(cause) }
  }
}
