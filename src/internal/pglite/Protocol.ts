/**
 * The owner's socket: where a PGlite directory's sockets live, and the one
 * exchange they speak. A client sends one line and reads one JSON line back:
 *
 * - `who` → `{"pid":1234,"owner":true}` (`owner: false` while the process
 *   is still deciding whether the directory is its, see `Owner`);
 * - `snapshot <maxBytes>` → `{"pid":…,"takenAt":"…","file":"…","bytes":N}`:
 *   the owner has written a snapshot to that file of the directory, which
 *   the client reads before it hangs up (the owner removes it then, or after
 *   `HOLD` if the client never does); or `{"pid":…,"error":"…"}`.
 *
 * The client's hanging up is its own act, never an echo: the owner ends its
 * side as it answers, and a Node socket by default ends its own side when
 * the other's ends, which had the client hang up on the answer itself, so
 * the owner removed the file while the client was still on its way to read
 * it (the review saw `ENOENT` on 2 of 4 runs of the CLI). The client's socket
 * allows half-open connections: it hangs up when its scope closes.
 *
 * A file, not the socket, carries the snapshot: the owner writes it in one
 * go, where a socket would take a turn of its event loop (busy with the
 * application) per buffer full. Anything else, a request line longer than
 * 64 bytes, or none within 5 seconds, is answered as `who`.
 *
 * @since 0.1.0
 */
import { Effect, Option, Schema, type Scope } from "effect"
import { createHash } from "node:crypto"
import { open, readdir } from "node:fs/promises"
import { connect, createServer, type Socket } from "node:net"
import { join } from "node:path"
import { StorageFailure } from "../../CheckpointError.ts"

/** The longest socket path every Unix takes (sun_path is 104 bytes on macOS, 108 on Linux, with a NUL). */
const MAX_SOCKET_PATH = 103

/** The longest name an owner gives its sockets: a prefix, a pid and 12 hex digits. */
const MAX_NAME = 40

/**
 * Where a directory's sockets are: listed by their real path, reached by
 * `address` (the same path, unless too long for a socket; then, on Linux,
 * through `/proc/self/fd`, which stays short). On Windows, one named pipe
 * whatever the name (`exclusive`: only one process can listen on it).
 *
 * @since 0.1.0
 */
export interface Place {
  readonly directory: string
  readonly path: (name: string) => string
  readonly address: (name: string) => string
  readonly names: Effect.Effect<ReadonlyArray<string>, StorageFailure>
  readonly exclusive: boolean
}

const failure = (operation: string) => (cause: unknown) => new StorageFailure({ operation, retryable: false, cause })

/**
 * The place of `directory` (a real path), for the life of the scope.
 *
 * @since 0.1.0
 */
export const place = (directory: string): Effect.Effect<Place, StorageFailure, Scope.Scope> => {
  const path = (name: string) => join(directory, name)
  if (process.platform === "win32") {
    const pipe = `\\\\.\\pipe\\langgraph-checkpoint-effect-${
      createHash("sha256").update(directory.toLowerCase()).digest("hex").slice(0, 32)
    }`
    return Effect.succeed({ directory, path, address: () => pipe, names: Effect.succeed([""]), exclusive: true })
  }
  const names = Effect.tryPromise({ try: () => readdir(directory), catch: failure("connect") })
  if (Buffer.byteLength(directory) + 1 + MAX_NAME <= MAX_SOCKET_PATH) {
    return Effect.succeed({ directory, path, address: path, names, exclusive: false })
  }
  if (process.platform !== "linux") {
    return Effect.fail(
      new StorageFailure({
        operation: "connect",
        retryable: false,
        cause: `the path ${directory} is too long for the socket that locks it ` +
          `(${MAX_SOCKET_PATH - 1 - MAX_NAME} bytes at most on this system): move the database to a shorter path`
      })
    )
  }
  // A handle on the directory makes its sockets reachable by a short path.
  return Effect.acquireRelease(
    Effect.tryPromise({ try: () => open(directory, "r"), catch: failure("connect") }),
    (handle) => Effect.promise(() => handle.close())
  ).pipe(Effect.map((handle) => ({
    directory,
    path,
    address: (name: string) => `/proc/self/fd/${handle.fd}/${name}`,
    names,
    exclusive: false
  })))
}

/**
 * A request the owner understands.
 *
 * @since 0.1.0
 */
export type Request =
  | { readonly _tag: "who" }
  | { readonly _tag: "snapshot"; readonly maxBytes: number }

const parse = (line: string): Request | undefined => {
  if (line === "who") return { _tag: "who" }
  const snapshot = /^snapshot (\d{1,16})$/.exec(line)
  return snapshot === null ? undefined : { _tag: "snapshot", maxBytes: Number(snapshot[1]) }
}

/**
 * What the owner answers: the header line, and what to do once the client
 * has hung up.
 *
 * @since 0.1.0
 */
export interface Response {
  readonly header: Record<string, unknown>
  readonly hungUp?: Effect.Effect<void> | undefined
}

/**
 * The reply to `who`.
 *
 * @since 0.1.0
 */
export const Who = Schema.Struct({ pid: Schema.Finite, owner: Schema.Boolean })

/**
 * A `who` reply, or `undefined` if the header is not one.
 *
 * @since 0.1.0
 */
export const decodeWho = (header: unknown): typeof Who.Type | undefined =>
  Option.getOrUndefined(Schema.decodeUnknownOption(Who)(header))

/**
 * The reply to `snapshot`.
 *
 * @since 0.1.0
 */
export const Snapshot = Schema.Union([
  Schema.Struct({ pid: Schema.Finite, takenAt: Schema.String, file: Schema.String, bytes: Schema.Finite }),
  Schema.Struct({ pid: Schema.Finite, error: Schema.String })
])

const MAX_REQUEST = 64
const REQUEST_TIMEOUT = 5_000

/**
 * How long an answer that leaves something behind (a snapshot's file) waits
 * for the client to hang up: a client stuck that long will not read it, and
 * the owner takes no other snapshot meanwhile.
 */
const HOLD = 10 * 60_000

/**
 * Reads one request line from `socket` and answers it with `handle`; the
 * client hangs up. A request that is not one, or does not come in time, is
 * answered as `who`: the owner never hangs up without saying who it is,
 * so a client that sees a hang-up knows the socket is closing.
 */
const answer = (socket: Socket, handle: (request: Request) => Effect.Effect<Response>) => {
  let received = ""
  let asked = false
  const reply = (request: Request) => {
    if (asked) return
    asked = true
    socket.setTimeout(0)
    socket.off("data", onData)
    void Effect.runPromise(handle(request)).then((response) => {
      if (response.hungUp !== undefined) {
        const hungUp = response.hungUp
        const held = setTimeout(() => socket.destroy(), HOLD)
        held.unref()
        socket.once("close", () => {
          clearTimeout(held)
          void Effect.runPromise(hungUp)
        })
      }
      socket.end(`${JSON.stringify(response.header)}\n`)
    }, () => socket.destroy())
  }
  const onData = (chunk: Buffer) => {
    received += chunk.toString("latin1")
    const end = received.indexOf("\n")
    if (end !== -1) reply(parse(received.slice(0, end)) ?? { _tag: "who" })
    else if (received.length > MAX_REQUEST) reply({ _tag: "who" })
  }
  socket.on("error", () => socket.destroy())
  socket.setTimeout(REQUEST_TIMEOUT, () => reply({ _tag: "who" }))
  socket.on("data", onData)
}

/**
 * A socket listening: `close` stops it and hangs up on its clients (Node
 * also removes the path it was bound to).
 *
 * @since 0.1.0
 */
export interface Listening {
  readonly close: Effect.Effect<void>
}

/**
 * Why listening failed: Node's error, with its `code` (`EADDRINUSE`, …).
 *
 * @since 0.1.0
 */
export type ListenError = Error & { readonly code?: string | undefined }

/**
 * Listens at `address`, answering with `handle`.
 *
 * @since 0.1.0
 */
export const listen = (
  address: string,
  handle: (request: Request) => Effect.Effect<Response>
): Effect.Effect<Listening, ListenError> =>
  Effect.callback<Listening, ListenError>((resume) => {
    const connections = new Set<Socket>()
    const server = createServer((socket) => {
      connections.add(socket)
      socket.once("close", () => connections.delete(socket))
      answer(socket, handle)
    })
    server.once("error", (error) => resume(Effect.fail(error)))
    server.listen(address, () =>
      resume(Effect.succeed({
        close: Effect.callback<void>((done) => {
          server.close(() => done(Effect.void))
          // A client that keeps its connection open does not keep the owner from closing.
          for (const socket of connections) socket.destroy()
        })
      })))
  })

/**
 * What asking a socket gave.
 *
 * @since 0.1.0
 */
export type Reply =
  /** Nobody listens there any more: its owner has gone. */
  | { readonly _tag: "Refused" }
  /** No such socket (removed since it was listed). */
  | { readonly _tag: "Absent" }
  /** It hung up without answering: it stopped listening (it withdrew, closed or died) meanwhile. */
  | { readonly _tag: "Gone"; readonly code?: string | undefined }
  /** Something listens, but did not answer in time (or answered nonsense), or cannot be reached. */
  | { readonly _tag: "Silent"; readonly code?: string | undefined }
  | { readonly _tag: "Answered"; readonly header: unknown }

/** The longest header line a client reads. */
const MAX_HEADER = 4096

/** What a socket error says of the other side. */
const failed = (code: string | undefined, connected: boolean): Reply => {
  if (!connected && code === "ECONNREFUSED") return { _tag: "Refused" }
  if (!connected && code === "ENOENT") return { _tag: "Absent" }
  // Reset, even before Node saw the connection made: the listener closed with it pending.
  if (connected || code === "ECONNRESET" || code === "EPIPE") return { _tag: "Gone", code }
  return { _tag: "Silent", code }
}

/** Connects, sends `request` and reads the header line; the socket stays open. */
const exchange = (address: string, request: string, timeout: number) =>
  Effect.callback<{ readonly reply: Reply; readonly socket: Socket }>((resume) => {
    // Half-open: the owner's end of its answer does not hang this side up (see the module header).
    const socket = connect({ path: address, allowHalfOpen: true })
    let connected = false
    let settled = false
    let received = Buffer.alloc(0)
    // The first outcome counts; the owner's end of an answered exchange (it has said all) does not.
    const done = (reply: Reply) => {
      if (settled) return
      settled = true
      socket.setTimeout(0)
      if (reply._tag !== "Answered") socket.destroy()
      resume(Effect.succeed({ reply, socket }))
    }
    socket.setTimeout(timeout, () => done({ _tag: "Silent", code: "ETIMEDOUT" }))
    socket.on("connect", () => {
      connected = true
      socket.write(`${request}\n`)
    })
    socket.on("error", (error: NodeJS.ErrnoException) => done(failed(error.code, connected)))
    socket.on("data", (chunk: Buffer) => {
      if (settled) return
      received = Buffer.concat([received, chunk])
      const end = received.indexOf(10)
      if (end === -1) return received.length > MAX_HEADER ? done({ _tag: "Silent" }) : undefined
      try {
        done({ _tag: "Answered", header: JSON.parse(received.subarray(0, end).toString("utf8")) })
      } catch {
        done({ _tag: "Silent" })
      }
    })
    // Ended before the whole line came: not an answer.
    socket.on("end", () => done({ _tag: "Gone" }))
    return Effect.sync(() => socket.destroy())
  })

/**
 * Sends `request` to the socket at `address` and reads the reply line
 * (`timeout` bounds each wait for the other side). The connection stays
 * open until the scope closes: what the owner answered (a snapshot's file)
 * is kept until then.
 *
 * @since 0.1.0
 */
export const ask = (address: string, request: string, timeout: number): Effect.Effect<Reply, never, Scope.Scope> =>
  Effect.acquireRelease(exchange(address, request, timeout), ({ socket }) => Effect.sync(() => socket.destroy())).pipe(
    Effect.map(({ reply }) => reply)
  )
