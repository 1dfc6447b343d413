package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// ChatRequest limits (protocol.md ChatRequest and Images).
const (
	DefaultMaxTokens      = 4096
	MaxTemperature        = 2.0
	MaxImageDataChars     = 7_000_000
	MaxImagesPerMessage   = 8
	redactedPlaceholder   = "[redacted]"
	partialSecretPrefix   = 12 // characters of a secret redacted when echoed partially
	minPartialSecretChars = 20 // secrets shorter than this are only redacted whole
)

// ImageMediaTypes are the accepted image mediaType values (protocol.md Images).
var ImageMediaTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

func requestError(field, format string, args ...any) *Error {
	return &Error{Kind: KindInvalidRequest, Field: field, Message: fmt.Sprintf(format, args...)}
}

// wireRequest is the JSON shape of a ChatRequest before validation. Pointers
// and raw values tell a missing field from a zero one. Unknown fields are
// ignored: ChatRequest may grow additive fields (protocol.md Compatibility).
type wireRequest struct {
	System        *string           `json:"system"`
	Messages      []json.RawMessage `json:"messages"`
	Tools         []json.RawMessage `json:"tools"`
	MaxTokens     json.RawMessage   `json:"maxTokens"`
	Temperature   json.RawMessage   `json:"temperature"`
	ContextWindow json.RawMessage   `json:"contextWindow"`
}

type wireMessage struct {
	Role    *string           `json:"role"`
	Content []json.RawMessage `json:"content"`
}

type wirePart struct {
	Type      *string         `json:"type"`
	Text      *string         `json:"text"`
	ID        *string         `json:"id"`
	Name      *string         `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID *string         `json:"toolUseId"`
	ToolName  *string         `json:"toolName"`
	Content   *string         `json:"content"`
	IsError   *bool           `json:"isError"`
	MediaType *string         `json:"mediaType"`
	Data      *string         `json:"data"`
}

type wireTool struct {
	Name        *string         `json:"name"`
	Description *string         `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// ParseRequest decodes and validates a protocol.md ChatRequest:
//   - messages is required and not empty; the first role is "user"; roles
//     are "user" or "assistant"; each message has at least one part;
//   - a part is text {text}, toolUse {id, name, input object}, toolResult
//     {toolUseId, content, toolName?, isError?} or image {mediaType, data};
//   - an image's mediaType is image/png, image/jpeg, image/gif or image/webp,
//     its data is base64 without a "data:" prefix and at most 7 000 000
//     characters; a message holds at most 8 images;
//   - tools have a unique non-empty name and an inputSchema that is a JSON
//     object;
//   - maxTokens is an integer > 0, default 4096; temperature is 0-2;
//     contextWindow, when present, is an integer >= 0.
//
// Unknown fields are ignored (additive fields, protocol.md Compatibility).
// Every error is *Error with Kind invalidRequest and Field a path such as
// "messages[2].content[0].data".
func ParseRequest(raw json.RawMessage) (*Request, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, requestError("", "chat request must be a JSON object")
	}
	var w wireRequest
	if err := json.Unmarshal(trimmed, &w); err != nil {
		return nil, requestError(jsonErrorField(err), "chat request does not match the ChatRequest shape: %s", jsonErrorText(err))
	}
	req := &Request{MaxTokens: DefaultMaxTokens}
	if w.System != nil {
		req.System = *w.System
	}
	if len(w.Messages) == 0 {
		return nil, requestError("messages", "messages is required and must not be empty")
	}
	req.Messages = make([]Message, 0, len(w.Messages))
	for i, rawMsg := range w.Messages {
		m, err := parseMessage(fmt.Sprintf("messages[%d]", i), rawMsg)
		if err != nil {
			return nil, err
		}
		if i == 0 && m.Role != RoleUser {
			return nil, requestError("messages[0].role", "the first message must have role user")
		}
		req.Messages = append(req.Messages, m)
	}

	seen := make(map[string]bool, len(w.Tools))
	for i, rawTool := range w.Tools {
		field := fmt.Sprintf("tools[%d]", i)
		var t wireTool
		if err := decodeObject(rawTool, &t); err != nil {
			return nil, requestError(field, "a tool must be an object {name, description?, inputSchema}")
		}
		if t.Name == nil || strings.TrimSpace(*t.Name) == "" {
			return nil, requestError(field+".name", "tool name is required")
		}
		if seen[*t.Name] {
			return nil, requestError(field+".name", "duplicate tool name %q", truncateForMessage(*t.Name))
		}
		seen[*t.Name] = true
		if !isJSONObject(t.InputSchema) {
			return nil, requestError(field+".inputSchema", "inputSchema must be a JSON Schema object")
		}
		spec := ToolSpec{Name: *t.Name, InputSchema: compactJSON(t.InputSchema)}
		if t.Description != nil {
			spec.Description = *t.Description
		}
		req.Tools = append(req.Tools, spec)
	}

	if !isNull(w.MaxTokens) {
		n, ok := jsonInteger(w.MaxTokens)
		if !ok || n <= 0 {
			return nil, requestError("maxTokens", "maxTokens must be an integer greater than 0")
		}
		req.MaxTokens = n
	}
	if !isNull(w.Temperature) {
		var t float64
		if err := json.Unmarshal(w.Temperature, &t); err != nil || math.IsNaN(t) || t < 0 || t > MaxTemperature {
			return nil, requestError("temperature", "temperature must be a number from 0 to 2")
		}
		req.Temperature = &t
	}
	if !isNull(w.ContextWindow) {
		n, ok := jsonInteger(w.ContextWindow)
		if !ok || n < 0 {
			return nil, requestError("contextWindow", "contextWindow must be a non-negative integer")
		}
		req.ContextWindow = n
	}
	return req, nil
}

func parseMessage(field string, raw json.RawMessage) (Message, error) {
	var w wireMessage
	if err := decodeObject(raw, &w); err != nil {
		return Message{}, requestError(field, "a message must be an object {role, content}")
	}
	if w.Role == nil {
		return Message{}, requestError(field+".role", "role is required")
	}
	role := Role(*w.Role)
	if role != RoleUser && role != RoleAssistant {
		return Message{}, requestError(field+".role", "role must be user or assistant, got %q", truncateForMessage(*w.Role))
	}
	if len(w.Content) == 0 {
		return Message{}, requestError(field+".content", "content is required and must not be empty")
	}
	m := Message{Role: role, Content: make([]Part, 0, len(w.Content))}
	images := 0
	for j, rawPart := range w.Content {
		pf := fmt.Sprintf("%s.content[%d]", field, j)
		p, err := parsePart(pf, rawPart)
		if err != nil {
			return Message{}, err
		}
		if p.Type == PartImage {
			images++
			if images > MaxImagesPerMessage {
				return Message{}, requestError(pf, "a message takes at most %d images", MaxImagesPerMessage)
			}
		}
		m.Content = append(m.Content, p)
	}
	return m, nil
}

func parsePart(field string, raw json.RawMessage) (Part, error) {
	var w wirePart
	if err := decodeObject(raw, &w); err != nil {
		return Part{}, requestError(field, "a content part must be an object with a type")
	}
	if w.Type == nil {
		return Part{}, requestError(field+".type", "type is required")
	}
	need := func(name string, v *string, nonEmpty bool) error {
		if v == nil {
			return requestError(field+"."+name, "%s is required for a %s part", name, *w.Type)
		}
		if nonEmpty && strings.TrimSpace(*v) == "" {
			return requestError(field+"."+name, "%s must not be empty", name)
		}
		return nil
	}
	switch *w.Type {
	case PartText:
		if err := need("text", w.Text, false); err != nil {
			return Part{}, err
		}
		return Part{Type: PartText, Text: *w.Text}, nil
	case PartToolUse:
		if err := need("id", w.ID, true); err != nil {
			return Part{}, err
		}
		if err := need("name", w.Name, true); err != nil {
			return Part{}, err
		}
		if !isJSONObject(w.Input) {
			return Part{}, requestError(field+".input", "input must be a JSON object")
		}
		return Part{Type: PartToolUse, ID: *w.ID, Name: *w.Name, Input: compactJSON(w.Input)}, nil
	case PartToolResult:
		if err := need("toolUseId", w.ToolUseID, true); err != nil {
			return Part{}, err
		}
		if err := need("content", w.Content, false); err != nil {
			return Part{}, err
		}
		p := Part{Type: PartToolResult, ToolUseID: *w.ToolUseID, Content: *w.Content}
		if w.ToolName != nil {
			p.ToolName = *w.ToolName
		}
		if w.IsError != nil {
			p.IsError = *w.IsError
		}
		return p, nil
	case PartImage:
		if err := need("mediaType", w.MediaType, true); err != nil {
			return Part{}, err
		}
		if err := need("data", w.Data, true); err != nil {
			return Part{}, err
		}
		if err := ValidateImage(*w.MediaType, *w.Data); err != nil {
			err.Field = field + "." + err.Field
			return Part{}, err
		}
		return Part{Type: PartImage, MediaType: *w.MediaType, Data: *w.Data}, nil
	}
	return Part{}, requestError(field+".type", "type must be text, toolUse, toolResult or image, got %q", truncateForMessage(*w.Type))
}

// ValidateImage checks one protocol.md ImageInput: mediaType is image/png,
// image/jpeg, image/gif or image/webp; data is standard base64 (padding
// optional) without a "data:" prefix, 1 to 7 000 000 characters. The
// returned error's Field is "mediaType" or "data"; callers prefix the path.
func ValidateImage(mediaType, data string) *Error {
	ok := false
	for _, t := range ImageMediaTypes {
		if mediaType == t {
			ok = true
			break
		}
	}
	if !ok {
		return requestError("mediaType", "mediaType must be one of %s", strings.Join(ImageMediaTypes, ", "))
	}
	if strings.HasPrefix(strings.TrimSpace(data), "data:") {
		return requestError("data", "data must be plain base64 without a data: URL prefix")
	}
	if len(data) == 0 {
		return requestError("data", "data must not be empty")
	}
	if len(data) > MaxImageDataChars {
		return requestError("data", "image data is %d characters; the limit is %d", len(data), MaxImageDataChars)
	}
	if !isBase64(data) {
		return requestError("data", "data is not valid base64")
	}
	return nil
}

// isBase64 checks the standard alphabet with optional "=" padding at the end,
// without decoding (images reach 7 MB).
func isBase64(s string) bool {
	body := strings.TrimRight(s, "=")
	pad := len(s) - len(body)
	if pad > 2 {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/':
		default:
			return false
		}
	}
	if pad > 0 {
		return len(s)%4 == 0
	}
	return len(body)%4 != 1
}

// decodeObject unmarshals raw into v, failing unless raw is a JSON object.
func decodeObject(raw json.RawMessage, v any) error {
	if !isJSONObject(raw) {
		return fmt.Errorf("not an object")
	}
	return json.Unmarshal(raw, v)
}

func isJSONObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// jsonInteger reads raw as an integral JSON number that fits an int32-ish
// range (token counts); 4096.0 counts as an integer.
func jsonInteger(raw json.RawMessage) (int, bool) {
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, false
	}
	if f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		return 0, false
	}
	return int(f), true
}

func compactJSON(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

func jsonErrorField(err error) string {
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		return te.Field
	}
	return ""
}

func jsonErrorText(err error) string {
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		return fmt.Sprintf("%s must not be a JSON %s", te.Field, te.Value)
	}
	return "invalid JSON"
}

// Redact returns s with every non-empty secret replaced by "[redacted]"
// (addendum §11: keys never reach logs, errors or files). For a secret of 20
// or more characters, any echo of its first 12 or more characters (as in
// "invalid key sk-ant-api03-abc...") is replaced too, up to where the echo
// stops matching the secret.
func Redact(s string, secrets ...string) string {
	for _, secret := range secrets {
		if secret == "" {
			continue
		}
		s = strings.ReplaceAll(s, secret, redactedPlaceholder)
		if len(secret) >= minPartialSecretChars {
			s = redactPrefixEchoes(s, secret)
		}
	}
	return s
}

// redactPrefixEchoes replaces each run of s that equals a prefix of secret at
// least partialSecretPrefix bytes long.
func redactPrefixEchoes(s, secret string) string {
	head := secret[:partialSecretPrefix]
	var b strings.Builder
	for {
		i := strings.Index(s, head)
		if i < 0 {
			if b.Len() == 0 {
				return s
			}
			b.WriteString(s)
			return b.String()
		}
		n := partialSecretPrefix
		for i+n < len(s) && n < len(secret) && s[i+n] == secret[n] {
			n++
		}
		b.WriteString(s[:i])
		b.WriteString(redactedPlaceholder)
		s = s[i+n:]
	}
}
