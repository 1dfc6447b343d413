// The one place the webview names protocol types: all of them come from the
// generated schema/protocol.d.ts (generated from internal/protocol; see
// docs there), none is written by hand. Code that uses them still checks
// fields at run time: the webview treats every event as untrusted input.
export type {
  AgentEvent,
  AgentSummary,
  AskUserParams,
  ChatMode,
  GraphProjectResult,
  ImageInput,
  ModelInfo,
  RequestApprovalParams,
} from "../../../schema/protocol";
