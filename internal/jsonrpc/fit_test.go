package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"
)

// The id of an oversized line is read from its head when it comes before
// the cut; a response, a non-object or an id after the cut gives null.
func TestHeadID(t *testing.T) {
	for head, want := range map[string]string{
		`{"jsonrpc":"2.0","id":7,"method":"x","params":"aaaa`: "7",
		`{"id":"s-1","params":{"a":[1,2,`:                     `"s-1"`,
		`{"jsonrpc":"2.0","method":"x","params":"aaaa`:        "null",
		`{"jsonrpc":"2.0","result":"aaa`:                      "null",
		`{"id":3,"result":"aaa`:                               "null",
		`{"id":1.5,"method":"x","params":"`:                   "null",
		`["id",1`:                                             "null",
		`not json`:                                            "null",
	} {
		if got := headID([]byte(head)).String(); got != want {
			t.Errorf("headID(%s) = %s, want %s", head, got, want)
		}
	}
}

// fitParams cuts the longest string values, keeps keys, member order and
// small values, and the result is valid JSON at least `over` bytes shorter.
func TestFitParams(t *testing.T) {
	raw := []byte(`{"taskId":"t-1","event":{"type":"toolFinished","result":"` + strings.Repeat("é", 5000) +
		`","input":{"path":"a.go","content":"` + strings.Repeat("x", 3000) + `"},"ok":true,"n":12}}`)
	out, ok := fitParams(raw, 6000, 32<<20)
	if !ok {
		t.Fatal("not fitted")
	}
	if len(raw)-len(out) < 6000 || !json.Valid(out) {
		t.Fatalf("saved %d bytes, valid %v", len(raw)-len(out), json.Valid(out))
	}
	var ev struct {
		TaskID string `json:"taskId"`
		Event  struct {
			Type   string `json:"type"`
			Result string `json:"result"`
			OK     bool   `json:"ok"`
			N      int    `json:"n"`
		} `json:"event"`
	}
	if err := json.Unmarshal(out, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.TaskID != "t-1" || ev.Event.Type != "toolFinished" || !ev.Event.OK || ev.Event.N != 12 ||
		!strings.Contains(ev.Event.Result, "more bytes not sent; the message was over the 32 MiB message cap") ||
		!strings.HasPrefix(string(out), `{"taskId":"t-1","event":{"type":"toolFinished","result":"éé`) {
		t.Fatalf("fitted: %.300s", out)
	}
	if _, ok := fitParams([]byte(`[1,2,3,"ab"]`), 50, 100); ok {
		t.Fatal("fitted what strings cannot save")
	}
}
