/**
 * `langgraph-checkpoints export [url] <thread…>` (or `--all`): threads as
 * JSON Lines, every namespace, the whole chain, values and writes exactly as
 * stored; to stdout or `--output`.
 *
 * An export holds conversations, so `--output` writes a file only its user
 * can read, whatever the umask: created 0600, never through a symbolic link
 * (one planted at the path, say in a shared directory, would send the
 * conversations wherever it points). A file already there is overwritten,
 * as a shell's `>` would, only if it is a regular file of this user's with
 * no other name; it is emptied and made 0600. Anything else is refused
 * before the database is read.
 *
 * @since 0.1.0
 */
import { Effect, Option, Stream } from "effect"
import { Flag } from "effect/cli"
import { closeSync, constants, fchmodSync, fstatSync, ftruncateSync, openSync, type Stats, write } from "node:fs"
import * as ExportFormat from "../../../ExportFormat.ts"
import { databaseCommand } from "../DatabaseCommand.ts"
import { CommandError, UsageError } from "../Errors.ts"
import * as Output from "../Output.ts"

/** Why an opened file is not one to write an export over, if it is not. */
const refusalOf = (stats: Stats): string | undefined => {
  if (!stats.isFile()) return "is not a regular file"
  const uid = process.getuid?.()
  if (uid !== undefined && stats.uid !== uid) return "belongs to another user"
  if (stats.nlink > 1) return "has other names (hard links)"
  return undefined
}

/** Why opening `file` failed, in words. */
const openFailure = (file: string, cause: unknown) => {
  const code = (cause as NodeJS.ErrnoException).code
  // O_NOFOLLOW: ELOOP on Linux and macOS, EMLINK on FreeBSD.
  return code === "ELOOP" || code === "EMLINK"
    ? `export: ${file} is a symbolic link: refusing to write through it (give the path it points to)`
    : `export: cannot write ${file}: ${cause instanceof Error ? cause.message : String(cause)}`
}

/** `file` opened for the export (see the module header), closed with the scope. */
const openPrivate = (file: string) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        // Non-blocking: a FIFO planted at the path is refused, not waited on.
        const flags = constants.O_WRONLY | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0) |
          (constants.O_NONBLOCK ?? 0)
        const fd = openSync(file, flags, 0o600)
        try {
          const refusal = refusalOf(fstatSync(fd))
          if (refusal !== undefined) throw new CommandError({ detail: `export: ${file} ${refusal}` })
          ftruncateSync(fd, 0)
          fchmodSync(fd, 0o600)
          return fd
        } catch (error) {
          closeSync(fd)
          throw error
        }
      },
      catch: (cause) => cause instanceof CommandError ? cause : new CommandError({ detail: openFailure(file, cause) })
    }),
    (fd) => Effect.sync(() => closeSync(fd))
  )

/** Writes all of `bytes` at the file's position. */
const writeAll = (fd: number, file: string, bytes: Uint8Array) =>
  Effect.callback<void, CommandError>((resume) => {
    const from = (offset: number) =>
      write(fd, bytes, offset, bytes.length - offset, null, (error, written) => {
        if (error !== null) resume(Effect.fail(new CommandError({ detail: `export: ${file}: ${error.message}` })))
        else if (offset + written < bytes.length) from(offset + written)
        else resume(Effect.void)
      })
    from(0)
  })

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
    output: Flag.String("output").pipe(
      Flag.withAlias("o"),
      Flag.withDescription("Write to this file (only you can read it: created 0600, never through a symbolic link)"),
      Flag.optional
    ),
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
    // The file first: a path refused is refused before any thread is read.
    const output = Option.isNone(input.output)
      ? undefined
      : { file: input.output.value, fd: yield* openPrivate(input.output.value) }
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
    if (output === undefined) {
      // Standard output may be a terminal: the same JSON, with what could drive it escaped.
      return yield* Stream.runForEach(
        lines,
        (text: string) => Effect.sync(() => void process.stdout.write(Output.safeJson(text)))
      )
    }
    yield* Stream.runForEach(Stream.encodeText(lines), (bytes) => writeAll(output.fd, output.file, bytes))
    yield* Effect.sync(() => process.stderr.write(`exported ${threads} thread(s) to ${output.file}\n`))
  }).pipe(Effect.scoped))
