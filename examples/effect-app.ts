/**
 * An Effect application that composes the storage layers itself: the agent
 * runs through a saver over the application's `CheckpointStorage`, errors are
 * typed, and the history is a `Stream`. With DATABASE_URL set, the same
 * program runs on PostgreSQL. `npm run example:effect-app`
 */
import { Effect, Stream } from "effect"
import { CheckpointStorage, EffectCheckpointSaver } from "../src/index.ts"
import { buildAgent, say, text } from "./agent/graph.ts"
import { StorageLive } from "./agent/storage.ts"

const program = Effect.gen(function*() {
  const storage = yield* CheckpointStorage.CheckpointStorage
  const agent = buildAgent(yield* EffectCheckpointSaver.make)
  const thread_id = `effect-app-${Date.now()}`

  for (const message of ["Hi, I'm Ada.", "One more turn."]) {
    const state = yield* Effect.promise(() => agent.invoke(say(message), { configurable: { thread_id } }))
    yield* Effect.log(`agent: ${text(state.messages.at(-1))}`)
  }

  // The thread's history as a Stream, straight from the storage service.
  const steps = yield* storage.list({ thread_id }).pipe(
    Stream.map((tuple) => `${tuple.metadata?.step}:${tuple.metadata?.source}`),
    Stream.runCollect
  )
  yield* Effect.log(`history: ${Array.from(steps).join(" ")}`)

  // Bad input is a typed error, handled like any other.
  const missing = yield* storage.getTuple({ thread_id: "" }).pipe(
    Effect.as("found"),
    Effect.catchTag("InvalidConfig", (error) => Effect.succeed(`InvalidConfig: ${error.message}`))
  )
  yield* Effect.log(missing)
})

Effect.runPromise(program.pipe(Effect.provide(StorageLive))).catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
