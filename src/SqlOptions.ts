/**
 * The options of the SQL layers, as the package's users type them: the
 * storage over a client (`SqlStorageOptions`), the pool of its own
 * (`PoolOptions`, `ConnectionSettings`), TLS and group commit. Apart from
 * the modules that act on them, so that the package's declarations name
 * these and nothing of the driver (statements, projections, batches).
 *
 * @since 0.2.0
 */
import type { Duration, Redacted } from "effect"
import type { Policy } from "./Retry.ts"
import type { Snapshot } from "./Snapshot.ts"

/**
 * The database behind a client: PostgreSQL, PGlite (PostgreSQL in one
 * session of this process, which `Pglite.layer` opens) or CockroachDB.
 *
 * @since 0.1.0
 */
export type Dialect = "postgres" | "pglite" | "cockroach"

/**
 * @since 0.1.0
 */
export interface SqlStorageOptions extends SqlDriverOptions {
  /** The database schema that holds the tables (default `public`). */
  readonly schema?: string | undefined
  /**
   * The database behind the client (default `postgres`). `pglite` for a
   * client that is PGlite's one session: nothing else runs beside it, so
   * statements lock no rows (one still can, as `postgres`, at a cost).
   */
  readonly dialect?: Dialect | undefined
  /** How retryable failures are retried (default `Retry.defaultPolicy`); wins over `retryWindow`. */
  readonly retry?: Policy | undefined
  /**
   * How long an operation keeps retrying (default `Retry.defaultWindow`,
   * 10 seconds): long enough for the failover of a primary to its standby,
   * as in `Retry.windowed`. Raise it to ride out a managed failover (often
   * 30 seconds or more); 0 turns retries off. Finite: a window without end
   * is an `InvalidConfig` (it would keep a start on an unreachable server
   * from ever failing).
   */
  readonly retryWindow?: Duration.Input | undefined
  /**
   * Run the migrations when the layer starts (default `true`). With `false`
   * the layer only checks that the schema is current, e.g. when migrations
   * run as a separate deploy step with a schema-owner role.
   */
  readonly migrate?: boolean | undefined
  /**
   * Open the database for reading only (default `false`).
   *
   * **When to use**: to look into a database that must not change — a
   * production database from a support shell, a restored backup, or one
   * LangGraph's own PostgreSQL savers wrote (JavaScript or Python), which is
   * then read as it is instead of being migrated.
   *
   * **Details**: no migration runs and nothing is created; the schema is
   * checked instead, and may be this library's, fully migrated, or
   * LangGraph's (see `TableOwner.resolve`). Reads (`getTuple`, `list`,
   * `getDeltaChannelHistory`) work on both. Every write (`put`,
   * `putWrites`, `deleteThread` and the thread lifecycle) fails with a
   * `StorageFailure` before it reaches a connection. The layers that open
   * their own connections also make the server refuse writes: the
   * PostgreSQL and CockroachDB pools begin every transaction `READ ONLY`
   * (not a session default, which poolers refuse), PGlite's session is
   * read-only. For a guarantee from the server itself on every statement,
   * connect as a role that may only read.
   *
   * **Gotchas**: `migrate` is ignored. A database without checkpoint tables,
   * part-way through this library's migrations, or newer than this library
   * fails with `IncompatibleSchema`. PGlite does not create a `dataDir`
   * that holds no database: that is an `InvalidConfig`.
   */
  readonly readOnly?: boolean | undefined
}

/**
 * @since 0.1.0
 */
export interface SqlDriverOptions {
  /** Checkpoints fetched per `list` query (default 100). */
  readonly pageSize?: number | undefined
  /**
   * How concurrent `put`s and `putWrites` share statements (see
   * `GroupCommit`); `false` sends each call alone.
   */
  readonly groupCommit?: GroupCommitOptions | false | undefined
  /**
   * Bounds each statement (default: none): one still running then is
   * interrupted, which cancels it on the server, and fails without retry.
   * Enforced here rather than as `statement_timeout`, which poolers refuse
   * at connect and which a single statement outside a transaction could
   * only get from the role's or database's settings.
   */
  readonly statementTimeout?: Duration.Input | undefined
}

/**
 * @since 0.1.0
 */
export interface GroupCommitOptions {
  /**
   * Batches in flight at once (default 4). Calls arriving while that many
   * are out wait and leave together in the next.
   */
  readonly concurrency?: number | undefined
  /**
   * How long a batch waits for company even when a slot is free (default
   * none): a little latency for fewer statements, for throughput-first
   * deployments.
   */
  readonly window?: Duration.Input | undefined
  /**
   * Calls per batch at most (default 16): small batches keep the server
   * storing one while this process prepares the next, where one batch of
   * every waiting call would leave each side idle in turn.
   */
  readonly maxBatch?: number | undefined
}

/**
 * @since 0.1.0
 */
export interface PoolOptions extends Omit<SqlStorageOptions, "dialect">, ConnectionSettings {
  /** A `postgres://` URL. Explicit fields below win over its parts. */
  readonly url?: string | Redacted.Redacted | undefined
  readonly host?: string | undefined
  readonly port?: number | undefined
  readonly database?: string | undefined
  readonly username?: string | undefined
  readonly password?: string | Redacted.Redacted | undefined
  /** Reported to the server as `application_name`. */
  readonly applicationName?: string | undefined
  /**
   * The largest message the client accepts from the server, in bytes
   * (default 1 GiB, PostgreSQL's own limit for one value). A checkpoint and
   * its channel values come back as one row.
   */
  readonly maxMessageSize?: number | undefined
  /**
   * The isolation level of the transactions opened on the pool — the
   * storage's own (`deleteThread`, the thread lifecycle, migrations) and any
   * opened through `layerSqlClient` (default: the server's). It begins each
   * transaction (`BEGIN ISOLATION LEVEL …`); a single statement outside a
   * transaction runs at the server's default (see `Transactions`).
   * Serialization failures it may cause are retried.
   */
  readonly isolation?: "serializable" | "repeatable read" | "read committed" | undefined
  /**
   * TLS for the connections: `true`, or TLS options (a `ca`, a client `cert`
   * and `key`, …). Without it, the URL's `sslmode`, `sslrootcert`,
   * `sslcert` and `sslkey` decide (see `Tls`).
   */
  readonly ssl?: boolean | TlsOptions | undefined
}

/**
 * The pool's connections: how many, for how long, and how they speak.
 *
 * @since 0.1.0
 */
export interface ConnectionSettings {
  /** The most connections the pool opens (default 10): an integer, 1 or more. */
  readonly poolSize?: number | undefined
  /**
   * How long a connection may sit unused before the pool closes it (default
   * 60 seconds). Keep it below whatever reaps idle connections in front of
   * the server (a pooler's `client_idle_timeout`, a load balancer's idle
   * timeout, the server's `idle_session_timeout`); a connection closed by
   * them anyway is replaced silently on next use. Finite, more than 0.
   */
  readonly idleTimeout?: Duration.Input | undefined
  /**
   * The longest a connection lives, however busy (default: no limit). Set
   * it to spread connections over servers that DNS or a load balancer adds
   * later, or to follow a pooler's `server_lifetime`. Finite, more than 0
   * (leave it out for no limit).
   */
  readonly connectionTTL?: Duration.Input | undefined
  /**
   * Bounds every statement of the storage (default: none). A statement
   * still running then is cancelled on the server (a cancel request, which
   * poolers forward) and the call fails with a `StorageFailure` that is not
   * retried. It is enforced by this process, not sent as the
   * `statement_timeout` setting, which poolers refuse at connect. Finite,
   * more than 0 (leave it out for no bound).
   */
  readonly statementTimeout?: Duration.Input | undefined
  /**
   * Use named prepared statements. By default, yes unless a connection
   * pooler answers when the pool starts (see `Pooler`); the URL's
   * `prepare=false` or `prepare=true` decides too (this option wins). Turn it
   * on behind PgBouncer 1.21+ with `max_prepared_statements` set, or a
   * session-mode pooler.
   */
  readonly prepare?: boolean | undefined
}

/**
 * TLS settings for the connections (a subset of Node's `tls.ConnectionOptions`,
 * declared here so that this package's types need no `@types/node`).
 *
 * @since 0.1.0
 */
export interface TlsOptions {
  /** The CA certificates the server is verified against (default: the system's). */
  readonly ca?: string | Uint8Array | ReadonlyArray<string | Uint8Array> | undefined
  /** A client certificate and its key (PEM). */
  readonly cert?: string | Uint8Array | undefined
  readonly key?: string | Uint8Array | undefined
  /** The name the certificate must carry (default: the host connected to). */
  readonly servername?: string | undefined
  /** `false` accepts any certificate: encryption without authentication. */
  readonly rejectUnauthorized?: boolean | undefined
  /** Replaces the host name check (`() => undefined` skips it, as `verify-ca` does). */
  readonly checkServerIdentity?: ((host: string, certificate: unknown) => Error | undefined) | undefined
}

/**
 * @since 0.1.0
 */
export interface PgliteOptions extends Omit<SqlStorageOptions, "dialect"> {
  /**
   * A directory to persist the database in (created if missing, unless
   * `readOnly`). Without one, the database lives in memory and goes with
   * the layer. One process at a time: while a layer holds the directory,
   * any other opener (another process, or another layer here), read-only
   * or not, fails with `DatabaseLocked`.
   */
  readonly dataDir?: string | undefined
  /**
   * A snapshot of a held directory (see `snapshot`) to open in memory
   * instead of `dataDir`: what is written to it goes with the layer.
   */
  readonly snapshot?: Snapshot | undefined
  /**
   * A PGlite instance to use instead of opening one (e.g. one the
   * application also queries). The layer does not close it, nor changes its
   * session: with `readOnly`, only the storage refuses writes.
   */
  readonly pglite?: PgliteSession | undefined
  /**
   * PostgreSQL's `shared_buffers` for a database the layer opens, e.g.
   * `"16MB"` (default: the data directory's, PGlite's 128MB). PGlite zeroes
   * them at every open, which is most of a second: a short-lived process
   * (the CLI) opens faster with less.
   */
  readonly sharedBuffers?: string | undefined
}

/**
 * What the layer uses of a PGlite instance (any `PGlite` is one). Declared
 * here so the package's types do not pull in PGlite's own declarations,
 * which need Emscripten's and Node's type packages.
 *
 * @since 0.1.0
 */
export interface PgliteSession {
  readonly runExclusive: <T>(fn: () => Promise<T>) => Promise<T>
  readonly execProtocolRawStream: (
    message: Uint8Array,
    options: { readonly onRawData: (data: Uint8Array) => void }
  ) => Promise<void>
}
