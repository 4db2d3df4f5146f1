/**
 * An authentication handler for `serve --auth` in the tests: the bearer
 * token `ada-token` is the identity `ada`; anything else is refused.
 */
export const auth = (request: Request): string => {
  if (request.headers.get("authorization") !== "Bearer ada-token") throw new Error("unknown token")
  return "ada"
}
