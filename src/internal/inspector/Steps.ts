/**
 * What a checkpoint's step did, read from the stored checkpoint alone: the
 * nodes that ran and a one-line preview of what they wrote. LangGraph's
 * metadata records neither (it holds `source`, `step` and `parents`), so
 * both are derived from channel versions.
 *
 * @since 0.1.0
 */
import type { CheckpointTuple } from "@langchain/langgraph-checkpoint"
import * as Values from "./Values.ts"

type Checkpoint = CheckpointTuple["checkpoint"]

const { isRecord, major, START } = Values
/** Entries of `versions_seen` that are not nodes: the input's, and what interrupts before/after a node compare with. */
const PSEUDO = new Set(["__input__", "__interrupt__"])
/** The preview's length, in characters. */
const PREVIEW = 60

/**
 * The nodes that ran in the step that made the checkpoint. A step writes
 * its channels at one more than the highest version before it, and a node
 * that runs records, in `versions_seen`, the versions of the channels that
 * triggered it: written by the step before, so one below the checkpoint's
 * highest. An input or a state update runs no node: none.
 *
 * @since 0.1.0
 */
export const ran = (checkpoint: Checkpoint): ReadonlyArray<string> => {
  const top = Math.max(...Object.values(checkpoint.channel_versions).map(major))
  return Object.entries(checkpoint.versions_seen).filter(([node, seen]) =>
    !PSEUDO.has(node) && Object.values(seen).some((version) => major(version) === top - 1)
  ).map(([node]) => node).sort()
}

/**
 * A message as LangGraph's HTTP API and its clients give one in an input
 * (`{ type: "human", content }`, `{ role: "user", content }`), never
 * revived: its role and text.
 */
const inputMessage = (value: unknown): { readonly role: string; readonly text: string } | undefined => {
  if (!isRecord(value) || Array.isArray(value)) return undefined
  const role = typeof value.type === "string" ? value.type : typeof value.role === "string" ? value.role : undefined
  const { content } = value
  const text = typeof content === "string"
    ? content
    : Array.isArray(content)
    ? content.flatMap((block) => isRecord(block) && typeof block.text === "string" ? [block.text] : []).join(" ")
    : undefined
  return role === undefined || text === undefined ? undefined : { role, text }
}

/** The last of a list of messages, stored or as an input gives them. */
const lastOf = (value: unknown): { readonly role: string; readonly text: string } | undefined => {
  const stored = Values.asMessages(value)
  if (stored !== undefined) return stored.at(-1)
  if (!Array.isArray(value) || value.length === 0) return undefined
  const given = value.map(inputMessage)
  return given.every((message) => message !== undefined) ? given.at(-1) : undefined
}

/** The last message of a list of them, in a value or one of its fields (an input's `{ messages }`). */
const lastMessage = (value: unknown): { readonly role: string; readonly text: string } | undefined => {
  const direct = lastOf(value)
  if (direct !== undefined || !isRecord(value) || Array.isArray(value)) return direct
  for (const field of Object.values(value)) {
    const found = lastOf(field)
    if (found !== undefined) return found
  }
  return undefined
}

const oneLine = (text: string) => {
  const line = text.replace(/\s+/g, " ").trim()
  return line.length > PREVIEW ? `${line.slice(0, PREVIEW - 1)}…` : line
}

/**
 * One line of what the step wrote: the last message appended (`role: text`)
 * when a channel it changed holds messages, else `channel=value` of the
 * first it changed; for an input, what was given. Cut to 60 characters;
 * still untrusted text (a terminal must escape it).
 *
 * @since 0.1.0
 */
export const preview = (checkpoint: Checkpoint, changed: ReadonlyArray<string>): string => {
  // An input changes no state channel (`changedChannels` is empty): what was given is on `__start__`.
  const channels = changed.length > 0 ? changed : Object.hasOwn(checkpoint.channel_values, START) ? [START] : []
  for (const channel of channels) {
    const message = lastMessage(checkpoint.channel_values[channel])
    if (message !== undefined) return oneLine(`${message.role}: ${message.text}`)
  }
  const first = channels[0]
  if (first === undefined) return ""
  if (!Object.hasOwn(checkpoint.channel_values, first)) return oneLine(first)
  const value = JSON.stringify(Values.toPlain(checkpoint.channel_values[first])) as string | undefined
  return oneLine(`${first === START ? "input" : first}=${value ?? "undefined"}`)
}
