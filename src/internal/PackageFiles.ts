/**
 * The package's own files, found from wherever the module asking sits: in
 * the source tree (`src/internal/…`), the compiled one (`dist/internal/…`)
 * or the CLI's bundle (`dist/internal/bin/`, its chunks carrying modules
 * from any depth of `internal/`). A path relative to a module's own URL
 * would differ between the compiled module and the bundle; the package's
 * `internal/` directory is the same landmark in all three.
 *
 * @since 0.4.0
 */

/**
 * A file of the package by its path from `src/` (or `dist/`): `"server.ts"`,
 * `"internal/inspector/web/page/main.js"`, `"../package.json"`.
 *
 * @since 0.4.0
 */
export const packageFile = (path: string): URL => {
  const here = new URL(".", import.meta.url)
  // The last `/internal/`: the package's own (nothing within it has that name), whatever the install's path holds.
  const at = here.pathname.lastIndexOf("/internal/")
  if (at < 0) throw new Error(`${import.meta.url} is not a module of the package's internal/ directory`)
  return new URL(`${here.pathname.slice(0, at + 1)}${path}`, here)
}

/**
 * Whether this runs from the source tree (`.ts`, its types stripped by
 * Node) rather than compiled (`.js`): the extension of the package's other
 * modules, for the ones loaded by path.
 *
 * @since 0.4.0
 */
export const fromSource: boolean = import.meta.url.endsWith(".ts")
