package protocol

// Error codes (protocol.md Errors).
const (
	CodeParseError      = -32700
	CodeInvalidRequest  = -32600
	CodeMethodNotFound  = -32601
	CodeInvalidParams   = -32602
	CodeInternalError   = -32603
	CodeProviderError   = -32001
	CodeVersionMismatch = -32002
	CodeNotInitialized  = -32003
	CodeNoWorkspace     = -32004
	CodeToolError       = -32005
	CodeCancelled       = -32800
)

// ErrorObject is the error member of a response.
type ErrorObject struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	// Data depends on the code: ProviderError for -32001 and for a
	// -32602 of local validation, ToolErrorData for -32005,
	// VersionMismatchData for -32002, CancelledData for -32800.
	Data any `json:"data,omitempty"`
}

// ProviderErrorKind is ProviderError.kind.
type ProviderErrorKind string

// The ProviderError kinds (protocol.md Errors; invalidConfig and
// invalidRequest also name a local validation failure, addendum §10).
const (
	ErrKindInvalidConfig    ProviderErrorKind = "invalidConfig"
	ErrKindInvalidRequest   ProviderErrorKind = "invalidRequest"
	ErrKindAuth             ProviderErrorKind = "auth"
	ErrKindPermissionDenied ProviderErrorKind = "permissionDenied"
	ErrKindNotFound         ProviderErrorKind = "notFound"
	ErrKindRateLimited      ProviderErrorKind = "rateLimited"
	ErrKindOverloaded       ProviderErrorKind = "overloaded"
	ErrKindServer           ProviderErrorKind = "server"
	ErrKindNetwork          ProviderErrorKind = "network"
	ErrKindTimeout          ProviderErrorKind = "timeout"
	ErrKindCancelled        ProviderErrorKind = "cancelled"
	ErrKindProtocol         ProviderErrorKind = "protocol"
)

// ProviderError is protocol.md ProviderError, the data of a -32001 error,
// and of a -32602 error when a ProviderConfig or ChatRequest fails local
// validation (addendum §10, with Field set).
type ProviderError struct {
	Kind    ProviderErrorKind `json:"kind"`
	Message string            `json:"message"`
	// Status is the provider's HTTP status, when there was one.
	Status *int `json:"status,omitempty"`
	// Retryable is true for rateLimited, overloaded, server, network and
	// timeout.
	Retryable bool `json:"retryable"`
	// RetryAfterMs is the provider's Retry-After, in milliseconds (additive).
	RetryAfterMs *int64 `json:"retryAfterMs,omitempty"`
	// Field names the params member that failed local validation.
	Field string `json:"field,omitempty"`
}

// ToolErrorData is the data of a -32005 tools/call error.
type ToolErrorData struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// VersionMismatchData is the data of a -32002 error.
type VersionMismatchData struct {
	// ServerProtocolVersion is the protocolVersion this runtime speaks.
	ServerProtocolVersion int `json:"serverProtocolVersion"`
}

// CancelledData is the data of a -32800 error.
type CancelledData struct {
	// Kind is "cancelled".
	Kind string `json:"kind"`
	// Message is "request cancelled" when the connection cancelled the
	// request (a $/cancelRequest, shutdown) rather than the handler.
	Message string `json:"message,omitempty"`
}

// InvalidConfigData is the data of a -32602 error when a ProviderConfig or
// ChatRequest fails local validation (addendum §10): nothing was sent.
type InvalidConfigData struct {
	// Field names the params member that failed, such as "provider.model".
	Field string `json:"field"`
	// Kind is invalidConfig or invalidRequest.
	Kind    ProviderErrorKind `json:"kind"`
	Message string            `json:"message"`
}

// MessageTooLargeData is the data of the -32600 error that ends a session
// whose line went over the 32 MiB cap (protocol.md Framing).
type MessageTooLargeData struct {
	MaxBytes int `json:"maxBytes"`
}
