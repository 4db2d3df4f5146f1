/**
 * A socket for PgClient's `stream` option that counts round trips: every
 * extended-protocol exchange the client sends ends with one Sync message,
 * and the client waits for the server's ReadyForQuery before it can use the
 * answer, so Sync messages written = round trips. It also records the text
 * of every statement the client sends (Parse and Query messages) and counts
 * the bytes it writes.
 */
import { connect } from "node:net"
import { Duplex } from "node:stream"

export const makeCountingSocket = (url: string) => {
  const { hostname, port } = new URL(url)
  let syncs = 0
  let written = 0
  let read = 0
  const statements: Array<string> = []
  const cstring = (frame: Buffer, start: number) => {
    const end = frame.indexOf(0, start)
    return { text: frame.toString("utf8", start, end), next: end + 1 }
  }
  // The first message (StartupMessage) has no type byte; after it every
  // message is a type byte and a length that counts itself.
  let started = false
  let pending: Buffer = Buffer.alloc(0)

  const count = (chunk: Buffer) => {
    written += chunk.length
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
    for (;;) {
      const header = started ? 5 : 4
      if (pending.length < header) return
      const length = started ? pending.readInt32BE(1) + 1 : pending.readInt32BE(0)
      if (pending.length < length) return
      if (started && pending[0] === 0x53) syncs++
      // Parse: a statement name, then the query. Query: the query.
      if (started && pending[0] === 0x50) statements.push(cstring(pending, cstring(pending, 5).next).text)
      if (started && pending[0] === 0x51) statements.push(cstring(pending, 5).text)
      started = true
      pending = pending.subarray(length)
    }
  }

  const open = () => {
    const socket = connect({ host: hostname, port: Number(port || 5432), noDelay: true })
    const duplex = new Duplex({
      write(chunk: Buffer, _encoding, callback) {
        count(chunk)
        socket.write(chunk, callback)
      },
      read() {
        socket.resume()
      },
      final(callback) {
        socket.end(callback)
      },
      destroy(error, callback) {
        socket.destroy()
        callback(error)
      }
    })
    socket.on("data", (data) => {
      read += data.length
      if (!duplex.push(data)) socket.pause()
    })
    socket.on("end", () => duplex.push(null))
    socket.on("error", (error) => duplex.destroy(error))
    return duplex
  }

  return {
    open,
    roundTrips: () => syncs,
    bytesWritten: () => written,
    bytesRead: () => read,
    statements: () => [...statements]
  }
}
