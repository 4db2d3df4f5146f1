/**
 * The library's spans (`CheckpointStorage.put`, `putWrites`, `getTuple`,
 * `list`, with `thread_id` and `checkpoint_id` attributes), its retry counter
 * (`langgraph_checkpoint_retries`, by operation and SQLSTATE) and the
 * log lines, sent over OTLP/HTTP by Effect's own `effect/observability`: no
 * OpenTelemetry SDK. `npm run example:observability`
 *
 * It exports to OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318),
 * where an OpenTelemetry Collector or Jaeger listens, e.g.
 * `docker run --rm -p 16686:16686 -p 4318:4318 jaegertracing/jaeger`, then
 * http://localhost:16686. Without a collector it still runs and the export is
 * dropped. PGlite in memory, or PostgreSQL when DATABASE_URL is set.
 */
import { Config, Effect, Layer, Stream } from "effect"
import { FetchHttpClient } from "effect/http"
import { Otlp } from "effect/observability"
import { CheckpointStorage, EffectCheckpointSaver } from "../src/index.ts"
import { buildAgent, say, text } from "./agent/graph.ts"
import { StorageLive } from "./agent/storage.ts"

const serviceName = "langgraph-checkpoint-effect-example"

const endpoint = Config.String("OTEL_EXPORTER_OTLP_ENDPOINT").pipe(Config.withDefault("http://localhost:4318"))

/** Traces, metrics and logs to one OTLP/HTTP endpoint, flushed when the layer's scope closes. */
const ObservabilityLive = Layer.unwrap(
  Effect.map(endpoint, (baseUrl) => Otlp.layerJson({ baseUrl, resource: { serviceName } }))
).pipe(Layer.provide(FetchHttpClient.layer))

const program = Effect.gen(function*() {
  const storage = yield* CheckpointStorage.CheckpointStorage
  const agent = buildAgent(yield* EffectCheckpointSaver.make)
  const thread_id = `observability-${Date.now()}`
  yield* Effect.log(`thread: ${thread_id}`)

  for (const message of ["Hi, I'm Ada.", "One more turn."]) {
    const state = yield* Effect.promise(() => agent.invoke(say(message), { configurable: { thread_id } }))
    yield* Effect.log(`agent: ${text(state.messages.at(-1))}`)
  }

  const checkpoints = yield* storage.list({ thread_id }).pipe(Stream.runCount)
  yield* Effect.log(
    `exporting the CheckpointStorage spans of ${checkpoints} checkpoints and the metrics to ${yield* endpoint}`
      + ` (/v1/traces, /v1/metrics) as ${serviceName}`
  )
})

// Storage closes first, then the exporters flush on their way out.
Effect.runPromise(program.pipe(Effect.provide(StorageLive), Effect.provide(ObservabilityLive))).catch(
  (error: unknown) => {
    console.error(error)
    process.exitCode = 1
  }
)
