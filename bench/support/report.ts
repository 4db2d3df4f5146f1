/**
 * What every entry point's report is made of: where results go
 * (bench/results/), the run's date, the commit and the package versions it
 * ran, and the write itself.
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { cpus } from "node:os"
import { dirname, isAbsolute, join, relative } from "node:path"

/** The repository's root. */
export const root = join(import.meta.dirname, "..", "..")

/** bench/results/: the reports (`*.md`), the soak's verdict (`soak.json`) and the CPU profiles (`profiles/`). */
export const results = join(root, "bench", "results")

/** A file under bench/results/. */
export const resultPath = (...names: ReadonlyArray<string>) => join(results, ...names)

/** The day of the run, as a report dates it (YYYY-MM-DD). */
export const runDate = () => new Date().toISOString().slice(0, 10)

/** How a report opens: the command and its file, the day, the cores and the Node that ran it. */
export const ranBy = (command: string, file: string) =>
  `\`${command}\` (${file}), ${runDate()}, ${cpus().length} cores, Node ${process.version}`

/** The short commit checked out in `checkout` (default this repository), or "unknown" outside a git checkout. */
export const commitOf = (checkout = root) => {
  try {
    return execFileSync("git", ["-C", checkout, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim()
  } catch {
    return "unknown"
  }
}

/** The version of `name` installed in this repository's node_modules. */
export const packageVersion = (name: string) =>
  (JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8")) as { version: string }).version

/**
 * Writes a report to `path` (a name under bench/results/, or an absolute
 * path an option chose); answers the path relative to the repository, for
 * the line that says so.
 */
export const writeResult = (path: string, report: string | ReadonlyArray<string>): string => {
  const file = isAbsolute(path) ? path : resultPath(path)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, typeof report === "string" ? report : report.join("\n"))
  return relative(root, file)
}
