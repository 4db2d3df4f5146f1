/**
 * This release's version, as `package.json` names it: what a database
 * records when it is raised to a storage format level, and what errors name
 * (tested against `package.json`).
 *
 * @since 0.1.0
 */
export const VERSION = "0.4.0"
