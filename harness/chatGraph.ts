/**
 * The chat graph the server's tests serve: a scripted model that streams
 * its answer token by token, and a human review when asked for one.
 *
 * - `model` answers the last human message with `replyTo(text)`
 *   (`"echo: <text>"`) in several chunks (`tokensOf`), through a real
 *   `BaseChatModel` called with the node's config, so LangGraph's
 *   `messages` stream mode (and the SDK's `messages-tuple`, and `useStream`)
 *   see the tokens arrive one by one.
 * - When that message holds the word `approve`, `review` follows: it pauses
 *   at `interrupt({ question: "approve?" })`, and resuming with
 *   `new Command({ resume: "yes" })` appends `"approved: yes"`.
 * - `slow` waits that many milliseconds before each token, so a test can
 *   cancel or rejoin a run while it streams.
 *
 * `chatGraph()` answers the graph compiled without a checkpointer: the
 * server sets its own on it.
 */
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager"
import { BaseChatModel, type BaseChatModelCallOptions } from "@langchain/core/language_models/chat_models"
import { AIMessage, AIMessageChunk, type BaseMessage } from "@langchain/core/messages"
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs"
import { END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph"

export interface ChatGraphOptions {
  /** Milliseconds to wait before each streamed token (default 0). */
  readonly slow?: number
  /** Called as the model's node starts, with the run's config (a test learns where a run executes). */
  readonly onModel?: (config: { readonly configurable?: Record<string, unknown> }) => void
}

/** What the model answers to a human message's text. */
export const replyTo = (text: string): string => `echo: ${text}`

/** The chunks the model streams `reply` in: three characters each ("echo: hello" is 4 chunks). */
export const tokensOf = (reply: string): Array<string> => reply.match(/[\s\S]{1,3}/g) ?? []

/** What `review` appends when resumed with `resume`. */
export const approvedWith = (resume: string): string => `approved: ${resume}`

/** The question `review` pauses with. */
export const QUESTION = { question: "approve?" } as const

/** Whether a human message's text asks for the review: it holds the word `approve`. */
export const asksForApproval = (text: string): boolean => /\bapprove\b/i.test(text)

const textOf = (message: BaseMessage): string => typeof message.content === "string" ? message.content : message.text

const lastHuman = (messages: ReadonlyArray<BaseMessage>): string => {
  const human = messages.findLast((message) => message.getType() === "human")
  return human === undefined ? "" : textOf(human)
}

const sleep = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener("abort", () => {
      clearTimeout(timer)
      reject(signal.reason)
    }, { once: true })
  })

/** A deterministic chat model: `replyTo` the last human message, streamed in `tokensOf` chunks. */
class ScriptedChatModel extends BaseChatModel {
  readonly delay: number

  constructor(delay: number) {
    super({})
    this.delay = delay
  }

  _llmType() {
    return "scripted"
  }

  /** Without a streaming listener (a plain `invoke`): the whole answer at once. */
  async _generate(messages: Array<BaseMessage>): Promise<ChatResult> {
    const text = replyTo(lastHuman(messages))
    return { generations: [{ text, message: new AIMessage(text) }] }
  }

  /** With one (LangGraph's `messages` mode): chunk by chunk, each reported as a new token. */
  override async *_streamResponseChunks(
    messages: Array<BaseMessage>,
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun
  ): AsyncGenerator<ChatGenerationChunk> {
    for (const token of tokensOf(replyTo(lastHuman(messages)))) {
      if (this.delay > 0) await sleep(this.delay, options.signal)
      const chunk = new ChatGenerationChunk({ text: token, message: new AIMessageChunk({ content: token }) })
      yield chunk
      await runManager?.handleLLMNewToken(token, undefined, undefined, undefined, undefined, { chunk })
    }
  }
}

/** The chat graph, compiled without a checkpointer (the server sets its own). */
export const chatGraph = (options: ChatGraphOptions = {}) => {
  const model = new ScriptedChatModel(options.slow ?? 0)
  return new StateGraph(MessagesAnnotation)
    .addNode("model", async (state, config) => {
      options.onModel?.(config)
      return { messages: [await model.invoke(state.messages, config as BaseChatModelCallOptions)] }
    })
    .addNode(
      "review",
      () => ({ messages: [new AIMessage(approvedWith(interrupt<typeof QUESTION, string>(QUESTION)))] })
    )
    .addEdge(START, "model")
    .addConditionalEdges("model", (state) => asksForApproval(lastHuman(state.messages)) ? "review" : END, [
      "review",
      END
    ])
    .addEdge("review", END)
    .compile()
}

/** A message as LangGraph's API answers it (a thread's state, a stream's values). */
export interface Message {
  readonly type?: string
  readonly content?: unknown
}

/** The messages of a state's values as the API answers them. */
export const messagesOf = (values: unknown): ReadonlyArray<Message> =>
  (values as { messages?: ReadonlyArray<Message> } | undefined)?.messages ?? []
