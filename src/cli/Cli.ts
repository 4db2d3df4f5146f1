/**
 * `langgraph-checkpoints`: the inspector's commands, with `effect/cli`.
 *
 * Each command takes the database as its first argument when that argument
 * is a connection string (`pglite:<dir>`, `postgres://…`,
 * `cockroachdb://…`), else from `DATABASE_URL`. Reading commands never
 * change the database; destructive ones say what they would do with
 * `--dry-run`, ask on a terminal, and need `--yes` otherwise.
 *
 * @since 0.1.0
 */
import { Duration, Effect, FileSystem, Option, Stream } from "effect"
import { Command, Flag, Prompt } from "effect/cli"
import type { CheckpointError } from "../CheckpointError.ts"
import { CheckpointStorage } from "../CheckpointStorage.ts"
import { Inspector, type Removal, type Shown } from "../inspector/Inspector.ts"
import * as Tree from "../inspector/Tree.ts"
import * as Values from "../inspector/Values.ts"
import * as ExportFormat from "../lifecycle/ExportFormat.ts"
import { CommandError, inDatabase, positional, UsageError, withArgs } from "./Arguments.ts"
import type * as Database from "./Database.ts"
import * as Output from "./Output.ts"
import { web } from "./Web.ts"

const json = Flag.Boolean("json").pipe(Flag.withDefault(false), Flag.withDescription("Print JSON instead of text"))
const ns = Flag.String("ns").pipe(Flag.withDescription("Only this checkpoint namespace"), Flag.optional)
const dryRun = Flag.Boolean("dry-run").pipe(
  Flag.withDefault(false),
  Flag.withDescription("Say what would be removed; change nothing")
)
const yes = Flag.Boolean("yes").pipe(
  Flag.withDefault(false),
  Flag.withAlias("y"),
  Flag.withDescription("Do not ask for confirmation")
)
const migrate = Flag.Boolean("migrate").pipe(
  Flag.withDefault(false),
  Flag.withDescription("Allow migrating a database LangGraph's own saver wrote to this library's schema")
)

const short = (id: string) => id.slice(-12)
const { bold, cyan, dim, green, red, yellow } = Output.colors

const date = (value: Date) => value.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z")

/** A value as one line of text, cut at `max` characters. */
const textOf = (value: unknown, max: number | undefined) => {
  if (value instanceof Values.Unreadable) return String(value)
  const plain = Values.toPlain(value)
  return Output.cut(typeof plain === "string" ? plain : JSON.stringify(plain) ?? "undefined", max)
}

// --- threads -----------------------------------------------------------------

const threads = Command.make("threads", {
  args: positional("[url]"),
  limit: Flag.Int("limit").pipe(Flag.withDescription("At most this many threads (default 50)"), Flag.withDefault(50)),
  prefix: Flag.String("prefix").pipe(Flag.withDescription("Only threads whose id starts with this"), Flag.optional),
  json
}, (input) =>
  Effect.gen(function*() {
    yield* withArgs("threads", input.args, [])
    const inspector = yield* Inspector
    const found = yield* inspector.threads({
      limit: input.limit,
      prefix: Option.getOrUndefined(input.prefix)
    }).pipe(Stream.runCollect)
    if (input.json) return yield* Output.json(found)
    if (found.length === 0) return yield* Output.line("no threads")
    yield* Output.table(
      ["thread", "namespaces", "checkpoints", "step", "last activity", "interrupts"],
      found.map((thread) => [
        Output.clean(thread.thread_id),
        Output.cut(thread.namespaces.map((name) => name === "" ? "(root)" : name).join(", "), 60),
        String(thread.checkpoints),
        thread.latest_step === undefined ? "" : String(thread.latest_step),
        date(thread.last_activity),
        thread.interrupts > 0 ? red(String(thread.interrupts)) : ""
      ])
    )
    if (found.length === input.limit) yield* Output.line(dim(`(first ${input.limit}; more with --limit)`))
  }).pipe(inDatabase("threads", input.args, "read"))).pipe(
    Command.withDescription("One row per thread, newest activity first")
  )

// --- history -----------------------------------------------------------------

/** A namespace's parent: `a:1|b:2` is under `a:1`, `a:1` under the root. */
const parentNamespace = (name: string) => name.includes("|") ? name.slice(0, name.lastIndexOf("|")) : ""

const history = Command.make("history", {
  args: positional("[url] <thread>"),
  ns,
  json
}, (input) =>
  Effect.gen(function*() {
    const { values: [thread_id] } = yield* withArgs("history", input.args, ["<thread>"])
    const inspector = yield* Inspector
    const entries = yield* inspector.history(thread_id!, { checkpoint_ns: Option.getOrUndefined(input.ns) }).pipe(
      Stream.runCollect
    )
    if (input.json) return yield* Output.json(entries)
    const namespaces = [...new Set(entries.map((entry) => entry.checkpoint_ns))].sort()
    for (const name of namespaces) {
      const depth = name === "" ? 0 : name.split("|").length
      const indent = "  ".repeat(depth)
      if (name !== "") {
        yield* Output.line(
          `${indent.slice(2)}${bold(`namespace ${Output.clean(name)}`)} ${
            dim(`(a subgraph under ${parentNamespace(name) === "" ? "the root" : Output.clean(parentNamespace(name))})`)
          }`
        )
      }
      const rows = Tree.layout(
        entries.filter((entry) => entry.checkpoint_ns === name),
        (entry) => entry.checkpoint_id,
        (entry) => entry.parent_checkpoint_id
      )
      const heads = new Set(rows.filter((row) => row.head).map((row) => row.entry.checkpoint_id))
      const latest = rows[0]?.entry.checkpoint_id
      for (const { entry, graph } of Tree.text(rows)) {
        if (entry === undefined) {
          yield* Output.line(`${indent}${graph}`)
          continue
        }
        const parts = [
          yellow(short(entry.checkpoint_id)),
          entry.checkpoint_id === latest ? green("(head)") : heads.has(entry.checkpoint_id) ? cyan("(fork)") : "",
          `step ${entry.step ?? "?"}`,
          Output.clean(entry.source ?? ""),
          entry.next.length > 0 ? `next: ${Output.clean(entry.next.join(", "))}` : "",
          entry.interrupts.length > 0 ? red(`interrupt: ${textOf(entry.interrupts, 60)}`) : "",
          entry.changed.length > 0 ? dim(`changed: ${Output.cut(entry.changed.join(", "), 80)}`) : ""
        ]
        yield* Output.line(`${indent}${graph} ${parts.filter((part) => part !== "").join("  ")}`)
      }
    }
  }).pipe(inDatabase("history", input.args, "read"))).pipe(
    Command.withDescription("A thread's checkpoints as a tree: forks as branches, subgraphs under their parent")
  )

// --- show --------------------------------------------------------------------

const printShown = (thread_id: string, { interrupts, next, tuple }: Shown, max: number | undefined) =>
  Effect.gen(function*() {
    const ns = tuple.config.configurable?.checkpoint_ns ?? ""
    const metadata: Record<string, unknown> = tuple.metadata ?? {}
    yield* Output.line(
      `${bold("thread")} ${Output.clean(thread_id)}  ${bold("checkpoint")} ${yellow(tuple.checkpoint.id)}${
        ns === "" ? "" : `  ${bold("namespace")} ${Output.clean(ns)}`
      }`
    )
    yield* Output.line(
      `step ${String(metadata.step ?? "?")}  source ${
        Output.clean(String(metadata.source ?? "?"))
      }  ${tuple.checkpoint.ts}${
        tuple.parentConfig?.configurable?.checkpoint_id === undefined
          ? ""
          : `  parent ${short(String(tuple.parentConfig.configurable.checkpoint_id))}`
      }`
    )
    if (next.length > 0) yield* Output.line(`${bold("next")}: ${Output.clean(next.join(", "))}`)
    for (const interrupt of interrupts) yield* Output.line(red(`${bold("interrupt")}: ${textOf(interrupt, max)}`))
    yield* Output.line(bold("channels"))
    for (
      const [channel, value] of Object.entries(tuple.checkpoint.channel_values).sort(([a], [b]) => a.localeCompare(b))
    ) {
      const messages = Values.asMessages(value)
      if (messages === undefined) {
        yield* Output.line(`  ${cyan(Output.clean(channel))}: ${textOf(value, max)}`)
        continue
      }
      yield* Output.line(`  ${cyan(Output.clean(channel))}: ${messages.length} messages`)
      for (const message of messages) {
        yield* Output.line(`    ${bold(Output.clean(message.role))}: ${Output.cut(message.text, max)}`)
      }
    }
    const writes = tuple.pendingWrites ?? []
    if (writes.length > 0) {
      yield* Output.line(bold("pending writes"))
      for (const [task, channel, value] of writes) {
        yield* Output.line(`  ${dim(Output.clean(short(task)))} ${cyan(Output.clean(channel))}: ${textOf(value, max)}`)
      }
    }
    yield* Output.line(`${bold("metadata")}: ${textOf(metadata, max)}`)
  })

const show = Command.make("show", {
  args: positional("[url] <thread> [checkpoint]"),
  ns,
  full: Flag.Boolean("full").pipe(Flag.withDefault(false), Flag.withDescription("Do not cut long values")),
  json
}, (input) =>
  Effect.gen(function*() {
    const { values: [thread_id, ref] } = yield* withArgs("show", input.args, ["<thread>", "[checkpoint]"])
    const shown = yield* (yield* Inspector).checkpoint(thread_id!, ref, {
      checkpoint_ns: Option.getOrUndefined(input.ns)
    })
    if (input.json) {
      return yield* Output.json({
        ...Values.toPlain(shown.tuple) as object,
        next: shown.next,
        interrupts: Values.toPlain(shown.interrupts)
      })
    }
    yield* printShown(thread_id!, shown, input.full ? undefined : 200)
  }).pipe(inDatabase("show", input.args, "read"))).pipe(
    Command.withDescription("A checkpoint (the latest by default): values, pending writes, next nodes, metadata")
  )

// --- diff --------------------------------------------------------------------

const diff = Command.make("diff", {
  args: positional("[url] <thread> <a> <b>"),
  json
}, (input) =>
  Effect.gen(function*() {
    const { values: [thread_id, a, b] } = yield* withArgs("diff", input.args, ["<thread>", "<a>", "<b>"])
    const { channels } = yield* (yield* Inspector).diff(thread_id!, a!, b!)
    if (input.json) return yield* Output.json(channels)
    if (channels.length === 0) return yield* Output.line("no channel differs")
    for (const change of channels) {
      const name = cyan(Output.clean(change.channel))
      switch (change.change) {
        case "added":
          yield* Output.line(`${name}: ${green("added")} ${textOf(change.after, 200)}`)
          break
        case "removed":
          yield* Output.line(`${name}: ${red("removed")} ${textOf(change.before, 200)}`)
          break
        case "changed":
          yield* Output.line(`${name}: changed ${textOf(change.before, 100)} → ${textOf(change.after, 100)}`)
          break
        case "messages":
          yield* Output.line(
            `${name}: ${change.appended.length} appended, ${change.removed.length} removed, ${change.edited.length} edited`
          )
          for (const message of change.appended) {
            yield* Output.line(green(`  + ${Output.clean(message.role)}: ${Output.cut(message.text, 200)}`))
          }
          for (const message of change.removed) {
            yield* Output.line(red(`  - ${Output.clean(message.role)}: ${Output.cut(message.text, 200)}`))
          }
          for (const { after, before } of change.edited) {
            yield* Output.line(
              yellow(`  ~ ${Output.clean(after.role)}: ${Output.cut(before.text, 90)} → ${Output.cut(after.text, 90)}`)
            )
          }
      }
    }
  }).pipe(inDatabase("diff", input.args, "read"))).pipe(
    Command.withDescription("Channel by channel, what changed from checkpoint a to b")
  )

// --- stats -------------------------------------------------------------------

const stats = Command.make("stats", { args: positional("[url]"), json }, (input) =>
  Effect.gen(function*() {
    yield* withArgs("stats", input.args, [])
    const found = yield* (yield* Inspector).stats
    if (input.json) return yield* Output.json(found)
    const disk = (name: string) => found.onDisk?.[name] === undefined ? "" : Output.bytes(found.onDisk[name]!)
    yield* Output.table(["table", "rows", "stored", "on disk"], [
      ["threads", String(found.threads), "", disk("checkpoint_threads")],
      ["checkpoints", String(found.checkpoints), Output.bytes(found.stored.checkpoints), disk("checkpoints")],
      ["blobs", String(found.blobs), Output.bytes(found.stored.blobs), disk("checkpoint_blobs")],
      ["writes", String(found.writes), Output.bytes(found.stored.writes), disk("checkpoint_writes")],
      ["pieces", String(found.pieces), Output.bytes(found.stored.pieces), disk("checkpoint_pieces")]
    ])
    if (found.sharing !== undefined) {
      yield* Output.line(
        `structural sharing: shared lists take ${Output.bytes(found.sharing.stored)} where whole values would take ~${
          Output.bytes(found.sharing.whole)
        } (${(found.sharing.whole / Math.max(1, found.sharing.stored)).toFixed(1)}× less)`
      )
    }
  }).pipe(inDatabase("stats", input.args, "read"))).pipe(
    Command.withDescription("Rows and bytes per table, and what structural sharing saves")
  )

// --- export / import ---------------------------------------------------------

const exportCommand = Command.make("export", {
  args: positional("[url] <thread…>"),
  output: Flag.String("output").pipe(Flag.withAlias("o"), Flag.withDescription("Write to this file"), Flag.optional)
}, (input) =>
  Effect.gen(function*() {
    const { values } = yield* withArgs("export", input.args, ["<thread>"], true)
    const storage = yield* CheckpointStorage
    const rows = Stream.fromIterable(values).pipe(Stream.mapEffect((thread_id) => storage.exportThread(thread_id)))
    const lines = ExportFormat.encode(rows)
    if (Option.isNone(input.output)) {
      return yield* Stream.runForEach(lines, (text: string) => Effect.sync(() => void process.stdout.write(text)))
    }
    const fs = yield* FileSystem.FileSystem
    const file = input.output.value
    yield* Stream.run(Stream.encodeText(lines), fs.sink(file))
    yield* Effect.sync(() => process.stderr.write(`exported ${values.length} thread(s) to ${file}\n`))
  }).pipe(inDatabase("export", input.args, "read"))).pipe(
    Command.withDescription("Threads as a JSON Lines file: every namespace, the whole chain, values and writes, exact")
  )

const importCommand = Command.make("import", {
  args: positional("[url] <file>"),
  replace: Flag.Boolean("replace").pipe(Flag.withDefault(false), Flag.withDescription("Overwrite threads that exist")),
  migrate
}, (input) =>
  Effect.gen(function*() {
    const { values: [file] } = yield* withArgs("import", input.args, ["<file>"])
    const storage = yield* CheckpointStorage
    const fs = yield* FileSystem.FileSystem
    let threads = 0
    yield* ExportFormat.decode(fs.stream(file!).pipe(Stream.decodeText, Stream.splitLines)).pipe(
      Stream.runForEach((rows) =>
        storage.importThread(rows, { replace: input.replace }).pipe(
          Effect.catchTag("ThreadExists", ({ thread_id }) => Effect.fail(exists("import", thread_id))),
          Effect.tap(() => Effect.sync(() => threads++))
        )
      )
    )
    yield* Output.line(`imported ${threads} thread(s)`)
  }).pipe(inDatabase("import", input.args, input.migrate ? "migrate" : "write"))).pipe(
    Command.withDescription("Writes exported threads back (existing threads are refused unless --replace)")
  )

/** A thread the command would overwrite, in the command's words. */
const exists = (command: string, thread_id: string) =>
  new CommandError({ detail: `${command}: thread "${thread_id}" already exists: pass --replace to overwrite it` })

// --- lifecycle ---------------------------------------------------------------

/**
 * Prints what would go; on a go-ahead (`--yes`, or a terminal's yes) runs
 * `each` thread's removal with a progress bar, then `all`, the removal that
 * spans every thread at once.
 */
const destructive = <E, R>(
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
    for (const removal of removals) {
      yield* Output.line(
        `  ${Output.clean(removal.thread_id)}: ${removal.checkpoints} checkpoint(s)${
          removal.whole ? " (the whole thread)" : ""
        }`
      )
    }
    if (input.dryRun) return yield* Output.line(`${name} would remove ${what} (dry run: nothing changed)`)
    if (!input.yes) {
      if (process.stdin.isTTY !== true || process.stdout.isTTY !== true) {
        return yield* new UsageError({
          command: name,
          detail: `${name} would remove ${what}: pass --yes to confirm (not asking: no terminal)`
        })
      }
      const go = yield* Prompt.run(Prompt.Confirm({ message: `${name}: remove ${what}?` }))
      if (!go) return yield* Output.line("nothing changed")
    }
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

const lifecycleFlags = { dryRun, yes, migrate }
const accessOf = (input: { readonly dryRun: boolean; readonly migrate: boolean }): Database.Access =>
  input.dryRun ? "read" : input.migrate ? "migrate" : "write"

const copy = Command.make("copy", {
  args: positional("[url] <source> <target>"),
  replace: Flag.Boolean("replace").pipe(
    Flag.withDefault(false),
    Flag.withDescription("Overwrite the target thread if it exists")
  ),
  migrate
}, (input) =>
  Effect.gen(function*() {
    const { values: [source, target] } = yield* withArgs("copy", input.args, ["<source>", "<target>"])
    yield* (yield* CheckpointStorage).copyThread(source!, target!, { replace: input.replace }).pipe(
      Effect.catchTag("ThreadExists", ({ thread_id }) => Effect.fail(exists("copy", thread_id)))
    )
    yield* Output.line(`copied ${Output.clean(source!)} to ${Output.clean(target!)}`)
  }).pipe(inDatabase("copy", input.args, input.migrate ? "migrate" : "write"))).pipe(
    Command.withDescription("Copies a whole thread (every namespace, the whole chain) to a new thread id")
  )

const prune = Command.make("prune", {
  args: positional("[url] <thread…>"),
  keepLatest: Flag.Boolean("keep-latest").pipe(
    Flag.withDefault(false),
    Flag.withDescription("Keep each namespace's latest checkpoint")
  ),
  delete: Flag.Boolean("delete").pipe(Flag.withDefault(false), Flag.withDescription("Remove the threads")),
  ...lifecycleFlags
}, (input) =>
  Effect.gen(function*() {
    const { values } = yield* withArgs("prune", input.args, ["<thread>"], true)
    if (input.keepLatest === input.delete) {
      return yield* new UsageError({ command: "prune", detail: "give exactly one of --keep-latest and --delete" })
    }
    const inspector = yield* Inspector
    const plan = input.delete ? yield* inspector.plan.delete(values) : yield* inspector.plan.keepLatest(values, 1)
    const strategy = input.delete ? "delete" : "keep_latest"
    yield* destructive("prune", input, plan, {
      each: (thread_id) => CheckpointStorage.use((storage) => storage.prune([thread_id], { strategy }))
    })
  }).pipe(inDatabase("prune", input.args, accessOf(input)))).pipe(
    Command.withDescription("Shrinks threads to their latest checkpoints (--keep-latest) or removes them (--delete)")
  )

const deleteCommand = Command.make(
  "delete",
  { args: positional("[url] <thread…>"), ...lifecycleFlags },
  (input) =>
    Effect.gen(function*() {
      const { values } = yield* withArgs("delete", input.args, ["<thread>"], true)
      const plan = yield* (yield* Inspector).plan.delete(values)
      yield* destructive("delete", input, plan, {
        each: (thread_id) => CheckpointStorage.use((storage) => storage.deleteThread(thread_id))
      })
    }).pipe(inDatabase("delete", input.args, accessOf(input)))
).pipe(
  Command.withDescription("Removes whole threads")
)

const deleteRuns = Command.make(
  "delete-runs",
  { args: positional("[url] <run_id…>"), ...lifecycleFlags },
  (input) =>
    Effect.gen(function*() {
      const { values } = yield* withArgs("delete-runs", input.args, ["<run_id>"], true)
      const plan = yield* (yield* Inspector).plan.deleteRuns(values)
      yield* destructive("delete-runs", input, plan, {
        all: CheckpointStorage.use((storage) => storage.deleteForRuns(values))
      })
    }).pipe(inDatabase("delete-runs", input.args, accessOf(input)))
).pipe(
  Command.withDescription("Removes the checkpoints the given runs wrote, in every thread")
)

/** `90d`, `12h`, `30m`, `2w`, `45s`. */
const parseDuration = (text: string): Duration.Duration | undefined => {
  const match = /^(\d+)\s*(s|m|h|d|w)$/.exec(text.trim())
  if (match === null) return undefined
  const unit =
    { s: "seconds", m: "minutes", h: "hours", d: "days", w: "weeks" }[match[2] as "s" | "m" | "h" | "d" | "w"]
  return Duration.fromInputUnsafe(`${match[1]} ${unit}` as Duration.Input)
}

const retention = Command.make("retention", {
  args: positional("[url]"),
  inactiveFor: Flag.String("inactive-for").pipe(
    Flag.withDescription("Delete threads without activity for this long (90d, 12h, 2w…)"),
    Flag.optional
  ),
  keepLast: Flag.Int("keep-last").pipe(
    Flag.withDescription("Keep this many newest checkpoints per namespace"),
    Flag.optional
  ),
  ...lifecycleFlags
}, (input) =>
  Effect.gen(function*() {
    yield* withArgs("retention", input.args, [])
    const inactiveText = Option.getOrUndefined(input.inactiveFor)
    const inactiveFor = inactiveText === undefined ? undefined : parseDuration(inactiveText)
    const keepLast = Option.getOrUndefined(input.keepLast)
    if (inactiveText !== undefined && inactiveFor === undefined) {
      return yield* new UsageError({
        command: "retention",
        detail: `--inactive-for "${inactiveText}": expected e.g. 90d`
      })
    }
    if (inactiveFor === undefined && keepLast === undefined) {
      return yield* new UsageError({ command: "retention", detail: "give --inactive-for, --keep-last or both" })
    }
    if (keepLast !== undefined && keepLast < 1) {
      return yield* new UsageError({ command: "retention", detail: "--keep-last must be at least 1" })
    }
    const plan = yield* (yield* Inspector).plan.retention({ inactiveFor, keepLast })
    const whole = new Set(plan.filter((removal) => removal.whole).map((removal) => removal.thread_id))
    yield* destructive<CheckpointError, CheckpointStorage>("retention", input, plan, {
      each: (thread_id) =>
        whole.has(thread_id) ? CheckpointStorage.use((storage) => storage.deleteThread(thread_id)) : Effect.void,
      all: keepLast === undefined
        ? undefined
        : CheckpointStorage.use((storage) => Effect.asVoid(storage.applyRetention({ keepLast })))
    })
  }).pipe(inDatabase("retention", input.args, accessOf(input)))).pipe(
    Command.withDescription("Deletes inactive threads and trims long ones")
  )

/**
 * The command tree.
 *
 * @since 0.1.0
 */
export const root = Command.make("langgraph-checkpoints").pipe(
  Command.withDescription(
    "Inspect, export and clean LangGraph checkpoints: pglite:<dir>, postgres://… or cockroachdb://… (default DATABASE_URL)"
  ),
  Command.withSubcommands([
    threads,
    history,
    show,
    diff,
    exportCommand,
    importCommand,
    copy,
    prune,
    deleteCommand,
    deleteRuns,
    retention,
    stats,
    web
  ])
)
