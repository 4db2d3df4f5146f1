/**
 * The shapes the inspector answers with that the web page reads too: types
 * only, importing nothing, so the browser's program can share them.
 *
 * @since 0.1.0
 */

/**
 * A tool call an AI message asks for.
 *
 * @since 0.1.0
 */
export interface ToolCall {
  readonly name: string
  readonly args: unknown
  readonly id?: string
}

/**
 * A message, as LangChain revives it (a `BaseMessage`) or as it stays when
 * not revived (its serialized `constructor` form): its role and text, the
 * tool calls an AI message asks for, the call a tool message answers
 * (`tool_call_id`, `name`, a failure's `status`), and the model's metadata.
 * Empty fields are left out.
 *
 * @since 0.1.0
 */
export interface Message {
  readonly id: string | undefined
  readonly role: string
  readonly text: string
  readonly tool_calls?: ReadonlyArray<ToolCall>
  readonly tool_call_id?: string
  readonly name?: string
  /** A tool's result that failed: `"error"` (LangChain's default, `"success"`, is left out). */
  readonly status?: string
  readonly usage_metadata?: unknown
  readonly response_metadata?: unknown
  readonly additional_kwargs?: unknown
}

/**
 * One field that differs inside an edited message: its path
 * (`tool_calls[0].args.city`), its value before and after.
 *
 * @since 0.1.0
 */
export interface FieldChange {
  readonly path: string
  readonly before: unknown
  readonly after: unknown
}

/**
 * How one channel differs between two checkpoints.
 *
 * @since 0.1.0
 */
export type ChannelDiff =
  | { readonly channel: string; readonly change: "added"; readonly after: unknown }
  | { readonly channel: string; readonly change: "removed"; readonly before: unknown }
  | { readonly channel: string; readonly change: "changed"; readonly before: unknown; readonly after: unknown }
  | {
    readonly channel: string
    readonly change: "messages"
    readonly appended: ReadonlyArray<Message>
    readonly removed: ReadonlyArray<Message>
    readonly edited: ReadonlyArray<
      { readonly before: Message; readonly after: Message; readonly fields: ReadonlyArray<FieldChange> }
    >
  }
