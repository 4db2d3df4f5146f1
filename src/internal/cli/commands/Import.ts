/**
 * `langgraph-checkpoints import [url] <file>`: writes exported threads back;
 * a thread that exists is refused unless `--replace`.
 *
 * @since 0.1.0
 */
import { Effect, FileSystem, Stream } from "effect"
import { Flag } from "effect/cli"
import * as ExportFormat from "../../../ExportFormat.ts"
import { databaseCommand, migrate, writeAccess } from "../DatabaseCommand.ts"
import { threadExists } from "../Errors.ts"
import * as Output from "../Output.ts"

/**
 * The `import` command.
 *
 * @since 0.1.0
 */
export const importCommand = databaseCommand("import", {
  metavar: "[url] <file>",
  names: ["<file>"],
  flags: {
    replace: Flag.Boolean("replace").pipe(
      Flag.withDefault(false),
      Flag.withDescription("Overwrite threads that exist")
    ),
    migrate
  },
  access: writeAccess,
  description: "Writes exported threads back (existing threads are refused unless --replace)"
}, (input, { storage, values: [file] }) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    let threads = 0
    yield* ExportFormat.decodeText(fs.stream(file!).pipe(Stream.decodeText)).pipe(
      Stream.runForEach((rows) =>
        storage.importThread(rows, { replace: input.replace }).pipe(
          Effect.catchTag("ThreadExists", ({ thread_id }) => Effect.fail(threadExists("import", thread_id))),
          Effect.tap(() => Effect.sync(() => threads++))
        )
      )
    )
    yield* Output.line(`imported ${threads} thread(s)`)
  }))
