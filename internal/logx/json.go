package logx

import (
	"bytes"
	"encoding/json"
)

// RedactJSON redacts the keys in a JSON document: the raw key and its
// JSON-escaped forms (a key holding '"', '\\', '<' or control characters is
// escaped inside JSON strings). If the byte replacement breaks the
// document, every string in it is redacted after decoding instead.
func (s *Secrets) RedactJSON(raw json.RawMessage) json.RawMessage {
	secrets := s.List()
	if len(raw) == 0 || len(secrets) == 0 {
		return raw
	}
	out := []byte(raw)
	for _, k := range secrets {
		if k == "" {
			continue
		}
		forms := [][]byte{[]byte(k)}
		if b, err := json.Marshal(k); err == nil {
			forms = append(forms, b[1:len(b)-1])
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if enc.Encode(k) == nil {
			b := bytes.TrimSpace(buf.Bytes())
			forms = append(forms, b[1:len(b)-1])
		}
		for _, f := range forms {
			out = bytes.ReplaceAll(out, f, []byte("[redacted]"))
		}
	}
	if json.Valid(out) {
		return out
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return json.RawMessage("null")
	}
	b, err := json.Marshal(s.redactValue(v))
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

func (s *Secrets) redactValue(v any) any {
	switch x := v.(type) {
	case string:
		return s.Redact(x)
	case []any:
		for i := range x {
			x[i] = s.redactValue(x[i])
		}
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[s.Redact(k)] = s.redactValue(e)
		}
		return m
	}
	return v
}
