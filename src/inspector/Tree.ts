/**
 * A thread's history as a graph, newest first, the way `git log --graph`
 * draws one: each checkpoint on a lane, a fork's branches on lanes side by
 * side, joining where they share a parent. Computed as lanes (for an SVG)
 * and as text (for a terminal).
 *
 * @since 0.1.0
 */

/**
 * A checkpoint's place in the drawing.
 *
 * @since 0.1.0
 */
export interface Row<A> {
  readonly entry: A
  /** Its lane. */
  readonly lane: number
  /** The lanes open when it is drawn (its own included). */
  readonly open: ReadonlyArray<number>
  /** Lanes that end here, their branch joining this checkpoint's lane (a fork seen from above). */
  readonly joins: ReadonlyArray<number>
  /** The checkpoint has no child in the history: the head of a branch. */
  readonly head: boolean
}

/**
 * Lays out entries given newest first (each after all its children), by
 * their ids and parents' ids.
 *
 * @since 0.1.0
 */
export const layout = <A>(
  entries: Iterable<A>,
  idOf: (entry: A) => string,
  parentOf: (entry: A) => string | undefined
): Array<Row<A>> => {
  /** What each lane waits for: the id of the next checkpoint drawn on it. */
  const lanes: Array<string | undefined> = []
  const rows: Array<Row<A>> = []
  for (const entry of entries) {
    const id = idOf(entry)
    const waiting = lanes.flatMap((awaited, lane) => awaited === id ? [lane] : [])
    const head = waiting.length === 0
    let lane = waiting[0] ?? lanes.indexOf(undefined)
    if (lane === -1) lane = lanes.length
    const joins = waiting.slice(1)
    lanes[lane] = id
    const open = lanes.flatMap((awaited, at) => awaited === undefined ? [] : [at])
    rows.push({ entry, lane, open, joins, head })
    for (const joined of joins) lanes[joined] = undefined
    lanes[lane] = parentOf(entry)
    while (lanes.length > 0 && lanes.at(-1) === undefined) lanes.pop()
  }
  return rows
}

/**
 * The rows as text: each checkpoint's line starts with its lane's `*` among
 * the others' `|`, preceded by a line of `/` where branches join it.
 *
 * @since 0.1.0
 */
export const text = <A>(rows: ReadonlyArray<Row<A>>): Array<{ readonly graph: string; readonly entry?: A }> => {
  const lines: Array<{ graph: string; entry?: A }> = []
  const draw = (open: ReadonlyArray<number>, mark: (lane: number) => string) =>
    Array.from({ length: Math.max(0, ...open) + 1 }, (_, lane) => open.includes(lane) ? mark(lane) : " ")
      .join(" ").trimEnd()
  for (const row of rows) {
    if (row.joins.length > 0) {
      lines.push({ graph: draw(row.open, (lane) => row.joins.includes(lane) ? "/" : "|") })
    }
    const open = row.open.filter((lane) => !row.joins.includes(lane))
    lines.push({ graph: draw(open, (lane) => lane === row.lane ? "*" : "|"), entry: row.entry })
  }
  return lines
}
