/**
 * Every statement the SQL driver runs, built once per set of tables, each
 * with the parameters it takes and what its rows mean. A statement's text
 * names its parameters and numbers them itself, so nobody counts `$1…$24`;
 * values are encoded for the database here (JSON as text, `jsonb` through
 * `Jsonb`, "" and -1 for none inside arrays).
 *
 * Every statement is written in the subset PostgreSQL, PGlite and
 * CockroachDB all accept (see `Dialect`). The wide reads' `SELECT` lists and
 * decoders are in `Projection`.
 *
 * The catalogue is assembled here from its parts, one per concern, in
 * `statements/`: the writes of a run (`Writes`), the reads of checkpoints
 * (`Reads`), the statements on whole threads (`Lifecycle`), thread
 * records (`Records`) and crons (`Crons`); the builder is `statements/Statement`.
 *
 * @since 0.1.0
 */
import type { Dialect } from "../../SqlOptions.ts"
import { locksRows } from "./Dialect.ts"
import { crons } from "./statements/Crons.ts"
import { lifecycle } from "./statements/Lifecycle.ts"
import { reads } from "./statements/Reads.ts"
import { records } from "./statements/Records.ts"
import { writes } from "./statements/Writes.ts"
import type { Tables } from "./Tables.ts"

export { type SearchVariant, searchVariant } from "./statements/Records.ts"
export { type Statement, statement } from "./statements/Statement.ts"

/**
 * Every statement the driver runs, built once per set of tables.
 *
 * @since 0.1.0
 */
export const statements = (t: Tables, dialect: Dialect = "postgres") => ({
  ...writes(t, locksRows(dialect)),
  ...reads(t),
  ...lifecycle(t),
  ...records(t),
  ...crons(t)
})

/**
 * The statements of one set of tables.
 *
 * @since 0.1.0
 */
export type Statements = ReturnType<typeof statements>
