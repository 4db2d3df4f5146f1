/**
 * Every storage format level stays readable, as SQLite keeps its file
 * format: each fixture under `test/fixtures/formats/` (written once, by the
 * release that introduced its level: a `pg_dump` of its database, its export
 * of the threads, and what it read of them) is loaded into every driver — the
 * dump into PostgreSQL, PGlite and the CockroachDB dialect's schema, the
 * export into memory — and this release must read exactly what that release
 * read: every tuple of `list`, each namespace's latest, and the delta
 * histories. Then the store stays at the level its release left it until it
 * is raised, its threads continue, and after the raise read the same.
 */
import { HumanMessage } from "@langchain/core/messages"
import { Effect, ManagedRuntime, Stream } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { admin } from "../../harness/databases.ts"
import { chatGraph } from "../../harness/inspectedGraph.ts"
import { LEVELS, NEWEST_LEVEL } from "../../src/FormatLevel.ts"
import { CheckpointStorage, type EffectCheckpointSaver, ExportFormat, type SaverOptions } from "../../src/index.ts"
import { type FixtureThread, observe } from "../fixtures/formats/observe.ts"
import { type Driver, drivers } from "../support/drivers.ts"

const root = join(import.meta.dirname, "..", "fixtures", "formats")

/** A fixture: what its release wrote and read. */
interface Fixture {
  readonly name: string
  readonly level: number
  readonly release: string
  readonly key: { readonly id: string; readonly key: string }
  readonly threads: ReadonlyArray<FixtureThread>
  readonly dump: string
  readonly lines: ReadonlyArray<string>
  readonly observations: Record<string, unknown>
}

export const fixtures: ReadonlyArray<Fixture> = readdirSync(root, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => {
    const read = (file: string) => readFileSync(join(root, entry.name, file), "utf8")
    const meta = JSON.parse(read("fixture.json")) as Omit<Fixture, "name" | "dump" | "lines" | "observations">
    return {
      ...meta,
      name: entry.name,
      dump: read("dump.sql"),
      lines: read("export.jsonl").split("\n").filter((line) => line !== ""),
      observations: JSON.parse(read("observations.json")) as Record<string, unknown>
    }
  })
  .sort((a, b) => a.level - b.level)

const matrix = drivers("formats")

/** The dump's statements for the schema `schema` (its tables replaced, the schema itself kept). */
const dumpFor = (dump: string, schema: string) =>
  dump.replace(/^CREATE SCHEMA public;$/m, "").replaceAll(/\bpublic\.(checkpoint\w*)/g, `"${schema}".$1`)

/** Empties the driver's store to nothing (no table either), then loads the fixture into it. */
const load = async (driver: Driver, fixture: Fixture) => {
  const fresh = (schema: string) => `DROP SCHEMA IF EXISTS "${schema}" CASCADE; CREATE SCHEMA "${schema}";`
  switch (driver.name) {
    case "memory": {
      await driver.clear()
      const runtime = ManagedRuntime.make(driver.layer())
      await runtime.runPromise(
        CheckpointStorage.CheckpointStorage.use((storage) =>
          Stream.runForEach(
            ExportFormat.decode(Stream.fromIterable(fixture.lines)),
            (rows) => storage.importThread(rows)
          )
        )
      )
      await runtime.dispose()
      return
    }
    case "pglite": {
      const pglite = await matrix.pgliteInstance()
      await pglite.exec(fresh("public") + dumpFor(fixture.dump, "public"))
      return
    }
    case "postgres":
      return admin((client) => client.query(fresh("public") + dumpFor(fixture.dump, "public")), matrix.databaseUrl())
    case "cockroach dialect":
      return matrix.crdb.admin((client) =>
        client.query(fresh(matrix.crdb.schema) + dumpFor(fixture.dump, matrix.crdb.schema))
      )
  }
}

/** What this release reads of the fixture's threads through `driver`. */
const observed = async (driver: Driver, fixture: Fixture) => {
  const sealed: SaverOptions = { encryption: { keys: { [fixture.key.id]: fixture.key.key }, primary: fixture.key.id } }
  const plain = driver.saver()
  const encrypted = driver.saver(sealed)
  try {
    return {
      ...(await observe(plain, fixture.threads.filter((thread) => thread.sealed !== true))),
      ...(await observe(encrypted, fixture.threads.filter((thread) => thread.sealed === true)))
    }
  } finally {
    await Promise.all([plain.close(), encrypted.close()])
  }
}

const messageCount = async (saver: EffectCheckpointSaver, thread_id: string) => {
  const tuple = await saver.getTuple({ configurable: { thread_id } })
  return (tuple?.checkpoint.channel_values.messages as Array<unknown> | undefined)?.length ?? 0
}

describe.each(matrix.all.map((driver) => [driver.name, driver] as const))("format fixtures on %s", (name, driver) => {
  for (const fixture of fixtures) {
    it(
      `${fixture.name} (written by ${fixture.release}) reads back exactly; continues; then raised, reads the same`,
      async () => {
        await load(driver, fixture)
        expect(await observed(driver, fixture)).toEqual(fixture.observations)

        const saver = driver.saver()
        try {
          // A store this release did not create stays where its release left it (memory stores are new):
          // the releases of levels 1 and 2 wrote theirs before levels were recorded, so at level 1.
          const level = name === "memory" ? NEWEST_LEVEL : fixture.level <= 2 ? 1 : fixture.level
          expect((await saver.formatLevel()).level).toBe(level)
          const before = await messageCount(saver, "chat")
          await chatGraph(saver).invoke({ messages: [new HumanMessage("after the upgrade")] }, {
            configurable: { thread_id: "chat" }
          })
          expect(await messageCount(saver, "chat")).toBe(before + 2)
          expect(await saver.upgradeFormat()).toMatchObject({ level: NEWEST_LEVEL, supported: NEWEST_LEVEL })
          expect(await saver.upgradeFormat()).toMatchObject({ level: NEWEST_LEVEL })
        } finally {
          await saver.close()
        }
        const { chat: _continued, ...untouched } = fixture.observations
        const { chat: _chat, ...after } = await observed(driver, fixture)
        expect(after).toEqual(untouched)
      },
      120_000
    )
  }
})

it("the fixtures cover every level, each holding the encodings its level adds", async () => {
  const { encodingsOf } = await import("../../src/FormatLevel.ts")
  expect(fixtures.map((fixture) => fixture.level)).toEqual(LEVELS.map((level) => level.level))
  for (const level of LEVELS) {
    const fixture = fixtures.find((candidate) => candidate.level === level.level)!
    const threads = await Effect.runPromise(Stream.runCollect(ExportFormat.decode(Stream.fromIterable(fixture.lines))))
    const held = new Set(threads.flatMap((rows) => [...encodingsOf(rows)]))
    for (const encoding of level.encodings.filter((encoding) => !encoding.startsWith("sealed frame"))) {
      expect(held, `${fixture.name} holds ${encoding}`).toContain(encoding)
    }
  }
})
