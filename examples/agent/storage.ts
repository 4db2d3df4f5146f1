/**
 * The storage the Effect examples run on: PostgreSQL when DATABASE_URL is
 * set, otherwise the embedded PGlite in memory.
 */
import { Config, Effect, Layer } from "effect"
import * as Pglite from "../../src/pglite.ts"
import * as Postgres from "../../src/postgres.ts"

export const StorageLive = Layer.unwrap(
  Config.option(Config.String("DATABASE_URL")).pipe(
    Effect.map((url) => url._tag === "Some" ? Postgres.layerConfig() : Pglite.layer())
  )
)
