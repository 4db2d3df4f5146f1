/**
 * A PGlite owner killed with SIGKILL mid-step, 30 times over on one
 * directory: every checkpoint any of them acknowledged is there when the
 * next one opens it. The owner answers its latest reads from what it wrote
 * (`sql/decorators/LatestTuples`), but acknowledges only what committed, and each
 * restart reads what the last one left.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, expect, it } from "vitest"
import { acks, type Lines, missing, moreAcks, pgliteChild, stored } from "../support/children.ts"

const started: Array<Lines> = []
let dataDir = ""

afterAll(async () => {
  for (const app of started) if (app.child.exitCode === null) app.child.kill("SIGKILL")
  if (dataDir !== "") await rm(dataDir, { recursive: true, force: true })
})

it("30 owners killed mid-step lose nothing they acknowledged", async () => {
  dataDir = await mkdtemp(join(tmpdir(), "lce-kills-"))
  const acknowledged: Array<string> = []
  for (let round = 0; round < 30; round++) {
    const app = pgliteChild("app", dataDir)
    started.push(app)
    await app.take((line) => line.startsWith("ready "), 120_000)
    await moreAcks(app, 0, 2 + (round % 3))
    // Anywhere in a step: the app's turns are ~20 ms apart.
    await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 25)))
    app.child.kill("SIGKILL")
    expect(await app.exited).toMatchObject({ signal: "SIGKILL" })
    acknowledged.push(...acks(app))
  }
  expect(acknowledged.length).toBeGreaterThanOrEqual(60)
  expect(missing(acknowledged, await stored(dataDir))).toEqual([])
}, 900_000)
