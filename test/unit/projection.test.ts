/** The SQL driver's wide reads and their decoders (`sql/Projection.ts`), on hand-made rows. */
import { describe, expect, it } from "vitest"
import * as Projection from "../../src/internal/sql/Projection.ts"
import * as Tables from "../../src/internal/sql/Tables.ts"
import * as StorageFormat from "../../src/internal/StorageFormat.ts"
import { emptyThreadRow, tupleRow } from "../support/rows.ts"

const utf8 = new TextEncoder()
const key = (text: string) => StorageFormat.hashOf(utf8.encode(text))

describe("toStoredPage", () => {
  it("no rows, no checkpoints", () => {
    expect(Projection.toStoredPage([])).toEqual([])
  })

  it("reads a checkpoint's row, blobs and writes from parallel arrays; null as none", () => {
    const value = utf8.encode("1")
    const [stored] = Projection.toStoredPage([{
      ...tupleRow("2"),
      parent_checkpoint_id: "1",
      blob_channels: ["a", "b"],
      blob_versions: ["1", "2"],
      blob_types: ["json", "empty"],
      blob_values: [value, null],
      base1_versions: [null, null],
      write_task_ids: ["task"],
      write_task_paths: [""],
      write_idxs: [0],
      write_channels: ["a"],
      write_types: ["json"],
      write_values: [value]
    }])
    expect(stored!.row).toMatchObject({ checkpoint_id: "2", parent_checkpoint_id: "1", metadata: "{\"step\":1}" })
    expect(stored!.blobs).toEqual([
      { channel: "a", version: "1", type: "json", bytes: value, base: undefined },
      { channel: "b", version: "2", type: "empty", bytes: undefined, base: undefined }
    ])
    expect(stored!.writes).toEqual([{
      task_id: "task",
      task_path: "",
      idx: 0,
      channel: "a",
      type: "json",
      bytes: value
    }])
    expect(Projection.toStoredPage([tupleRow("1")])[0]).toMatchObject({ blobs: [], writes: [] })
  })

  it("the page's pieces come on its first row and every checkpoint of the page shares them", () => {
    const hash = Buffer.from(key("m"), "latin1")
    const page = Projection.toStoredPage([
      { ...tupleRow("2"), piece_hashes: [hash], piece_values: [utf8.encode("\"m\"")] },
      tupleRow("1")
    ])
    expect(page.map((stored) => stored.pieces.get(key("m")))).toEqual([utf8.encode("\"m\""), utf8.encode("\"m\"")])
    expect(page[0]!.pieces).toBe(page[1]!.pieces)
  })

  it("a page of several threads keeps each thread's pieces apart, even under one hash", () => {
    const hash = Buffer.from(key("m"), "latin1")
    const page = Projection.toStoredPage([
      {
        ...tupleRow("3", { thread_id: "a" }),
        piece_hashes: [hash, hash],
        piece_values: [utf8.encode("\"a's\""), utf8.encode("\"b's\"")],
        piece_threads: ["a", "b"]
      },
      tupleRow("2", { thread_id: "b" }),
      tupleRow("1", { thread_id: "c" })
    ])
    expect(page.map((stored) => stored.pieces.get(key("m")))).toEqual([
      utf8.encode("\"a's\""),
      utf8.encode("\"b's\""),
      undefined
    ])
  })

  it("a shared list's bases down to the deepest read; one deeper is named without its list", () => {
    const list = (text: string) => StorageFormat.packHashes([key(text)])
    const [stored] = Projection.toStoredPage([{
      ...tupleRow("3"),
      blob_channels: ["messages"],
      blob_versions: ["3"],
      blob_types: [StorageFormat.SHARED],
      blob_values: [list("c")],
      base1_versions: ["2"],
      base1_keeps: [1],
      base1_lists: [list("b")],
      base2_versions: ["1"],
      base2_keeps: [1],
      base2_lists: [list("a")],
      base3_versions: ["0"]
    }])
    expect(stored!.blobs[0]!.base).toEqual({
      version: "2",
      keep: 1,
      list: list("b"),
      base: {
        version: "1",
        keep: 1,
        list: list("a"),
        base: { version: "0", keep: 0, list: undefined, base: undefined }
      }
    })
  })
})

describe("toThreadRows", () => {
  it("an empty thread's nulls read as no rows", () => {
    const rows = Projection.toThreadRows("t", emptyThreadRow)
    expect(rows).toMatchObject({ thread_id: "t", checkpoints: [], blobs: [], writes: [], pieces: [] })
  })

  it("\"\" and -1 stand for none inside the arrays", () => {
    const at = new Date("2026-01-01T00:00:00Z")
    const bytes = utf8.encode("1")
    const rows = Projection.toThreadRows("t", {
      ...emptyThreadRow,
      last_activity: at,
      checkpoint_namespaces: ["", ""],
      checkpoint_ids: ["1", "2"],
      checkpoint_parents: ["", "1"],
      checkpoint_headers: ["{\"v\":4}", "{\"v\":4}"],
      checkpoint_metadata: ["{}", "{}"],
      blob_namespaces: ["", ""],
      blob_channels: ["a", "a"],
      blob_versions: ["1", "2"],
      blob_types: ["json", StorageFormat.SHARED],
      blob_values: [null, bytes],
      blob_bases: ["", "1"],
      blob_keeps: [-1, 3],
      piece_hashes: [bytes],
      piece_values: [bytes]
    })
    expect(rows.last_activity).toBe(at)
    expect(rows.checkpoints.map((row) => row.parent_checkpoint_id)).toEqual([undefined, "1"])
    expect(rows.checkpoints[0]!.checkpoint).toEqual({ v: 4 })
    expect(rows.blobs.map((blob) => [blob.bytes, blob.base])).toEqual([
      [undefined, undefined],
      [bytes, { version: "1", keep: 3 }]
    ])
    expect(rows.pieces).toEqual([{ hash: bytes, bytes }])
  })
})

describe("the projections' SQL", () => {
  const t = Tables.make("my schema")

  it("the list types and hash rows follow the storage format", () => {
    expect(Projection.listTypes).toBe(
      `'${StorageFormat.SHARED}', '${StorageFormat.SHARED}+sealed', '${StorageFormat.FRAMED}', '${StorageFormat.FRAMED}+sealed', ` +
        `'${StorageFormat.RECORD}', '${StorageFormat.RECORD}+sealed'`
    )
    expect(Projection.hashesOf("x")).toContain(`FOR ${StorageFormat.HASH_BYTES}`)
  })

  it("the tuple projection reads the schema's tables, narrowing only when asked", () => {
    const all = Projection.tupleProjection(t, "page.checkpoint_id")
    expect(all).toContain("\"my schema\".checkpoint_blobs")
    expect(all).toContain("\"my schema\".checkpoint_pieces")
    expect(all).not.toContain("ANY(")
    expect(all).not.toContain("looped")
    const narrowed = Projection.tupleProjection(t, "page.depth", {
      channels: { blobs: "$1", writes: "$3" },
      known: "$2",
      looped: "page.l",
      digests: "$4"
    })
    expect(narrowed).toContain("v.channel = ANY($1)")
    expect(narrowed).toContain("cw.channel = ANY($3)")
    expect(narrowed).toContain("bl.digest = ANY($4)")
    expect(all).not.toContain("md5(")
    expect(narrowed).toContain("WHERE known.hash = h.hash")
    expect(narrowed).toContain("page.l AS looped")
    // Bases down to the deepest, and the version one deeper.
    expect(narrowed).toContain(`base${StorageFormat.BASE_DEPTH}_lists`)
    expect(narrowed).toContain(`base${StorageFormat.BASE_DEPTH + 1}_versions`)
    expect(narrowed).not.toContain(`base${StorageFormat.BASE_DEPTH + 1}_lists`)
  })

  it("the thread projection reads every table of the thread", () => {
    const sql = Projection.threadProjection(t, "$1")
    for (const table of [t.threads, t.checkpoints, t.blobs, t.writes, t.pieces]) {
      expect(sql).toContain(`FROM ${table} WHERE thread_id = $1`)
    }
  })
})
