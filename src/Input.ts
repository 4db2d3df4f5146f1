/**
 * Caller input decoded by its Schema, failures turned into the typed errors
 * that name the operation and the field.
 *
 * @since 0.1.0
 */
import { Effect, Schema } from "effect"
import { CheckpointIdRef, CheckpointRef, locate } from "./Checkpoint.ts"
import { formatIssue, InvalidConfig, InvalidInput } from "./CheckpointError.ts"

/** @since 0.1.0 */
export const invalidConfig = (operation: string) => (error: Schema.SchemaError) =>
  new InvalidConfig({ operation, detail: formatIssue(error.issue) })

/** @since 0.1.0 */
export const invalidInput = (operation: string, argument: string) => (error: Schema.SchemaError) =>
  new InvalidInput({ operation, argument, detail: formatIssue(error.issue) })

/** @since 0.1.0 */
export const decodeRef = (operation: string, ref: CheckpointRef) =>
  Schema.decodeEffect(CheckpointRef)(ref).pipe(Effect.mapError(invalidConfig(operation)), Effect.map(locate))

/** @since 0.1.0 */
export const decodeIdRef = (operation: string, ref: CheckpointIdRef) =>
  Schema.decodeEffect(CheckpointIdRef)(ref).pipe(Effect.mapError(invalidConfig(operation)))

/** @since 0.1.0 */
export const decodeThreadId = (operation: string, thread_id: string) =>
  Schema.decodeEffect(CheckpointRef.fields.thread_id)(thread_id).pipe(Effect.mapError(invalidConfig(operation)))
