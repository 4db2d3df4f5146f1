/**
 * `npm run test:cockroach`: everything the CockroachDB dialect must pass —
 * the validation suite, graph scenarios, storage and lifecycle scenarios,
 * parent links that loop, concurrent migrations, real serialization
 * conflicts, the contract kit, thread expiry, structural sharing, encryption
 * at rest and parity with LangGraph's
 * `MemorySaver` — on the cluster in COCKROACH_URL, or
 * without one on PostgreSQL in SERIALIZABLE mode through the same
 * `cockroachdb://` code path. The first line says which.
 */
import { spawnSync } from "node:child_process"
import { join } from "node:path"

const cluster = process.env.COCKROACH_URL
const where = (url: string) => {
  const parsed = URL.canParse(url) ? new URL(url) : undefined
  return parsed === undefined ? "(an unparsable URL)" : `${parsed.hostname}:${parsed.port || 26257}${parsed.pathname}`
}
console.log(
  cluster === undefined || cluster === ""
    ? "test:cockroach: no COCKROACH_URL, so the CockroachDB suites run on PostgreSQL in SERIALIZABLE mode " +
      "(the stand-in); set COCKROACH_URL=cockroachdb://… to run them on a cluster"
    : `test:cockroach: the CockroachDB suites run on the cluster at ${where(cluster)} (COCKROACH_URL)`
)

const vitest = join(import.meta.dirname, "../node_modules/vitest/vitest.mjs")
// Only the tests of the CockroachDB dialect, among the suites over the drivers: every such suite names it.
const run = spawnSync(
  process.execPath,
  [vitest, "run", "--project", "drivers", "-t", "[Cc]ockroach", ...process.argv.slice(2)],
  { stdio: "inherit" }
)
process.exitCode = run.status ?? 1
