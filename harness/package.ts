/**
 * The package as `npm run build` builds it: for the tests and benchmarks
 * that run the executable as a user does (`buildPackage`, into a directory
 * of its own), and the executable's bundle (`bundleCli`, which
 * `scripts/bundle-cli.ts` runs as the build's last step).
 *
 * Why a bundle: a command on PostgreSQL spent most of its start resolving
 * and loading ~5,000 module files (Effect's, LangChain's serializer's, their
 * dependencies'); as a few chunks the same code starts in a fraction of
 * that (bench/results/STARTUP.md). The bundle keeps the lazy loading of
 * `main.ts` (`--version` loads nothing more) and of the drivers (a chunk
 * each). PGlite stays outside: it finds its WebAssembly and data files
 * beside its own module (and so do the older engines `upgrade-pglite`
 * loads, `pglite-*`).
 *
 * The bundle sits in `dist/internal/bin/`, beside the compiled `cli/` (in
 * `dist/bin/` in trees from before `src/internal/`): the files the program
 * finds from its own module (`PackageFiles`) are the same from the bundle
 * as from the compiled tree.
 */
import { execFile } from "node:child_process"
import { copyFile, mkdir, readFile, symlink } from "node:fs/promises"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import { build } from "rolldown"

const root = join(import.meta.dirname, "..")

/** Bundles `<bin>/../cli/main.js` into `<bin>/langgraph-checkpoints.js` and its chunks. */
export const bundleCli = async (bin: string): Promise<void> => {
  await build({
    input: { "langgraph-checkpoints": join(bin, "..", "cli", "main.js") },
    platform: "node",
    external: [/^@electric-sql\/pglite/, /^pglite-\d/],
    logLevel: "warn",
    // An import left unresolved would be loaded from node_modules at run time, unbundled: refuse.
    onLog: (level, log, handler) => {
      if (log.code === "UNRESOLVED_IMPORT") throw new Error(`the CLI's bundle: ${log.message}`)
      handler(level, log)
    },
    output: { dir: bin, format: "esm", chunkFileNames: "[name]-[hash].js" }
  })
}

/**
 * Builds the package whose sources are in `source` (default: this
 * repository) into `into` as `npm run build` does, beside a copy of its
 * package.json and a link to this repository's node_modules; answers the
 * path of the executable its package.json names (a tree from before the
 * bundle names the compiled `dist/cli/main.js`, and is not bundled).
 */
export const buildPackage = async (into: string, source: string = root): Promise<string> => {
  await mkdir(into, { recursive: true })
  await copyFile(join(source, "package.json"), join(into, "package.json"))
  await symlink(join(root, "node_modules"), join(into, "node_modules"), "dir")
  for (const config of ["tsconfig.build.json", "tsconfig.page.json"]) {
    await promisify(execFile)(
      process.execPath,
      [join(root, "node_modules/typescript/bin/tsc"), "-p", join(source, config), "--outDir", join(into, "dist")],
      { cwd: source, encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: 170_000 }
    )
  }
  const { bin } = JSON.parse(await readFile(join(source, "package.json"), "utf8")) as {
    readonly bin: Readonly<Record<string, string>>
  }
  const main = bin["langgraph-checkpoints"]!
  if (/\/bin\/[^/]+$/.test(main)) await bundleCli(dirname(join(into, main)))
  return join(into, main)
}
