/**
 * `langgraph-checkpoints export [url] <thread…>`: threads as JSON Lines,
 * every namespace, the whole chain, values and writes exactly as stored; to
 * stdout or `--output`.
 *
 * @since 0.1.0
 */
import { Effect, FileSystem, Option, Stream } from "effect"
import { Flag } from "effect/cli"
import * as ExportFormat from "../../lifecycle/ExportFormat.ts"
import { databaseCommand } from "../DatabaseCommand.ts"

/**
 * The `export` command.
 *
 * @since 0.1.0
 */
export const exportCommand = databaseCommand("export", {
  metavar: "[url] <thread…>",
  names: ["<thread>"],
  rest: true,
  flags: {
    output: Flag.String("output").pipe(Flag.withAlias("o"), Flag.withDescription("Write to this file"), Flag.optional)
  },
  access: "read",
  description: "Threads as a JSON Lines file: every namespace, the whole chain, values and writes, exact"
}, (input, { storage, values }) =>
  Effect.gen(function*() {
    const rows = Stream.fromIterable(values).pipe(Stream.mapEffect((thread_id) => storage.exportThread(thread_id)))
    const lines = ExportFormat.encode(rows)
    if (Option.isNone(input.output)) {
      return yield* Stream.runForEach(lines, (text: string) => Effect.sync(() => void process.stdout.write(text)))
    }
    const fs = yield* FileSystem.FileSystem
    const file = input.output.value
    yield* Stream.run(Stream.encodeText(lines), fs.sink(file))
    yield* Effect.sync(() => process.stderr.write(`exported ${values.length} thread(s) to ${file}\n`))
  }))
