package session

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/retrieve"
)

// Limits of prompt/refine (protocol.md prompt/refine).
const (
	refineMaxPrompt = 100_000 // characters
	refineBudget    = 3000    // tokens of repository excerpts
	refineMaxTokens = 4096    // the rewrite's output limit
)

const refineSystem = `You rewrite a user's request to a coding agent so the agent can act on it at once.
Keep the user's intent, language and every concrete detail (names, paths, errors, numbers). Make the goal, the scope (files, functions) and the expected result explicit, and state how to verify it when that is clear. Use the repository excerpts, when given, only to name the right files and symbols; never invent any. Do not answer or solve the request.
Reply with the rewritten request only: no preamble, no explanation, no code fences, no tags.`

// RefineRequest is prompt/refine as a front end decoded it ({prompt,
// provider?, routes?, focusPaths?}; the loop params' routes pick the
// model).
type RefineRequest struct {
	Prompt     string          `json:"prompt"`
	Provider   json.RawMessage `json:"provider"`
	FocusPaths []string        `json:"focusPaths"`
	LoopParams
}

// RefineResult is protocol.md prompt/refine's result.
type RefineResult struct {
	Text   string          `json:"text"`
	Kind   string          `json:"kind"`
	Model  string          `json:"model"`
	Routed bool            `json:"routed"`
	Usage  *provider.Usage `json:"usage,omitempty"` // absent when the provider reported none
}

// Refine is prompt/refine: {text, kind, model, routed, usage}. The prompt is classified
// (retrieve.Classify), the first route listing its kind picks the model
// (routed: true), else provider; neither is invalid params, as is a prompt outside
// 1..100 000 characters. With a workspace open, about 3000 tokens of
// repository excerpts (focusPaths first) go with the request. One model
// call; the answer is cleaned by CleanRefined. Provider failures are a *provider.Error.
func (s *Session) Refine(ctx context.Context, p *RefineRequest) (*RefineResult, error) {
	if !utf8.ValidString(p.Prompt) {
		return nil, Invalid("prompt is not valid UTF-8")
	}
	if strings.TrimSpace(p.Prompt) == "" {
		return nil, Invalid("prompt is empty")
	}
	if n := utf8.RuneCountInString(p.Prompt); n > refineMaxPrompt {
		return nil, Invalid("prompt must be 1 to %d characters, got %d", refineMaxPrompt, n)
	}
	loop, err := s.parseLoop(&p.LoopParams)
	if err != nil {
		return nil, err
	}
	kind := retrieve.Classify(p.Prompt)
	var prov provider.Provider
	routed := false
	for _, rt := range loop.routes {
		for _, k := range rt.Kinds {
			if k == kind && prov == nil {
				prov, routed = rt.Provider, true
			}
		}
	}
	if prov == nil {
		if len(p.Provider) == 0 || string(p.Provider) == "null" {
			return nil, Invalid("no route for the task kind %q and no provider", kind)
		}
		if prov, err = s.parseProvider(p.Provider); err != nil {
			return nil, err
		}
	}
	var user strings.Builder
	if ex := s.refineExcerpts(ctx, p.Prompt, p.FocusPaths); ex != "" {
		user.WriteString(ex)
		user.WriteString("\n\n")
	}
	user.WriteString("Rewrite this request (task kind: " + kind + "):\n<request>\n" + p.Prompt + "\n</request>")
	req := &provider.Request{
		System:    refineSystem,
		Messages:  []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: user.String()}}}},
		MaxTokens: refineMaxTokens,
	}
	res, err := prov.Stream(ctx, req, func(provider.Event) {})
	if err != nil {
		return nil, err
	}
	text := CleanRefined(res.Text)
	if strings.TrimSpace(text) == "" {
		// A client would replace the user's prompt with nothing: say so
		// instead (only reasoning, or nothing, came back).
		return nil, &provider.Error{Kind: provider.KindProtocol, Message: "the model returned no rewritten prompt (its answer was empty or only reasoning); keep the original prompt"}
	}
	return &RefineResult{Text: text, Kind: kind, Model: prov.Config().Model, Routed: routed, Usage: res.ReportedUsage()}, nil
}

// refineExcerpts retrieves about refineBudget tokens for prompt with
// focusPaths boosted, or "" without a workspace or a match.
func (s *Session) refineExcerpts(ctx context.Context, prompt string, focus []string) string {
	proj, err := s.project()
	if err != nil {
		return ""
	}
	return proj.Excerpts(ctx, prompt, refineBudget, focus)
}

var (
	thinkBlock = regexp.MustCompile(`(?is)<(think|thinking|reasoning)>.*?</(think|thinking|reasoning)>`)
	thinkClose = regexp.MustCompile(`(?is)^.*</(think|thinking|reasoning)>`)
	thinkOpen  = regexp.MustCompile(`(?is)<(think|thinking|reasoning)>.*$`)
	requestTag = regexp.MustCompile(`(?i)</?\s*request\s*>`)
	wholeFence = regexp.MustCompile("(?s)^(`{3,}|~{3,})[^\\n]*\\n(.*?)\\n?(`{3,}|~{3,})$")
)

// CleanRefined removes from a model's rewrite what is not the prompt:
// reasoning blocks (<think>…</think>, also a closing </think> with no
// opening one, where everything before it goes, and an unclosed <think>
// to the end), a code fence wrapping the whole answer, and echoed
// <request> tags; then trims. It works on the whole text, so tags split
// across stream chunks are removed too.
func CleanRefined(text string) string {
	t := thinkBlock.ReplaceAllString(text, "")
	t = thinkClose.ReplaceAllString(t, "")
	t = thinkOpen.ReplaceAllString(t, "")
	t = strings.TrimSpace(requestTag.ReplaceAllString(t, ""))
	for {
		m := wholeFence.FindStringSubmatch(t)
		if m == nil || m[1][0] != m[3][0] || len(m[3]) < len(m[1]) {
			break
		}
		t = strings.TrimSpace(m[2])
	}
	t = requestTag.ReplaceAllString(t, "")
	return strings.TrimSpace(t)
}
