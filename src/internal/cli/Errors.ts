/**
 * The errors that decide a command's exit code: `UsageError` 2, anything
 * else 1. They import nothing of the command line, so any module of it
 * (the arguments, the database, the wording of an unreachable one) can
 * raise them without importing another.
 *
 * @since 0.1.0
 */
import { Data } from "effect"

/**
 * The command line was wrong: exit code 2, with the command's help.
 *
 * @since 0.1.0
 */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly command: string; readonly detail: string }> {
  override get message(): string {
    return this.detail
  }
}

/**
 * A failure the command words itself: exit code 1, one line.
 *
 * @since 0.1.0
 */
export class CommandError extends Data.TaggedError("CommandError")<{ readonly detail: string }> {
  override get message(): string {
    return this.detail
  }
}

/**
 * A thread the command would overwrite, in the command's words.
 *
 * @since 0.1.0
 */
export const threadExists = (command: string, thread_id: string): CommandError =>
  new CommandError({ detail: `${command}: thread "${thread_id}" already exists: pass --replace to overwrite it` })
