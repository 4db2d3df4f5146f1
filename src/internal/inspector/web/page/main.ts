/**
 * The web inspector's page: a plain ES module, no framework (a few hundred
 * lines of DOM calls need none), served as `/app.js` (`../Assets.ts`).
 * Everything the server sends is data from users and tools: it is inserted
 * with `textContent` / `createElement` only, never as markup, every control
 * and bidirectional control in it shown as a visible escape (`\u{202e}`;
 * `../../../Visible.ts`), and every link points at this page's own routes.
 * Its imports, `Visible` and the inspector's `StorageRows` (the rows the
 * CLI's `stats <thread>` prints too), the server inlines (`../Assets.ts`):
 * a module the browser fetched would arrive without the token and be
 * refused.
 *
 * @since 0.1.0
 */
import { escapeJson, escapeKeepingLines } from "../../../Visible.ts"
import { type StorageRow, storageRows } from "../../StorageRows.ts"
import type {
  Change,
  Checkpoint,
  Diff,
  FieldChange,
  History,
  Info,
  Message,
  Plan,
  Row,
  Storage,
  Thread,
  ThreadPage,
  ToolCall
} from "./Shapes.ts"

/** What an element is given: attributes, its `text`, `on…` listeners. */
type Props = Readonly<Record<string, string | number | boolean | null | undefined | EventListener>>
type Child = Node | string | null | undefined

const byId = (id: string): HTMLElement => {
  const found = document.getElementById(id)
  if (found === null) throw new Error(`the page has no #${id}`)
  return found
}

const token = new URL(import.meta.url).searchParams.get("token") || ""
const main = byId("main")
const banner = byId("error")
const SVG = "http://www.w3.org/2000/svg"
let info: Info = { write: false, layout: "" }
let poll: number | undefined = undefined
/** Counts the thread views polling: a poll schedules the next only while its view is the latest. */
let polls = 0
let search = ""

const set = (node: Element, props: Props | undefined) => {
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue
    if (key === "text") node.textContent = escapeKeepingLines(String(value))
    else if (typeof value === "function") node.addEventListener(key.slice(2), value)
    else node.setAttribute(key, String(value))
  }
}

const appendAll = (node: Element, children: ReadonlyArray<Child> | undefined) => {
  for (const child of children || []) {
    if (child !== null && child !== undefined) {
      node.append(typeof child === "string" ? escapeKeepingLines(child) : child)
    }
  }
}

/**
 * An element: props set as attributes (class, text and on* handled apart),
 * children appended as nodes or text. Text, `text` and string children, is
 * escaped; attributes (`data-id`, an `href`) keep the data as it is.
 */
const el = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props?: Props,
  children?: ReadonlyArray<Child>
): HTMLElementTagNameMap[K] => {
  const node = document.createElement(tag)
  set(node, props)
  appendAll(node, children)
  return node
}

const svg = <K extends keyof SVGElementTagNameMap>(
  tag: K,
  props?: Props,
  children?: ReadonlyArray<Child>
): SVGElementTagNameMap[K] => {
  const node = document.createElementNS(SVG, tag)
  set(node, props)
  appendAll(node, children)
  return node
}

const showError = (error: unknown) => {
  banner.textContent = escapeKeepingLines(error instanceof Error ? error.message : String(error))
  banner.hidden = false
}

const clearError = () => {
  banner.hidden = true
  banner.textContent = ""
}

/** An API call: the token in its header, a JSON body for actions. */
const api = async <A>(path: string, body?: unknown): Promise<A> => {
  const headers: Record<string, string> = { "x-inspector-token": token }
  const init: RequestInit = { headers }
  if (body !== undefined) {
    headers["content-type"] = "application/json"
    init.method = "POST"
    init.body = JSON.stringify(body)
  }
  const response = await fetch(path, init)
  const data: unknown = await response.json().catch(() => ({}))
  if (!response.ok) {
    const message = (data as { readonly error?: unknown }).error
    throw new Error(
      typeof message === "string" && message !== "" ? message : `${response.status} ${response.statusText}`
    )
  }
  return data as A
}

const enc = encodeURIComponent
const short = (id: string) => String(id).slice(-12)
const threadHref = (id: string) => `#/thread/${enc(id)}`

/** A value as JSON, what `JSON.stringify` leaves raw in strings as `\uXXXX` (still the same JSON). */
const json = (value: unknown, indent = 2) => {
  const text = JSON.stringify(value, null, indent) as string | undefined
  return text === undefined ? "undefined" : escapeJson(text)
}

/** Bytes as a person reads them (powers of 1,000, as the CLI prints them). */
const bytes = (count: number) =>
  count < 1000 ? `${count} B` : count < 1e6 ? `${(count / 1e3).toFixed(2)} kB` : `${(count / 1e6).toFixed(2)} MB`

/**
 * Where a thread's bytes are, folded under its total: each section, and
 * each channel within the values and the writes (largest first).
 */
const storagePanel = (storage: Storage) => {
  const row = ({ channel, section, what }: StorageRow) =>
    el("tr", { class: channel ? "channel" : "section" }, [
      el("td", { text: what }),
      el("td", { class: "num", text: section.count }),
      el("td", { class: "num", text: bytes(section.bytes) }),
      el("td", { class: "num", text: bytes(section.raw_bytes) })
    ])
  return el("details", { class: "storage", id: "storage" }, [
    el("summary", { text: `stored: ${bytes(storage.total_bytes)}` }),
    el("table", {}, [
      el("thead", {}, [el("tr", {}, ["", "rows", "stored", "uncompressed"].map((name) => el("th", { text: name })))]),
      el("tbody", {}, storageRows(storage).map(row))
    ])
  ])
}

const cut = (text: string, max: number) => text.length > max ? `${text.slice(0, max - 1)}…` : text

const when = (iso: string) => {
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? String(iso) : date.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z")
}

const stopPolling = () => {
  if (poll !== undefined) window.clearTimeout(poll)
  poll = undefined
  // A poll in flight when the page moves on schedules no other.
  polls++
}

// --- threads -----------------------------------------------------------------

const threadRow = (thread: Thread) => {
  const namespaces = thread.namespaces.map((name) => name === "" ? "(root)" : name).join(", ")
  return el("tr", { class: "thread-row" }, [
    el("td", {}, [
      el("a", {
        class: "thread-link",
        href: threadHref(thread.thread_id),
        "data-id": thread.thread_id,
        text: thread.thread_id
      })
    ]),
    el("td", { class: "preview", text: thread.preview }),
    el("td", { class: "namespaces", text: cut(namespaces, 80) }),
    el("td", { class: "num", text: thread.checkpoints }),
    el("td", { class: "num", text: thread.latest_step === undefined ? "" : thread.latest_step }),
    el("td", { text: when(thread.last_activity) }),
    el("td", {}, [thread.interrupts > 0 ? el("span", { class: "badge interrupt", text: thread.interrupts }) : null])
  ])
}

const showThreads = async () => {
  const input = el("input", {
    id: "prefix",
    type: "search",
    placeholder: "thread id starts with…",
    "aria-label": "thread id prefix",
    value: search,
    autocomplete: "off"
  })
  const body = el("tbody")
  const columns = ["thread", "latest", "namespaces", "checkpoints", "step", "last activity", "interrupts"]
  const head = el("thead", {}, [el("tr", {}, columns.map((name) => el("th", { text: name })))])
  const more = el("button", { id: "more", type: "button", text: "more" })
  const status = el("p", { class: "status", id: "threads-status" })
  more.hidden = true
  main.replaceChildren(
    el("section", { class: "threads" }, [
      el("h2", { text: "Threads" }),
      input,
      status,
      el("table", { id: "threads" }, [head, body]),
      more
    ])
  )
  input.focus()
  let cursor: string | null = null
  let generation = 0
  const load = async (reset: boolean) => {
    const mine = reset ? ++generation : generation
    const query = new URLSearchParams({ prefix: search, limit: "50" })
    if (!reset && cursor !== null) query.set("after", cursor)
    const page = await api<ThreadPage>(`/api/threads?${query.toString()}`)
    if (mine !== generation) return
    if (reset) body.replaceChildren()
    const shown = new Set(Array.from(body.querySelectorAll<HTMLElement>("a.thread-link"), (a) => a.dataset.id))
    for (const thread of page.threads) if (!shown.has(thread.thread_id)) body.append(threadRow(thread))
    cursor = page.next
    more.hidden = cursor === null
    const count = body.children.length
    status.textContent = count === 0
      ? "no threads"
      : `${count} thread(s), newest activity first${cursor === null ? "" : " (more below)"}`
    document.body.dataset.rendered = "threads"
    if (document.body.dataset.firstRender === undefined) {
      document.body.dataset.firstRender = String(Math.round(performance.now()))
    }
  }
  let timer: number | undefined = undefined
  input.addEventListener("input", () => {
    window.clearTimeout(timer)
    timer = window.setTimeout(() => {
      search = input.value
      load(true).catch(showError)
    }, 200)
  })
  more.addEventListener("click", () => {
    load(false).catch(showError)
  })
  await load(true)
}

// --- a thread's history, drawn ----------------------------------------------

const ROW = 30
const LANE = 22
const LEFT = 16

/** Which checkpoint is shown, and which one it is compared with. */
interface Selection {
  selected: { readonly id: string; readonly ns: string } | null
  compare: { readonly id: string; readonly ns: string } | null
}

type Pick = (row: Row, ns: string, compare: boolean) => void

/** The line from a checkpoint to its parent: straight down its lane, or across to the parent's. */
const edge = (me: { x: number; y: number }, parent: { x: number; y: number }) => {
  const d = parent.x === me.x
    ? `M${me.x} ${me.y} L${parent.x} ${parent.y}`
    : `M${me.x} ${me.y} L${me.x} ${parent.y - ROW / 2} L${parent.x} ${parent.y}`
  return svg("path", { class: parent.x === me.x ? "edge" : "edge branch", d })
}

/** A label's class: `fork point` → `fork-point`. */
const labelClass = (label: string) => label.replace(/[^a-z]+/g, "-")

/** A checkpoint of the history: its circle and label, a button that picks it. */
const historyNode = (row: Row, at: { x: number; y: number }, textX: number, ns: string, pick: Pick) => {
  const classes = ["node", ...row.labels.map(labelClass)]
  if (row.overflow) classes.push("overflow")
  if (row.interrupts.length > 0) classes.push("interrupted")
  const words = [short(row.checkpoint_id), `step ${row.step === undefined ? "?" : row.step}`, row.source || ""]
  if (row.nodes.length > 0) words.push(`ran: ${row.nodes.join(", ")}`)
  if (row.next.length > 0) words.push(`next: ${row.next.join(", ")}`)
  const label = svg("text", { class: "label", x: textX, y: at.y + 4 })
  label.append(svg("tspan", { class: "id", text: words.join("  ") }))
  for (const tag of row.labels) label.append(svg("tspan", { class: `tag ${labelClass(tag)}`, dx: 8, text: tag }))
  if (row.folded > 0) {
    label.append(svg("tspan", { class: "tag folded", dx: 8, text: `+${row.folded} more branches join here` }))
  }
  if (row.overflow && row.parent_checkpoint_id !== undefined) {
    const below = `no lane of its own: joins ${short(row.parent_checkpoint_id)} below`
    label.append(svg("tspan", { class: "tag folded", dx: 8, text: below }))
  }
  if (row.interrupts.length > 0) {
    const interrupt = cut(json(row.interrupts[0]).replace(/\s+/g, " "), 60)
    label.append(svg("tspan", { class: "tag interrupt", dx: 8, text: `interrupt: ${interrupt}` }))
  }
  // Last: a long preview is what the panel's edge cuts, never the words that say what a checkpoint is.
  if (row.preview !== "") label.append(svg("tspan", { class: "preview", dx: 8, text: `“${row.preview}”` }))
  const changed = row.changed.length > 0 ? `\nchanged: ${row.changed.join(", ")}` : ""
  const node = svg("g", {
    class: classes.join(" "),
    tabindex: 0,
    role: "button",
    "data-id": row.checkpoint_id,
    "data-ns": ns
  }, [
    svg("title", { text: `${row.checkpoint_id} (${when(row.ts)})${changed}` }),
    svg("rect", { class: "hit", x: 0, y: at.y - ROW / 2, width: textX + 560, height: ROW }),
    svg("circle", { cx: at.x, cy: at.y, r: row.labels.includes("head") ? 8 : row.overflow ? 3 : 6 }),
    label
  ])
  node.addEventListener("click", (event) => {
    pick(row, ns, event.shiftKey || event.ctrlKey || event.metaKey)
  })
  node.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault()
      pick(row, ns, event.shiftKey)
    }
  })
  return node
}

/** The history as SVG: one group per namespace, a lane per branch, lines from each checkpoint to its parent. */
const drawHistory = (history: History, state: Selection, pick: Pick) => {
  const root = svg("svg", { class: "history", role: "group", "aria-label": "checkpoint history" })
  const several = history.namespaces.length > 1
  let y = 8
  let width = 320
  for (const namespace of history.namespaces) {
    const group = svg("g", { class: "namespace", "data-ns": namespace.name })
    if (several || namespace.name !== "") {
      const under = namespace.parent === "" ? "the root" : namespace.parent
      const started = namespace.startedAt === null ?
        "" :
        `, started at checkpoint ${short(namespace.startedAt.checkpoint_id)} (step ${
          namespace.startedAt.step === undefined ? "?" : namespace.startedAt.step
        })`
      const label = namespace.name === "" ? "root graph" : `subgraph ${namespace.name} (under ${under}${started})`
      group.append(svg("text", { class: "ns-label", x: 4, y: y + 14, text: label }))
      y += 24
    }
    const rows = namespace.rows
    let lanes = 1
    for (const row of rows) for (const lane of row.open) lanes = Math.max(lanes, lane + 1)
    const textX = LEFT + lanes * LANE + 6
    const at = new Map<string, { x: number; y: number }>()
    let gap = 0
    rows.forEach((row, i) => {
      // A tree of its own (its root's parent is not in the history) starts apart from the one above.
      if (row.separate) gap += ROW
      at.set(row.checkpoint_id, { x: LEFT + row.lane * LANE, y: y + gap + i * ROW + ROW / 2 })
    })
    const edges = svg("g", { class: "edges" })
    const nodes = svg("g", { class: "nodes" })
    for (const row of rows) {
      const me = at.get(row.checkpoint_id)!
      if (row.separate) {
        const line = { x1: 4, x2: textX + 300, y1: me.y - ROW, y2: me.y - ROW }
        edges.append(svg("line", { class: "tree-gap", ...line }))
      }
      const parent = row.parent_checkpoint_id === undefined ? undefined : at.get(row.parent_checkpoint_id)
      // The overflow column is one dotted line down to the fork point it joins, not a line per branch.
      if (row.overflow) edges.append(edge(me, { x: me.x, y: me.y + ROW }))
      else if (parent !== undefined) edges.append(edge(me, parent))
      if (row.folded > 0) edges.append(edge({ x: LEFT + history.overflowLane * LANE, y: me.y - ROW }, me))
      nodes.append(historyNode(row, me, textX, namespace.name, pick))
    }
    group.append(edges, nodes)
    root.append(group)
    y += gap + rows.length * ROW + 16
    width = Math.max(width, textX + 560)
  }
  root.setAttribute("width", String(width))
  root.setAttribute("height", String(y))
  root.setAttribute("viewBox", `0 0 ${width} ${y}`)
  mark(root, state)
  return root
}

/**
 * Cuts each label longer than the drawing at its preview, with an ellipsis
 * (the checkpoint's panel shows it whole). It measures text: run once drawn.
 */
const fitLabels = (root: SVGSVGElement) => {
  const width = Number(root.getAttribute("width"))
  for (const label of root.querySelectorAll<SVGTextElement>("text.label")) {
    const room = width - Number(label.getAttribute("x")) - 8
    const preview = label.querySelector<SVGTSpanElement>("tspan.preview")
    if (preview === null || label.getComputedTextLength() <= room) continue
    // The preview without its closing quote, which the cut one keeps.
    const inner = (preview.textContent ?? "").slice(0, -1)
    const cutAt = (length: number) => void (preview.textContent = `${inner.slice(0, length)}…”`)
    let [low, high] = [0, inner.length - 1]
    while (low < high) {
      const middle = Math.ceil((low + high) / 2)
      cutAt(middle)
      if (label.getComputedTextLength() <= room) low = middle
      else high = middle - 1
    }
    cutAt(low)
  }
}

/** Marks the selected checkpoint and the one compared with it. */
const mark = (root: Element, state: Selection) => {
  for (const node of root.querySelectorAll<SVGGElement>("g.node")) {
    node.classList.toggle("selected", state.selected !== null && node.dataset.id === state.selected.id)
    node.classList.toggle("compared", state.compare !== null && node.dataset.id === state.compare.id)
  }
}

// --- a checkpoint's state ----------------------------------------------------

const ROLES = new Set(["human", "ai", "tool", "system", "function", "chat", "remove"])

/** What tells a message apart beside its role: the tool and the call a tool's result answers, a failure's status. */
const about = (message: Message) =>
  [
    message.name === undefined ? "" : `name ${message.name}`,
    message.tool_call_id === undefined ? "" : `tool_call_id ${message.tool_call_id}`,
    message.status === undefined ? "" : `status ${message.status}`
  ].filter((part) => part !== "").join(", ")

const toolCall = (call: ToolCall) =>
  el("div", { class: "tool-call" }, [
    el("span", { class: "tool-name", text: call.name }),
    el("code", { class: "tool-args", text: call.args === undefined ? "" : json(call.args, 0) }),
    call.id === undefined ? null : el("span", { class: "tool-call-id", text: `id ${call.id}` })
  ])

/** The model's metadata of a message, folded away until asked for. */
const messageMetadata = (message: Message) => {
  const fields = Object.fromEntries(
    (["usage_metadata", "response_metadata", "additional_kwargs"] as const).flatMap((key) =>
      message[key] === undefined ? [] : [[key, message[key]]]
    )
  )
  return Object.keys(fields).length === 0 ? null : el("details", { class: "metadata" }, [
    el("summary", { text: "metadata" }),
    el("pre", { class: "json", text: json(fields) })
  ])
}

/** A message's body: its text (unless it is only tool calls), its tool calls, its metadata. */
const messageBody = (message: Message): Array<Child> => [
  message.text === "" && message.tool_calls !== undefined ? null : el("div", { class: "text", text: message.text }),
  ...(message.tool_calls ?? []).map(toolCall),
  messageMetadata(message)
]

/** Who a message is from: its role, and beside it what tells it apart. */
const speaker = (message: Message, sign = ""): Array<Child> => {
  const more = about(message)
  return [
    el("span", { class: "role", text: `${sign}${message.role}` }),
    more === "" ? null : el("span", { class: "about", text: more })
  ]
}

const conversation = (messages: ReadonlyArray<Message>) =>
  el(
    "div",
    { class: "conversation" },
    messages.map((message) =>
      el("div", { class: `message role-${ROLES.has(message.role) ? message.role : "other"}` }, [
        ...speaker(message),
        ...messageBody(message)
      ])
    )
  )

const field = (name: string, value: Child) => [el("dt", { text: name }), el("dd", {}, [value])]

const pendingWrites = (writes: NonNullable<Checkpoint["pendingWrites"]>) =>
  el("table", { class: "writes" }, [
    el("thead", {}, [
      el("tr", {}, [el("th", { text: "task" }), el("th", { text: "channel" }), el("th", { text: "value" })])
    ]),
    el(
      "tbody",
      {},
      writes.map((write) =>
        el("tr", {}, [
          el("td", {}, [el("code", { text: short(write[0]) })]),
          el("td", { text: write[1] }),
          el("td", {}, [el("pre", { class: "json", text: json(write[2]) })])
        ])
      )
    )
  ])

const showCheckpoint = (panel: HTMLElement, checkpoint: Checkpoint) => {
  const metadata = checkpoint.metadata || {}
  const parent = checkpoint.parent_checkpoint_id
  const facts = el("dl", { class: "facts" }, [
    ...field("id", el("code", { text: checkpoint.checkpoint_id })),
    ...field("namespace", checkpoint.checkpoint_ns === "" ? "(root)" : checkpoint.checkpoint_ns),
    ...field("parent", parent === null ? "none" : el("code", { text: parent })),
    ...field("step", metadata.step === undefined ? "?" : String(metadata.step)),
    ...field("source", metadata.source === undefined ? "?" : String(metadata.source)),
    ...field("written", when(checkpoint.checkpoint.ts)),
    ...field("next", checkpoint.next.length === 0 ? "nothing (done)" : checkpoint.next.join(", "))
  ])
  const parts: Array<Node> = [el("h3", { text: `Checkpoint ${short(checkpoint.checkpoint_id)}` }), facts]
  if (checkpoint.interrupts.length > 0) {
    parts.push(el("h4", { class: "interrupt", text: "Interrupts" }))
    for (const value of checkpoint.interrupts) parts.push(el("pre", { class: "json interrupt", text: json(value) }))
  }
  parts.push(el("h4", { text: "Channels" }))
  const values = checkpoint.checkpoint.channel_values || {}
  const names = Object.keys(values).filter((name) => !name.startsWith("branch:to:")).sort()
  if (names.length === 0) parts.push(el("p", { class: "status", text: "no values" }))
  for (const name of names) {
    const messages = checkpoint.messages[name]
    parts.push(el("div", { class: "channel", "data-channel": name }, [
      el("h5", { text: name + (messages === undefined ? "" : ` (${messages.length} messages)`) }),
      messages === undefined ? el("pre", { class: "json", text: json(values[name]) }) : conversation(messages)
    ]))
  }
  const writes = checkpoint.pendingWrites || []
  if (writes.length > 0) parts.push(el("h4", { text: "Pending writes" }), pendingWrites(writes))
  parts.push(el("h4", { text: "Metadata" }), el("pre", { class: "json", text: json(metadata) }))
  panel.replaceChildren(...parts)
}

// --- a diff ------------------------------------------------------------------

/** A field that changed inside a message: its path, its value before and after (as JSON). */
const fieldChange = (change: FieldChange) => {
  const value = (v: unknown) => v === undefined ? "(none)" : json(v, 0)
  return el("li", { class: "field" }, [
    el("code", { class: "path", text: change.path }),
    ": ",
    el("span", { class: "before", text: value(change.before) }),
    " → ",
    el("span", { class: "after", text: value(change.after) })
  ])
}

const messageDiff = (change: Extract<Change, { change: "messages" }>) => {
  const list = el("ul", { class: "message-diff" })
  const line = (kind: string, sign: string, message: Message) =>
    el("li", { class: kind }, [...speaker(message, `${sign} `), ...messageBody(message)])
  for (const message of change.appended) list.append(line("added", "+", message))
  for (const message of change.removed) list.append(line("removed", "−", message))
  for (const edit of change.edited) {
    list.append(el("li", { class: "edited" }, [
      ...speaker(edit.after, "~ "),
      edit.after.id === undefined ? null : el("code", { class: "message-id", text: edit.after.id }),
      el("ul", { class: "fields" }, edit.fields.map(fieldChange))
    ]))
  }
  const counts = `${change.appended.length} appended, ${change.removed.length} removed, ${change.edited.length} edited`
  return [el("p", { class: "status", text: counts }), list]
}

const changeBody = (change: Change): Array<Node> => {
  switch (change.change) {
    case "added":
      return [el("pre", { class: "json added", text: json(change.after) })]
    case "removed":
      return [el("pre", { class: "json removed", text: json(change.before) })]
    case "changed":
      return [
        el("pre", { class: "json removed", text: json(change.before) }),
        el("pre", { class: "json added", text: json(change.after) })
      ]
    case "messages":
      return messageDiff(change)
  }
}

const showDiff = (panel: HTMLElement, found: Diff) => {
  const parts: Array<Node> = [
    el("h3", { text: `Diff ${short(found.a.checkpoint_id)} → ${short(found.b.checkpoint_id)}` })
  ]
  if (found.channels.length === 0) parts.push(el("p", { class: "status", text: "no channel differs" }))
  for (const change of found.channels) {
    const title = el("h5", {}, [
      `${change.channel} `,
      el("span", { class: `badge ${change.change}`, text: change.change })
    ])
    parts.push(el("div", { class: "change", "data-channel": change.channel }, [title, ...changeBody(change)]))
  }
  panel.replaceChildren(...parts)
  panel.hidden = false
}

// --- actions (with --write) --------------------------------------------------

const actionBar = (id: string, refresh: () => Promise<void>) => {
  const confirm = el("div", { class: "confirm", id: "confirm" })
  confirm.hidden = true
  /** Asks to confirm `run`; without one, only says `question` (nothing to confirm). */
  const ask = (question: string, controls: ReadonlyArray<Node>, run: (() => Promise<void>) | undefined) => {
    const go = el("button", { type: "button", class: "danger", text: "Confirm" })
    const cancel = el("button", { type: "button", text: run === undefined ? "Close" : "Cancel" })
    go.addEventListener("click", () => {
      if (run === undefined) return
      go.disabled = true
      run().then(() => {
        confirm.hidden = true
      }, showError).finally(() => {
        go.disabled = false
      })
    })
    cancel.addEventListener("click", () => {
      confirm.hidden = true
    })
    confirm.replaceChildren(el("p", { text: question }), ...controls, ...(run === undefined ? [] : [go]), cancel)
    confirm.hidden = false
  }
  const removal = async (action: string) => {
    const plan = await api<Plan>(`/api/threads/${enc(id)}/plan?action=${action}`)
    const total = plan.removals.reduce((sum, removal) => sum + removal.checkpoints, 0)
    const whole = plan.removals.some((removal) => removal.whole) ? ", the whole thread" : ""
    return total === 0 ? undefined : `this removes ${total} checkpoint(s)${whole}`
  }
  const copy = el("button", { type: "button", text: "Copy…" })
  copy.addEventListener("click", () => {
    const target = el("input", { type: "text", placeholder: "new thread id", "aria-label": "new thread id" })
    const replace = el("input", { type: "checkbox" })
    ask(`Copy thread ${id} to:`, [target, el("label", {}, [replace, " replace if it exists"])], async () => {
      await api(`/api/threads/${enc(id)}/copy`, { target: target.value, replace: replace.checked })
      location.hash = threadHref(target.value)
    })
  })
  const prune = el("button", { type: "button", text: "Prune to latest…" })
  prune.addEventListener("click", () => {
    removal("keep-latest").then((what) => {
      ask(
        `Prune ${id} to its latest checkpoints: ${what ?? "nothing to remove"}.`,
        [],
        what === undefined ? undefined : async () => {
          await api(`/api/threads/${enc(id)}/prune`, { strategy: "keep-latest" })
          await refresh()
        }
      )
    }, showError)
  })
  const remove = el("button", { type: "button", class: "danger", text: "Delete…" })
  remove.addEventListener("click", () => {
    removal("delete").then((what) => {
      ask(
        `Delete thread ${id}: ${what ?? "nothing to remove"}.`,
        [],
        what === undefined ? undefined : async () => {
          await api(`/api/threads/${enc(id)}/delete`, {})
          location.hash = "#/"
        }
      )
    }, showError)
  })
  return el("div", { class: "actions" }, [copy, prune, remove, confirm])
}

// --- a thread ----------------------------------------------------------------

/** The history pages loaded so far as one: each page's namespaces appended to those of the same name. */
const merge = (shown: History, page: History): History => {
  const namespaces = shown.namespaces.map((namespace) => ({ ...namespace, rows: [...namespace.rows] }))
  for (const namespace of page.namespaces) {
    const same = namespaces.find((known) => known.name === namespace.name)
    if (same === undefined) namespaces.push({ ...namespace, rows: [...namespace.rows] })
    else same.rows.push(...namespace.rows)
  }
  return { ...page, namespaces }
}

const rowCount = (history: History) => history.namespaces.reduce((sum, namespace) => sum + namespace.rows.length, 0)

/** History rows asked for per page. */
const HISTORY_PAGE = 500
/** How long after a poll's answer the next one is asked. */
const POLL_MS = 2000

const showThread = async (id: string) => {
  const state: Selection = { selected: null, compare: null }
  const graph = el("div", { id: "graph" })
  const diff = el("div", { id: "diff", class: "panel" })
  const detail = el("div", { id: "detail", class: "panel" })
  diff.hidden = true
  const hint = el("p", { class: "status" })
  const storage = el("div", { id: "storage" })
  const thread = `/api/threads/${enc(id)}`
  const pick = async (row: Row, ns: string, compare: boolean) => {
    clearError()
    if (compare && state.selected !== null && state.selected.id !== row.checkpoint_id) {
      state.compare = { id: row.checkpoint_id, ns }
      mark(graph, state)
      const query = new URLSearchParams({ a: state.selected.id, b: row.checkpoint_id })
      showDiff(diff, await api<Diff>(`${thread}/diff?${query.toString()}`))
      return
    }
    state.selected = { id: row.checkpoint_id, ns }
    state.compare = null
    diff.hidden = true
    mark(graph, state)
    const query = new URLSearchParams({ ns })
    showCheckpoint(detail, await api<Checkpoint>(`${thread}/checkpoints/${enc(row.checkpoint_id)}?${query.toString()}`))
  }
  /** The pages loaded, merged; null before the first. */
  let shown: History | null = null
  const draw = (history: History) => {
    shown = history
    const more = history.next === null ? null : el("button", {
      class: "more",
      text: `more (${rowCount(history)} of ${history.total} shown)`,
      onclick: () => {
        queue(loadMore).catch(showError)
      }
    })
    const drawn = drawHistory(history, state, (row, ns, compare) => {
      pick(row, ns, compare).catch(showError)
    })
    graph.replaceChildren(drawn, ...(more === null ? [] : [more]))
    fitLabels(drawn)
  }
  /**
   * The history again, from its newest checkpoint: with `since` (a poll), the
   * server answers `changed: false` when nothing is newer, and the page keeps
   * what it drew; else as many rows as are shown.
   */
  const refresh = async (poll = false) => {
    const query = new URLSearchParams({
      limit: String(Math.min(5000, Math.max(HISTORY_PAGE, shown === null ? 0 : rowCount(shown))))
    })
    if (poll && shown !== null) query.set("since", shown.cursor)
    const history = await api<History>(`${thread}/history?${query.toString()}`)
    if (!history.changed) return
    const first = shown === null
    draw(history)
    const root = history.namespaces[0]
    const latest = root && root.rows[0]
    if (first && root !== undefined && latest !== undefined) await pick(latest, root.name, false)
  }
  const loadMore = async () => {
    if (shown === null || shown.next === null) return
    const query = new URLSearchParams({ limit: String(HISTORY_PAGE), after: shown.next })
    draw(merge(shown, await api<History>(`${thread}/history?${query.toString()}`)))
  }
  /** One history request at a time: polls, "more" and the actions' refresh wait for the one before. */
  let last: Promise<void> = Promise.resolve()
  const queue = (task: () => Promise<void>) => {
    last = last.catch(() => undefined).then(task)
    return last
  }
  await ready
  // A snapshot stays as it was taken: nothing new appears, and nothing is polled for.
  hint.textContent = "Click a checkpoint to show its state; shift-click another to compare the two. " +
    (info.snapshot
      ? "This is a snapshot: checkpoints written after it do not appear."
      : "New checkpoints appear as they are written.")
  main.replaceChildren(el("section", { class: "thread" }, [
    el("p", {}, [el("a", { href: "#/", text: "← threads" })]),
    el("h2", {}, ["Thread ", el("code", { id: "thread-id", text: id })]),
    info.write ? actionBar(id, () => queue(() => refresh())) : null,
    hint,
    el("p", {
      class: "legend",
      text: "head: the newest checkpoint, where the next run continues · branch: the end of another line · " +
        "fork point: two or more children · root: no parent in the history"
    }),
    storage,
    el("div", { class: "columns" }, [graph, el("div", { class: "panels" }, [diff, detail])])
  ]))
  await queue(() => refresh())
  // Once, with the page: what it costs to keep this thread (a report reads every row of it).
  api<Storage>(`${thread}/storage`).then((found) => storage.replaceWith(storagePanel(found))).catch(() => undefined)
  document.body.dataset.rendered = "thread"
  if (info.snapshot) return
  // The next poll is asked for only once the previous one answered: never two in flight, however slow.
  const polling = ++polls
  const next = () => {
    poll = window.setTimeout(() => {
      queue(() => refresh(true)).catch(showError).finally(() => {
        if (polling === polls) next()
      })
    }, POLL_MS)
  }
  next()
}

// --- routing -----------------------------------------------------------------

const route = () => {
  stopPolling()
  clearError()
  delete document.body.dataset.rendered
  const hash = location.hash
  const shown = hash.startsWith("#/thread/")
    ? showThread(decodeURIComponent(hash.slice("#/thread/".length)))
    : showThreads()
  shown.catch(showError)
}

const describe = (found: Info) =>
  `${found.snapshot ? "snapshot, read-only" : found.write ? "read and write" : "read-only"} · ${
    found.layout === "langgraph" ? "LangGraph's own tables" : "this library's tables"
  }`

const ready = api<Info>("/api/info").then((found) => {
  info = found
  byId("mode").textContent = describe(found)
  if (found.snapshot) {
    const notice = byId("snapshot")
    const { directory, pid, takenAt } = found.snapshot
    notice.textContent = (pid === undefined
      ? `Snapshot: this page shows a copy of the PGlite database at ${
        escapeKeepingLines(directory)
      } taken at ${takenAt}, so that an application can open the directory meanwhile`
      : `Snapshot: the PGlite database at ${
        escapeKeepingLines(directory)
      } is in use by process ${pid}. This page shows a copy it took at ${takenAt}`) +
      "; later changes are not in it, and nothing can be written here. Restart the command for a newer one."
    notice.hidden = false
  }
}).catch(showError)
window.addEventListener("hashchange", route)
route()
