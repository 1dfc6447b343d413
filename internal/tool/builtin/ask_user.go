package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/task-x/task-x-runtime/internal/tool"
)

// askUserTimeout bounds the wait for the user's answers, like an approval
// (addendum §10): no answer in time counts as dismissed.
const askUserTimeout = 10 * time.Minute

// askUserTool is the ask_user tool of addendum §4 (class interactive: it
// never needs approval). It sends agent/askUser to the client and gives the
// model { answered, answers: [{ question, selected }] }.
type askUser struct{ log *slog.Logger }

func (t *askUser) Spec() tool.Spec {
	return tool.Spec{
		Name: "ask_user",
		Description: "Ask the user 1 to 4 multiple-choice questions when a decision is genuinely theirs " +
			"(a design choice, an ambiguous requirement) and you cannot find the answer in the workspace. " +
			"Each question offers 2 to 8 distinct options; kind \"radio\" picks one, \"checkbox\" picks any. " +
			"The user may dismiss the questions: then decide yourself and say what you assumed.",
		Permission:  tool.ClassInteractive,
		InputSchema: askUserSchema,
	}
}

type askQuestion = tool.Question

// askUserInput is ask_user's input; its questions become tool.Questions.
type askUserInput struct {
	Questions []askUserQuestion `json:"questions" jsonschema:"The questions, in the order the user should read them."`
}

type askUserQuestion struct {
	ID      string   `json:"id,omitempty" jsonschema:"A short id for the question (default q1, q2, ...)."`
	Text    string   `json:"text" jsonschema:"The question, one or two sentences."`
	Kind    string   `json:"kind,omitempty" jsonschema:"radio: one answer (default); checkbox: any number."`
	Options []string `json:"options" jsonschema:"2 to 8 distinct short labels."`
}

var askUserSchema = tool.InputSchema[askUserInput](tool.Constraints{
	"questions":         {MinItems: tool.N(1), MaxItems: tool.N(4)},
	"questions.kind":    {Enum: []string{"radio", "checkbox"}},
	"questions.options": {MinItems: tool.N(2), MaxItems: tool.N(8)},
})

// askAnswer is one entry of the tool result.
type askAnswer struct {
	Question string   `json:"question"`
	Selected []string `json:"selected"`
}

func (t *askUser) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var raw askUserInput
	dec := json.NewDecoder(strings.NewReader(string(input)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "ask_user input: %v", err)
	}
	var in struct{ Questions []askQuestion }
	for _, q := range raw.Questions {
		in.Questions = append(in.Questions, askQuestion(q))
	}
	if err := validateQuestions(in.Questions); err != nil {
		return tool.Result{}, err
	}
	if env == nil || env.Ask == nil {
		return askResult(false, nil), nil
	}
	ctx, cancel := context.WithTimeout(ctx, askUserTimeout)
	defer cancel()
	var reply struct{ Answers map[string][]string }
	var err error
	reply.Answers, err = env.Ask(ctx, env.TaskID, tool.CallID(ctx), in.Questions)
	if errors.Is(err, tool.ErrCannotAsk) {
		// The client has no way to ask: say so, so the model neither
		// waits for nor reads a dismissal into it.
		t.log.Info("ask_user: the client cannot ask", "err", err)
		return askUnavailable(err), nil
	}
	if err != nil || reply.Answers == nil {
		// No answer, an error or answers: null all mean dismissed.
		if err != nil {
			t.log.Info("ask_user dismissed", "err", err)
		}
		return askResult(false, nil), nil
	}
	answers := make([]askAnswer, 0, len(in.Questions))
	for _, q := range in.Questions {
		var picked []string
		for _, a := range reply.Answers[q.ID] {
			if slices.Contains(q.Options, a) && !slices.Contains(picked, a) {
				picked = append(picked, a)
			}
		}
		if q.Kind == "radio" && len(picked) > 1 {
			picked = picked[:1]
		}
		if picked == nil {
			picked = []string{}
		}
		answers = append(answers, askAnswer{Question: q.Text, Selected: picked})
	}
	return askResult(true, answers), nil
}

// validateQuestions checks 1 to 4 questions with 2 to 8 distinct options
// each, and fills default ids and kinds.
func validateQuestions(qs []askQuestion) error {
	if len(qs) < 1 || len(qs) > 4 {
		return tool.Errorf(tool.ErrInvalidInput, "ask_user takes 1 to 4 questions, got %d", len(qs))
	}
	ids := map[string]bool{}
	for i := range qs {
		q := &qs[i]
		if strings.TrimSpace(q.Text) == "" {
			return tool.Errorf(tool.ErrInvalidInput, "question %d has no text", i+1)
		}
		if q.ID == "" {
			q.ID = fmt.Sprintf("q%d", i+1)
		}
		if ids[q.ID] {
			return tool.Errorf(tool.ErrInvalidInput, "question id %q is used twice", q.ID)
		}
		ids[q.ID] = true
		switch q.Kind {
		case "":
			q.Kind = "radio"
		case "radio", "checkbox":
		default:
			return tool.Errorf(tool.ErrInvalidInput, "question %q: kind must be radio or checkbox", q.ID)
		}
		if len(q.Options) < 2 || len(q.Options) > 8 {
			return tool.Errorf(tool.ErrInvalidInput, "question %q needs 2 to 8 options, got %d", q.ID, len(q.Options))
		}
		seen := map[string]bool{}
		for _, o := range q.Options {
			if strings.TrimSpace(o) == "" || seen[o] {
				return tool.Errorf(tool.ErrInvalidInput, "question %q: options must be distinct and not empty", q.ID)
			}
			seen[o] = true
		}
	}
	return nil
}

// askUnavailable is ask_user's result when the client cannot put the
// questions to the user (tool.ErrCannotAsk): not answered, with the reason
// and what to do instead.
func askUnavailable(err error) tool.Result {
	data := map[string]any{"answered": false, "answers": []askAnswer{},
		"unavailable": err.Error() + ". The user was not asked: decide yourself and say what you assumed, or ask in your answer."}
	b, _ := json.Marshal(data)
	return tool.Result{Content: string(b), Data: data}
}

func askResult(answered bool, answers []askAnswer) tool.Result {
	if answers == nil {
		answers = []askAnswer{}
	}
	data := map[string]any{"answered": answered, "answers": answers}
	// The content is the JSON alone, for a dismissal too: exactly
	// {"answered":false,"answers":[]} (protocol.md agent/askUser).
	b, _ := json.Marshal(data)
	return tool.Result{Content: string(b), Data: data}
}
