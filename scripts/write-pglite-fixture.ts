/**
 * Writes the PGlite directory fixture (see test/fixtures/pglite/README.md):
 * a PGlite data directory of an older engine, as a release that ran on it
 * left it, for the test of `langgraph-checkpoints upgrade-pglite`.
 *
 * The level-2 format fixture's rows are loaded into a fresh directory of
 * that engine, then this checkout's library opens it (bringing its schema
 * up to date, as any release would on opening it) and gives two threads a
 * record, so the directory holds what a user's would: checkpoints of every
 * kind (a pending interrupt, sealed threads, DeltaValue channels), thread
 * records, and a storage format level below the newest. What this checkout
 * reads of its threads must be what the source fixture recorded (checked
 * here); its records are kept beside it (`records.json`).
 *
 *   node scripts/write-pglite-fixture.ts --pglite pglite-0.5 --out test/fixtures/pglite/0.5
 *
 * Written once per engine the library leaves behind, never again.
 */
import type * as PgliteModule from "@electric-sql/pglite"
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { parseArgs } from "node:util"
import { brotliCompressSync, constants } from "node:zlib"
import { EffectCheckpointSaver } from "../src/index.ts"
import * as Pglite from "../src/pglite.ts"
import { type FixtureThread, observe } from "../test/fixtures/formats/observe.ts"

const { values } = parseArgs({
  options: {
    pglite: { type: "string", default: "pglite-0.5" },
    out: { type: "string" },
    source: { type: "string", default: "test/fixtures/formats/level-2" }
  }
})
if (values.out === undefined) {
  throw new Error("usage: --out <directory> [--pglite <module>] [--source <format fixture>]")
}
const out = resolve(values.out)

/** The engine the directory is written with: a module exporting PGlite (an alias of an older release). */
const engine = await import(values.pglite) as typeof PgliteModule
const engineVersion = (JSON.parse(
  readFileSync(join(resolve("node_modules", values.pglite), "package.json"), "utf8")
) as { readonly version: string }).version

/** The threads given a record, and their metadata. */
const RECORDS = {
  chat: { title: "The chat", owner: "fixture" },
  approval: { title: "Waiting for approval", graph_id: "approval" }
}

const work = mkdtempSync(join(tmpdir(), "lce-pglite-fixture-"))
const dataDir = join(work, "data")
try {
  const pglite = await engine.PGlite.create({ dataDir })
  const dump = readFileSync(join(values.source, "dump.sql"), "utf8").replace(/^CREATE SCHEMA public;$/m, "")
  await pglite.exec(`${dump}\nSELECT pg_catalog.set_config('search_path', 'public', false);`)
  const saver = EffectCheckpointSaver.fromLayer(Pglite.layer({ pglite }))
  for (const [thread_id, metadata] of Object.entries(RECORDS)) {
    await saver.setThread(thread_id, { kind: "put", metadata })
  }
  const level = (await saver.formatLevel()).level
  const source = JSON.parse(readFileSync(join(values.source, "fixture.json"), "utf8")) as {
    readonly key: { readonly id: string; readonly key: string }
    readonly threads: ReadonlyArray<FixtureThread>
  }
  const sealed = EffectCheckpointSaver.fromLayer(Pglite.layer({ pglite }), {
    encryption: { keys: { [source.key.id]: source.key.key }, primary: source.key.id }
  })
  const observations = {
    ...(await observe(saver, source.threads.filter((thread) => thread.sealed !== true))),
    ...(await observe(sealed, source.threads.filter((thread) => thread.sealed === true)))
  }
  const records = Object.fromEntries(
    await Promise.all(
      source.threads.map(async ({ thread_id }) => [thread_id, await saver.getThread(thread_id)] as const)
    )
  )
  await sealed.close()
  await saver.close()
  await pglite.close()

  mkdirSync(out, { recursive: true })
  const tar = execFileSync("tar", ["-c", "-C", dataDir, "."], { maxBuffer: 1 << 30 })
  writeFileSync(
    join(out, "datadir.tar.br"),
    brotliCompressSync(tar, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_LGWIN]: 24 } })
  )
  const recorded = readFileSync(join(values.source, "observations.json"), "utf8")
  if (JSON.stringify(observations) !== JSON.stringify(JSON.parse(recorded))) {
    throw new Error(`this checkout does not read the threads as ${values.source}/observations.json recorded`)
  }
  writeFileSync(join(out, "records.json"), `${JSON.stringify(records, null, 2)}\n`)
  const release = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim()
  writeFileSync(
    join(out, "fixture.json"),
    `${
      JSON.stringify(
        {
          pglite: engineVersion,
          postgres: readFileSync(join(dataDir, "PG_VERSION"), "utf8").trim(),
          written_by: release,
          written_at: new Date().toISOString(),
          source: values.source,
          level,
          records: RECORDS
        },
        null,
        2
      )
    }\n`
  )
  process.stdout.write(`wrote ${out}: PGlite ${engineVersion}, level ${level}\n`)
} finally {
  rmSync(work, { recursive: true, force: true })
}
