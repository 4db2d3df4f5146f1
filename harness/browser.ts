/**
 * A real headless browser for the web inspector's end-to-end tests:
 * Chromium from Debian (`apt-get install chromium`, which `.ci/run` does
 * when it is missing) driven by playwright-core. Without it the tests fail
 * saying so; they never skip.
 */
import { existsSync } from "node:fs"
import { type Browser, chromium } from "playwright-core"

export const CHROMIUM = "/usr/bin/chromium"

/** Chromium, headless; `args` added to its command line. */
export const launch = async (args: ReadonlyArray<string> = []): Promise<Browser> => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `The web inspector's browser tests need Chromium at ${CHROMIUM}: install it with ` +
        "`apt-get install -y chromium` (.ci/run installs it when it is missing)."
    )
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", ...args]
  })
}
