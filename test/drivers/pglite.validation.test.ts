/**
 * The official LangGraph validation suite, every spec including DeltaChannel
 * history, on the embedded PGlite driver. One PGlite database serves the
 * whole suite (creating one takes seconds); after each spec every thread is
 * deleted, through the storage's own list and deleteThread.
 */
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation"
import { Effect, Layer, ManagedRuntime, Stream } from "effect"
import { CheckpointStorage, EffectCheckpointSaver } from "../../src/index.ts"
import * as Pglite from "../../src/pglite.ts"

let shared: ManagedRuntime.ManagedRuntime<CheckpointStorage.CheckpointStorage, unknown>

const initializer = {
  checkpointerName: "EffectCheckpointSaver (pglite)",
  beforeAllTimeout: 60_000,
  beforeAll: async () => {
    shared = ManagedRuntime.make(Pglite.layer())
    await shared.context()
  },
  afterAll: () => shared.dispose(),
  createCheckpointer: async () => EffectCheckpointSaver.fromLayer(Layer.succeedContext(await shared.context())),
  destroyCheckpointer: async (saver: EffectCheckpointSaver) => {
    await saver.close()
    await shared.runPromise(CheckpointStorage.CheckpointStorage.use((storage) =>
      storage.list({}).pipe(
        Stream.map((tuple) => String(tuple.config.configurable?.thread_id)),
        Stream.runCollect,
        Effect.flatMap((threads) => Effect.forEach(new Set(threads), storage.deleteThread, { discard: true }))
      )
    ))
  }
}

validate(initializer)
deltaChannelHistoryTests(initializer)
