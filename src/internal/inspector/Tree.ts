/**
 * A thread's history as a graph, newest first, the way `git log --graph`
 * draws one: each checkpoint on a lane, a fork's branches on lanes side by
 * side, joining where they share a parent. Computed as lanes (for an SVG)
 * and as text (for a terminal), with the words both use for a checkpoint's
 * place in it (`labels`).
 *
 * The layout is linear in rows: at most `LANES` lanes are drawn, so a
 * checkpoint forked thousands of times (each edit or regenerate in a chat
 * makes a fork) keeps its first branches on lanes and draws the others in
 * one overflow column, counted where they join.
 *
 * @since 0.1.0
 */

/**
 * The lanes drawn at most; further branches share the overflow column (lane
 * `LANES`).
 *
 * @since 0.1.0
 */
export const LANES = 8

/**
 * What a checkpoint is in its namespace's history. `head`: the newest, where
 * the next run continues. `branch`: the end of any other line (no child, not
 * the head), e.g. the original conversation after a time-travel edit.
 * `fork point`: two or more children. `root`: no parent in the history (the
 * first checkpoint, or one whose parent was removed).
 *
 * @since 0.1.0
 */
export type Label = "head" | "branch" | "fork point" | "root"

/**
 * A checkpoint's place in the drawing.
 *
 * @since 0.1.0
 */
export interface Row<A> {
  readonly entry: A
  /** Its lane; `LANES` (the overflow column) when it has none of its own. */
  readonly lane: number
  /** The lanes open when it is drawn (its own and those joining it included), at most `LANES + 1`. */
  readonly open: ReadonlyArray<number>
  /** Lanes that end here, their branch joining this checkpoint's lane (a fork seen from above). */
  readonly joins: ReadonlyArray<number>
  /** What it is: head, branch, fork point, root (see `Label`), in that order. */
  readonly labels: ReadonlyArray<Label>
  /** Its children in the history. */
  readonly children: number
  /** Drawn in the overflow column: a branch beyond the first `LANES`. */
  readonly overflow: boolean
  /** Branches of the overflow column that join here. */
  readonly folded: number
  /** Nothing above it is open: it starts a tree of its own (the forest's next one). */
  readonly separate: boolean
}

/**
 * Lays out entries given newest first (each after all its children), by
 * their ids and parents' ids, in time linear in the entries.
 *
 * @since 0.1.0
 */
export const layout = <A>(
  entries: Iterable<A>,
  idOf: (entry: A) => string,
  parentOf: (entry: A) => string | undefined
): Array<Row<A>> => {
  const all = Array.from(entries)
  const children = new Map<string, number>()
  const ids = new Set<string>()
  for (const entry of all) {
    ids.add(idOf(entry))
    const parent = parentOf(entry)
    if (parent !== undefined) children.set(parent, (children.get(parent) ?? 0) + 1)
  }
  /** What each lane waits for: the id of the next checkpoint drawn on it. At most `LANES`. */
  const lanes: Array<string | undefined> = []
  /** Per awaited parent, the overflow branches waiting for it. */
  const folded = new Map<string, number>()
  const rows: Array<Row<A>> = []
  for (const entry of all) {
    const id = idOf(entry)
    const parent = parentOf(entry)
    const waiting: Array<number> = []
    for (let at = 0; at < lanes.length; at++) if (lanes[at] === id) waiting.push(at)
    const joining = folded.get(id) ?? 0
    folded.delete(id)
    const separate = rows.length > 0 && waiting.length === 0 && joining === 0 &&
      lanes.every((awaited) => awaited === undefined) && folded.size === 0
    const free = lanes.indexOf(undefined)
    // A checkpoint an overflow branch leads to stays in the overflow column unless a lane waits for it.
    const lane = waiting[0] ??
      (joining > 0 ? LANES : free !== -1 ? free : lanes.length < LANES ? lanes.length : LANES)
    const overflow = lane === LANES
    const joins = waiting.slice(1)
    if (!overflow) lanes[lane] = id
    const open: Array<number> = []
    for (let at = 0; at < lanes.length; at++) if (lanes[at] !== undefined) open.push(at)
    // The overflow column, while a branch of it waits below (where it joins, the text adds it).
    if (overflow || folded.size > 0) open.push(LANES)
    const count = children.get(id) ?? 0
    const root = parent === undefined || !ids.has(parent)
    const labels: Array<Label> = []
    if (rows.length === 0) labels.push("head")
    else if (count === 0) labels.push("branch")
    if (count >= 2) labels.push("fork point")
    if (root) labels.push("root")
    rows.push({
      entry,
      lane,
      open,
      joins,
      labels,
      children: count,
      overflow,
      folded: overflow ? 0 : joining,
      separate
    })
    for (const joined of joins) lanes[joined] = undefined
    if (overflow) {
      if (!root) folded.set(parent, (folded.get(parent) ?? 0) + Math.max(1, joining))
    } else lanes[lane] = root ? undefined : parent
    while (lanes.length > 0 && lanes.at(-1) === undefined) lanes.pop()
  }
  return rows
}

/**
 * A line of the text drawing: a checkpoint's, or one of the graph alone
 * (where branches join, or an empty one between two trees).
 *
 * @since 0.1.0
 */
export interface Line<A> {
  readonly graph: string
  readonly row?: Row<A>
}

/**
 * The rows as text: each checkpoint's line starts with its lane's `*` among
 * the others' `|`, preceded by a line of `/` where branches join it. The
 * overflow column draws its checkpoints as `.` and waits as `:`; an empty
 * line separates two trees.
 *
 * @since 0.1.0
 */
export const text = <A>(rows: ReadonlyArray<Row<A>>): Array<Line<A>> => {
  const lines: Array<Line<A>> = []
  const draw = (open: ReadonlyArray<number>, mark: (lane: number) => string) => {
    const width = open.length === 0 ? 1 : Math.max(...open) + 1
    const cells: Array<string> = []
    for (let lane = 0; lane < width; lane++) cells.push(open.includes(lane) ? mark(lane) : " ")
    return cells.join(" ").trimEnd()
  }
  const idle = (lane: number) => lane === LANES ? ":" : "|"
  for (const row of rows) {
    if (row.separate) lines.push({ graph: "" })
    if (row.joins.length > 0 || row.folded > 0) {
      const open = row.folded > 0 && !row.open.includes(LANES) ? [...row.open, LANES] : row.open
      lines.push({
        graph: draw(open, (lane) => row.joins.includes(lane) || (lane === LANES && row.folded > 0) ? "/" : idle(lane))
      })
    }
    const open = row.open.filter((lane) => !row.joins.includes(lane))
    lines.push({ graph: draw(open, (lane) => lane === row.lane ? (row.overflow ? "." : "*") : idle(lane)), row })
  }
  return lines
}
