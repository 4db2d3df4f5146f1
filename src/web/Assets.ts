/**
 * The web inspector's page: one HTML document, one script (a plain ES
 * module, no framework: a few hundred lines of DOM calls need none) and one
 * stylesheet, kept here as strings so that the package's `dist` (built by
 * tsc, which copies nothing else) carries them and nothing is fetched from
 * elsewhere.
 *
 * The script inserts every value with `textContent` / `createElement`,
 * never as markup; there is no inline script or style (the
 * Content-Security-Policy forbids both). The strings are `String.raw`
 * templates: the code in them uses no backtick and no dollar-brace.
 *
 * @since 0.1.0
 */

/**
 * The page, loading the script and stylesheet with the token in their URLs.
 *
 * @since 0.1.0
 */
export const page = (token: string): string => html.replaceAll("TOKEN", encodeURIComponent(token))

const html = String.raw`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>LangGraph checkpoints</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/app.css?token=TOKEN">
<script type="module" src="/app.js?token=TOKEN"></script>
</head>
<body>
<header><a class="brand" href="#/">LangGraph checkpoints</a><span id="mode"></span></header>
<div id="snapshot" role="status" hidden></div>
<div id="error" role="alert" hidden></div>
<main id="main"><p class="status">loading…</p></main>
</body>
</html>
`

/**
 * The page's script.
 *
 * @since 0.1.0
 */
export const script: string = String.raw`// The web inspector's page. Everything the server sends is data from users
// and tools: it is inserted with textContent / createElement only, never as
// markup, and every link points at this page's own routes.
const token = new URL(import.meta.url).searchParams.get("token") || "";
const main = document.getElementById("main");
const banner = document.getElementById("error");
const SVG = "http://www.w3.org/2000/svg";
let info = { write: false, layout: "" };
let poll = undefined;
let search = "";

/** An element: props set as attributes (class, text and on* handled apart), children appended as nodes or text. */
function el(tag, props, children) {
  const node = document.createElement(tag);
  set(node, props);
  for (const child of children || []) if (child !== null && child !== undefined) node.append(child);
  return node;
}

function svg(tag, props, children) {
  const node = document.createElementNS(SVG, tag);
  set(node, props);
  for (const child of children || []) if (child !== null && child !== undefined) node.append(child);
  return node;
}

function set(node, props) {
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") node.textContent = String(value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, String(value));
  }
}

function showError(error) {
  banner.textContent = error instanceof Error ? error.message : String(error);
  banner.hidden = false;
}

function clearError() {
  banner.hidden = true;
  banner.textContent = "";
}

/** An API call: the token in its header, a JSON body for actions. */
async function api(path, body) {
  const headers = { "x-inspector-token": token };
  const init = { headers: headers };
  if (body !== undefined) {
    headers["content-type"] = "application/json";
    init.method = "POST";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const data = await response.json().catch(function() {
    return {};
  });
  if (!response.ok) throw new Error(data.error || response.status + " " + response.statusText);
  return data;
}

const enc = encodeURIComponent;
const short = function(id) {
  return String(id).slice(-12);
};
const threadHref = function(id) {
  return "#/thread/" + enc(id);
};

function json(value) {
  const text = JSON.stringify(value, null, 2);
  return text === undefined ? "undefined" : text;
}

function cut(text, max) {
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}

function when(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso) : date.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}

function stopPolling() {
  if (poll !== undefined) clearInterval(poll);
  poll = undefined;
}

// --- threads -----------------------------------------------------------------

function threadRow(thread) {
  const namespaces = thread.namespaces.map(function(name) {
    return name === "" ? "(root)" : name;
  }).join(", ");
  return el("tr", { class: "thread-row" }, [
    el("td", {}, [el("a", { class: "thread-link", href: threadHref(thread.thread_id), text: thread.thread_id })]),
    el("td", { class: "namespaces", text: cut(namespaces, 80) }),
    el("td", { class: "num", text: thread.checkpoints }),
    el("td", { class: "num", text: thread.latest_step === undefined ? "" : thread.latest_step }),
    el("td", { text: when(thread.last_activity) }),
    el("td", {}, [thread.interrupts > 0 ? el("span", { class: "badge interrupt", text: thread.interrupts }) : null])
  ]);
}

async function showThreads() {
  const input = el("input", {
    id: "prefix",
    type: "search",
    placeholder: "thread id starts with…",
    "aria-label": "thread id prefix",
    value: search,
    autocomplete: "off"
  });
  const body = el("tbody");
  const head = el("thead", {}, [el("tr", {}, ["thread", "namespaces", "checkpoints", "step", "last activity", "interrupts"].map(function(name) {
    return el("th", { text: name });
  }))]);
  const more = el("button", { id: "more", type: "button", text: "more" });
  const status = el("p", { class: "status", id: "threads-status" });
  more.hidden = true;
  main.replaceChildren(el("section", { class: "threads" }, [el("h2", { text: "Threads" }), input, status, el("table", { id: "threads" }, [head, body]), more]));
  input.focus();
  let cursor = null;
  let generation = 0;
  async function load(reset) {
    const mine = reset ? ++generation : generation;
    const query = new URLSearchParams({ prefix: search, limit: "50" });
    if (!reset && cursor !== null) query.set("after", cursor);
    const page = await api("/api/threads?" + query.toString());
    if (mine !== generation) return;
    if (reset) body.replaceChildren();
    const shown = new Set(Array.from(body.querySelectorAll("a.thread-link"), function(a) {
      return a.textContent;
    }));
    for (const thread of page.threads) if (!shown.has(thread.thread_id)) body.append(threadRow(thread));
    cursor = page.next;
    more.hidden = cursor === null;
    const count = body.children.length;
    status.textContent = count === 0 ? "no threads" : count + " thread(s), newest activity first" + (cursor === null ? "" : " (more below)");
    document.body.dataset.rendered = "threads";
    if (document.body.dataset.firstRender === undefined) document.body.dataset.firstRender = String(Math.round(performance.now()));
  }
  let timer = undefined;
  input.addEventListener("input", function() {
    clearTimeout(timer);
    timer = setTimeout(function() {
      search = input.value;
      load(true).catch(showError);
    }, 200);
  });
  more.addEventListener("click", function() {
    load(false).catch(showError);
  });
  await load(true);
}

// --- a thread's history, drawn ----------------------------------------------

const ROW = 30;
const LANE = 22;
const LEFT = 16;

/** The history as SVG: one group per namespace, a lane per branch, lines from each checkpoint to its parent. */
function drawHistory(history, state, pick) {
  const root = svg("svg", { class: "history", role: "group", "aria-label": "checkpoint history" });
  const several = history.namespaces.length > 1;
  let y = 8;
  let width = 320;
  for (const namespace of history.namespaces) {
    const group = svg("g", { class: "namespace", "data-ns": namespace.name });
    if (several || namespace.name !== "") {
      const label = namespace.name === "" ? "root graph" : "subgraph " + namespace.name + " (under " + (namespace.parent === "" ? "the root" : namespace.parent) + ")";
      group.append(svg("text", { class: "ns-label", x: 4, y: y + 14, text: label }));
      y += 24;
    }
    const rows = namespace.rows;
    const lanes = Math.max(1, ...rows.map(function(row) {
      return Math.max(row.lane, ...row.open) + 1;
    }));
    const textX = LEFT + lanes * LANE + 6;
    const at = new Map();
    rows.forEach(function(row, i) {
      at.set(row.checkpoint_id, { x: LEFT + row.lane * LANE, y: y + i * ROW + ROW / 2 });
    });
    const edges = svg("g", { class: "edges" });
    const nodes = svg("g", { class: "nodes" });
    rows.forEach(function(row, i) {
      const me = at.get(row.checkpoint_id);
      const parent = row.parent_checkpoint_id === undefined ? undefined : at.get(row.parent_checkpoint_id);
      if (parent !== undefined) {
        const d = parent.x === me.x
          ? "M" + me.x + " " + me.y + " L" + parent.x + " " + parent.y
          : "M" + me.x + " " + me.y + " L" + me.x + " " + (parent.y - ROW / 2) + " L" + parent.x + " " + parent.y;
        edges.append(svg("path", { class: parent.x === me.x ? "edge" : "edge branch", d: d }));
      }
      const classes = ["node"];
      const tags = [];
      if (i === 0) {
        classes.push("head");
        tags.push("HEAD");
      } else if (row.head) {
        classes.push("branch-end");
        tags.push("branch end");
      }
      if (row.joins.length > 0) {
        classes.push("fork");
        tags.push("fork");
      }
      if (row.interrupts.length > 0) classes.push("interrupted");
      const words = [short(row.checkpoint_id), "step " + (row.step === undefined ? "?" : row.step), row.source || ""];
      if (row.next.length > 0) words.push("next: " + row.next.join(", "));
      const label = svg("text", { class: "label", x: textX, y: me.y + 4 });
      label.append(svg("tspan", { class: "id", text: words.join("  ") }));
      for (const tag of tags) label.append(svg("tspan", { class: "tag", dx: 8, text: tag }));
      if (row.interrupts.length > 0) label.append(svg("tspan", { class: "tag interrupt", dx: 8, text: "⏸ interrupt: " + cut(json(row.interrupts[0]).replace(/\s+/g, " "), 60) }));
      const node = svg("g", {
        class: classes.join(" "),
        tabindex: 0,
        role: "button",
        "data-id": row.checkpoint_id,
        "data-ns": namespace.name
      }, [
        svg("title", { text: row.checkpoint_id + " (" + when(row.ts) + ")" + (row.changed.length > 0 ? "\nchanged: " + row.changed.join(", ") : "") }),
        svg("rect", { class: "hit", x: 0, y: me.y - ROW / 2, width: textX + 560, height: ROW }),
        svg("circle", { cx: me.x, cy: me.y, r: i === 0 ? 8 : 6 }),
        label
      ]);
      node.addEventListener("click", function(event) {
        pick(row, namespace.name, event.shiftKey || event.ctrlKey || event.metaKey);
      });
      node.addEventListener("keydown", function(event) {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          pick(row, namespace.name, event.shiftKey);
        }
      });
      nodes.append(node);
    });
    group.append(edges, nodes);
    root.append(group);
    y += rows.length * ROW + 16;
    width = Math.max(width, textX + 560);
  }
  root.setAttribute("width", String(width));
  root.setAttribute("height", String(y));
  root.setAttribute("viewBox", "0 0 " + width + " " + y);
  mark(root, state);
  return root;
}

/** Marks the selected checkpoint and the one compared with it. */
function mark(root, state) {
  for (const node of root.querySelectorAll("g.node")) {
    node.classList.toggle("selected", state.selected !== null && node.dataset.id === state.selected.id);
    node.classList.toggle("compared", state.compare !== null && node.dataset.id === state.compare.id);
  }
}

// --- a checkpoint's state ----------------------------------------------------

function conversation(messages) {
  return el("div", { class: "conversation" }, messages.map(function(message) {
    const role = ["human", "ai", "tool", "system", "function", "chat", "remove"].includes(message.role) ? message.role : "other";
    return el("div", { class: "message role-" + role }, [
      el("span", { class: "role", text: message.role }),
      el("div", { class: "text", text: message.text })
    ]);
  }));
}

function field(name, value) {
  return [el("dt", { text: name }), el("dd", {}, [value])];
}

function showCheckpoint(panel, checkpoint) {
  const metadata = checkpoint.metadata || {};
  const facts = el("dl", { class: "facts" }, [
    ...field("id", el("code", { text: checkpoint.checkpoint_id })),
    ...field("namespace", checkpoint.checkpoint_ns === "" ? "(root)" : checkpoint.checkpoint_ns),
    ...field("parent", checkpoint.parent_checkpoint_id === null ? "none" : el("code", { text: checkpoint.parent_checkpoint_id })),
    ...field("step", metadata.step === undefined ? "?" : String(metadata.step)),
    ...field("source", metadata.source === undefined ? "?" : String(metadata.source)),
    ...field("written", when(checkpoint.checkpoint.ts)),
    ...field("next", checkpoint.next.length === 0 ? "nothing (done)" : checkpoint.next.join(", "))
  ]);
  const parts = [el("h3", { text: "Checkpoint " + short(checkpoint.checkpoint_id) }), facts];
  if (checkpoint.interrupts.length > 0) {
    parts.push(el("h4", { class: "interrupt", text: "Interrupts" }));
    for (const value of checkpoint.interrupts) parts.push(el("pre", { class: "json interrupt", text: json(value) }));
  }
  parts.push(el("h4", { text: "Channels" }));
  const values = checkpoint.checkpoint.channel_values || {};
  const names = Object.keys(values).filter(function(name) {
    return !name.startsWith("branch:to:");
  }).sort();
  if (names.length === 0) parts.push(el("p", { class: "status", text: "no values" }));
  for (const name of names) {
    const messages = checkpoint.messages[name];
    parts.push(el("div", { class: "channel", "data-channel": name }, [
      el("h5", { text: name + (messages === undefined ? "" : " (" + messages.length + " messages)") }),
      messages === undefined ? el("pre", { class: "json", text: json(values[name]) }) : conversation(messages)
    ]));
  }
  const writes = checkpoint.pendingWrites || [];
  if (writes.length > 0) {
    parts.push(el("h4", { text: "Pending writes" }));
    parts.push(el("table", { class: "writes" }, [
      el("thead", {}, [el("tr", {}, [el("th", { text: "task" }), el("th", { text: "channel" }), el("th", { text: "value" })])]),
      el("tbody", {}, writes.map(function(write) {
        return el("tr", {}, [
          el("td", {}, [el("code", { text: short(write[0]) })]),
          el("td", { text: write[1] }),
          el("td", {}, [el("pre", { class: "json", text: json(write[2]) })])
        ]);
      }))
    ]));
  }
  parts.push(el("h4", { text: "Metadata" }), el("pre", { class: "json", text: json(metadata) }));
  panel.replaceChildren(...parts);
}

// --- a diff ------------------------------------------------------------------

function showDiff(panel, found) {
  const parts = [el("h3", { text: "Diff " + short(found.a.checkpoint_id) + " → " + short(found.b.checkpoint_id) })];
  if (found.channels.length === 0) parts.push(el("p", { class: "status", text: "no channel differs" }));
  for (const change of found.channels) {
    const body = [el("h5", {}, [change.channel + " ", el("span", { class: "badge " + change.change, text: change.change })])];
    if (change.change === "added") body.push(el("pre", { class: "json added", text: json(change.after) }));
    else if (change.change === "removed") body.push(el("pre", { class: "json removed", text: json(change.before) }));
    else if (change.change === "changed") {
      body.push(el("pre", { class: "json removed", text: json(change.before) }), el("pre", { class: "json added", text: json(change.after) }));
    } else {
      body.push(el("p", { class: "status", text: change.appended.length + " appended, " + change.removed.length + " removed, " + change.edited.length + " edited" }));
      const list = el("ul", { class: "message-diff" });
      for (const message of change.appended) list.append(el("li", { class: "added" }, [el("span", { class: "role", text: "+ " + message.role }), el("span", { class: "text", text: message.text })]));
      for (const message of change.removed) list.append(el("li", { class: "removed" }, [el("span", { class: "role", text: "− " + message.role }), el("span", { class: "text", text: message.text })]));
      for (const edit of change.edited) {
        list.append(el("li", { class: "edited" }, [
          el("span", { class: "role", text: "~ " + edit.after.role }),
          el("span", { class: "text", text: edit.before.text }),
          " → ",
          el("span", { class: "text", text: edit.after.text })
        ]));
      }
      body.push(list);
    }
    parts.push(el("div", { class: "change", "data-channel": change.channel }, body));
  }
  panel.replaceChildren(...parts);
  panel.hidden = false;
}

// --- actions (with --write) --------------------------------------------------

function actionBar(id, refresh) {
  const confirm = el("div", { class: "confirm", id: "confirm" });
  confirm.hidden = true;
  function ask(question, controls, run) {
    const go = el("button", { type: "button", class: "danger", text: "Confirm" });
    const cancel = el("button", { type: "button", text: "Cancel" });
    go.addEventListener("click", function() {
      go.disabled = true;
      run().then(function() {
        confirm.hidden = true;
      }, showError).finally(function() {
        go.disabled = false;
      });
    });
    cancel.addEventListener("click", function() {
      confirm.hidden = true;
    });
    confirm.replaceChildren(el("p", { text: question }), ...controls, go, cancel);
    confirm.hidden = false;
  }
  async function removal(action) {
    const plan = await api("/api/threads/" + enc(id) + "/plan?action=" + action);
    const total = plan.removals.reduce(function(sum, removal) {
      return sum + removal.checkpoints;
    }, 0);
    return total === 0 ? "nothing would be removed" : "this removes " + total + " checkpoint(s)" + (plan.removals.some(function(removal) {
      return removal.whole;
    }) ? ", the whole thread" : "");
  }
  const copy = el("button", { type: "button", text: "Copy…" });
  copy.addEventListener("click", function() {
    const target = el("input", { type: "text", placeholder: "new thread id", "aria-label": "new thread id" });
    const replace = el("input", { type: "checkbox" });
    ask("Copy thread " + id + " to:", [target, el("label", {}, [replace, " replace if it exists"])], async function() {
      await api("/api/threads/" + enc(id) + "/copy", { target: target.value, replace: replace.checked });
      location.hash = threadHref(target.value);
    });
  });
  const prune = el("button", { type: "button", text: "Prune to latest…" });
  prune.addEventListener("click", function() {
    removal("keep-latest").then(function(what) {
      ask("Prune " + id + " to its latest checkpoints: " + what + ".", [], async function() {
        await api("/api/threads/" + enc(id) + "/prune", { strategy: "keep-latest" });
        await refresh();
      });
    }, showError);
  });
  const remove = el("button", { type: "button", class: "danger", text: "Delete…" });
  remove.addEventListener("click", function() {
    removal("delete").then(function(what) {
      ask("Delete thread " + id + ": " + what + ".", [], async function() {
        await api("/api/threads/" + enc(id) + "/delete", {});
        location.hash = "#/";
      });
    }, showError);
  });
  return el("div", { class: "actions" }, [copy, prune, remove, confirm]);
}

// --- a thread ----------------------------------------------------------------

async function showThread(id) {
  const state = { selected: null, compare: null, signature: "" };
  const graph = el("div", { id: "graph" });
  const diff = el("div", { id: "diff", class: "panel" });
  const detail = el("div", { id: "detail", class: "panel" });
  diff.hidden = true;
  const hint = el("p", { class: "status", text: "Click a checkpoint to show its state; shift-click another to compare the two. New checkpoints appear as they are written." });
  async function pick(row, ns, compare) {
    clearError();
    if (compare && state.selected !== null && state.selected.id !== row.checkpoint_id) {
      state.compare = { id: row.checkpoint_id, ns: ns };
      mark(graph, state);
      const query = new URLSearchParams({ a: state.selected.id, b: row.checkpoint_id });
      showDiff(diff, await api("/api/threads/" + enc(id) + "/diff?" + query.toString()));
      return;
    }
    state.selected = { id: row.checkpoint_id, ns: ns };
    state.compare = null;
    diff.hidden = true;
    mark(graph, state);
    const query = new URLSearchParams({ ns: ns });
    showCheckpoint(detail, await api("/api/threads/" + enc(id) + "/checkpoints/" + enc(row.checkpoint_id) + "?" + query.toString()));
  }
  async function refresh() {
    const history = await api("/api/threads/" + enc(id) + "/history");
    const signature = history.namespaces.map(function(namespace) {
      return namespace.name + ":" + namespace.rows.map(function(row) {
        return row.checkpoint_id + "/" + row.interrupts.length;
      }).join(",");
    }).join("|");
    if (signature === state.signature) return;
    const first = state.signature === "";
    state.signature = signature;
    graph.replaceChildren(drawHistory(history, state, function(row, ns, compare) {
      pick(row, ns, compare).catch(showError);
    }));
    const latest = history.namespaces[0] && history.namespaces[0].rows[0];
    if (first && latest !== undefined) await pick(latest, history.namespaces[0].name, false);
  }
  await ready;
  main.replaceChildren(el("section", { class: "thread" }, [
    el("p", {}, [el("a", { href: "#/", text: "← threads" })]),
    el("h2", {}, ["Thread ", el("code", { id: "thread-id", text: id })]),
    info.write ? actionBar(id, refresh) : null,
    hint,
    el("div", { class: "columns" }, [graph, el("div", { class: "panels" }, [diff, detail])])
  ]));
  await refresh();
  document.body.dataset.rendered = "thread";
  poll = setInterval(function() {
    refresh().catch(showError);
  }, 2000);
}

// --- routing -----------------------------------------------------------------

function route() {
  stopPolling();
  clearError();
  delete document.body.dataset.rendered;
  const hash = location.hash;
  const shown = hash.startsWith("#/thread/") ? showThread(decodeURIComponent(hash.slice("#/thread/".length))) : showThreads();
  shown.catch(showError);
}

const ready = api("/api/info").then(function(found) {
  info = found;
  document.getElementById("mode").textContent = (found.snapshot ? "snapshot, read-only" : found.write ? "read and write" : "read-only") + " · " + (found.layout === "langgraph" ? "LangGraph's own tables" : "this library's tables");
  if (found.snapshot) {
    const notice = document.getElementById("snapshot");
    notice.textContent = "Snapshot: the PGlite database at " + found.snapshot.directory + " is in use by process " + found.snapshot.pid + ". This page shows a copy it took at " + found.snapshot.takenAt + "; later changes are not in it, and nothing can be written here. Restart the command for a newer one.";
    notice.hidden = false;
  }
}).catch(showError);
window.addEventListener("hashchange", route);
route();
`

/**
 * The page's stylesheet.
 *
 * @since 0.1.0
 */
export const style: string = String.raw`:root {
  --bg: #fbfbfa;
  --fg: #1d1d1f;
  --muted: #6b6b70;
  --line: #d9d9de;
  --panel: #ffffff;
  --accent: #2f6fdf;
  --head: #1f9d55;
  --fork: #b7791f;
  --danger: #c53030;
  --added: #e6f6ea;
  --removed: #fbe9e9;
  font-family: system-ui, -apple-system, "Segoe UI", sans-serif;
  font-size: 14px;
  color: var(--fg);
  background: var(--bg);
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #17171a;
    --fg: #e8e8ea;
    --muted: #9a9aa2;
    --line: #34343a;
    --panel: #1f1f23;
    --accent: #6ea0ff;
    --added: #173522;
    --removed: #3d1c1c;
  }
}
body { margin: 0; }
header { display: flex; gap: 1em; align-items: baseline; padding: 0.6em 1em; border-bottom: 1px solid var(--line); }
header .brand { font-weight: 600; color: var(--fg); text-decoration: none; }
#mode { color: var(--muted); }
main { padding: 1em; }
a { color: var(--accent); }
code, pre, .json { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 12.5px; }
pre { white-space: pre-wrap; word-break: break-word; margin: 0.3em 0; padding: 0.5em; background: var(--bg); border: 1px solid var(--line); border-radius: 4px; max-height: 24em; overflow: auto; }
#snapshot { margin: 0.5em 1em; padding: 0.5em 0.8em; border: 1px solid var(--fork); color: var(--fork); border-radius: 4px; }
#error { margin: 0.5em 1em; padding: 0.5em 0.8em; border: 1px solid var(--danger); color: var(--danger); border-radius: 4px; }
.status { color: var(--muted); }
input[type="search"], input[type="text"] { padding: 0.4em 0.6em; border: 1px solid var(--line); border-radius: 4px; min-width: 22em; background: var(--panel); color: var(--fg); }
button { padding: 0.35em 0.8em; border: 1px solid var(--line); border-radius: 4px; background: var(--panel); color: var(--fg); cursor: pointer; }
button.danger { border-color: var(--danger); color: var(--danger); }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 0.35em 0.6em; border-bottom: 1px solid var(--line); vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.namespaces { color: var(--muted); }
.badge { display: inline-block; padding: 0 0.5em; border-radius: 8px; font-size: 12px; background: var(--line); }
.badge.interrupt, .badge.removed { background: var(--danger); color: #fff; }
.badge.added { background: var(--head); color: #fff; }
.badge.messages, .badge.changed { background: var(--accent); color: #fff; }
#more { margin-top: 0.8em; }
.columns { display: flex; gap: 1em; align-items: flex-start; }
#graph { flex: 1 1 50%; overflow: auto; max-height: calc(100vh - 12em); border: 1px solid var(--line); border-radius: 4px; background: var(--panel); }
.panels { flex: 1 1 50%; min-width: 0; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 4px; padding: 0.6em 1em; margin-bottom: 1em; }
svg.history { display: block; font-size: 12px; user-select: none; }
svg.history .ns-label { fill: var(--muted); font-weight: 600; }
svg.history .edge { fill: none; stroke: var(--muted); stroke-width: 2; }
svg.history .edge.branch { stroke: var(--fork); }
svg.history .node { cursor: pointer; outline: none; }
svg.history .node .hit { fill: transparent; }
svg.history .node:hover .hit, svg.history .node:focus .hit { fill: var(--line); opacity: 0.4; }
svg.history .node circle { fill: var(--panel); stroke: var(--accent); stroke-width: 2; }
svg.history .node.head circle { fill: var(--head); stroke: var(--head); }
svg.history .node.branch-end circle { stroke: var(--fork); }
svg.history .node.fork circle { stroke: var(--fork); stroke-width: 3; }
svg.history .node.interrupted circle { stroke: var(--danger); stroke-dasharray: 3 2; stroke-width: 3; }
svg.history .node.selected .hit { fill: var(--accent); opacity: 0.18; }
svg.history .node.compared .hit { fill: var(--fork); opacity: 0.22; }
svg.history .label { fill: var(--fg); }
svg.history .tag { fill: var(--fork); font-weight: 600; }
svg.history .head .tag { fill: var(--head); }
svg.history .tag.interrupt { fill: var(--danger); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.2em 1em; margin: 0.5em 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; word-break: break-all; }
h4.interrupt, pre.interrupt { color: var(--danger); }
.channel h5, .change h5 { margin: 0.8em 0 0.3em; }
.conversation { display: flex; flex-direction: column; gap: 0.4em; }
.message { border: 1px solid var(--line); border-radius: 6px; padding: 0.4em 0.6em; max-width: 90%; }
.message .role { display: block; font-size: 11px; text-transform: uppercase; letter-spacing: 0.05em; color: var(--muted); }
.message .text { white-space: pre-wrap; word-break: break-word; }
.message.role-human { align-self: flex-end; background: var(--added); }
.message.role-ai { align-self: flex-start; }
.message.role-tool, .message.role-system { align-self: center; font-size: 12.5px; color: var(--muted); }
pre.added { background: var(--added); }
pre.removed { background: var(--removed); }
ul.message-diff { list-style: none; padding: 0; margin: 0.3em 0; }
ul.message-diff li { padding: 0.25em 0.5em; border-radius: 4px; margin-bottom: 0.2em; white-space: pre-wrap; word-break: break-word; }
ul.message-diff li.added { background: var(--added); }
ul.message-diff li.removed { background: var(--removed); }
ul.message-diff li.edited { background: var(--line); }
ul.message-diff .role { font-weight: 600; margin-right: 0.6em; }
.actions { display: flex; gap: 0.5em; flex-wrap: wrap; align-items: center; margin: 0.5em 0; }
.confirm { flex-basis: 100%; display: flex; gap: 0.5em; align-items: center; padding: 0.5em; border: 1px solid var(--danger); border-radius: 4px; }
.confirm p { margin: 0; }
[hidden] { display: none !important; }
`
