/**
 * `npm run test:newest`: the project on the newest versions its ranges
 * allow, as a user installing it today gets them, beside `npm test` on the
 * lockfile. A new upstream release that breaks the build or a driver then
 * fails CI the day it appears, naming the package.
 *
 * In a temporary copy of the repository's files: every peer dependency
 * (effect, LangChain's packages, the server's optional peers) is required
 * at its peer range instead of the version the lockfile tests, the lockfile
 * is left out, `npm install` resolves everything anew; the versions it
 * resolved are printed, then the type check, the lint, the unit tier and
 * the driver tests run there.
 */
import { execFileSync } from "node:child_process"
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"

const root = join(import.meta.dirname, "..")
const copy = mkdtempSync(join(tmpdir(), "lce-newest-"))

/** The packages whose resolved versions matter: the peers and the engines under the drivers. */
const WATCHED = [
  "effect",
  "@effect/sql-pg",
  "@effect/platform-node-shared",
  "@effect/vitest",
  "@electric-sql/pglite",
  "@langchain/core",
  "@langchain/langgraph",
  "@langchain/langgraph-checkpoint",
  "@langchain/langgraph-api",
  "hono",
  "@hono/node-server"
]

const run = (command: string, args: ReadonlyArray<string>) =>
  execFileSync(command, args, { cwd: copy, stdio: "inherit", env: { ...process.env, CI: "1" } })

try {
  const files = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" }).split("\0").filter(Boolean)
  for (const file of files) {
    if (file === "package-lock.json") continue
    mkdirSync(dirname(join(copy, file)), { recursive: true })
    copyFileSync(join(root, file), join(copy, file))
  }
  const manifest = JSON.parse(readFileSync(join(copy, "package.json"), "utf8")) as {
    devDependencies: Record<string, string>
    peerDependencies: Record<string, string>
  }
  for (const [name, range] of Object.entries(manifest.peerDependencies)) manifest.devDependencies[name] = range
  writeFileSync(join(copy, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`)
  process.stdout.write(`newest versions, in ${copy}\n`)
  run("npm", ["install", "--no-audit", "--no-fund"])
  process.stdout.write("resolved:\n")
  for (const name of WATCHED) {
    const version = (JSON.parse(
      readFileSync(join(copy, "node_modules", name, "package.json"), "utf8")
    ) as { readonly version: string }).version
    process.stdout.write(`  ${name} ${version}\n`)
  }
  run("npm", ["ls", "effect"])
  run("npm", ["run", "typecheck"])
  run("npm", ["run", "lint"])
  run("npx", ["vitest", "run", "--project", "unit", "--project", "drivers"])
} finally {
  rmSync(copy, { recursive: true, force: true })
}
