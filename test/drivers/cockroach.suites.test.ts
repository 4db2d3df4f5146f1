/**
 * Writers conflicting for real under SERIALIZABLE on the CockroachDB dialect:
 * on the cluster in COCKROACH_URL, or on PostgreSQL in SERIALIZABLE mode
 * without one (see `support/cockroach.ts`). LangGraph's validation suite and
 * the graph scenarios run on it with every other driver (`validation.test.ts`,
 * `graphs.test.ts`).
 */
import { it } from "@effect/vitest"
import { describe } from "vitest"
import { conflictingWriters } from "../scenarios/conflicts.ts"
import { drivers } from "../support/drivers.ts"

const { cockroach } = drivers("suites")

describe("real conflicts on the cockroach dialect", () => {
  it.live(
    "SERIALIZABLE writers on the same threads conflict for real, and every operation commits",
    () => conflictingWriters(cockroach.layer({ poolSize: 8 })),
    60_000
  )
})
