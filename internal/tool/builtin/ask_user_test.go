package builtin

import "testing"

// A dismissal gives the model exactly { answered: false, answers: [] }
// (protocol.md agent/askUser), no prose around it.
func TestAskResultDismissedIsExactJSON(t *testing.T) {
	if got := askResult(false, nil).Content; got != `{"answered":false,"answers":[]}` {
		t.Fatalf("dismissed content %q", got)
	}
	if got := askResult(true, []askAnswer{}).Content; got != `{"answered":true,"answers":[]}` {
		t.Fatalf("answered content %q", got)
	}
}
