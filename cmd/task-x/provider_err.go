package main

import (
	"cmp"
	"fmt"
	"regexp"
	"strings"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// Provider errors (issue 38 item 6): the `error` event of a failed model
// call carries the ProviderError kind and the HTTP status; the session and
// one-shot mode show one sentence naming the fix, once (the summary does not
// repeat it), and the provider's own message only with --verbose.

// fixWords name the settings an error's fix changes: the flags on the
// command line, the session's commands inside it (QA: the session said
// --model, which cannot be given there).
type fixWords struct {
	model    string // where another model is picked
	modelArg string // where a model's name is checked
	baseURL  string // the base URL
	settings string // where the provider settings are fixed
	setURL   string // how a missing base URL is given
	window   string // how the model's context window is given
}

var (
	flagWords = fixWords{model: "--model", modelArg: "--model MODEL", baseURL: "--base-url",
		settings: "--provider, --model or --base-url", setURL: "pass --base-url URL (e.g. http://127.0.0.1:8000/v1)",
		window: "Pass the model's real window with --context-window TOKENS"}
	sessionWords = fixWords{model: "/model", modelArg: "/model (it lists the provider's models)", baseURL: "the base URL (/provider KIND URL)",
		settings: "/provider KIND [BASE-URL] and /model ID", setURL: "give it with /provider openaiCompatible URL (e.g. http://127.0.0.1:8000/v1)",
		// No command sets it: the flag, when task-x starts.
		window: "Start task-x again with --context-window TOKENS, the model's real window"}
)

// providerSentence is the sentence for a provider error of kind (with its
// HTTP status, 0 when none) when prov was the provider asked; w names the
// settings of the fix.
func providerSentence(kind protocol.ProviderErrorKind, status int, message string, prov defaults, w fixWords) string {
	where := "the provider"
	if prov.BaseURL != "" {
		where = "the provider at " + prov.BaseURL
	} else if prov.Provider != "" {
		where = prov.Provider
	}
	model := "the model"
	if prov.Model != "" {
		model = fmt.Sprintf("the model %q", prov.Model)
	}
	switch kind {
	case protocol.ErrKindAuth:
		return fmt.Sprintf("%s refused the API key; set %s for %s", where, keyVar(prov.Provider), cmp.Or(prov.Provider, "this provider"))
	case protocol.ErrKindPermissionDenied:
		return fmt.Sprintf("%s does not let this API key use %s; pick another with %s or check the key's permissions", where, model, w.model)
	case protocol.ErrKindNotFound:
		return fmt.Sprintf("%s answered %s for %s: check the name with %s, and that %s ends where the API starts (…/v1)", where, httpStatus(status, "not found"), model, w.modelArg, w.baseURL)
	case protocol.ErrKindRateLimited:
		return fmt.Sprintf("%s is rate-limiting requests; wait a minute and try again", where)
	case protocol.ErrKindOverloaded, protocol.ErrKindServer:
		return fmt.Sprintf("%s failed to answer (%s); try again later", where, httpStatus(status, "server error"))
	case protocol.ErrKindNetwork:
		return fmt.Sprintf("could not reach %s (%s): check %s and that the server is running", where, networkCause(message), w.baseURL)
	case protocol.ErrKindTimeout:
		return fmt.Sprintf("%s did not answer in time; try again, or check the server", where)
	case protocol.ErrKindInvalidRequest:
		return fmt.Sprintf("%s refused the request (%s); another model (%s) may accept it", where, httpStatus(status, "invalid request"), w.model)
	case protocol.ErrKindInvalidConfig:
		return "the provider settings are not valid; fix them with " + w.settings
	}
	return fmt.Sprintf("the model call failed (%s)", cmp.Or(string(kind), "unknown error"))
}

// providerDetails is what --verbose adds: the kind, the status and the
// provider's own message.
func providerDetails(kind protocol.ProviderErrorKind, status int, message string) string {
	if status > 0 {
		return fmt.Sprintf("(%s, HTTP %d: %s)", kind, status, message)
	}
	return fmt.Sprintf("(%s: %s)", kind, message)
}

// showProviderError is the line of an `error` event: the sentence, and the
// details with --verbose.
func showProviderError(e protocol.ErrorEvent, prov defaults, w fixWords) string {
	s := providerSentence(e.Kind, e.Status, e.Message, prov, w)
	if g.verbose {
		s += " " + providerDetails(e.Kind, e.Status, e.Message)
	}
	return s
}

func httpStatus(status int, fallback string) string {
	if status > 0 {
		return fmt.Sprintf("HTTP %d", status)
	}
	return fallback
}

// networkCause names a dial failure in a few words.
func networkCause(message string) string {
	low := strings.ToLower(message)
	switch {
	case strings.Contains(low, "connection refused"):
		return "nothing is listening there"
	case strings.Contains(low, "no such host"), strings.Contains(low, "server misbehaving"):
		return "the host name is not known"
	case strings.Contains(low, "network is unreachable"), strings.Contains(low, "no route to host"):
		return "the network cannot reach the host"
	case strings.Contains(low, "certificate"), strings.Contains(low, "tls"):
		return "its TLS certificate was refused"
	case strings.Contains(low, "timeout"), strings.Contains(low, "deadline"):
		return "the connection timed out"
	case strings.Contains(low, "reset by peer"), strings.Contains(low, "eof"):
		return "the connection was dropped"
	}
	return "the connection failed"
}

// summaryErrRE matches the summary's error of a failed model call, "kind
// (status): message" or "kind: message".
var summaryErrRE = regexp.MustCompile(`^([a-zA-Z]+)(?: \((\d+)\))?: `)

// summaryError is the summary's error line: a provider error as its
// sentence, anything else as it is.
func summaryError(msg string, prov defaults, w fixWords) string {
	m := summaryErrRE.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	kind := protocol.ProviderErrorKind(m[1])
	switch kind {
	case protocol.ErrKindAuth, protocol.ErrKindPermissionDenied, protocol.ErrKindNotFound, protocol.ErrKindRateLimited,
		protocol.ErrKindOverloaded, protocol.ErrKindServer, protocol.ErrKindNetwork, protocol.ErrKindTimeout, protocol.ErrKindInvalidRequest:
	default:
		return msg
	}
	status := 0
	fmt.Sscan(m[2], &status)
	rest := msg[len(m[0]):]
	s := providerSentence(kind, status, rest, prov, w)
	if g.verbose {
		s += " " + providerDetails(kind, status, rest)
	}
	return s
}
