/**
 * The published package: `npm pack` gives a tarball that installs in a
 * separate project, type-checks under strict settings and runs a graph.
 * The project does not install the optional PGlite peer: importing the root
 * and the PostgreSQL entry must not need it.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, expect, it } from "vitest"

const root = join(import.meta.dirname, "..")
const project = mkdtempSync(join(tmpdir(), "lce-consumer-"))
afterAll(() => rmSync(project, { recursive: true, force: true }))

const run = (command: string, args: Array<string>, cwd: string) =>
  execFileSync(command, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })

const peers = [
  "effect@4.1.0",
  "@effect/sql-pg@4.0.5",
  "@langchain/core@1.4.0",
  "@langchain/langgraph@1.7.3",
  "@langchain/langgraph-checkpoint@1.2.2"
]

const main = `
import { Annotation, END, START, StateGraph } from "@langchain/langgraph"
import { CheckpointStorage, EffectCheckpointSaver } from "langgraph-checkpoint-effect"
import * as Postgres from "langgraph-checkpoint-effect/postgres"
import * as Cockroach from "langgraph-checkpoint-effect/cockroach"
import { runContract } from "langgraph-checkpoint-effect/testing"
import { MemorySaver } from "@langchain/langgraph"
import { Effect, Layer, Option } from "effect"

const State = Annotation.Root({ n: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }) })
const graph = new StateGraph(State).addNode("inc", () => ({ n: 1 })).addEdge(START, "inc").addEdge("inc", END)
const saver = await EffectCheckpointSaver.fromConnString("memory:")
const app = graph.compile({ checkpointer: saver })
const config = { configurable: { thread_id: "t" } }
await app.invoke({ n: 1 }, config)
const out = await app.invoke({ n: 1 }, config)
const stored: boolean = await Effect.runPromise(
  CheckpointStorage.CheckpointStorage.use((storage) => storage.getTuple({ thread_id: "t" })).pipe(
    Effect.map(Option.isSome),
    Effect.provide(CheckpointStorage.layerMemory)
  )
)
const layer: Layer.Layer<CheckpointStorage.CheckpointStorage, unknown> = Postgres.layer({ url: "postgres://localhost/x" })
const wire: string = Cockroach.toWireUrl("cockroachdb://root@host:26257/db")
const contract = await runContract({ name: "memory", create: () => new MemorySaver(), runs: 1, seed: 1 })
console.log(JSON.stringify({ n: out.n, stored, postgres: typeof layer, wire, contract: contract.name }))
await saver.close()
`

it("packs, installs, type-checks and runs in a separate project", () => {
  run("npm", ["pack", "--pack-destination", project, "--silent"], root)
  const tarball = readdirSync(project).find((file) => file.endsWith(".tgz"))!
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }))
  writeFileSync(join(project, "main.ts"), main)
  writeFileSync(
    join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: { target: "ES2022", module: "NodeNext", strict: true, noEmit: true, types: [] },
      include: ["main.ts"]
    })
  )
  run(
    "npm",
    ["install", "--prefer-offline", "--no-audit", "--no-fund", `./${tarball}`, ...peers, "typescript@5.9.3"],
    project
  )
  run(process.execPath, [join(project, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], project)
  const output = run(process.execPath, ["main.ts"], project)
  expect(JSON.parse(output)).toEqual({
    n: 4,
    stored: false,
    postgres: "object",
    wire: "postgres://root@host:26257/db",
    contract: "memory"
  })
}, 180_000)
