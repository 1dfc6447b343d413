package jsonrpc

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Request is an incoming request (IsCall, with an ID) or notification (no ID).
// Params is the raw "params" value, nil when absent or null.
type Request struct {
	ID     ID
	IsCall bool // false for notifications
	Method string
	Params json.RawMessage
}

// msgKind classifies a decoded line.
type msgKind uint8

const (
	kindRequest      msgKind = iota + 1 // method and id
	kindNotification                    // method, no id
	kindResponse                        // result or error, id, no method
)

// message is one decoded incoming line.
type message struct {
	kind   msgKind
	id     ID
	method string
	params json.RawMessage
	result json.RawMessage // kindResponse: the "result" value, nil if "error" is set
	err    *Error          // kindResponse: the "error" object
}

// decodeFailure says how to answer a line that is not a valid message. reply is
// false for a malformed response, which JSON-RPC forbids answering; the zero id is
// sent as null. answers is the id of our call that an unreadable response
// answers (the zero ID when none can be read): that call fails with err.
type decodeFailure struct {
	id      ID
	err     *Error
	reply   bool
	answers ID
}

var (
	errParseInvalidUTF8 = ErrParse.WithMessage("parse error: invalid UTF-8")
	errParseInvalidJSON = ErrParse.WithMessage("parse error: invalid JSON")
	errBatch            = ErrInvalidRequest.WithMessage("invalid request: batches are not supported")
	errNotObject        = ErrInvalidRequest.WithMessage("invalid request: message must be a JSON object")
	errBadIDType        = ErrInvalidRequest.WithMessage("invalid request: id must be a string or an integer")
	errBadVersion       = ErrInvalidRequest.WithMessage(`invalid request: "jsonrpc" must be "2.0"`)
	errBadMethod        = ErrInvalidRequest.WithMessage(`invalid request: "method" must be a string`)
	errBadParams        = ErrInvalidRequest.WithMessage(`invalid request: "params" must be an object or an array`)
	errNoMethod         = ErrInvalidRequest.WithMessage(`invalid request: missing "method"`)
	errShuttingDown     = ErrInvalidRequest.WithMessage("runtime is shutting down")
	errDuplicateID      = ErrInvalidRequest.WithMessage("invalid request: id is already in flight")
)

// decodeMessage decodes one line following JSON-RPC 2.0 and protocol.md:
// invalid UTF-8 or JSON → -32700 with the request's id when it can be read
// (parseErrorID), else null; a batch, a non-object, id null or an id
// that is neither a string nor an integer → -32600 id null; a bad "jsonrpc",
// "method" or "params" → -32600 with the id when it was valid. Keys match exactly
// (encoding/json's case-insensitive struct matching is avoided on purpose).
func decodeMessage(line []byte) (*message, *decodeFailure) {
	if !utf8.Valid(line) {
		return nil, &decodeFailure{id: parseErrorID(line), err: errParseInvalidUTF8, reply: true, answers: answeredID(line)}
	}
	if !json.Valid(line) {
		return nil, &decodeFailure{id: parseErrorID(line), err: errParseInvalidJSON, reply: true, answers: answeredID(line)}
	}
	trimmed := bytes.TrimLeft(line, " \t\r\n")
	switch trimmed[0] {
	case '{':
	case '[':
		return nil, &decodeFailure{err: errBatch, reply: true}
	default:
		return nil, &decodeFailure{err: errNotObject, reply: true}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		return nil, &decodeFailure{err: errParseInvalidJSON, reply: true}
	}

	var id ID
	rawID, hasID := fields["id"]
	if hasID {
		var err error
		if id, err = DecodeID(rawID); err != nil {
			_, isResponse := responseFields(fields)
			return nil, &decodeFailure{err: errBadIDType, reply: !isResponse}
		}
	}
	rawMethod, hasMethod := fields["method"]
	if !hasMethod {
		if errObj, isResponse := responseFields(fields); isResponse {
			return decodeResponse(fields, id, hasID, errObj)
		}
		return nil, &decodeFailure{id: id, err: errNoMethod, reply: true}
	}
	if !isVersion2(fields) {
		return nil, &decodeFailure{id: id, err: errBadVersion, reply: true}
	}
	var method string
	if rawMethod[0] != '"' || json.Unmarshal(rawMethod, &method) != nil {
		return nil, &decodeFailure{id: id, err: errBadMethod, reply: true}
	}
	params := fields["params"]
	switch {
	case len(params) == 0 || string(params) == "null":
		params = nil
	case params[0] != '{' && params[0] != '[':
		return nil, &decodeFailure{id: id, err: errBadParams, reply: true}
	}
	m := &message{kind: kindNotification, method: method, params: params}
	if hasID {
		m.kind, m.id = kindRequest, id
	}
	return m, nil
}

// responseFields reports whether the object has "result" or "error", returning
// the raw "error" value.
func responseFields(fields map[string]json.RawMessage) (json.RawMessage, bool) {
	errObj, hasErr := fields["error"]
	_, hasResult := fields["result"]
	return errObj, hasErr || hasResult
}

func isVersion2(fields map[string]json.RawMessage) bool {
	v, ok := fields["jsonrpc"]
	var s string
	return ok && len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil && s == "2.0"
}

// decodeResponse decodes a response to one of our calls. A malformed one is
// reported but never answered.
func decodeResponse(fields map[string]json.RawMessage, id ID, hasID bool, errObj json.RawMessage) (*message, *decodeFailure) {
	if !hasID || !isVersion2(fields) {
		return nil, &decodeFailure{id: id, err: ErrInvalidRequest.WithMessage(`invalid response: "jsonrpc" must be "2.0"`), reply: false, answers: id}
	}
	m := &message{kind: kindResponse, id: id}
	if len(errObj) > 0 && string(errObj) != "null" {
		var e Error
		if err := json.Unmarshal(errObj, &e); err != nil {
			return nil, &decodeFailure{id: id, err: ErrInvalidRequest.WithMessage("invalid response: " + err.Error()), reply: false, answers: id}
		}
		m.err = &e
		return m, nil
	}
	m.result = fields["result"]
	if m.result == nil {
		m.result = json.RawMessage("null")
	}
	return m, nil
}

// Outgoing wire shapes. Field order is the order on the wire.
type wireRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      *ID    `json:"id,omitempty"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

type wireResult struct {
	JSONRPC string `json:"jsonrpc"`
	ID      ID     `json:"id"`
	Result  any    `json:"result"`
}

type wireErrorResponse struct {
	JSONRPC string `json:"jsonrpc"`
	ID      ID     `json:"id"`
	Error   *Error `json:"error"`
}
