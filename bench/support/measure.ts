/** Summaries of the bench's samples and the tables that show them. */

/** A saver's samples in one scenario: milliseconds per call, and optionally the wall time of `count` calls. */
export interface Row {
  readonly name: string
  readonly samples: Array<number>
  readonly total?: number
  readonly count?: number
}

/** A call's wall time and this process's CPU time (user and system) meanwhile, both in milliseconds. */
export interface Sample {
  readonly ms: number
  readonly cpu: number
}

/**
 * How long `f` takes, and the CPU this process spends meanwhile: the
 * library's own work, apart from the database's, which runs elsewhere.
 */
export const sample = async (f: () => Promise<unknown>): Promise<Sample> => {
  const cpu = process.cpuUsage()
  const start = performance.now()
  await f()
  const ms = performance.now() - start
  const used = process.cpuUsage(cpu)
  return { ms, cpu: (used.user + used.system) / 1000 }
}

export const percentile = (samples: ReadonlyArray<number>, p: number) => {
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN
}

export const p50 = (samples: ReadonlyArray<number>) => percentile(samples, 50)

export const ms = (value: number) => value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0)
export const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(2)
export const kib = (bytes: number) => (bytes / 1024).toFixed(1)

/** Calls per second: of the wall time when the row has one, else of the mean latency. */
export const opsPerSecond = (row: Row) =>
  row.total === undefined
    ? 1000 / (row.samples.reduce((a, b) => a + b, 0) / row.samples.length)
    : (row.count ?? row.samples.length) / (row.total / 1000)

/** A Markdown table of `rows`, with each one's p50 speed-up over the row named `baseName` (when present). */
export const renderTable = (title: string, rows: ReadonlyArray<Row>, unit: string, baseName: string) => {
  const base = rows.find((row) => row.name === baseName)
  const lines = [
    `### ${title}`,
    "",
    `| saver | ${unit}s/s | p50 ms | p99 ms | speed-up vs official (p50) |`,
    "|---|---:|---:|---:|---:|"
  ]
  for (const row of rows) {
    const ratio = base === undefined ? "" : (p50(base.samples) / p50(row.samples)).toFixed(1) + "x"
    lines.push(
      `| ${row.name} | ${opsPerSecond(row).toFixed(1)} | ${ms(p50(row.samples))} | ${
        ms(percentile(row.samples, 99))
      } | ${ratio} |`
    )
  }
  return lines.join("\n")
}

/** A verdict: the figure measured, the target it is read against, and whether it was met. */
export interface Verdict {
  readonly value: string
  readonly target: string
  readonly met: boolean
}
