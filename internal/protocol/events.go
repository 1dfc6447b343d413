package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// AgentEvent is one event of an agent/event notification (protocol.md
// "Agent, tools, and extensions"; docs/events.md lists each type's fields
// in wire order). The set is closed: only the types of this package
// implement it. On the wire an event is an object whose first member is
// "type"; MarshalAgentEvent is the one place that adds it.
type AgentEvent interface {
	// EventType is the event's "type" member.
	EventType() string
	agentEvent()
}

// ChatEvent is one event of a chat/event notification (protocol.md
// chat/send). The set is closed, like AgentEvent's.
type ChatEvent interface {
	EventType() string
	chatEvent()
}

// RawEvent is an event already encoded with its "type": one replayed from a
// task file, one redacted after encoding, or one of a type this package
// does not know (clients ignore unknown event types). It stands for
// whichever event it holds.
type RawEvent json.RawMessage

// EventType reads the "type" member of the encoded event.
func (r RawEvent) EventType() string {
	var t struct {
		Type string `json:"type"`
	}
	json.Unmarshal(r, &t)
	return t.Type
}

func (RawEvent) agentEvent() {}
func (RawEvent) chatEvent()  {}

// MarshalJSON writes the encoded event as it is.
func (r RawEvent) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return json.RawMessage(r).MarshalJSON()
}

// MarshalAgentEvent encodes e as {"type": e.EventType(), <e's members>}.
// Every member is present: a nil slice is sent as [], an empty or invalid
// input as {} (unless its field says omitempty).
func MarshalAgentEvent(e AgentEvent) ([]byte, error) { return marshalEvent(e) }

// MarshalChatEvent encodes e as MarshalAgentEvent does.
func MarshalChatEvent(e ChatEvent) ([]byte, error) { return marshalEvent(e) }

func marshalEvent(e interface{ EventType() string }) ([]byte, error) {
	if e == nil || (reflect.ValueOf(e).Kind() == reflect.Pointer && reflect.ValueOf(e).IsNil()) {
		return []byte("null"), nil
	}
	return json.Marshal(e)
}

// withType is the one place that adds "type": it encodes body (e's members,
// in a type without e's MarshalJSON) filled, and puts {"type": ...} first.
// Every event type's MarshalJSON calls it, so an event encodes the same
// whichever way it is marshalled.
func withType(e interface{ EventType() string }, body any) ([]byte, error) {
	b, err := json.Marshal(filled(reflect.ValueOf(body)).Interface())
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '{' {
		return nil, fmt.Errorf("protocol: event %s does not encode as an object", e.EventType())
	}
	typ, _ := json.Marshal(e.EventType())
	var out bytes.Buffer
	out.Grow(len(b) + len(typ) + 10)
	out.WriteString(`{"type":`)
	out.Write(typ)
	if inner := bytes.TrimSpace(b[1 : len(b)-1]); len(inner) > 0 {
		out.WriteByte(',')
		out.Write(inner)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// filled returns a copy of v (a struct) in which the members an event
// always carries hold a value: a nil slice (no omitempty) is [] and an
// input (json.RawMessage) that is empty or not JSON is {}. Structs and
// slices of structs are filled through; interfaces and pointers are left
// as they are (an inner event is encoded by its own MarshalJSON). v itself
// is never changed.
func filled(v reflect.Value) reflect.Value {
	if v.Kind() != reflect.Struct {
		return v
	}
	out := reflect.New(v.Type()).Elem()
	out.Set(v)
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		omit := strings.Contains(f.Tag.Get("json"), ",omitempty")
		fv := out.Field(i)
		switch {
		case f.Type == rawMessageType:
			if raw := fv.Bytes(); len(raw) == 0 || !json.Valid(raw) {
				if !omit {
					fv.SetBytes([]byte("{}"))
				}
			}
		case fv.Kind() == reflect.Struct:
			fv.Set(filled(fv))
		case fv.Kind() == reflect.Slice:
			if fv.IsNil() {
				if !omit {
					fv.Set(reflect.MakeSlice(f.Type, 0, 0))
				}
				continue
			}
			if f.Type.Elem().Kind() != reflect.Struct {
				continue
			}
			s := reflect.MakeSlice(f.Type, fv.Len(), fv.Len())
			for j := range fv.Len() {
				s.Index(j).Set(filled(fv.Index(j)))
			}
			fv.Set(s)
		}
	}
	return out
}

// AgentEvents lists a zero value of every AgentEvent type, in the order
// docs/events.md gives them.
var AgentEvents = []AgentEvent{
	StartedEvent{}, ModelEvent{}, IterationEvent{}, TextDeltaEvent{}, ThinkingDeltaEvent{},
	AssistantMessageEvent{}, UsageEvent{}, ContextEvent{}, CompactedEvent{}, RetryEvent{},
	ModelSwitchedEvent{}, SteeredEvent{}, ToolStartedEvent{}, ApprovalRequestedEvent{},
	ApprovalResolvedEvent{}, FileChangedEvent{}, ToolFinishedEvent{}, HookEvent{},
	ValidationStartedEvent{}, ValidationFinishedEvent{}, WarningEvent{}, ErrorEvent{}, DoneEvent{},
	PlanStartedEvent{}, StepSkippedEvent{}, MergedEvent{}, SubagentStartedEvent{}, SubagentEvent{},
	SubagentFinishedEvent{}, BestOfDoneEvent{}, ToolOutputEvent{}, DiffEvent{}, PlanEvent{},
	ApprovalWithdrawnEvent{}, ReplayedEvent{}, UserMessageEvent{},
}

// ChatEvents lists a zero value of every ChatEvent type.
var ChatEvents = []ChatEvent{ChatTextDeltaEvent{}, ChatThinkingDeltaEvent{}, ChatToolCallEvent{}, ChatUsageEvent{}, ChatDoneEvent{}}

var (
	agentEventTypes = eventTypes(AgentEvents)
	chatEventTypes  = eventTypes(ChatEvents)
)

func eventTypes[E interface{ EventType() string }](list []E) map[string]reflect.Type {
	m := make(map[string]reflect.Type, len(list))
	for _, e := range list {
		m[e.EventType()] = reflect.TypeOf(e)
	}
	return m
}

// DecodeAgentEvent decodes one encoded agent event. An event of a type this
// package does not know decodes as a RawEvent.
func DecodeAgentEvent(data []byte) (AgentEvent, error) {
	v, err := decodeEvent(data, agentEventTypes)
	if err != nil || v == nil {
		return nil, err
	}
	return v.(AgentEvent), nil
}

// DecodeChatEvent decodes one encoded chat event, as DecodeAgentEvent does.
func DecodeChatEvent(data []byte) (ChatEvent, error) {
	v, err := decodeEvent(data, chatEventTypes)
	if err != nil || v == nil {
		return nil, err
	}
	return v.(ChatEvent), nil
}

func decodeEvent(data []byte, types map[string]reflect.Type) (any, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || string(data) == "null" {
		return nil, nil
	}
	var head struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("protocol: event: %w", err)
	}
	if head.Type == nil {
		return nil, errors.New(`protocol: event without "type"`)
	}
	t, ok := types[*head.Type]
	if !ok {
		return RawEvent(bytes.Clone(data)), nil
	}
	p := reflect.New(t)
	if err := json.Unmarshal(data, p.Interface()); err != nil {
		return nil, fmt.Errorf("protocol: %s event: %w", *head.Type, err)
	}
	return p.Elem().Interface(), nil
}

// AgentEventParams is the params of an agent/event notification.
type AgentEventParams struct {
	// TaskID is the task the event belongs to.
	TaskID string     `json:"taskId"`
	Event  AgentEvent `json:"event"`
	// Replay marks an event agent/replay sent again (additive; absent on
	// live events).
	Replay bool `json:"replay,omitempty"`
}

// MarshalJSON writes the event with its "type".
func (p AgentEventParams) MarshalJSON() ([]byte, error) {
	ev, err := MarshalAgentEvent(p.Event)
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		TaskID string          `json:"taskId"`
		Event  json.RawMessage `json:"event"`
		Replay bool            `json:"replay,omitempty"`
	}{p.TaskID, ev, p.Replay})
}

// UnmarshalJSON decodes the event by its "type".
func (p *AgentEventParams) UnmarshalJSON(data []byte) error {
	var w struct {
		TaskID string          `json:"taskId"`
		Event  json.RawMessage `json:"event"`
		Replay bool            `json:"replay"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	ev, err := DecodeAgentEvent(w.Event)
	if err != nil {
		return err
	}
	*p = AgentEventParams{TaskID: w.TaskID, Event: ev, Replay: w.Replay}
	return nil
}

// MarshalJSON writes the event with its "type".
func (p ChatEventParams) MarshalJSON() ([]byte, error) {
	ev, err := MarshalChatEvent(p.Event)
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		RequestID ID              `json:"requestId"`
		Event     json.RawMessage `json:"event"`
	}{p.RequestID, ev})
}

// UnmarshalJSON decodes the event by its "type".
func (p *ChatEventParams) UnmarshalJSON(data []byte) error {
	var w struct {
		RequestID ID              `json:"requestId"`
		Event     json.RawMessage `json:"event"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	ev, err := DecodeChatEvent(w.Event)
	if err != nil {
		return err
	}
	*p = ChatEventParams{RequestID: w.RequestID, Event: ev}
	return nil
}

// ChatTextDeltaEvent is chat/event textDelta: the next part of the
// assistant text.
type ChatTextDeltaEvent struct {
	Text string `json:"text"`
}

// ChatThinkingDeltaEvent is chat/event thinkingDelta (additive, addendum
// §10): a part of the model's thinking, never part of the text.
type ChatThinkingDeltaEvent struct {
	Text string `json:"text"`
}

// ChatToolCallEvent is chat/event toolCall: a complete tool call (its
// arguments are parsed).
type ChatToolCallEvent struct {
	ID    string          `json:"id"`
	Input json.RawMessage `json:"input"`
	Name  string          `json:"name"`
}

// ChatUsageEvent is chat/event usage: token counts, when the provider
// reports them.
type ChatUsageEvent struct {
	Usage *Usage `json:"usage"`
}

// ChatDoneEvent is chat/event done: the provider finished the response.
type ChatDoneEvent struct {
	StopReason StopReason `json:"stopReason"`
}

func (ChatTextDeltaEvent) EventType() string     { return "textDelta" }
func (ChatThinkingDeltaEvent) EventType() string { return "thinkingDelta" }
func (ChatToolCallEvent) EventType() string      { return "toolCall" }
func (ChatUsageEvent) EventType() string         { return "usage" }
func (ChatDoneEvent) EventType() string          { return "done" }
func (ChatTextDeltaEvent) chatEvent()            {}
func (ChatThinkingDeltaEvent) chatEvent()        {}
func (ChatToolCallEvent) chatEvent()             {}
func (ChatUsageEvent) chatEvent()                {}
func (ChatDoneEvent) chatEvent()                 {}

// MarshalJSON encodes the event with its "type" first (MarshalChatEvent).
func (e ChatTextDeltaEvent) MarshalJSON() ([]byte, error) {
	type plain ChatTextDeltaEvent
	return withType(e, plain(e))
}
func (e ChatThinkingDeltaEvent) MarshalJSON() ([]byte, error) {
	type plain ChatThinkingDeltaEvent
	return withType(e, plain(e))
}
func (e ChatToolCallEvent) MarshalJSON() ([]byte, error) {
	type plain ChatToolCallEvent
	return withType(e, plain(e))
}
func (e ChatUsageEvent) MarshalJSON() ([]byte, error) {
	type plain ChatUsageEvent
	return withType(e, plain(e))
}
func (e ChatDoneEvent) MarshalJSON() ([]byte, error) {
	type plain ChatDoneEvent
	return withType(e, plain(e))
}
