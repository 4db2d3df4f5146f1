/**
 * Parent links that loop, made behind the library's back, on every driver
 * (see `scenarios/loops.ts`); the prune plans' cost on a 60,000-checkpoint
 * thread, and their results against a plain reference on random forests.
 */
import { Effect, Layer, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { beforeAll } from "vitest"
import { admin } from "../../harness/databases.ts"
import * as Cockroach from "../../src/cockroach.ts"
import * as Inspector from "../../src/internal/inspector/Inspector.ts"
import * as SqlStorage from "../../src/internal/sql/SqlStorage.ts"
import * as TableOwner from "../../src/internal/sql/TableOwner.ts"
import * as Tables from "../../src/internal/sql/Tables.ts"
import * as Pglite from "../../src/pglite.ts"
import * as Postgres from "../../src/postgres.ts"
import type { Dialect } from "../../src/SqlOptions.ts"
import { loopScenarios, type Subject } from "../scenarios/loops.ts"
import { drivers } from "../support/drivers.ts"

const matrix = drivers("loops")
beforeAll(async () => {
  // Should a walk ever run away again, the server stops it rather than growing without end.
  await admin((client) =>
    client.query(`ALTER DATABASE "${new URL(matrix.databaseUrl()).pathname.slice(1)}" SET statement_timeout = '5s'`)
  )
})

/** The storage and the inspector over one SQL client; links changed with plain SQL on that client. */
const sqlSubject = async (
  client: Layer.Layer<SqlClient.SqlClient, unknown>,
  dialect: Dialect,
  schema?: string
): Promise<Subject> => {
  const storage = SqlStorage.layer({ dialect, schema })
  const inspector = Layer.unwrap(
    TableOwner.resolve({ dialect, schema, readOnly: true }).pipe(
      Effect.map((tables) => Inspector.layer(tables, dialect))
    )
  )
  const runtime = ManagedRuntime.make(inspector.pipe(Layer.provideMerge(storage), Layer.provideMerge(client)))
  await runtime.context()
  const checkpoints = Tables.make(schema).checkpoints
  return {
    runtime,
    inspect: (f) => runtime.runPromise(Inspector.Inspector.use(f)),
    setParent: ({ checkpoint_id, checkpoint_ns, thread_id }, parent) =>
      runtime.runPromise(SqlClient.SqlClient.use((sql) =>
        sql.unsafe(
          `UPDATE ${checkpoints} SET parent_checkpoint_id = $1 WHERE thread_id = $2 AND checkpoint_ns = $3 AND checkpoint_id = $4`,
          [parent, thread_id, checkpoint_ns, checkpoint_id]
        )
      )).then(() => undefined),
    close: () => runtime.dispose()
  }
}

loopScenarios("memory", async () => {
  const driver = matrix.memoryDriver()
  const runtime = ManagedRuntime.make(matrix.memory.layer())
  return {
    runtime,
    inspect: undefined,
    setParent: ({ checkpoint_id, checkpoint_ns, thread_id }, parent) =>
      Effect.runPromise(driver.setParents(thread_id, [{ checkpoint_ns, checkpoint_id, parent_checkpoint_id: parent }])),
    close: () => runtime.dispose()
  }
})
loopScenarios(
  "postgres",
  () => sqlSubject(Postgres.layerSqlClient({ url: matrix.databaseUrl(), poolSize: 2 }), "postgres")
)
loopScenarios(
  "cockroach dialect",
  () => sqlSubject(Cockroach.layerSqlClient({ url: matrix.crdb.url(), poolSize: 2 }), "cockroach", matrix.crdb.schema)
)
loopScenarios(
  "pglite",
  async () => sqlSubject(Pglite.layerSqlClient({ pglite: await matrix.pgliteInstance() }), "postgres")
)
