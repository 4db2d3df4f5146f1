/**
 * The web inspector's page: one HTML document and one stylesheet, kept here
 * as strings so that the package's `dist` (built by tsc, which copies
 * nothing else) carries them and nothing is fetched from elsewhere, and the
 * script, a TypeScript module of its own (`page/main.ts`) that tsc builds
 * beside this one, served with the modules it imports (`Visible.ts`'s
 * escaping, the inspector's `StorageRows.ts`) inlined.
 *
 * The script inserts every value with `textContent` / `createElement`,
 * never as markup; there is no inline script or style (the
 * Content-Security-Policy forbids both).
 *
 * @since 0.1.0
 */
import { existsSync, readFileSync } from "node:fs"
// A namespace import: `stripTypeScriptTypes` is missing from the Node versions before 22.13 the package
// still runs on (from `dist`, where it is never called).
import * as Module from "node:module"
import { packageFile } from "../../PackageFiles.ts"

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
 * A module of the package as the browser runs it, by its path under `src/`
 * or `dist/`: built (`.js`) in the package, its types stripped by Node when
 * this runs from its source. Found by `packageFile`: the same files from
 * this module and from the CLI's bundle in `bin/`.
 */
const moduleText = (path: string): string => {
  const built = packageFile(`${path}.js`)
  const code = existsSync(built)
    ? readFileSync(built, "utf8")
    : Module.stripTypeScriptTypes(readFileSync(packageFile(`${path}.ts`), "utf8"))
  // A source map would be fetched without the token.
  return code.replace(/\n\/\/# sourceMappingURL=\S*\s*$/, "\n")
}

/** Where the page's script is, under `src/` or `dist/`. */
const PAGE = "internal/inspector/web/page/main"

/**
 * The page's imports, as `tsc` or Node's type stripping leaves them (the
 * `import type`s are gone): `import { a, b } from "../…/Module.js"`.
 */
const pageImport = /^import \{([^}]*)\} from "(\.[^"]*)\.[jt]s";?[ \t]*$/gm

/** The modules the page may import: browser-safe, with no import of their own the browser would run. */
const INLINED: ReadonlySet<string> = new Set(["internal/Visible", "internal/inspector/StorageRows"])

/**
 * The page's script, `page/main.ts`, as the browser runs it, with each of
 * its imports (`Visible`'s escaping, `StorageRows`) replaced by that
 * module's code in a scope of its own (the browser would fetch an import
 * without the token). Read when a server starts.
 *
 * @since 0.1.0
 */
export const script = (): string => {
  const page = moduleText(PAGE).replace(pageImport, (_, imported: string, from: string) => {
    const path = new URL(from, `file:///${PAGE}`).pathname.slice(1)
    if (!INLINED.has(path)) throw new Error(`the web page's script imports ${from}, which Assets.ts does not inline`)
    const code = moduleText(path)
    if (/^import /m.test(code)) throw new Error(`${path}, which the web page's script imports, imports another module`)
    const names = imported.split(",").map((name) => name.trim()).filter((name) => name !== "").join(", ")
    const inlined = code.replace(/^export /gm, "")
    return `const { ${names} } = (() => {\n${inlined}\nreturn { ${names} }\n})();`
  })
  if (/^import /m.test(page)) throw new Error("the web page's script has an import Assets.ts does not inline")
  return page
}

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
svg.history .node.branch circle { stroke: var(--fork); }
svg.history .node.fork-point circle { stroke: var(--fork); stroke-width: 3; }
svg.history .node.root circle { stroke-dasharray: 2 2; }
svg.history .node.overflow circle { stroke: var(--muted); }
svg.history .tree-gap { stroke: var(--line); stroke-dasharray: 4 4; }
svg.history .node.interrupted circle { stroke: var(--danger); stroke-dasharray: 3 2; stroke-width: 3; }
svg.history .node.selected .hit { fill: var(--accent); opacity: 0.18; }
svg.history .node.compared .hit { fill: var(--fork); opacity: 0.22; }
svg.history .label { fill: var(--fg); }
svg.history .preview { fill: var(--muted); }
svg.history .tag { fill: var(--fork); font-weight: 600; }
svg.history .tag.head { fill: var(--head); }
svg.history .tag.root, svg.history .tag.folded { fill: var(--muted); font-weight: normal; }
.legend { color: var(--muted); font-size: 0.9em; }
details.storage { margin: 0.5em 0; }
details.storage summary { cursor: pointer; color: var(--muted); }
details.storage tr.channel td:first-child { padding-left: 1.5em; }
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
.message .about, ul.message-diff .about { font-size: 11px; color: var(--muted); margin-right: 0.6em; }
.tool-call { margin: 0.2em 0; font-size: 12.5px; }
.tool-call .tool-name { font-weight: 600; margin-right: 0.4em; }
.tool-call .tool-call-id, .message-id { color: var(--muted); margin-left: 0.4em; font-size: 11px; }
details.metadata summary { cursor: pointer; font-size: 11px; color: var(--muted); }
ul.fields { list-style: none; padding-left: 1em; margin: 0.2em 0; }
ul.fields .before { background: var(--removed); }
ul.fields .after { background: var(--added); }
.actions { display: flex; gap: 0.5em; flex-wrap: wrap; align-items: center; margin: 0.5em 0; }
.confirm { flex-basis: 100%; display: flex; gap: 0.5em; align-items: center; padding: 0.5em; border: 1px solid var(--danger); border-radius: 4px; }
.confirm p { margin: 0; }
[hidden] { display: none !important; }
`
