/**
 * `langgraph-checkpoints export [url] <thread…>` (or `--all`): threads as
 * JSON Lines, every namespace, the whole chain, values and writes exactly as
 * stored; to stdout or `--output`.
 *
 * @since 0.1.0
 */
import { Effect, FileSystem, Option, Stream } from "effect"
import { Flag } from "effect/cli"
import * as ExportFormat from "../../lifecycle/ExportFormat.ts"
import { UsageError } from "../Arguments.ts"
import { databaseCommand } from "../DatabaseCommand.ts"
import * as Output from "../Output.ts"

/**
 * The `export` command.
 *
 * @since 0.1.0
 */
export const exportCommand = databaseCommand("export", {
  metavar: "[url] <thread…> | --all",
  names: ["[thread]"],
  rest: true,
  flags: {
    output: Flag.String("output").pipe(Flag.withAlias("o"), Flag.withDescription("Write to this file"), Flag.optional),
    all: Flag.Boolean("all").pipe(Flag.withDefault(false), Flag.withDescription("Every thread the database holds"))
  },
  access: "read",
  description: "Threads as a JSON Lines file: every namespace, the whole chain, values and writes, exact"
}, (input, { inspector, storage, values }) =>
  Effect.gen(function*() {
    if (input.all === (values.length > 0)) {
      return yield* new UsageError({
        command: "export",
        detail: input.all ? "give thread ids or --all, not both" : "missing <thread> (or --all for every thread)"
      })
    }
    // With --all, the ids first (a page of 200 per query), so a thread active meanwhile moves no other out of
    // the pages; then, as for named threads, one thread's rows at a time.
    const ids = input.all
      ? yield* inspector.threads().pipe(Stream.map((thread) => thread.thread_id), Stream.runCollect)
      : values
    let threads = 0
    const rows = Stream.fromIterable(ids).pipe(
      Stream.mapEffect((thread_id) => storage.exportThread(thread_id)),
      Stream.tap(() => Effect.sync(() => threads++))
    )
    const lines = ExportFormat.encode(rows)
    if (Option.isNone(input.output)) {
      // Standard output may be a terminal: the same JSON, with what could drive it escaped.
      return yield* Stream.runForEach(
        lines,
        (text: string) => Effect.sync(() => void process.stdout.write(Output.safeJson(text)))
      )
    }
    const fs = yield* FileSystem.FileSystem
    const file = input.output.value
    yield* Stream.run(Stream.encodeText(lines), fs.sink(file))
    yield* Effect.sync(() => process.stderr.write(`exported ${threads} thread(s) to ${file}\n`))
  }))
