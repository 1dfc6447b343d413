package jsonrpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

func TestErrorIsComparesCodes(t *testing.T) {
	wrapped := fmt.Errorf("decode params: %w", ErrInvalidParams.WithData(map[string]string{"field": "model"}))
	if !errors.Is(wrapped, ErrInvalidParams) {
		t.Fatal("errors.Is lost the code through wrapping and WithData")
	}
	if errors.Is(wrapped, ErrInvalidRequest) {
		t.Fatal("errors.Is matched another code")
	}
	if !errors.Is(NewError(CodeTool, "other message"), ErrTool) {
		t.Fatal("same code, other message should match")
	}
	if errors.Is(errors.New("invalid params"), ErrInvalidParams) {
		t.Fatal("a plain error matched")
	}
}

func TestSentinelCodes(t *testing.T) {
	for _, tt := range []struct {
		err  *Error
		code int64
	}{
		{ErrParse, -32700}, {ErrInvalidRequest, -32600}, {ErrMethodNotFound, -32601},
		{ErrInvalidParams, -32602}, {ErrInternal, -32603}, {ErrProvider, -32001},
		{ErrProtocolVersion, -32002}, {ErrNotInitialized, -32003}, {ErrNoWorkspace, -32004},
		{ErrTool, -32005}, {ErrRequestCancelled, -32800},
	} {
		if tt.err.Code != tt.code {
			t.Errorf("%s: code %d, want %d", tt.err.Message, tt.err.Code, tt.code)
		}
	}
}

func TestWithDataCopies(t *testing.T) {
	e := ErrProvider.WithData(map[string]any{"kind": "auth"})
	if ErrProvider.Data != nil || e == ErrProvider || e.Code != CodeProvider {
		t.Fatal("WithData changed the sentinel or lost the code")
	}
	b, err := json.Marshal(e)
	if err != nil || string(b) != `{"code":-32001,"message":"provider error","data":{"kind":"auth"}}` {
		t.Fatalf("%s %v", b, err)
	}
	if b, _ := json.Marshal(ErrTool); string(b) != `{"code":-32005,"message":"tool error"}` {
		t.Fatalf("data not omitted: %s", b)
	}
}

func TestErrorUnmarshal(t *testing.T) {
	var e Error
	if err := json.Unmarshal([]byte(`{"code":-32005,"message":"denied","data":{"x":1}}`), &e); err != nil {
		t.Fatal(err)
	}
	if e.Code != -32005 || e.Message != "denied" || string(e.Data.(json.RawMessage)) != `{"x":1}` {
		t.Fatalf("%+v", e)
	}
	for _, bad := range []string{`{"message":"m"}`, `{"code":1}`, `{"code":1.5,"message":"m"}`, `{"code":"1","message":"m"}`, `[]`} {
		if err := json.Unmarshal([]byte(bad), &e); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func TestToWireError(t *testing.T) {
	if got := toWireError(ErrNoWorkspace); got != ErrNoWorkspace {
		t.Errorf("bare *Error changed: %+v", got)
	}
	got := toWireError(fmt.Errorf("open: %w", ErrNoWorkspace.WithData(1)))
	if got.Code != CodeNoWorkspace || got.Message != "open: no workspace is open" || got.Data != 1 {
		t.Errorf("wrapped: %+v", got)
	}
	if got := toWireError(errors.New("disk full")); got.Code != CodeInternalError || got.Message != "disk full" {
		t.Errorf("plain: %+v", got)
	}
}
