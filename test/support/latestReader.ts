/**
 * Another process's view of a PGlite directory another holds, for
 * `test/drivers/latest.test.ts`: run with
 * `node test/support/latestReader.ts <dir> <locations as JSON> [saver options as JSON]`,
 * it takes a snapshot of the directory from its owner, opens it, and prints one line:
 * the latest tuple of each location (`{ thread_id, checkpoint_ns }`), as
 * JSON, `null` where there is none.
 */
import { Effect } from "effect"
import { EffectCheckpointSaver, type SaverOptions } from "../../src/index.ts"
import * as Pglite from "../../src/pglite.ts"

const [dir, locations, options = "{}"] = process.argv.slice(2) as [string, string, string?]
const snapshot = await Effect.runPromise(Pglite.snapshot(dir))
const saver = EffectCheckpointSaver.fromLayer(Pglite.layer({ snapshot }), JSON.parse(options) as SaverOptions)
try {
  const tuples = []
  for (const configurable of JSON.parse(locations) as ReadonlyArray<object>) {
    tuples.push((await saver.getTuple({ configurable })) ?? null)
  }
  process.stdout.write(`${JSON.stringify(tuples)}\n`)
} finally {
  await saver.close()
}
