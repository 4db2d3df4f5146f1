#!/usr/bin/env node
/**
 * The `langgraph-checkpoints` executable. Exit codes: 0 done; 1 an error,
 * printed as one line; 2 a usage error, printed with the command's help.
 *
 * It starts small: `--version` and `--help` alone are answered here (see
 * `Help.ts`); anything else loads the CLI (`Run.ts`), and a command loads
 * the driver its connection string names (`Database.ts`). Node's compile
 * cache keeps the compiled JavaScript between runs, in a directory of the
 * user's own (`CompileCache.ts`).
 *
 * @since 0.1.0
 */
import module from "node:module"
import { packageFile } from "../PackageFiles.ts"
import * as CompileCache from "./CompileCache.ts"
import { rootHelp, versionLine } from "./Help.ts"

// Most of a command's start is compiling Effect's and LangChain's modules: cached on disk, once, in a
// directory of this user's own (see CompileCache; NODE_DISABLE_COMPILE_CACHE=1 turns it off).
// A namespace lookup, not a named import: Node 22.0 has no such export.
const cache = CompileCache.prepare()
if (cache._tag === "Directory") module.enableCompileCache?.(cache.path)
else if (cache._tag === "NodeDefault") module.enableCompileCache?.()

const { version } = module.createRequire(packageFile("../package.json"))("./package.json") as {
  readonly version: string
}

// A reader that stops early (`| head`) closes the pipe: end quietly, as Unix tools do, not with a stack.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error
    process.exit(process.exitCode ?? 0)
  })
}

const args = process.argv.slice(2)
const only = args.length === 1 ? args[0] : undefined

if (only === "--version" || only === "-v") process.stdout.write(versionLine(version))
else if (only === "--help" || only === "-h") process.stdout.write(rootHelp())
else (await import("./Run.ts")).run(args, version)
