import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    // The official validation suite registers its specs with global describe/it.
    globals: true,
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/postgresServer.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
