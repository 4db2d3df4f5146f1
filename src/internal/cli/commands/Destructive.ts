/**
 * How the commands that remove checkpoints go about it: say what would go,
 * stop there on `--dry-run`, ask on a terminal (or need `--yes`), remove
 * with a progress bar, and report what was removed and freed.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { Prompt } from "effect/cli"
import { Inspector, type Removal } from "../../inspector/Inspector.ts"
import { UsageError } from "../Errors.ts"
import * as Output from "../Output.ts"

/** Says what would go: each thread's removal. */
const printRemovals = (removals: ReadonlyArray<Removal>) =>
  Effect.forEach(removals, (removal) =>
    Output.line(
      `  ${Output.clean(removal.thread_id)}: ${removal.checkpoints} checkpoint(s)${
        removal.whole ? " (the whole thread)" : ""
      }`
    ), { discard: true })

/** Whether to go ahead: `--yes`, or a terminal's yes; without a terminal, a usage error. */
const confirmed = (name: string, what: string, yes: boolean) =>
  Effect.gen(function*() {
    if (yes) return true
    if (process.stdin.isTTY !== true || process.stdout.isTTY !== true) {
      return yield* new UsageError({
        command: name,
        detail: `${name} would remove ${what}: pass --yes to confirm (not asking: no terminal)`
      })
    }
    return yield* Prompt.run(Prompt.Confirm({ message: `${name}: remove ${what}?` }))
  })

/**
 * Prints what would go; on a go-ahead (`--yes`, or a terminal's yes) runs
 * `each` thread's removal with a progress bar, then `all`, the removal that
 * spans every thread at once.
 *
 * @since 0.1.0
 */
export const destructive = <E, R>(
  name: string,
  input: { readonly dryRun: boolean; readonly yes: boolean },
  removals: ReadonlyArray<Removal>,
  apply: {
    readonly each?: ((thread_id: string) => Effect.Effect<void, E, R>) | undefined
    readonly all?: Effect.Effect<void, E, R> | undefined
  }
) =>
  Effect.gen(function*() {
    const total = removals.reduce((sum, removal) => sum + removal.checkpoints, 0)
    const what = `${total} checkpoint(s) of ${removals.length} thread(s)`
    if (removals.length === 0) return yield* Output.line("nothing to remove")
    yield* printRemovals(removals)
    if (input.dryRun) return yield* Output.line(`${name} would remove ${what} (dry run: nothing changed)`)
    if (!(yield* confirmed(name, what, input.yes))) return yield* Output.line("nothing changed")
    const inspector = yield* Inspector
    const ids = removals.map((removal) => removal.thread_id)
    const before = yield* inspector.sizes(ids)
    const each = apply.each
    if (each !== undefined) {
      yield* Effect.scoped(Effect.gen(function*() {
        const bar = yield* Output.progress(name, ids.length)
        yield* Effect.forEach(ids, (thread_id) => Effect.tap(each(thread_id), () => Effect.sync(bar.tick)), {
          discard: true
        })
      }))
    }
    if (apply.all !== undefined) yield* apply.all
    const after = yield* inspector.sizes(ids)
    const removed = ids.reduce(
      (sum, id) => sum + (before.get(id)?.checkpoints ?? 0) - (after.get(id)?.checkpoints ?? 0),
      0
    )
    const freed = ids.reduce((sum, id) => sum + (before.get(id)?.bytes ?? 0) - (after.get(id)?.bytes ?? 0), 0)
    yield* Output.line(
      `${name}: removed ${removed} checkpoint(s) from ${ids.length} thread(s), ${Output.bytes(freed)} of stored data`
    )
  })
