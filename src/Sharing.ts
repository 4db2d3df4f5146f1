/**
 * Structural sharing's switch: the one part of `Sharing` an application
 * sets, exported by the package as `Sharing` (`Sharing.Enabled`). The
 * encoding itself (`internal/codec/Sharing.ts` and its rooms) stays inside
 * the codec, where a rename breaks no user.
 *
 * @since 0.2.0
 */
import { Context } from "effect"

/**
 * Whether storage services write shared lists (default `true`). Turn it off
 * to keep every value in the plain encoding LangGraph's own savers read;
 * shared lists already stored keep reading back either way.
 *
 * @since 0.1.0
 */
export const Enabled = Context.Reference<boolean>("langgraph-checkpoint-effect/Sharing/Enabled", {
  defaultValue: () => true
})
