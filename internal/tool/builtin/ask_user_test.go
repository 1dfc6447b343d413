package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/tool"
)

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

// A client that cannot ask (tool.ErrCannotAsk, wrapped) gives the model
// the reason, not a dismissal; any other error is a dismissal.
func TestAskUserCannotAsk(t *testing.T) {
	in := json.RawMessage(`{"questions":[{"text":"Which?","kind":"checkbox","options":["a","b"]}]}`)
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("%w: no form", tool.ErrCannotAsk), `"unavailable":"the client cannot put these questions to the user: no form. The user was not asked`},
		{errors.New("the client failed"), `{"answered":false,"answers":[]}`},
	} {
		env := &tool.Env{Ask: func(context.Context, string, string, []tool.Question) (map[string][]string, error) { return nil, c.err }}
		res, err := (&askUser{log: slog.New(slog.DiscardHandler)}).Run(context.Background(), env, in)
		if err != nil || !strings.Contains(res.Content, c.want) || !strings.HasPrefix(res.Content, `{"answered":false`) {
			t.Errorf("%v: %q, %v", c.err, res.Content, err)
		}
	}
}
