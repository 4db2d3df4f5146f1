/**
 * The agent every example runs: a LangGraph graph with a scripted model, so
 * it needs no API key and always answers the same way.
 *
 * The model remembers the conversation (it is all in the checkpointed state),
 * and saving a note is a tool call that waits for a human's approval through
 * `interrupt()`.
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages"
import { Annotation, END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph"
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint"

export const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  notes: Annotation<Array<string>>({ reducer: (a, b) => a.concat(b), default: () => [] })
})

const text = (message: BaseMessage | undefined) => String(message?.content ?? "")

const nameIn = (messages: ReadonlyArray<BaseMessage>) => {
  for (const message of [...messages].reverse()) {
    const match = /(?:I'm|I am|call me) ([A-Z][a-z]+)/.exec(text(message))
    if (message.getType() === "human" && match) return match[1]
  }
  return undefined
}

/** A scripted chat model that reads the whole conversation it is given. */
const model = (state: typeof State.State) => {
  const last = state.messages.at(-1)
  if (last?.getType() === "tool") {
    const saved = text(last) === "saved"
    return { messages: [new AIMessage(`${saved ? "Saved" : "Not saved"}. I keep ${state.notes.length} note(s).`)] }
  }
  const said = text(last)
  const remember = /^remember:\s*(.+)$/i.exec(said)
  if (remember) {
    return {
      messages: [
        new AIMessage({
          content: "",
          tool_calls: [{ id: `call-${state.messages.length}`, name: "save_note", args: { note: remember[1] } }]
        })
      ]
    }
  }
  const name = nameIn(state.messages)
  const turns = state.messages.filter((message) => message.getType() === "human").length
  const notes = state.notes.length === 0 ? "no notes yet" : `notes: ${state.notes.join("; ")}`
  return {
    messages: [new AIMessage(`Hello${name ? ` ${name}` : ""}! That was turn ${turns} of this thread (${notes}).`)]
  }
}

/**
 * What saving a note asks a human: LangGraph's human-in-the-loop request,
 * which agent-chat-ui shows with its question and an Accept and an Ignore
 * button.
 */
export interface ApprovalRequest {
  readonly action_request: { readonly action: string; readonly args: Record<string, unknown> }
  readonly config: {
    readonly allow_accept: boolean
    readonly allow_ignore: boolean
    readonly allow_respond: boolean
    readonly allow_edit: boolean
  }
  readonly description: string
}

const firstOf = (value: unknown): unknown => Array.isArray(value) ? value[0] : value

/** The question a pause asks: a request's description (a paused run of an earlier release asked a string). */
export const question = (value: unknown): string => {
  const request = firstOf(value)
  return typeof request === "object" && request !== null && "description" in request
    ? String(request.description)
    : String(value)
}

/** Whether the answer approves: "yes", or agent-chat-ui's `{ type: "accept" }` (alone or in a list). */
const approves = (answer: unknown): boolean => {
  const response = firstOf(answer)
  return answer === "yes" ||
    (typeof response === "object" && response !== null && "type" in response && response.type === "accept")
}

/** Saving a note pauses the run until a human approves it. */
const saveNote = (state: typeof State.State) => {
  const call = (state.messages.at(-1) as AIMessage).tool_calls![0]!
  const note = String(call.args.note)
  const request: ApprovalRequest = {
    action_request: { action: "save_note", args: { note } },
    config: { allow_accept: true, allow_ignore: true, allow_respond: false, allow_edit: false },
    description: `Save the note "${note}"?`
  }
  const approved = approves(interrupt<ReadonlyArray<ApprovalRequest>, unknown>([request]))
  return {
    messages: [new ToolMessage({ tool_call_id: call.id!, content: approved ? "saved" : "declined" })],
    notes: approved ? [note] : []
  }
}

/** The agent over `checkpointer`; without one, for a server that sets its own. */
export const buildAgent = (checkpointer?: BaseCheckpointSaver) =>
  new StateGraph(State)
    .addNode("model", model)
    .addNode("save_note", saveNote)
    .addEdge(START, "model")
    .addConditionalEdges(
      "model",
      (state) => (state.messages.at(-1) as AIMessage).tool_calls?.length ? "save_note" : END
    )
    .addEdge("save_note", "model")
    .compile(checkpointer === undefined ? {} : { checkpointer })

/**
 * The agent as a server serves it: `npx langgraph-checkpoints serve
 * ./examples/agent/graph.ts:graph` (see "Serving threads to LangGraph's
 * clients" in the README).
 */
export const graph = buildAgent()

export type Agent = ReturnType<typeof buildAgent>

export const say = (content: string) => ({ messages: [new HumanMessage(content)] })

export { text }
