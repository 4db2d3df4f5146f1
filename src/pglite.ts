/**
 * PGlite, the embedded default: `langgraph-checkpoint-effect/pglite`.
 *
 * PostgreSQL compiled to WebAssembly, running in this process: durable
 * checkpoints with no server, no Docker and no keys. The same SQL driver runs
 * on it through `@effect/sql-pg`, whose connection speaks the wire protocol
 * to PGlite directly instead of over a socket.
 *
 * PGlite is one session, so the client has exactly one connection, and each
 * exchange runs under PGlite's own lock. `@electric-sql/pglite` is a
 * dependency that only this module loads.
 *
 * @since 0.1.0
 */
import { PgClient } from "@effect/sql-pg"
import { PGlite } from "@electric-sql/pglite"
import { Effect, Layer, type Scope } from "effect"
import { mkdir } from "node:fs/promises"
import { dirname, resolve } from "node:path"
import { Duplex } from "node:stream"
import { type IncompatibleSchema, StorageFailure } from "./CheckpointError.ts"
import type { CheckpointStorage } from "./CheckpointStorage.ts"
import * as SqlStorage from "./sql/SqlStorage.ts"

/**
 * @since 0.1.0
 */
export interface PgliteOptions extends Omit<SqlStorage.SqlStorageOptions, "dialect"> {
  /**
   * A directory to persist the database in (created if missing). Without
   * one, the database lives in memory and goes with the layer.
   */
  readonly dataDir?: string | undefined
  /**
   * A PGlite instance to use instead of opening one (e.g. one the
   * application also queries). The layer does not close it.
   */
  readonly pglite?: PgliteSession | undefined
}

/**
 * What the layer uses of a PGlite instance (any `PGlite` is one). Declared
 * here so this module's types do not pull in PGlite's own declarations,
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

/**
 * A duplex stream that is PGlite's end of a connection: what the client
 * writes (whole protocol messages) is executed in order, and PGlite's
 * replies are read back.
 */
const connect = (pglite: PgliteSession): Duplex => {
  let previous: Promise<void> = Promise.resolve()
  const duplex: Duplex = new Duplex({
    read() {},
    write(chunk: Uint8Array, _encoding, callback) {
      const message = new Uint8Array(chunk)
      previous = previous.then(() =>
        pglite.runExclusive(() =>
          pglite.execProtocolRawStream(message, { onRawData: (data) => void duplex.push(Buffer.from(data)) })
        )
      )
      previous.then(() => callback(), (error: Error) => callback(error))
    },
    final(callback) {
      duplex.push(null)
      callback()
    }
  })
  return duplex
}

const open = (dataDir: string | undefined): Effect.Effect<PgliteSession, StorageFailure, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        // PGlite creates the directory itself, but not its parents.
        if (dataDir !== undefined) await mkdir(dirname(resolve(dataDir)), { recursive: true })
        return PGlite.create(dataDir) as Promise<PGlite>
      },
      catch: (cause) => new StorageFailure({ operation: "connect", retryable: false, cause })
    }),
    (pglite) => Effect.promise(() => pglite.close())
  )

/**
 * The storage on an embedded PGlite database, opened with the layer and
 * closed (and flushed to `dataDir`) when the layer is released.
 *
 * @since 0.1.0
 */
export const layer = (
  options: PgliteOptions = {}
): Layer.Layer<CheckpointStorage, StorageFailure | IncompatibleSchema> =>
  // One session: one batch at a time, the others gathering behind it.
  SqlStorage.layer({ groupCommit: { concurrency: 1 }, ...options, dialect: "postgres" }).pipe(
    Layer.provide(PgClient.layerFrom(
      (options.pglite === undefined ? open(options.dataDir) : Effect.succeed(options.pglite)).pipe(
        Effect.flatMap((pglite) =>
          PgClient.makeClient({
            stream: () => connect(pglite),
            username: "postgres",
            database: "postgres",
            applicationName: "langgraph-checkpoint-effect",
            maxMessageSize: 1024 * 1024 * 1024
          })
        ),
        Effect.mapError((cause) =>
          cause instanceof StorageFailure
            ? cause
            : new StorageFailure({ operation: "connect", retryable: false, cause })
        )
      )
    ))
  )
