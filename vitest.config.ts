/**
 * The tests in three tiers, each a vitest project:
 *
 * - `unit`: pure functions and the memory driver's neighbours; no server, no
 *   child process, nothing to start (`npm run test:unit`, `npm run test:watch`).
 * - `drivers`: the suites over the driver list of `test/support/drivers.ts`
 *   (memory, PGlite, PostgreSQL, the CockroachDB dialect).
 * - `e2e`: the CLI, the web page, the packed package, the examples, TLS,
 *   the topology behind PgBouncer and the 100,000-thread runs: child
 *   processes and servers of their own (`npm run test:e2e`).
 *
 * `npm test` runs these three. A fourth, `long`, holds the runs that take
 * minutes (`npm run test:long`: the PgBouncer kill loop, 20 runs a mode;
 * agent-chat-ui from the npm registry, driven in Chromium).
 * Only `drivers`, `e2e` and `long` start the PostgreSQL server
 * (`harness/postgresServer.ts`), once for the run.
 */
import { defineConfig } from "vitest/config"

const postgres = ["harness/postgresServer.ts"]

export default defineConfig({
  test: {
    // The official validation suite registers its specs with global describe/it.
    globals: true,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: "unit", include: ["test/unit/**/*.test.ts"] } },
      { extends: true, test: { name: "drivers", include: ["test/drivers/**/*.test.ts"], globalSetup: postgres } },
      { extends: true, test: { name: "e2e", include: ["test/e2e/**/*.test.ts"], globalSetup: postgres } },
      { extends: true, test: { name: "long", include: ["test/long/**/*.test.ts"], globalSetup: postgres } }
    ]
  }
})
