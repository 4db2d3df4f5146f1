/**
 * The `langgraph-checkpoints` executable as one bundle: `dist/bin/`, built
 * from the compiled `dist/cli/main.js` by `npm run build`.
 *
 * Why: a command on PostgreSQL spent most of its start resolving and
 * loading ~5,000 module files (Effect's, LangChain's serializer's, their
 * dependencies'); as a few chunks the same code starts in a fraction of
 * that (bench/STARTUP.md). The bundle keeps the lazy loading of `main.ts`
 * (`--version` loads nothing more) and of the drivers (a chunk each).
 * PGlite stays outside: it finds its WebAssembly and data files beside its
 * own module.
 *
 * `dist/bin` sits beside `dist/cli` and `dist/web`, so paths the program
 * takes relative to its module (`../../package.json`, the web page's
 * script) lead to the same files from the bundle as from the compiled tree.
 */
import { join } from "node:path"
import { build } from "rolldown"

/** Bundles `<dist>/cli/main.js` into `<dist>/bin/langgraph-checkpoints.js` and its chunks. */
export const bundleCli = async (dist: string): Promise<void> => {
  await build({
    input: { "langgraph-checkpoints": join(dist, "cli", "main.js") },
    platform: "node",
    external: [/^@electric-sql\/pglite/],
    logLevel: "warn",
    // An import left unresolved would be loaded from node_modules at run time, unbundled: refuse.
    onLog: (level, log, handler) => {
      if (log.code === "UNRESOLVED_IMPORT") throw new Error(`the CLI's bundle: ${log.message}`)
      handler(level, log)
    },
    output: { dir: join(dist, "bin"), format: "esm", chunkFileNames: "[name]-[hash].js" }
  })
}

if (import.meta.main) await bundleCli(join(import.meta.dirname, "..", "dist"))
