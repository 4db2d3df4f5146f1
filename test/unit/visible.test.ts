/**
 * Stored text made safe to show (`src/internal/Visible.ts`), wherever it is shown: the
 * command line's output (`cli/Output.ts`), the library's error messages
 * (whose fields keep the data exactly), and the web page's script, which
 * carries the same functions inlined (`inspector/web/Assets.ts`).
 */
import { uuid6 } from "@langchain/langgraph-checkpoint"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import * as CheckpointError from "../../src/CheckpointError.ts"
import { CheckpointStorage, Encryption, MemoryDriver } from "../../src/index.ts"
import * as Output from "../../src/internal/cli/Output.ts"
import * as Assets from "../../src/internal/inspector/web/Assets.ts"
import * as Visible from "../../src/internal/Visible.ts"

/** Unicode's bidirectional controls (Bidi_Control=Yes), listed by hand: U+061C is the one most lists forget. */
const BIDI = [0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069]
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)
/** C0, DEL, C1: every control character. */
const CONTROLS = [...range(0x00, 0x1f), 0x7f, ...range(0x80, 0x9f)]
const SEPARATORS = [0x2028, 0x2029]
const HIDDEN = [...CONTROLS, ...BIDI, ...SEPARATORS]
const hex = (code: number) => code.toString(16)
const char = (code: number) => String.fromCodePoint(code)

/** Any hidden character, from the lists above (not from the module under test). */
const RAW = new RegExp(`[${HIDDEN.map((code) => `\\u{${hex(code)}}`).join("")}]`, "u")
const ARABIC_MARK = "\u061c"
const hostile = `a${ARABIC_MARK}b\u202ec\u001b[31md\u009be\u007ff\u2066g`

describe("Visible.escape", () => {
  it("writes every control, bidirectional control and line separator as a visible escape", () => {
    for (const code of HIDDEN) {
      const expected = code === 0x0a ? "\\n" : code === 0x09 ? "\\t" : code === 0x0d ? "\\r" : `\\u{${hex(code)}}`
      expect(Visible.escape(`x${char(code)}y`), `U+${hex(code)}`).toBe(`x${expected}y`)
    }
    expect(Visible.escape(ARABIC_MARK)).toBe("\\u{61c}")
  })

  it("leaves every other character as it is: letters of any script, joiners, emoji, backslashes", () => {
    const hidden = new Set(HIDDEN)
    let kept = ""
    for (let code = 0; code <= 0x10ffff; code++) {
      if (hidden.has(code) || (code >= 0xd800 && code <= 0xdfff)) continue
      kept += char(code)
      if (kept.length > 4096 || code === 0x10ffff) {
        expect(Visible.escape(kept)).toBe(kept)
        kept = ""
      }
    }
    expect(Visible.escape("مرحبا \u200d 👩‍💻 \\u{61c}")).toBe("مرحبا \u200d 👩‍💻 \\u{61c}")
  })

  it("escapeKeepingLines keeps tabs and line breaks, for text laid out as written", () => {
    expect(Visible.escapeKeepingLines(`one\ttwo\nthree\r${hostile}`)).toBe(
      "one\ttwo\nthree\\ra\\u{61c}b\\u{202e}c\\u{1b}[31md\\u{9b}e\\u{7f}f\\u{2066}g"
    )
    for (const code of HIDDEN.filter((code) => code !== 0x09 && code !== 0x0a)) {
      expect(Visible.escapeKeepingLines(char(code)), `U+${hex(code)}`).not.toMatch(RAW)
    }
  })

  it("escapeJson: the same JSON and the same strings, nothing hidden raw", () => {
    const value = { [`key${ARABIC_MARK}`]: HIDDEN.map(char).join(""), list: [hostile] }
    for (const indent of [0, 2]) {
      const text = Visible.escapeJson(JSON.stringify(value, null, indent))
      expect(text.replace(/\n/g, "")).not.toMatch(RAW)
      expect(JSON.parse(text)).toEqual(value)
    }
    expect(Visible.escapeJson(JSON.stringify(ARABIC_MARK))).toBe(`"\\u061c"`)
  })
})

describe("the command line's output", () => {
  it("clean and safeJson are the shared escapes: U+061C and every other bidi control, C1, DEL", () => {
    expect(Output.clean(hostile)).toBe("a\\u{61c}b\\u{202e}c\\u{1b}[31md\\u{9b}e\\u{7f}f\\u{2066}g")
    expect(Output.cut(`${ARABIC_MARK}${"x".repeat(20)}`, 10)).toBe("\\u{61c}xxx… (17 more)")
    for (const code of HIDDEN) expect(Output.clean(char(code)), `U+${hex(code)}`).not.toMatch(RAW)
    const json = Output.safeJson(JSON.stringify({ thread_id: hostile }))
    expect(json).not.toMatch(RAW)
    expect(JSON.parse(json)).toEqual({ thread_id: hostile })
  })
})

describe("the library's error messages", () => {
  const place = { thread_id: `t${ARABIC_MARK}\n`, checkpoint_ns: "ns\u202e", checkpoint_id: "id\u009b2J" }
  const escaped = (text: string) =>
    text.replaceAll(ARABIC_MARK, "\\u{61c}").replaceAll("\n", "\\n").replaceAll("\u202e", "\\u{202e}")
      .replaceAll("\u009b", "\\u{9b}").replaceAll("\u001b", "\\u{1b}").replaceAll("\u2066", "\\u{2066}")
  const errors: ReadonlyArray<readonly [Error, string]> = [
    [
      new CheckpointError.InvalidConfig({ operation: "put", detail: `key ${JSON.stringify(`k${ARABIC_MARK}`)}` }),
      `put: invalid config: key "k${ARABIC_MARK}"`
    ],
    [
      new CheckpointError.InvalidInput({ operation: "put", argument: "metadata", detail: `at ["m\u202e"]` }),
      `put: invalid metadata: at ["m\u202e"]`
    ],
    [
      new CheckpointError.SerializationFailed({ operation: "put", path: `channel "c\u2066"`, cause: new Error("no") }),
      `put: cannot serialize channel "c\u2066": no`
    ],
    [
      new CheckpointError.CorruptedCheckpoint({ ...place, detail: `channel "c${ARABIC_MARK}" does not decode` }),
      `checkpoint ${place.checkpoint_id} of thread "${place.thread_id}" (namespace "${place.checkpoint_ns}") ` +
      `cannot be read: channel "c${ARABIC_MARK}" does not decode`
    ],
    [
      new CheckpointError.StorageFailure({
        operation: "get",
        retryable: false,
        cause: new Error(`relation "x\u001b[2J" does not exist`)
      }),
      `get: storage failed: relation "x\u001b[2J" does not exist`
    ],
    [
      new CheckpointError.ThreadNotFound({ operation: "prune", thread_id: place.thread_id }),
      `prune: thread "${place.thread_id}" has no checkpoints`
    ],
    [
      new CheckpointError.ThreadExists({ operation: "copy", thread_id: place.thread_id }),
      `copy: thread "${place.thread_id}" already exists (pass replace: true to overwrite it)`
    ],
    [
      new CheckpointError.CheckpointNotFound({ operation: "put", ...place }),
      `put: checkpoint ${place.checkpoint_id} of thread "${place.thread_id}" (namespace "${place.checkpoint_ns}") ` +
      "no longer exists (the thread was deleted or pruned): nothing was written"
    ],
    [
      new CheckpointError.DatabaseLocked({ directory: `/d${ARABIC_MARK}`, pid: 1 }),
      `connect: the PGlite database at /d${ARABIC_MARK} is in use by process 1: PGlite is one process's database ` +
      "(stop that process, or read a snapshot: Pglite.snapshot, or langgraph-checkpoints' reading commands)"
    ]
  ]

  it("escape what they quote; the fields keep it exactly", () => {
    for (const [error, raw] of errors) {
      expect(error.message, error.name).not.toMatch(RAW)
      expect(error.message).toBe(escaped(raw))
    }
    const corrupted = errors[3]![0] as CheckpointError.CorruptedCheckpoint
    expect(corrupted.thread_id).toBe(place.thread_id)
    expect(corrupted.checkpoint_ns).toBe(place.checkpoint_ns)
    expect(corrupted.checkpoint_id).toBe(place.checkpoint_id)
    expect(corrupted.detail).toBe(`channel "c${ARABIC_MARK}" does not decode`)
    expect((errors[0]![0] as CheckpointError.InvalidConfig).detail).toBe(`key "k${ARABIC_MARK}"`)
  })

  /** A memory storage holding one checkpoint of `thread_id` whose blob of channel "a" is `blob`. */
  const readBack = (
    place: { readonly thread_id: string; readonly checkpoint_id: string },
    blob: { readonly type: string; readonly bytes: Uint8Array }
  ) =>
    Effect.gen(function*() {
      const driver = MemoryDriver.make()
      const { checkpoint_id, thread_id } = place
      yield* driver.put(
        {
          thread_id,
          checkpoint_ns: "",
          checkpoint_id,
          parent_checkpoint_id: undefined,
          checkpoint: { v: 4, id: checkpoint_id, ts: "", channel_versions: { a: 1 }, versions_seen: {} },
          metadata: "{}"
        },
        [{ channel: "a", version: "1", ...blob }],
        { pieces: [], requires: [] }
      )
      const encryption = Encryption.layer({
        keys: { k1: Buffer.alloc(32, 1).toString("base64") },
        primary: "k1",
        allowPlaintext: true
      })
      return yield* CheckpointStorage.CheckpointStorage.use((storage) => storage.getTuple({ thread_id })).pipe(
        Effect.flip,
        Effect.provide(CheckpointStorage.layerDriver(Effect.succeed(driver)).pipe(Layer.provide(encryption)))
      )
    }).pipe(Effect.runPromise)

  it("a CorruptedCheckpoint read back: stored ids, and a key id read from a sealed frame, escaped", async () => {
    const thread_id = `thread${ARABIC_MARK}\u001b]0;x\u0007`
    const checkpoint_id = `${uuid6(-1)}\u202e`
    const damaged = await readBack({ thread_id, checkpoint_id }, {
      type: "json",
      bytes: new TextEncoder().encode("{not json")
    })
    expect(damaged).toBeInstanceOf(CheckpointError.CorruptedCheckpoint)
    expect(damaged).toMatchObject({ thread_id, checkpoint_id })
    expect(damaged.message).not.toMatch(RAW)
    expect(damaged.message).toContain(`of thread "thread\\u{61c}\\u{1b}]0;x\\u{7}"`)

    // A frame: version 1, the key id's length and bytes, then what would be the ciphertext.
    const keyId = `k${ARABIC_MARK}\u001b]52;c;aGk=\u0007`
    const id = Buffer.from(keyId)
    const sealed = await readBack({ thread_id: "t", checkpoint_id: uuid6(-1) }, {
      type: "json+sealed",
      bytes: Buffer.concat([Buffer.from([1, id.length]), id, Buffer.alloc(48, 1)])
    })
    expect(sealed).toBeInstanceOf(CheckpointError.CorruptedCheckpoint)
    expect((sealed as CheckpointError.CorruptedCheckpoint).detail).toContain(`"${keyId}"`)
    expect(sealed.message).not.toMatch(RAW)
    expect(sealed.message).toContain(`is sealed under the key "k\\u{61c}\\u{1b}]52;c;aGk=\\u{7}"`)
  })
})

describe("the web page's script", () => {
  it("carries the shared escapes inlined: no import left for the browser to fetch without the token", () => {
    const script = Assets.script()
    expect(script).not.toMatch(/^\s*import\s/m)
    expect(script).toContain("const { escapeJson, escapeKeepingLines } = (() => {")
    // The inlined functions are the module's: defined once, from its source.
    const body = script.slice(script.indexOf("const { escapeJson"), script.indexOf("return { escapeJson"))
    expect(body).toContain(String.raw`\p{Cc}\p{Bidi_Control}\u2028\u2029`)
    const inlined = new Function(
      `${body.replace(/^const \{[^}]*\} = \(\(\) => \{/, "")}; return { escapeJson, escapeKeepingLines }`
    )() as {
      escapeJson: (text: string) => string
      escapeKeepingLines: (text: string) => string
    }
    for (const code of HIDDEN) {
      expect(inlined.escapeKeepingLines(char(code))).toBe(Visible.escapeKeepingLines(char(code)))
      expect(inlined.escapeJson(char(code))).toBe(Visible.escapeJson(char(code)))
    }
    expect(inlined.escapeKeepingLines(`${ARABIC_MARK}\n`)).toBe("\\u{61c}\n")
  })
})
