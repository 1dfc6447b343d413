package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// Every message the runtime sends in this suite is validated against the
// committed schema (schema/protocol.schema.json, generated from
// internal/protocol), closed: each object the schema describes with
// properties gets additionalProperties false here, so that a member the
// runtime sends and the Go types lack fails as surely as a missing or
// mistyped one. A request's or notification's params are validated against
// its method's params, a response against the result of the method of the
// request it answers, an error against ErrorObject and its data against the
// data type of its code. TestMain prints the counts.

const schemaPath = "../../schema/protocol.schema.json"

type wireSchema struct {
	once     sync.Once
	err      error
	compiler *jsonschema.Compiler
	id       string
	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema
	// counts
	validated int
	skipped   int
	kinds     map[string]int
	events    map[string]int
}

var schemas = wireSchema{compiled: map[string]*jsonschema.Schema{}, kinds: map[string]int{}, events: map[string]int{}}

func (w *wireSchema) load() {
	data, err := os.ReadFile(schemaPath)
	if err != nil {
		w.err = err
		return
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		w.err = err
		return
	}
	closeObjects(doc)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	w.id = protocolSchemaID(doc)
	if err := c.AddResource(w.id, doc); err != nil {
		w.err = err
		return
	}
	w.compiler = c
}

func protocolSchemaID(doc any) string {
	id, _ := doc.(map[string]any)["$id"].(string)
	return id
}

// closeObjects adds additionalProperties false to every schema with
// properties and no additionalProperties.
func closeObjects(v any) {
	switch t := v.(type) {
	case map[string]any:
		if _, ok := t["properties"].(map[string]any); ok {
			if _, set := t["additionalProperties"]; !set {
				t["additionalProperties"] = false
			}
		}
		for _, e := range t {
			closeObjects(e)
		}
	case []any:
		for _, e := range t {
			closeObjects(e)
		}
	}
}

// schemaAt compiles (once) the schema at the JSON pointer ptr of the file.
func (w *wireSchema) schemaAt(ptr string) (*jsonschema.Schema, error) {
	w.once.Do(w.load)
	if w.err != nil {
		return nil, fmt.Errorf("loading %s: %w", schemaPath, w.err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if s := w.compiled[ptr]; s != nil {
		return s, nil
	}
	s, err := w.compiler.Compile(w.id + "#" + ptr)
	if err != nil {
		return nil, err
	}
	w.compiled[ptr] = s
	return s, nil
}

func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// errorDataDef is the $defs type of error.data by code.
var errorDataDef = map[int]string{
	protocol.CodeProviderError:   "ProviderError",
	protocol.CodeVersionMismatch: "VersionMismatchData",
	protocol.CodeToolError:       "ToolErrorData",
	protocol.CodeCancelled:       "CancelledData",
	protocol.CodeInvalidParams:   "InvalidConfigData",
	protocol.CodeInvalidRequest:  "MessageTooLargeData",
}

// validate checks one line the runtime sent against the schema and returns
// what fails.
func (w *wireSchema) validate(line []byte, methodOf func(id string) string) []string {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
	if err != nil {
		return []string{fmt.Sprintf("schema: not JSON: %v", err)}
	}
	msg, ok := v.(map[string]any)
	if !ok {
		return []string{"schema: a message that is not an object"}
	}
	type check struct {
		what, ptr string
		value     any
	}
	var checks []check
	method, _ := msg["method"].(string)
	_, hasID := msg["id"]
	var kind string
	switch {
	case method != "":
		kind = "notification " + method
		if hasID {
			kind = "request " + method
		}
		m, ok := protocol.MethodByName(method)
		if !ok {
			return []string{fmt.Sprintf("schema: the runtime sent %s, a method the protocol does not have", method)}
		}
		if m.Params != nil || msg["params"] != nil {
			checks = append(checks, check{kind + " params", "/x-methods/" + pointerEscape(method) + "/params", msg["params"]})
		}
		if method == protocol.MethodAgentEvent || method == protocol.MethodChatEvent {
			if p, ok := msg["params"].(map[string]any); ok {
				countEvent(w, method, p["event"])
			}
		}
	default:
		id, _ := json.Marshal(msg["id"])
		method = methodOf(string(id))
		if e, ok := msg["error"]; ok {
			kind = "error " + method
			checks = append(checks, check{kind, "/$defs/ErrorObject", e})
			if em, ok := e.(map[string]any); ok {
				if data, ok := em["data"]; ok {
					code, _ := em["code"].(json.Number).Int64()
					if def := errorDataDef[int(code)]; def != "" {
						checks = append(checks, check{fmt.Sprintf("error %d data", code), "/$defs/" + def, data})
					} else {
						return []string{fmt.Sprintf("schema: error %d of %s has data, and the protocol gives that code none: %.200s", code, method, line)}
					}
				}
			}
		} else {
			kind = "result " + method
			if method == "" {
				w.mu.Lock()
				w.skipped++
				w.mu.Unlock()
				return nil // an answer to a request the harness did not send itself
			}
			checks = append(checks, check{kind, "/x-methods/" + pointerEscape(method) + "/result", msg["result"]})
		}
	}
	var errs []string
	for _, c := range checks {
		s, err := w.schemaAt(c.ptr)
		if err != nil {
			errs = append(errs, fmt.Sprintf("schema: %s: %v", c.what, err))
			continue
		}
		if err := s.Validate(c.value); err != nil {
			errs = append(errs, fmt.Sprintf("schema: %s does not match the committed schema: %v\n\tmessage: %.300s", c.what, err, line))
		}
	}
	w.mu.Lock()
	w.validated++
	w.kinds[kind]++
	w.mu.Unlock()
	return errs
}

func countEvent(w *wireSchema, method string, ev any) {
	for {
		m, ok := ev.(map[string]any)
		if !ok {
			return
		}
		typ, _ := m["type"].(string)
		w.mu.Lock()
		w.events[method+" "+typ]++
		w.mu.Unlock()
		if typ != "subagent" {
			return
		}
		ev = m["event"]
	}
}

// report sums up the validation for TestMain.
func (w *wireSchema) report() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.validated == 0 {
		return ""
	}
	var ev []string
	for k := range w.events {
		ev = append(ev, k)
	}
	sort.Strings(ev)
	return fmt.Sprintf("schema %s: %d messages the runtime sent validated (%d answers to raw requests not), %d distinct message kinds, %d distinct event types: %s",
		filepath.Base(schemaPath), w.validated, w.skipped, len(w.kinds), len(w.events), strings.Join(ev, ", "))
}
