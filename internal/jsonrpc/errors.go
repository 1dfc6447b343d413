package jsonrpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Error codes of protocol.md "Errors" (the -327xx/-326xx ones are JSON-RPC 2.0's own).
// This is the only place that defines them.
const (
	CodeParseError       int64 = -32700
	CodeInvalidRequest   int64 = -32600
	CodeMethodNotFound   int64 = -32601
	CodeInvalidParams    int64 = -32602
	CodeInternalError    int64 = -32603
	CodeProvider         int64 = -32001
	CodeProtocolVersion  int64 = -32002
	CodeNotInitialized   int64 = -32003
	CodeNoWorkspace      int64 = -32004
	CodeTool             int64 = -32005
	CodeRequestCancelled int64 = -32800
)

// Error is a JSON-RPC 2.0 error object: {"code", "message", "data"?}.
//
// Errors compare by code: errors.Is(err, ErrInvalidParams) holds for any *Error with
// code -32602 anywhere in err's chain, whatever its message or data. Data is
// marshalled with encoding/json; on a decoded response it holds the raw
// json.RawMessage.
type Error struct {
	Code    int64
	Message string
	Data    any
}

// Sentinels for every code of protocol.md "Errors". Compare with errors.Is; add
// error.data with WithData, which returns a copy and leaves the sentinel untouched.
var (
	ErrParse            = NewError(CodeParseError, "parse error")
	ErrInvalidRequest   = NewError(CodeInvalidRequest, "invalid request")
	ErrMethodNotFound   = NewError(CodeMethodNotFound, "method not found")
	ErrInvalidParams    = NewError(CodeInvalidParams, "invalid params")
	ErrInternal         = NewError(CodeInternalError, "internal error")
	ErrProvider         = NewError(CodeProvider, "provider error")
	ErrProtocolVersion  = NewError(CodeProtocolVersion, "protocol version mismatch")
	ErrNotInitialized   = NewError(CodeNotInitialized, "not initialized")
	ErrNoWorkspace      = NewError(CodeNoWorkspace, "no workspace is open")
	ErrTool             = NewError(CodeTool, "tool error")
	ErrRequestCancelled = NewError(CodeRequestCancelled, "request cancelled")
)

// Transport errors. They never go on the wire as such.
var (
	// ErrMessageTooLarge is returned by Reader.Read and Conn.Run when a line exceeds
	// the cap (protocol.md "Framing": a larger line ends the session).
	ErrMessageTooLarge = errors.New("jsonrpc: message exceeds the maximum line size")
	// ErrClosed is returned by Call, Notify and Writer.Write once the conn is closed
	// (exit, stdin EOF or Run returned).
	ErrClosed = errors.New("jsonrpc: connection closed")
	// ErrCancelled is the context.Cause of a handler ctx cancelled by `$/cancelRequest`.
	ErrCancelled = errors.New("jsonrpc: request cancelled by the client")
	// ErrShutdown is the context.Cause of a handler ctx cancelled by Conn.Shutdown.
	ErrShutdown = errors.New("jsonrpc: runtime is shutting down")
)

// NewError returns an *Error with the given code and message and no data.
func NewError(code int64, message string) *Error {
	return &Error{Code: code, Message: message}
}

// Error returns the message; the code is not part of it so that wrapping with
// fmt.Errorf("field x: %w", ErrInvalidParams) reads naturally.
func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	return e.Message
}

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && e != nil && t != nil && t.Code == e.Code
}

// WithData returns a copy of e carrying data as error.data.
func (e *Error) WithData(data any) *Error {
	c := *e
	c.Data = data
	return &c
}

// WithMessage returns a copy of e with another message (same code and data).
func (e *Error) WithMessage(message string) *Error {
	c := *e
	c.Message = message
	return &c
}

type wireError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// MarshalJSON encodes the JSON-RPC error object; data is omitted when nil.
func (e *Error) MarshalJSON() ([]byte, error) {
	return json.Marshal(wireError{Code: e.Code, Message: e.Message, Data: e.Data})
}

// UnmarshalJSON decodes a JSON-RPC error object. code must be an integer and message
// a string; data, when present, is kept as json.RawMessage.
func (e *Error) UnmarshalJSON(b []byte) error {
	var w struct {
		Code    json.RawMessage `json:"code"`
		Message *string         `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("jsonrpc: error object: %w", err)
	}
	if w.Code == nil || w.Message == nil {
		return errors.New("jsonrpc: error object needs code and message")
	}
	code, err := strconv.ParseInt(string(w.Code), 10, 64)
	if err != nil || !isIntegerToken(w.Code) {
		return fmt.Errorf("jsonrpc: error code %s is not an integer", truncate(w.Code))
	}
	e.Code, e.Message, e.Data = code, *w.Message, nil
	if len(w.Data) > 0 && string(w.Data) != "null" {
		e.Data = w.Data
	}
	return nil
}

// toWireError maps a handler's error to the error object sent to the client:
// an *Error anywhere in the chain keeps its code and data (the message is the full
// err.Error() when it was wrapped); any other error is -32603 with its message.
func toWireError(err error) *Error {
	var e *Error
	if errors.As(err, &e) && e != nil {
		if e == err {
			return e
		}
		return &Error{Code: e.Code, Message: err.Error(), Data: e.Data}
	}
	return &Error{Code: CodeInternalError, Message: err.Error()}
}

// cancelledError is the reply to a request cancelled by `$/cancelRequest` or
// Shutdown (protocol.md: -32800 with data.kind = "cancelled").
var cancelledError = ErrRequestCancelled.WithData(map[string]string{"kind": "cancelled", "message": "request cancelled"})
