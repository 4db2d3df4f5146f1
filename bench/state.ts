/**
 * `npm run bench:state`: what an agent's state costs to store, against its
 * content. One agent graph, 30 turns on one thread (`STATE_TURNS`), each
 * turn: a user message with a 50 KiB base64 image (a `data:` URL block), a
 * tool call, a 10 KiB JSON tool result, a 1 KiB answer, and a 4 KiB entry
 * added to a `files` record channel (the node returns the whole record, as
 * deep agents do). Under both of LangGraph's message schemas, on
 * PostgreSQL (this library and the official saver, each run in a database
 * of its own, taking turns) and on PGlite (this library). Reports the
 * storage the turns added (tables, indexes and TOAST, after a VACUUM) over
 * the unique content, turns per second, and `getState` at the end (median
 * of 20); then `copyThread`, whole and latest only, of a thread of 1,000
 * and of 10 small checkpoints: its time and the storage it adds. Writes
 * bench/results/STATE.md.
 *
 * Uses DATABASE_URL (default the local server); its databases are dropped
 * afterwards.
 */
import { PGlite } from "@electric-sql/pglite"
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages"
import {
  END,
  MessagesDeltaValue,
  MessagesValue,
  ReducedValue,
  START,
  StateGraph,
  StateSchema
} from "@langchain/langgraph"
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint"
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres"
import { randomBytes } from "node:crypto"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Pool } from "pg"
import { z } from "zod"
import { EffectCheckpointSaver } from "../src/index.ts"
import { scratchDatabases, tableSizes } from "./support/databases.ts"
import { p50 } from "./support/measure.ts"
import { ranBy, writeResult } from "./support/report.ts"
import { rotated, serializedSize, text, time } from "./support/workload.mjs"

const TURNS = Number(process.env.STATE_TURNS ?? "30")
const serverUrl = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres"
const log = (line: string) => process.stderr.write(`${line}\n`)
const KiB = 1024
const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(2)

// ---------------------------------------------------------------- the workload

type SchemaName = "MessagesValue" | "MessagesDeltaValue"
const schemas = { MessagesValue, MessagesDeltaValue } as const

/** Words of about `bytes` bytes. */
const words = (bytes: number) => text(Math.ceil(bytes / 5.6)).slice(0, bytes)

/** One turn's content, drawn once and given to every subject (so each stores the same bytes). */
const turnContent = (turn: number) => ({
  question: `turn ${turn}: what is in this picture? ${words(200)}`,
  image: `data:image/png;base64,${randomBytes(Math.floor((50 * KiB * 3) / 4)).toString("base64")}`,
  result: JSON.stringify({ turn, rows: Array.from({ length: 40 }, (_, i) => ({ i, note: words(230) })) }),
  answer: words(KiB),
  file: words(4 * KiB)
})
type Turn = ReturnType<typeof turnContent>

/** The unique content a turn adds, as JSON: what storing it once would take. */
const contentBytes = (turn: Turn) =>
  serializedSize([turn.question, turn.image]) + serializedSize(turn.result) + serializedSize(turn.answer) +
  serializedSize(turn.file) + serializedSize({ name: "look", args: { turn: 0 } })

/** The turn being run: what the tool and the model "produce" (never in the state, which holds only their output). */
let current: Turn | undefined

/** An agent: the model asks a tool, the tool answers and writes a file, the model answers. */
const agentGraph = (schema: SchemaName, checkpointer: BaseCheckpointSaver) => {
  const State = new StateSchema({
    messages: schemas[schema],
    files: new ReducedValue(z.record(z.string(), z.string()).default(() => ({})), {
      reducer: (_: Record<string, string>, next: Record<string, string>) => next
    })
  })
  return new StateGraph(State)
    .addNode("model", (state) => ({
      messages: [
        new AIMessage({
          content: "",
          tool_calls: [{ id: `call-${state.messages.length}`, name: "look", args: { turn: state.messages.length } }]
        })
      ]
    }))
    .addNode("tools", (state) => ({
      messages: [
        new ToolMessage({ content: current!.result, tool_call_id: `call-${state.messages.length - 1}` })
      ],
      files: { ...state.files, [`notes/${Object.keys(state.files).length}.md`]: current!.file }
    }))
    .addNode("answer", () => ({ messages: [new AIMessage(current!.answer)] }))
    .addEdge(START, "model")
    .addEdge("model", "tools")
    .addEdge("tools", "answer")
    .addEdge("answer", END)
    .compile({ checkpointer })
}

/** A turn's input: the user's question with the picture. */
const inputOf = (turn: Turn) => ({
  messages: [
    new HumanMessage({
      content: [{ type: "text", text: turn.question }, { type: "image_url", image_url: { url: turn.image } }]
    })
  ]
})

// ---------------------------------------------------------------- the subjects

interface Subject {
  readonly name: string
  readonly schema: SchemaName
  readonly app: ReturnType<typeof agentGraph>
  /** The bytes the subject's storage holds now. */
  readonly bytes: () => Promise<number>
  readonly close: () => Promise<void>
  readonly samples: Array<number>
  /** The bytes its storage held before the run (its empty schema). */
  readonly before: number
}

const databases = scratchDatabases(serverUrl)
const scratch = await mkdtemp(join(tmpdir(), "lce-bench-state-"))

const tablesOf = async (url: string) =>
  (await tableSizes(url)).reduce((sum, table) => sum + table.tableBytes + table.indexBytes, 0)

/** The tables of a PGlite directory, as `tableSizes` counts them (opened once its saver has closed it). */
const pgliteBytes = async (dataDir: string) => {
  const pglite = await PGlite.create({ dataDir })
  try {
    await pglite.exec("VACUUM ANALYZE")
    const result = await pglite.query<{ bytes: string }>(`
      SELECT coalesce(sum(pg_table_size(c.oid) + pg_indexes_size(c.oid)), 0)::bigint AS bytes
      FROM pg_class c WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace`)
    return Number(result.rows[0]!.bytes)
  } finally {
    await pglite.close()
  }
}

/** A subject: the agent on `saver`, and what its storage holds before the run. */
const subject = async (
  name: string,
  schema: SchemaName,
  saver: BaseCheckpointSaver,
  storage: Pick<Subject, "bytes" | "close"> & { readonly before: () => Promise<number> }
): Promise<Subject> => ({
  name,
  schema,
  app: agentGraph(schema, saver),
  bytes: storage.bytes,
  close: storage.close,
  samples: [],
  before: await storage.before()
})

// PGlite's empty schema is measured from a directory of its own: each subject's saver stays open for the run.
const emptyDir = join(scratch, "empty")
await (await EffectCheckpointSaver.fromConnString(`pglite:${emptyDir}`)).close()
const emptyPglite = await pgliteBytes(emptyDir)

const subjects: Array<Subject> = []
for (const schema of ["MessagesValue", "MessagesDeltaValue"] as const) {
  const short = schema === "MessagesValue" ? "value" : "delta"
  const ours = await databases.create(`state_effect_${short}`)
  const effect = await EffectCheckpointSaver.fromConnString(ours.url)
  await effect.ready()
  const oursBytes = () => tablesOf(ours.url)
  subjects.push(
    await subject("this library, PostgreSQL", schema, effect, {
      bytes: oursBytes,
      close: () => effect.close(),
      before: oursBytes
    })
  )
  const theirs = await databases.create(`state_official_${short}`)
  const official = new PostgresSaver(new Pool({ connectionString: theirs.url, max: 10 }))
  await official.setup()
  const theirBytes = () => tablesOf(theirs.url)
  subjects.push(
    await subject("official PostgresSaver", schema, official, {
      bytes: theirBytes,
      close: () => official.end(),
      before: theirBytes
    })
  )
  const dataDir = join(scratch, short)
  const embedded = await EffectCheckpointSaver.fromConnString(`pglite:${dataDir}`)
  await embedded.ready()
  // PGlite is one process's database: its size is read once its saver has closed it.
  let closing: Promise<void> | undefined
  const close = () => closing ??= embedded.close()
  subjects.push(
    await subject("this library, PGlite", schema, embedded, {
      bytes: () => close().then(() => pgliteBytes(dataDir)),
      close,
      before: async () => emptyPglite
    })
  )
}

// ---------------------------------------------------------------- the run

const config = { configurable: { thread_id: "agent" } }
let unique = 0
log(`${TURNS} turns, ${subjects.length} subjects taking turns`)
for (let turn = 0; turn < TURNS; turn++) {
  const content = turnContent(turn)
  current = content
  unique += contentBytes(content)
  for (const [, subject] of rotated(subjects, turn)) {
    const out = await (async () => {
      let state: { messages: ReadonlyArray<unknown>; files: Record<string, string> } | undefined
      subject.samples.push(
        await time(async () => {
          state = await subject.app.invoke(inputOf(content), config)
        })
      )
      return state!
    })()
    // A saver that lost a step would look fast: every turn sees the whole conversation and every file.
    if (out.messages.length !== 4 * (turn + 1) || Object.keys(out.files).length !== turn + 1) {
      throw new Error(`${subject.name} (${subject.schema}): wrong state after turn ${turn + 1}`)
    }
  }
}

/** `getState` of the thread at the end: the median of 20 (after one to warm up). */
const getStateMs = async (subject: Subject) => {
  await subject.app.getState(config)
  const samples: Array<number> = []
  for (let i = 0; i < 20; i++) samples.push(await time(() => subject.app.getState(config)))
  return p50(samples)
}

const rows: Array<string> = []
for (const subject of subjects) {
  const reading = await getStateMs(subject)
  const added = (await subject.bytes()) - subject.before
  await subject.close()
  const seconds = subject.samples.reduce((a, b) => a + b, 0) / 1000
  rows.push(
    `| ${subject.name} | \`${subject.schema}\` | ${mib(added)} MiB | ${(added / unique).toFixed(2)}× | ${
      (subject.samples.length / seconds).toFixed(2)
    } | ${reading.toFixed(1)} ms |`
  )
  log(rows.at(-1)!)
}
// ---------------------------------------------------------------- copies

/** A chat of small steps: each invoke appends one short message (two checkpoints). */
const smallSteps = (checkpointer: BaseCheckpointSaver) =>
  new StateGraph(new StateSchema({ messages: MessagesValue }))
    .addNode("echo", (state) => ({ messages: [new AIMessage(`step ${state.messages.length}`)] }))
    .addEdge(START, "echo")
    .addEdge("echo", END)
    .compile({ checkpointer })

const copies: Array<string> = []
{
  const copied = await databases.create("state_copies")
  const saver = await EffectCheckpointSaver.fromConnString(copied.url)
  for (const checkpoints of [1000, 10]) {
    const source = `steps-${checkpoints}`
    for (let i = 0; i < checkpoints / 2; i++) {
      await smallSteps(saver).invoke({ messages: [new HumanMessage(`say ${i}`)] }, {
        configurable: { thread_id: source }
      })
    }
    for (const latest of [false, true]) {
      // Three copies, the median time; the storage one copy adds (after a VACUUM).
      const samples: Array<number> = []
      let added = 0
      for (let i = 0; i < 3; i++) {
        const before = await tablesOf(copied.url)
        samples.push(await time(() => saver.copyThread(source, `${source}-${latest}-${i}`, { latest })))
        added = (await tablesOf(copied.url)) - before
      }
      copies.push(
        `| ${checkpoints} checkpoints | ${latest ? "latest only" : "whole"} | ${p50(samples).toFixed(1)} ms | ${
          (added / KiB).toFixed(0)
        } KiB |`
      )
      log(copies.at(-1)!)
    }
  }
  await saver.close()
}

await databases.dropAll()
await rm(scratch, { recursive: true, force: true })

const report = [
  "# What an agent's state costs to store",
  "",
  `${
    ranBy("npm run bench:state", "bench/state.ts")
  }, PostgreSQL at DATABASE_URL. One agent graph, ${TURNS} turns on one thread, each ` +
  "adding a user message with a 50 KiB base64 image (a `data:` URL block), a tool call, a 10 KiB JSON tool " +
  "result, a 1 KiB answer and a 4 KiB entry in a `files` record channel (the node returns the whole record). " +
  `Unique content: ${mib(unique)} MiB (as JSON). Storage added: tables, indexes and TOAST after a VACUUM, ` +
  "minus the empty schema; each subject in a database of its own, the subjects taking turns.",
  "",
  "| subject | messages | storage added | over the content | turns/s | getState at the end |",
  "|---|---|---:|---:|---:|---:|",
  ...rows,
  "",
  "## Copies",
  "",
  "`copyThread` of a thread of small steps (each invoke one short message, two checkpoints) on PostgreSQL: " +
  "the median of three copies, and the storage one adds (tables, indexes and TOAST after a VACUUM). A whole " +
  "copy writes every row of the history again; `latest: true` copies what the latest state reads.",
  "",
  "| source | copy | time | new storage |",
  "|---|---|---:|---:|",
  ...copies,
  ""
].join("\n")
log(`wrote ${writeResult("STATE.md", report)}`)
