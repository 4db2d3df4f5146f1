/**
 * A chat page on the LangGraph SDK's `useStream`, as an application would
 * write one, for the server's browser tests (`test/support/chatPage.ts`
 * bundles and serves it).
 *
 * The page's address says what to talk to and which thread to show:
 * `?api=http://127.0.0.1:PORT` (the server; the assistant is `agent`) and
 * `&thread=<id>`, which the page sets once the SDK has created the thread,
 * so a reload reopens it. It shows every message (`data-testid="message"`,
 * `data-type` human or ai, the text as text), a box to send one, an Approve
 * button while the graph waits at an interrupt, per human message a Branch
 * button that edits the message and resubmits it from the checkpoint before
 * it (the SDK's edit-and-branch), a switch between a message's branches,
 * and the stream's status (`data-testid="status"`: loading or idle).
 */
import type { Message } from "@langchain/langgraph-sdk"
import { useStream } from "@langchain/langgraph-sdk/react"
import { type FormEvent, StrictMode, useState } from "react"
import { createRoot } from "react-dom/client"

interface State {
  messages: Array<Message>
}

interface Question {
  question: string
}

const params = new URL(window.location.href).searchParams
const api = params.get("api")

/** Keeps `thread` in the page's address, so a reload reopens the thread. */
const rememberThread = (thread: string | null) => {
  const url = new URL(window.location.href)
  if (thread === null) url.searchParams.delete("thread")
  else url.searchParams.set("thread", thread)
  window.history.replaceState(null, "", url)
}

/** A message's text: its string content, or its text blocks'. */
const textOf = (message: Message): string =>
  typeof message.content === "string"
    ? message.content
    : message.content.map((part) => part.type === "text" ? part.text : "").join("")

const human = (text: string): Message => ({ type: "human", content: text })

const Chat = ({ apiUrl }: { apiUrl: string }) => {
  const [threadId, setThreadId] = useState<string | null>(params.get("thread"))
  const [draft, setDraft] = useState("")
  /** The human message being edited for a branch, and its new text. */
  const [editing, setEditing] = useState<{ id: string; text: string } | null>(null)

  const stream = useStream<State, { InterruptType: Question }>({
    apiUrl,
    assistantId: "agent",
    threadId,
    onThreadId: (id) => {
      setThreadId(id)
      rememberThread(id)
    },
    // A reload during a run rejoins it (the run's id is kept in sessionStorage).
    reconnectOnMount: true,
    // The whole history, not the SDK's default 10 states: branches need the states before them.
    fetchStateHistory: { limit: 100 }
  })

  const send = (event: FormEvent) => {
    event.preventDefault()
    const text = draft.trim()
    if (text === "") return
    setDraft("")
    const message = human(text)
    void stream.submit({ messages: [message] }, {
      optimisticValues: (prev) => ({ ...prev, messages: [...(prev.messages ?? []), message] })
    })
  }

  /** Edit-and-branch as the SDK documents it: resubmit from the checkpoint before the message first appeared. */
  const branch = (index: number, original: Message, text: string) => {
    const checkpoint = stream.getMessagesMetadata(original, index)?.firstSeenState?.parent_checkpoint
    const message = human(text)
    setEditing(null)
    void stream.submit({ messages: [message] }, {
      checkpoint: checkpoint ?? null,
      optimisticValues: (prev) => ({ ...prev, messages: [...(prev.messages ?? []).slice(0, index), message] })
    })
  }

  const interrupt = stream.interrupt
  const question = interrupt !== undefined && !Array.isArray(interrupt) ? interrupt.value?.question : undefined

  return (
    <main>
      <h1>Chat</h1>
      <p>
        <span data-testid="status">{stream.isLoading ? "loading" : "idle"}</span>{" "}
        <span data-testid="thread">{threadId ?? ""}</span>
      </p>
      {stream.error != null && <p data-testid="error">{String(stream.error)}</p>}
      <ol data-testid="messages">
        {stream.messages.map((message, index) => {
          const meta = stream.getMessagesMetadata(message, index)
          const options = meta?.branchOptions ?? []
          const at = meta?.branch === undefined ? -1 : options.indexOf(meta.branch)
          const id = message.id ?? String(index)
          return (
            <li key={id} data-testid="message" data-type={message.type} data-id={id}>
              {editing?.id === id
                ? (
                  <form
                    onSubmit={(event) => {
                      event.preventDefault()
                      branch(index, message, editing.text)
                    }}
                  >
                    <input
                      data-testid="edit"
                      value={editing.text}
                      onChange={(event) => setEditing({ id, text: event.target.value })}
                    />
                    <button type="submit" data-testid="resubmit">Resubmit</button>
                  </form>
                )
                : <span data-testid="text">{textOf(message)}</span>}
              {message.type === "human" && editing?.id !== id && (
                <button
                  type="button"
                  data-testid="branch"
                  disabled={stream.isLoading}
                  onClick={() => setEditing({ id, text: textOf(message) })}
                >
                  Branch
                </button>
              )}
              {options.length > 1 && (
                <span data-testid="branches">
                  <button
                    type="button"
                    data-testid="branch-previous"
                    disabled={at <= 0 || stream.isLoading}
                    onClick={() => stream.setBranch(options[at - 1]!)}
                  >
                    ‹
                  </button>
                  <span data-testid="branch-position">{`${at + 1}/${options.length}`}</span>
                  <button
                    type="button"
                    data-testid="branch-next"
                    disabled={at >= options.length - 1 || stream.isLoading}
                    onClick={() => stream.setBranch(options[at + 1]!)}
                  >
                    ›
                  </button>
                </span>
              )}
            </li>
          )
        })}
      </ol>
      {interrupt !== undefined && (
        <p data-testid="interrupt">
          <span data-testid="question">{question ?? "interrupted"}</span>{" "}
          <button
            type="button"
            data-testid="approve"
            disabled={stream.isLoading}
            onClick={() => void stream.submit(undefined, { command: { resume: "yes" } })}
          >
            Approve
          </button>
        </p>
      )}
      <form onSubmit={send}>
        <input data-testid="input" value={draft} onChange={(event) => setDraft(event.target.value)} />
        <button type="submit" data-testid="send" disabled={stream.isLoading}>Send</button>
      </form>
    </main>
  )
}

const root = createRoot(document.getElementById("root")!)
root.render(
  <StrictMode>
    {api === null ? <p data-testid="error">The page needs ?api=&lt;server url&gt;</p> : <Chat apiUrl={api} />}
  </StrictMode>
)
