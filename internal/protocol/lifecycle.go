package protocol

import "encoding/json"

// InitializeParams is the params of initialize (protocol.md initialize;
// dataDir and sandbox: protocol.md "Agent, tools, and extensions").
type InitializeParams struct {
	// ProtocolVersion must be Version; another one fails with -32002. A
	// pointer, so that a missing version is told apart from 0.
	ProtocolVersion *int `json:"protocolVersion"`
	// ClientInfo names the client, such as { "name": "task-x-vscode",
	// "version": "0.1.0" }.
	ClientInfo *ClientInfo `json:"clientInfo,omitempty"`
	// DataDir is an absolute path where task files, checkpoints and the
	// saved index are kept (addendum §7); without it nothing is written.
	DataDir string `json:"dataDir,omitempty"`
	// Sandbox runs commands in the sandbox (addendum §6); default true.
	Sandbox *bool `json:"sandbox,omitempty"`
}

// ClientInfo is initialize.clientInfo.
type ClientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// ServerInfo is initialize.serverInfo.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// ProviderInfo is one entry of initialize.providers and the result of
// provider/capabilities.
type ProviderInfo struct {
	Kind           ProviderKind         `json:"kind"`
	Capabilities   ProviderCapabilities `json:"capabilities"`
	RequiresAPIKey bool                 `json:"requiresApiKey"`
}

// ProviderCapabilities is what a provider kind supports.
type ProviderCapabilities struct {
	Streaming     bool `json:"streaming"`
	Tools         bool `json:"tools"`
	Vision        bool `json:"vision"`
	Thinking      bool `json:"thinking"`
	ListModels    bool `json:"listModels"`
	ModelInfo     bool `json:"modelInfo"`
	ContextWindow bool `json:"contextWindow"`
}

// InitializeResult is the result of initialize. DataDir and Sandbox echo the
// settings in force (additive).
type InitializeResult struct {
	ProtocolVersion int            `json:"protocolVersion"`
	ServerInfo      ServerInfo     `json:"serverInfo"`
	Providers       []ProviderInfo `json:"providers"`
	// DataDir is the data folder in force, null without one.
	DataDir *string `json:"dataDir"`
	// Sandbox reports whether commands run in the sandbox.
	Sandbox bool `json:"sandbox"`
}

// CancelParams is the params of the $/cancelRequest notification: the id
// of the request to cancel (a string or an integer). The cancelled request
// answers -32800 with data.kind "cancelled"; an unknown id is ignored.
type CancelParams struct {
	ID ID `json:"id"`
}

// ID is a request id as sent: a string or an integer (protocol.md Framing;
// 1 and "1" are different ids).
type ID json.RawMessage

// MarshalJSON writes the id as it was received (null when empty).
func (id ID) MarshalJSON() ([]byte, error) {
	if len(id) == 0 {
		return []byte("null"), nil
	}
	return json.RawMessage(id).MarshalJSON()
}

// UnmarshalJSON keeps the id's JSON text.
func (id *ID) UnmarshalJSON(data []byte) error {
	*id = ID(append([]byte(nil), data...))
	return nil
}
