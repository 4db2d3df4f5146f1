/**
 * The closed union of everything a checkpoint operation can fail with. Each
 * error is an `Error` subclass whose message names the operation and the
 * offending field or checkpoint, so plain LangGraph users see the same clear
 * text Effect users match on by tag.
 *
 * Messages quote stored data (ids, keys, a key id read from a ciphertext)
 * and what servers said: every control and bidirectional control in a
 * message is a visible escape (`Visible.escape`), so that a stored id cannot
 * drive the terminal or forge a line of the application's log. The fields
 * keep the data exactly.
 *
 * Each error declares what it means over HTTP, once, beside its fields:
 * Effect's `httpApiStatus` annotation (an `HttpApi` endpoint that lists it
 * among its errors answers with that status), read by `httpStatus`. Both of
 * this package's HTTP faces, the web inspector and the LangGraph server,
 * answer with it: what is absent 404, what conflicts 409, what the caller
 * got wrong 400 (the server answers 422 instead, as LangGraph Platform
 * does), a storage that cannot be reached now 503, anything else (stored
 * data that does not read, a schema or format this release does not work
 * with) 500.
 *
 * @since 0.1.0
 */
import { Schema, SchemaAST, SchemaIssue } from "effect"
import { VERSION } from "./internal/Version.ts"
import { escape } from "./internal/Visible.ts"

/**
 * A config or reference that does not name a place to read or write: a
 * missing or non-string `thread_id`, a missing `checkpoint_id` where one is
 * required, a connection string no driver understands.
 *
 * @since 0.1.0
 */
export class InvalidConfig extends Schema.TaggedError<InvalidConfig>()("InvalidConfig", {
  operation: Schema.String,
  detail: Schema.String
}, { httpApiStatus: 400 }) {
  override get message(): string {
    return escape(`${this.operation}: invalid config: ${this.detail}`)
  }
}

/**
 * A checkpoint, metadata, writes or options value that does not have the
 * shape LangGraph defines. Nothing was written.
 *
 * @since 0.1.0
 */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  operation: Schema.String,
  argument: Schema.String,
  detail: Schema.String
}, { httpApiStatus: 400 }) {
  override get message(): string {
    return escape(`${this.operation}: invalid ${this.argument}: ${this.detail}`)
  }
}

/**
 * The serializer could not encode a value (for example a `BigInt`). Nothing
 * was written.
 *
 * @since 0.1.0
 */
export class SerializationFailed extends Schema.TaggedError<SerializationFailed>()("SerializationFailed", {
  operation: Schema.String,
  path: Schema.String,
  cause: Schema.Defect()
}, { httpApiStatus: 400 }) {
  override get message(): string {
    return escape(`${this.operation}: cannot serialize ${this.path}: ${describe(this.cause)}`)
  }
}

/**
 * Stored data that no longer decodes: a checkpoint row, blob or write that
 * was damaged or written by an incompatible serializer.
 *
 * @since 0.1.0
 */
export class CorruptedCheckpoint extends Schema.TaggedError<CorruptedCheckpoint>()("CorruptedCheckpoint", {
  thread_id: Schema.String,
  checkpoint_ns: Schema.String,
  checkpoint_id: Schema.String,
  detail: Schema.String
}, { httpApiStatus: 500 }) {
  override get message(): string {
    return escape(`${checkpointAt(this)} cannot be read: ${this.detail}`)
  }
}

/**
 * The storage backend failed. `retryable` says whether running the same
 * operation again may succeed (a serialization conflict, a lost connection on
 * idempotent work); `attempts` how many times it ran (more than one when
 * retries ran out), `sqlState` the server's last SQLSTATE, and `hint` what
 * it means where that needs saying (a read-only endpoint, a pooler refusing
 * a setting).
 *
 * @since 0.1.0
 */
export class StorageFailure extends Schema.TaggedError<StorageFailure>()("StorageFailure", {
  operation: Schema.String,
  retryable: Schema.Boolean,
  attempts: Schema.optional(Schema.Finite),
  sqlState: Schema.optional(Schema.String),
  hint: Schema.optional(Schema.String),
  cause: Schema.Defect()
}, { httpApiStatus: 503 }) {
  override get message(): string {
    const attempts = this.attempts !== undefined && this.attempts > 1 ? ` after ${this.attempts} attempts` : ""
    const state = this.sqlState === undefined ? "" : ` (SQLSTATE ${this.sqlState})`
    const retryable = this.retryable && attempts === "" ? " (retryable)" : ""
    const hint = this.hint === undefined ? "" : `${this.hint}: `
    return escape(`${this.operation}: storage failed${attempts}${state}${retryable}: ${hint}${describe(this.cause)}`)
  }
}

/**
 * The database's schema is not the one this library version works with:
 * newer than it knows (written by a later version; upgrade the library), or
 * older (run the migrations first).
 *
 * @since 0.1.0
 */
export class IncompatibleSchema extends Schema.TaggedError<IncompatibleSchema>()("IncompatibleSchema", {
  found: Schema.Finite,
  supported: Schema.Finite
}, { httpApiStatus: 500 }) {
  override get message(): string {
    if (this.found > this.supported) {
      return `the database schema is at migration ${this.found}, newer than this library knows (up to ${this.supported}): upgrade langgraph-checkpoint-effect`
    }
    const state = this.found < 0 ? "has no checkpoint tables" : `is at migration ${this.found}`
    return `the database schema ${state}, this library needs migration ${this.supported}: run the migrations first`
  }
}

/**
 * Stored data in a storage format this process does not read: a database
 * raised to a format level above the highest it supports (`level`), or a
 * row in an encoding a newer release writes (`encoding`, with its `level`
 * when this release knows it). The data is fine: a release that reads it
 * does. `release` names the release that raised the database or writes the
 * encoding, where known; `at`, the checkpoint the row belongs to.
 *
 * @since 0.1.0
 */
export class IncompatibleFormat extends Schema.TaggedError<IncompatibleFormat>()("IncompatibleFormat", {
  operation: Schema.String,
  encoding: Schema.optional(Schema.String),
  level: Schema.optional(Schema.Finite),
  supported: Schema.Finite,
  release: Schema.optional(Schema.String),
  at: Schema.optional(Schema.Struct({
    thread_id: Schema.String,
    checkpoint_ns: Schema.String,
    checkpoint_id: Schema.String
  }))
}, { httpApiStatus: 500 }) {
  override get message(): string {
    const level = this.level === undefined ? "" : `format level ${this.level}`
    const what = this.encoding === undefined
      ? `the database is at storage ${level}`
      : `${this.at === undefined ? "a row" : checkpointAt(this.at)} is stored as ${this.encoding}${
        level === "" ? "" : ` (${level})`
      }`
    const by = this.release === undefined
      ? "written by a newer release"
      : `${this.encoding === undefined ? "raised" : "written"} by langgraph-checkpoint-effect ${this.release}`
    return escape(
      `${this.operation}: ${what}, ${by}, which this one (${VERSION}, format levels up to ${this.supported}) ` +
        "does not read: the data is fine; upgrade this process (see Upgrading in the README)"
    )
  }
}

/**
 * An operation on a whole thread named a thread that has no checkpoint.
 *
 * @since 0.1.0
 */
export class ThreadNotFound extends Schema.TaggedError<ThreadNotFound>()("ThreadNotFound", {
  operation: Schema.String,
  thread_id: Schema.String
}, { httpApiStatus: 404 }) {
  override get message(): string {
    return escape(`${this.operation}: thread "${this.thread_id}" has no checkpoints`)
  }
}

/**
 * A copy would overwrite a thread that exists (pass `replace` to allow it).
 *
 * @since 0.1.0
 */
export class ThreadExists extends Schema.TaggedError<ThreadExists>()("ThreadExists", {
  operation: Schema.String,
  thread_id: Schema.String
}, { httpApiStatus: 409 }) {
  override get message(): string {
    return escape(`${this.operation}: thread "${this.thread_id}" already exists (pass replace: true to overwrite it)`)
  }
}

/**
 * A checkpoint that an operation builds on is gone: a `put` whose parent was
 * deleted or pruned while the writer ran. Nothing was written, so a slow
 * writer cannot bring a deleted thread back half alive.
 *
 * @since 0.1.0
 */
export class CheckpointNotFound extends Schema.TaggedError<CheckpointNotFound>()("CheckpointNotFound", {
  operation: Schema.String,
  thread_id: Schema.String,
  checkpoint_ns: Schema.String,
  checkpoint_id: Schema.String
}, { httpApiStatus: 404 }) {
  override get message(): string {
    return escape(
      `${this.operation}: ${
        checkpointAt(this)
      } no longer exists (the thread was deleted or pruned): nothing was written`
    )
  }
}

/**
 * A writer whose claim on a thread is no longer the newest: another writer
 * claimed the thread since (`claimThread`), so this one's `put` or
 * `putWrites` (made with `configurable.writer_epoch`) would interleave with
 * it. Nothing was written; the writer should stop (its work is the newer
 * writer's now).
 *
 * @since 0.4.0
 */
export class ThreadConflict extends Schema.TaggedError<ThreadConflict>()("ThreadConflict", {
  operation: Schema.String,
  thread_id: Schema.String,
  /** The claim the writer held. */
  epoch: Schema.Finite
}, { httpApiStatus: 409 }) {
  override get message(): string {
    return escape(
      `${this.operation}: thread "${this.thread_id}" was claimed by another writer since this one's claim ` +
        `(writer_epoch ${this.epoch}): nothing was written`
    )
  }
}

/**
 * A PGlite directory another opener holds. PGlite is one process's
 * database: a second one over the same files would overwrite the first's
 * work when it closes, so the second opener (another process, or another
 * layer in this one) gets this instead, naming the holder's process.
 *
 * @since 0.1.0
 */
export class DatabaseLocked extends Schema.TaggedError<DatabaseLocked>()("DatabaseLocked", {
  directory: Schema.String,
  pid: Schema.Finite
}, { httpApiStatus: 503 }) {
  override get message(): string {
    const self = typeof process !== "undefined" && process.pid === this.pid ? " (this process: another layer)" : ""
    return escape(
      `connect: the PGlite database at ${this.directory} is in use by process ${this.pid}${self}: ` +
        "PGlite is one process's database (stop that process, or read a snapshot: Pglite.snapshot, or " +
        "langgraph-checkpoints' reading commands)"
    )
  }
}

/**
 * A PGlite directory written by another major version of PostgreSQL than
 * the engine this release runs: PostgreSQL opens only its own major's data
 * directories. Nothing was changed. One written by an older engine is
 * carried over by `langgraph-checkpoints upgrade-pglite <directory>` (the
 * old directory is kept); one written by a newer engine needs the release
 * that wrote it, or a newer one.
 *
 * @since 0.4.0
 */
export class IncompatibleDirectory extends Schema.TaggedError<IncompatibleDirectory>()("IncompatibleDirectory", {
  directory: Schema.String,
  /** The PostgreSQL major that wrote the directory (its `PG_VERSION`). */
  found: Schema.String,
  /** The PostgreSQL major of this release's PGlite. */
  supported: Schema.String
}, { httpApiStatus: 500 }) {
  override get message(): string {
    const older = Number(this.found) < Number(this.supported)
    return escape(
      `connect: the PGlite database at ${this.directory} was written by PostgreSQL ${this.found}, and this ` +
        `release's PGlite runs PostgreSQL ${this.supported}, which cannot open it (nothing was changed): ` +
        (older
          ? `carry it over with \`npx langgraph-checkpoints upgrade-pglite ${this.directory}\` (the old directory is kept)`
          : "open it with the release that wrote it, or a newer one")
    )
  }
}

/**
 * Every error a checkpoint operation or a storage layer can fail with.
 *
 * @since 0.1.0
 */
export type CheckpointError =
  | InvalidConfig
  | InvalidInput
  | SerializationFailed
  | CorruptedCheckpoint
  | StorageFailure
  | IncompatibleSchema
  | IncompatibleFormat
  | ThreadNotFound
  | ThreadExists
  | CheckpointNotFound
  | ThreadConflict
  | DatabaseLocked
  | IncompatibleDirectory

/**
 * The schema of the union, for matching and for crossing process boundaries.
 *
 * @since 0.1.0
 */
export const CheckpointError = Schema.Union([
  InvalidConfig,
  InvalidInput,
  SerializationFailed,
  CorruptedCheckpoint,
  StorageFailure,
  IncompatibleSchema,
  IncompatibleFormat,
  ThreadNotFound,
  ThreadExists,
  CheckpointNotFound,
  ThreadConflict,
  DatabaseLocked,
  IncompatibleDirectory
])

/** Each error's status, by its tag, from its class's annotation. */
const statuses: ReadonlyMap<unknown, number> = new Map(
  CheckpointError.members.map((member) => {
    const status = SchemaAST.resolve(member.ast)?.httpApiStatus
    return [member.identifier, typeof status === "number" ? status : 500]
  })
)

/**
 * The HTTP status an error of the union means (see the module's
 * description), `undefined` for anything else. By its tag, so that an
 * error of another copy of this package, or one decoded from elsewhere,
 * answers the same.
 *
 * @since 0.4.0
 */
export const httpStatus = (error: unknown): number | undefined =>
  typeof error === "object" && error !== null && "_tag" in error ? statuses.get(error._tag) : undefined

/**
 * Renders a Schema issue as one line: the path that failed, then what was expected.
 *
 * @since 0.1.0
 */
export const formatIssue = (issue: SchemaIssue.Issue): string => formatter(issue).replace(/\s*\n\s*/g, " ")

const formatter = SchemaIssue.makeFormatterDefault()

/** Names a checkpoint in a message: its id, its thread, and its namespace unless the root. */
const checkpointAt = (
  place: { readonly thread_id: string; readonly checkpoint_ns: string; readonly checkpoint_id: string }
) =>
  `checkpoint ${place.checkpoint_id} of thread "${place.thread_id}"` +
  (place.checkpoint_ns === "" ? "" : ` (namespace "${place.checkpoint_ns}")`)

const messageOf = (value: unknown): string | undefined =>
  typeof value === "object" && value !== null && "message" in value && typeof value.message === "string"
    ? value.message
    : undefined

/**
 * A cause's message; for an `SqlError`, whose own message is generic ("Failed
 * to connect"), with what the server or the socket said (its reason's cause).
 */
const describe = (cause: unknown): string => {
  const message = messageOf(cause)
  if (message === undefined) return typeof cause === "string" ? cause : Object.prototype.toString.call(cause)
  const reason = typeof cause === "object" && cause !== null && "reason" in cause ? cause.reason : undefined
  const detail = messageOf(
    typeof reason === "object" && reason !== null && "cause" in reason ? reason.cause : undefined
  )
  return detail === undefined || message.includes(detail) ? message : `${message}: ${detail}`
}
