/**
 * The shapes the inspector answers with that the web page reads too: types
 * only, importing nothing, so the browser's program can share them.
 *
 * @since 0.1.0
 */

/**
 * A message, as LangChain revives it (a `BaseMessage`) or as it stays when
 * not revived (its serialized `constructor` form).
 *
 * @since 0.1.0
 */
export interface Message {
  readonly id: string | undefined
  readonly role: string
  readonly text: string
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
    readonly edited: ReadonlyArray<{ readonly before: Message; readonly after: Message }>
  }
