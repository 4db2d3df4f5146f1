/**
 * `npm run example:observability` exports over OTLP/HTTP: a local receiver
 * stands in for the collector and reads what the example's exporters flush
 * when its layers close.
 */
import { execFile } from "node:child_process"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

interface KeyValue {
  readonly key: string
  readonly value: { readonly stringValue?: string; readonly intValue?: number }
}
interface Resource {
  readonly attributes: ReadonlyArray<KeyValue>
}
interface Span {
  readonly name: string
  readonly attributes: ReadonlyArray<KeyValue>
}
interface Traces {
  readonly resourceSpans: ReadonlyArray<{ resource: Resource; scopeSpans: ReadonlyArray<{ spans: Array<Span> }> }>
}
interface Metrics {
  readonly resourceMetrics: ReadonlyArray<
    { resource: Resource; scopeMetrics: ReadonlyArray<{ metrics: ReadonlyArray<{ name: string }> }> }
  >
}

const attribute = (attributes: ReadonlyArray<KeyValue>, key: string) =>
  attributes.find((attribute) => attribute.key === key)?.value.stringValue

const received: Array<{ readonly path: string; readonly body: string }> = []
const server = createServer((request, response) => {
  let body = ""
  request.setEncoding("utf8")
  request.on("data", (chunk: string) => body += chunk)
  request.on("end", () => {
    received.push({ path: request.url ?? "", body })
    response.writeHead(200, { "content-type": "application/json" }).end("{}")
  })
})
const bodies = <A>(path: string): Array<A> =>
  received.filter((request) => request.path === path).map((request) => JSON.parse(request.body) as A)

let endpoint = ""
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

describe("examples/observability.ts", () => {
  it("exports the storage spans, their attributes and a metrics payload to OTEL_EXPORTER_OTLP_ENDPOINT", async () => {
    const { DATABASE_URL: _, ...env } = process.env
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(import.meta.dirname, "../../examples/observability.ts")],
      { encoding: "utf8", env: { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } }
    )
    expect(stdout).toContain("agent: Hello Ada! That was turn 2 of this thread")
    const thread = /thread: (observability-\d+)/.exec(stdout)?.[1]
    expect(thread).toBeDefined()

    // The exporters flushed before the process exited: everything is here once it has.
    const traces = bodies<Traces>("/v1/traces").flatMap((body) => body.resourceSpans)
    expect(traces.length).toBeGreaterThan(0)
    const spans = traces.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans))
    const names = new Set(spans.map((span) => span.name))
    for (const name of ["put", "putWrites", "getTuple", "list"]) expect(names).toContain(`CheckpointStorage.${name}`)

    const puts = spans.filter((span) => span.name === "CheckpointStorage.put")
    expect(puts.length).toBeGreaterThanOrEqual(2)
    const lists = spans.filter((span) => span.name === "CheckpointStorage.list")
    expect(lists.map((list) => attribute(list.attributes, "thread_id"))).toContain(thread)
    for (const put of puts) {
      expect(attribute(put.attributes, "thread_id")).toBe(thread)
      expect(attribute(put.attributes, "checkpoint_id")).toMatch(/^[0-9a-f-]{36}$/)
    }

    // The retry counter is exported from the start (at zero: no retry happened).
    const metrics = bodies<Metrics>("/v1/metrics").flatMap((body) => body.resourceMetrics)
    const metricNames = metrics.flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics))
      .map((metric) => metric.name)
    expect(metricNames).toContain("langgraph_checkpoint_retries")

    for (const { resource } of [...traces, ...metrics]) {
      expect(attribute(resource.attributes, "service.name")).toBe("langgraph-checkpoint-effect-example")
    }
    // A process of its own starting PGlite: a budget a loaded 2-core machine meets (it guards against hangs).
  }, 90_000)
})
