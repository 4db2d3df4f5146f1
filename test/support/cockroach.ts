/**
 * Where the CockroachDB dialect's tests run. With `COCKROACH_URL`, on that
 * cluster (or on a PostgreSQL server in SERIALIZABLE mode given as one);
 * without, on the test server through the `cockroachdb://` path, as a role
 * whose every statement runs SERIALIZABLE by the server's own default, as
 * CockroachDB's do (`cockroachRole`: no startup parameter, so it holds behind
 * a pooler too). Each suite works in a schema of its own, so suites running
 * at once never meet on a shared cluster, and drops it.
 */
import { admin } from "../../harness/databases.ts"
import { cockroachRole } from "../../harness/postgresServer.ts"
import * as Cockroach from "../../src/cockroach.ts"

/** The cluster in `COCKROACH_URL`, if any. */
export const cluster: string | undefined = process.env.COCKROACH_URL || undefined

/** A database of the test server as the stand-in reaches it: `cockroachdb://`, as the SERIALIZABLE role. */
export const standIn = (url: string): string => {
  const parsed = new URL(url)
  parsed.username = cockroachRole
  return parsed.toString().replace(/^postgres(ql)?:\/\//, "cockroachdb://")
}

/**
 * A suite's place on the cluster: its URL (`localUrl`, a database on the test
 * server, stands in without a cluster) and a schema of its own.
 */
export const cockroachSuite = (prefix: string, localUrl: () => string) => {
  const schema = `crdb_${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  const url = () => cluster ?? standIn(localUrl())
  return {
    schema,
    url,
    layer: (options: Omit<Cockroach.CockroachOptions, "url" | "schema"> = {}) =>
      Cockroach.layer({ ...options, url: url(), schema }),
    /** Runs statements on the cluster with the suite's schema first on the search path. */
    admin: <A>(f: Parameters<typeof admin<A>>[0]) =>
      admin(async (client) => {
        await client.query(`SET search_path TO "${schema}"`)
        return f(client)
      }, Cockroach.toWireUrl(url())),
    drop: () => admin((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`), Cockroach.toWireUrl(url()))
  }
}
