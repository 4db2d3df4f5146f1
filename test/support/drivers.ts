/**
 * The driver list the suites over the drivers run on — memory, PGlite,
 * PostgreSQL and the CockroachDB dialect (a cluster, or its stand-in, see
 * `cockroach.ts`) — and the one way to empty each one's storage.
 *
 * A test file calls `drivers(prefix)` once: each driver then keeps one store
 * for the file (a memory driver, a PGlite instance, a database of the test
 * server, a schema on the cluster), which every layer and saver of that
 * driver opens, and which goes after the file.
 */
import { PGlite } from "@electric-sql/pglite"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll } from "vitest"
import { admin, createDatabase } from "../../harness/databases.ts"
import * as Cockroach from "../../src/cockroach.ts"
import {
  CheckpointStorage,
  EffectCheckpointSaver,
  MemoryDriver,
  type SaverOptions,
  type StorageDriver
} from "../../src/index.ts"
import * as Tables from "../../src/internal/sql/Tables.ts"
import * as Pglite from "../../src/pglite.ts"
import * as Postgres from "../../src/postgres.ts"
import { cockroachSuite } from "./cockroach.ts"

export type DriverName = "memory" | "pglite" | "postgres" | "cockroach dialect"

type StorageLayer = Layer.Layer<CheckpointStorage.CheckpointStorage, unknown>

export interface Driver {
  readonly name: DriverName
  /** A storage over the file's store of this driver; `poolSize` counts for the server drivers (default 4). */
  readonly layer: (options?: { readonly poolSize?: number }) => StorageLayer
  /** A saver over `layer`. */
  readonly saver: (options?: SaverOptions, poolSize?: number) => EffectCheckpointSaver
  /** Empties the store: no thread, checkpoint, blob, write or piece is left. Close its savers first. */
  readonly clear: () => Promise<void>
}

/**
 * Every table of the storage format that holds a thread's data (not the
 * migrations), children first: what a thread owns, named once.
 */
const threadTables = (schema?: string) => {
  const tables = Tables.make(schema)
  return [tables.writes, tables.blobs, tables.pieces, tables.checkpoints, tables.threads]
}

/** The statements that empty the storage in `schema`. */
export const clearStatements = (schema?: string) =>
  threadTables(schema).map((table) => `DELETE FROM ${table};`).join(" ")

/** Empties the storage at the `postgres://` `url` (in `schema`, default `public`). */
export const clearDatabase = (url: string, schema?: string) =>
  admin((client) => client.query(clearStatements(schema)), url).then(() => undefined)

/** Runs `make` once, on first use. */
const once = <A>(make: () => Promise<A>) => {
  let made: Promise<A> | undefined
  return { get: () => made ??= make(), made: () => made }
}

/** The four drivers for one test file, each over a store of the file's own. */
export const drivers = (prefix: string) => {
  let database: Awaited<ReturnType<typeof createDatabase>> | undefined
  const databaseUrl = () => {
    if (database === undefined) throw new Error("the file's database is there from its beforeAll on")
    return database.url
  }
  const crdb = cockroachSuite(prefix, databaseUrl)
  const pgliteInstance = once(() => PGlite.create())
  let memory = MemoryDriver.make()
  /** Whether a layer of the driver was opened (there is nothing to empty before). */
  const opened = { postgres: false, cockroach: false }

  beforeAll(async () => {
    database = await createDatabase(prefix)
  })
  afterAll(async () => {
    await pgliteInstance.made()?.then((pglite) => pglite.close())
    if (database !== undefined) await crdb.drop()
    await database?.drop()
  })

  const driver = (name: DriverName, layer: Driver["layer"], clear: Driver["clear"]): Driver => ({
    name,
    layer,
    saver: (saverOptions, poolSize) =>
      EffectCheckpointSaver.fromLayer(layer({ poolSize: poolSize ?? 4 }), saverOptions),
    clear
  })

  const all = [
    driver(
      "memory",
      () => CheckpointStorage.layerDriver(Effect.sync(() => memory)),
      async () => {
        memory = MemoryDriver.make()
      }
    ),
    driver(
      "pglite",
      () => Layer.unwrap(Effect.promise(pgliteInstance.get).pipe(Effect.map((pglite) => Pglite.layer({ pglite })))),
      async () => {
        await pgliteInstance.made()?.then((pglite) => pglite.exec(clearStatements()))
      }
    ),
    driver(
      "postgres",
      (layerOptions) =>
        Layer.unwrap(Effect.sync(() => {
          opened.postgres = true
          return Postgres.layer({ url: databaseUrl(), poolSize: layerOptions?.poolSize ?? 4 })
        })),
      async () => {
        if (opened.postgres) await clearDatabase(databaseUrl())
      }
    ),
    driver(
      "cockroach dialect",
      (layerOptions) =>
        Layer.unwrap(Effect.sync(() => {
          opened.cockroach = true
          return crdb.layer({ poolSize: layerOptions?.poolSize ?? 4 })
        })),
      async () => {
        if (opened.cockroach) await clearDatabase(Cockroach.toWireUrl(crdb.url()), crdb.schema)
      }
    )
  ] as const
  const [memoryDriver, pglite, postgres, cockroach] = all

  return {
    all,
    memory: memoryDriver,
    pglite,
    postgres,
    cockroach,
    /** The file's PostgreSQL database (the stand-in's too): there from the file's beforeAll on. */
    databaseUrl,
    /** The file's PGlite instance, made on first use. */
    pgliteInstance: pgliteInstance.get,
    /** The file's place on the CockroachDB cluster, or on its stand-in. */
    crdb,
    /** The memory driver behind `memory` now (a new one after each `clear`). */
    memoryDriver: (): StorageDriver.StorageDriver => memory
  }
}
