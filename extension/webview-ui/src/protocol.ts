// The one place the webview names protocol types. Every type here comes from
// the generated schema/protocol.d.ts (generated from internal/protocol, the
// protocol-types issue); none is written by hand. Until that file lands on
// main, the names below are open placeholders (any object with a string
// "type"), so code that uses them must still check fields at run time, which
// it does anyway: the webview treats every event as untrusted input.
//
// PROVISIONAL: replace the placeholders with
//   export type { AgentEvent, ... } from "../../../schema/protocol";
// once schema/protocol.d.ts is on main.

/** One `event` object of an agent/event notification (docs/events.md). */
export type AgentEvent = { type: string; [field: string]: unknown };

/** agent/requestApproval params: { taskId, callId, tool, permission, input, preview }. */
export type RequestApprovalParams = { taskId: string; callId: string; [field: string]: unknown };

/** agent/askUser params: { taskId, callId, questions }. */
export type AskUserParams = { taskId: string; callId: string; [field: string]: unknown };

/** provider/models entry: { id, contextWindow?, capabilities, details? }. */
export type ModelInfo = { id: string; [field: string]: unknown };

/** ImageInput: { mediaType, data } (base64 without a data: prefix). */
export type ImageInput = { mediaType: string; data: string };

/** The agent/run result (the task summary). */
export type AgentSummary = { taskId: string; status: string; [field: string]: unknown };
