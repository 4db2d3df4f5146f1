/**
 * Writes a storage format fixture (see test/fixtures/formats/README.md) with
 * the release at `--library` (a checkout of this repository at that
 * release, its node_modules in place): real graphs' threads written through
 * that release's saver on a fresh PostgreSQL database, then what that
 * release reads of them (`observe.ts`), its export of them, and a `pg_dump`
 * of the database as it left it.
 *
 *   node scripts/write-format-fixture.ts --library /tmp/release --level 2 \
 *     --release "0cfa1b7" --out test/fixtures/formats/level-2
 *
 * A fixture is written once, by the release that introduced its level, and
 * never again: later releases must read it as it is.
 */
import { HumanMessage } from "@langchain/core/messages"
import { Annotation, END, START, StateGraph } from "@langchain/langgraph"
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint"
import { execFileSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { parseArgs } from "node:util"
import { Client } from "pg"
import { framedGraph, long, writeChat, writeDelta, writeInspected } from "../harness/inspectedGraph.ts"
import { type FixtureThread, observe } from "../test/fixtures/formats/observe.ts"

const { values } = parseArgs({
  options: {
    library: { type: "string" },
    level: { type: "string" },
    release: { type: "string" },
    out: { type: "string" },
    server: { type: "string", default: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres" }
  }
})
if (values.library === undefined || values.level === undefined || values.out === undefined) {
  throw new Error("usage: --library <checkout> --level <n> --release <name> --out <directory> [--server <url>]")
}
const library = resolve(values.library)
const out = resolve(values.out)

/** The fixture's encryption key (a test key: the fixture is public). */
export const FIXTURE_KEY = { id: "fixture", key: Buffer.alloc(32, 7).toString("base64") }

const admin = async (f: (client: Client) => Promise<unknown>) => {
  const client = new Client({ connectionString: values.server })
  await client.connect()
  try {
    await f(client)
  } finally {
    await client.end()
  }
}

/** "framed": six turns of `framedGraph`, whose inputs and snapshots are framed lists where the release has them. */
const writeFramed = async (saver: BaseCheckpointSaver, thread_id: string) => {
  for (let turn = 0; turn < 6; turn++) {
    await framedGraph(saver).invoke({ messages: [new HumanMessage(long(`question ${turn}`))] }, {
      configurable: { thread_id }
    })
  }
}

/** "bytes": a channel holding bytes (the serializer's `bytes` type), written by two turns. */
const writeBytes = async (saver: BaseCheckpointSaver, thread_id: string) => {
  const State = Annotation.Root({ file: Annotation<Uint8Array>, size: Annotation<number> })
  const graph = new StateGraph(State)
    .addNode(
      "read",
      (state) => ({ file: new Uint8Array([0, 255, ...(state.file ?? [])]), size: state.file?.length ?? 0 })
    )
    .addEdge(START, "read")
    .addEdge("read", END)
    .compile({ checkpointer: saver })
  for (let turn = 0; turn < 2; turn++) await graph.invoke({ size: turn }, { configurable: { thread_id } })
}

/** "record": a record channel a node returns whole each turn, its files long text (a compressed value from level 4). */
const writeRecord = async (saver: BaseCheckpointSaver, thread_id: string) => {
  const State = Annotation.Root({
    files: Annotation<Record<string, string>>({ reducer: (_, next) => next, default: () => ({}) })
  })
  const graph = new StateGraph(State)
    .addNode("write", (state) => {
      const n = Object.keys(state.files).length
      return { files: { ...state.files, [`notes/${n}.md`]: long(`note ${n}`) } }
    })
    .addEdge(START, "write")
    .addEdge("write", END)
    .compile({ checkpointer: saver })
  for (let turn = 0; turn < 3; turn++) await graph.invoke({}, { configurable: { thread_id } })
}

const name = `lce_fixture_${process.pid}`
const url = new URL(values.server)
url.pathname = `/${name}`
await admin((client) => client.query(`CREATE DATABASE "${name}"`))
try {
  const lib = await import(pathToFileURL(join(library, "src/index.ts")).href)
  const postgres = await import(pathToFileURL(join(library, "src/postgres.ts")).href)
  const { ManagedRuntime, Stream } = await import("effect")
  const saver = await lib.EffectCheckpointSaver.fromConnString(url.toString())
  const plain = await lib.EffectCheckpointSaver.fromConnString(url.toString(), { sharing: false })
  const sealed = await lib.EffectCheckpointSaver.fromConnString(url.toString(), {
    encryption: { keys: { [FIXTURE_KEY.id]: FIXTURE_KEY.key }, primary: FIXTURE_KEY.id }
  })
  await writeInspected(saver)
  await writeChat(plain, "plain-chat")
  await writeChat(sealed, "sealed-chat")
  await writeDelta(sealed, "sealed-delta")
  await writeBytes(saver, "bytes")
  await writeFramed(saver, "framed")
  await writeFramed(sealed, "sealed-framed")
  await writeRecord(saver, "record")
  await writeRecord(sealed, "sealed-record")
  const delta = ["messages", "log"]
  const threads: ReadonlyArray<FixtureThread> = [
    { thread_id: "chat" },
    { thread_id: "approval" },
    { thread_id: "nested" },
    { thread_id: "delta", deltaChannels: delta },
    { thread_id: "runs" },
    { thread_id: "tools" },
    { thread_id: "plain-chat" },
    { thread_id: "sealed-chat", sealed: true },
    { thread_id: "sealed-delta", deltaChannels: delta, sealed: true },
    { thread_id: "bytes" },
    { thread_id: "framed", deltaChannels: ["messages"] },
    { thread_id: "sealed-framed", deltaChannels: ["messages"], sealed: true },
    { thread_id: "record" },
    { thread_id: "sealed-record", sealed: true }
  ]
  const observations = {
    ...(await observe(saver, threads.filter((thread) => thread.sealed !== true))),
    ...(await observe(sealed, threads.filter((thread) => thread.sealed === true)))
  }
  for (const opened of [saver, plain, sealed]) await opened.close()

  const runtime = ManagedRuntime.make(postgres.layer({ url: url.toString() }))
  const lines: ReadonlyArray<string> = await runtime.runPromise(
    lib.CheckpointStorage.CheckpointStorage.use((storage: { exportThread: (id: string) => unknown }) =>
      Stream.runCollect(
        lib.ExportFormat.encode(
          Stream.fromIterable(threads.map((thread) => thread.thread_id)).pipe(
            Stream.mapEffect((id: string) => storage.exportThread(id) as never)
          )
        )
      )
    ) as never
  )
  await runtime.dispose()

  const dump = execFileSync(
    "pg_dump",
    ["--inserts", "--no-owner", "--no-privileges", "--no-comments", "--schema=public", url.toString()],
    { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 }
  )
  mkdirSync(out, { recursive: true })
  writeFileSync(
    join(out, "dump.sql"),
    dump.split("\n").filter((line) => !line.startsWith("--") && !line.startsWith("\\")).join("\n")
  )
  writeFileSync(join(out, "export.jsonl"), `${[...lines].join("\n")}\n`)
  writeFileSync(join(out, "observations.json"), `${JSON.stringify(observations, null, 1)}\n`)
  writeFileSync(
    join(out, "fixture.json"),
    `${
      JSON.stringify(
        {
          level: Number(values.level),
          release: values.release ?? library,
          written_at: new Date().toISOString(),
          key: FIXTURE_KEY,
          threads
        },
        null,
        2
      )
    }\n`
  )
  console.log(`wrote ${out}: ${threads.length} threads, ${lines.length} export lines`)
} finally {
  await admin((client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`))
}
