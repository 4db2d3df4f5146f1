/**
 * The embedded comparison: this library on PGlite (a fresh temporary
 * directory, as `pglite:<dir>` makes it) against `SqliteSaver` on a file,
 * each beside a MemorySaver of its own process, which normalises it: the
 * SQLite side runs in a child process on the machine's Node (see
 * bench/support/sqliteSide.mjs), so the two processes need not run equally fast.
 */
import { MemorySaver } from "@langchain/langgraph-checkpoint"
import { execFileSync } from "node:child_process"
import { accessSync, constants, mkdtempSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import { EffectCheckpointSaver } from "../../src/index.ts"
import { type EmbeddedParameters, type EmbeddedSamples, embeddedWorkload } from "./workload.mjs"

/**
 * The machine's own `node`: `BENCH_SYSTEM_NODE`, or the first `node` on the
 * PATH that is neither in a node_modules nor the one running this process.
 */
export const systemNode = (): string => {
  const fromEnv = process.env.BENCH_SYSTEM_NODE
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv
  const running = realpathSync(process.execPath)
  for (const directory of (process.env.PATH ?? "").split(delimiter)) {
    if (directory === "" || directory.includes("node_modules")) continue
    const candidate = join(directory, "node")
    try {
      accessSync(candidate, constants.X_OK)
      if (realpathSync(candidate) !== running) return candidate
    } catch {
      // Not here: the next directory.
    }
  }
  throw new Error(
    "The embedded comparison needs the Node that built better-sqlite3 (npm ci's): none found on the PATH; " +
      "set BENCH_SYSTEM_NODE to its path."
  )
}

export interface EmbeddedResult {
  readonly pglite: EmbeddedSamples
  readonly sqlite: EmbeddedSamples & { readonly node: string; readonly sqlite: string }
}

/** This library on PGlite beside a MemorySaver, in this process. */
const pgliteSide = async (parameters: EmbeddedParameters): Promise<EmbeddedSamples> => {
  const directory = mkdtempSync(join(tmpdir(), "lce-bench-pglite-"))
  const saver = await EffectCheckpointSaver.fromConnString(`pglite:${directory}`)
  try {
    return await embeddedWorkload(saver, new MemorySaver(), parameters)
  } finally {
    await saver.close()
    rmSync(directory, { recursive: true, force: true })
  }
}

/** `SqliteSaver` beside a MemorySaver, in a child process on the machine's Node. */
const sqliteSide = (parameters: EmbeddedParameters): EmbeddedResult["sqlite"] => {
  const output = execFileSync(
    systemNode(),
    [join(import.meta.dirname, "sqliteSide.mjs"), JSON.stringify(parameters)],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 64 << 20 }
  )
  return JSON.parse(output) as EmbeddedResult["sqlite"]
}

/** Both sides, one after the other (never at once: they would share the two cores). */
export const runEmbedded = async (parameters: EmbeddedParameters): Promise<EmbeddedResult> => {
  const sqlite = sqliteSide(parameters)
  const pglite = await pgliteSide(parameters)
  return { pglite, sqlite }
}
