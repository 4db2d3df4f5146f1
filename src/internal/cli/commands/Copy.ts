/**
 * `langgraph-checkpoints copy [url] <source> <target>`: a whole thread
 * (every namespace, the whole chain; with `--latest`, its latest state)
 * under a new thread id.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { Flag } from "effect/cli"
import { databaseCommand, migrate, writeAccess } from "../DatabaseCommand.ts"
import { threadExists } from "../Errors.ts"
import * as Output from "../Output.ts"

/**
 * The `copy` command.
 *
 * @since 0.1.0
 */
export const copy = databaseCommand("copy", {
  metavar: "[url] <source> <target>",
  names: ["<source>", "<target>"],
  flags: {
    replace: Flag.Boolean("replace").pipe(
      Flag.withDefault(false),
      Flag.withDescription("Overwrite the target thread if it exists")
    ),
    latest: Flag.Boolean("latest").pipe(
      Flag.withDefault(false),
      Flag.withDescription("Copy only the latest state (each namespace's latest checkpoint and what it reads)")
    ),
    migrate
  },
  access: writeAccess,
  description: "Copies a whole thread (every namespace, the whole chain) to a new thread id"
}, (input, { storage, values: [source, target] }) =>
  Effect.gen(function*() {
    yield* storage.copyThread(source!, target!, { replace: input.replace, latest: input.latest }).pipe(
      Effect.catchTag("ThreadExists", ({ thread_id }) => Effect.fail(threadExists("copy", thread_id)))
    )
    yield* Output.line(`copied ${Output.clean(source!)} to ${Output.clean(target!)}`)
  }))
