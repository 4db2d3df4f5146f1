/**
 * What differs between the databases the SQL driver serves, in one place.
 * Every other statement is written in the subset PostgreSQL, PGlite and
 * CockroachDB all accept (one-dimensional arrays, no advisory locks, no
 * `CREATE INDEX CONCURRENTLY`); `test/drivers/cockroach.test.ts` checks every statement
 * sent against what CockroachDB rejects.
 *
 * @since 0.1.0
 */
import type { Dialect } from "../../SqlOptions.ts"
import type { Tables } from "./Tables.ts"

/**
 * Whether statements lock the rows they rely on (a thread's row, a parent,
 * the blobs a list extends) against concurrent deletes: not on PGlite, one
 * session in which statements run one after another and no other can, where
 * a lock is a write (a WAL record, a dirtied page) that protects nothing.
 *
 * @since 0.2.0
 */
export const locksRows = (dialect: Dialect): boolean => dialect !== "pglite"

/**
 * How concurrent migrators wait for each other.
 *
 * PostgreSQL takes a transaction-level advisory lock. CockroachDB's advisory
 * lock functions were stubs that succeeded without locking, so there the
 * migration transaction locks a row of a table of its own.
 *
 * @since 0.1.0
 */
export const migrationLock = (dialect: Dialect, tables: Tables) =>
  dialect === "cockroach"
    ? {
      setup: [
        `CREATE TABLE IF NOT EXISTS ${tables.migrationLock} (id INT PRIMARY KEY)`,
        `INSERT INTO ${tables.migrationLock} (id) VALUES (1) ON CONFLICT (id) DO NOTHING`
      ],
      acquire: `SELECT id FROM ${tables.migrationLock} WHERE id = 1 FOR UPDATE`
    }
    : {
      setup: [],
      // An arbitrary, fixed key shared by every process migrating these tables.
      acquire: `SELECT pg_advisory_xact_lock(7336201950018722)`
    }
