/**
 * A copy of a PGlite directory's database taken while another process owns
 * it (see `Pglite.snapshot`), and the label it is shown with.
 *
 * @since 0.4.0
 */

/**
 * What a snapshot is labelled with wherever it is shown: whose copy of what,
 * and when.
 *
 * @since 0.1.0
 */
export interface Label {
  /** The directory's real path. */
  readonly directory: string
  /** The process that holds it, and took the snapshot; `undefined`: none held it (the reader copied it). */
  readonly pid?: number | undefined
  readonly takenAt: Date
}

/**
 * A consistent copy of a held directory's database.
 *
 * @since 0.1.0
 */
export interface Snapshot extends Label {
  /** The data directory as a tar archive (what `PGlite.create({ loadDataDir })` reads). */
  readonly data: Uint8Array
}
