/**
 * `npm run bench`: EffectCheckpointSaver against the official
 * @langchain/langgraph-checkpoint-postgres saver on the same PostgreSQL, in
 * the same process, interleaved, with LangGraph's MemorySaver as the
 * in-process reference and plain INSERTs of the same bytes as the floors
 * (taking their turns among the savers); and this library on PGlite
 * against SqliteSaver. Each write's CPU (this process's, apart from the
 * database's) is measured beside its latency. Writes
 * bench/results/RESULTS.md, whose first table holds the goals' verdicts
 * (bench/support/goals.ts; the soak's from bench/results/soak.json, which
 * `npm run soak` writes); prints that table too.
 *
 * One case a file in bench/savers/, run here in this order; what they share
 * (the subjects, the rows they report into) in bench/savers/context.ts; the
 * workload (messages, a chat thread's calls) in bench/support/workload.mjs,
 * shared with the SQLite child.
 *
 * Uses DATABASE_URL, or starts a throwaway server. `BENCH_SCALE=0.1` runs a
 * smaller version of every case.
 */
import { chatThread } from "./savers/chatThread.ts"
import { concurrent } from "./savers/concurrent.ts"
import { makeRun } from "./savers/context.ts"
import { deltaChannel } from "./savers/deltaChannel.ts"
import { embedded } from "./savers/embedded.ts"
import { encryption } from "./savers/encryption.ts"
import { getTuple } from "./savers/getTuple.ts"
import { noRegressionGoal, putCpuGoal, soakGoal } from "./savers/goals.ts"
import { invoke } from "./savers/invoke.ts"
import { lifecycle } from "./savers/lifecycle.ts"
import { longThread } from "./savers/longThread.ts"
import { renderResults } from "./savers/results.ts"
import { goalsTitle, renderGoals } from "./support/goals.ts"
import { writeResult } from "./support/report.ts"

const run = await makeRun()

// Embedded first of all, while this process's heap is nearly empty (as the SQLite child's is); the
// encryption pair early, while the process holds little (see each case).
for (
  const scenario of [
    embedded,
    encryption,
    chatThread,
    getTuple,
    lifecycle,
    longThread,
    concurrent,
    invoke,
    deltaChannel
  ]
) {
  await scenario(run)
}
putCpuGoal(run)
soakGoal(run)
noRegressionGoal(run)

const goalsTable = renderGoals(run.goals)
run.log(`wrote ${writeResult("RESULTS.md", await renderResults(run, goalsTable))}`)
console.log(`\n${goalsTitle}\n\n${goalsTable}\n`)
for (const subject of run.subjects) await subject.close()
await run.databases.dropAll()
run.server.stop()
