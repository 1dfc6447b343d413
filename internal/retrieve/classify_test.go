package retrieve

import "testing"

func TestClassify(t *testing.T) {
	cases := []struct{ prompt, want string }{
		{"What does the retry policy do when the server returns 429?", KindQuestion},
		{"How is the workspace index built?", KindQuestion},
		{"Where are API keys read from?", KindQuestion},
		{"explain the agent loop", KindQuestion},
		{"Add a --json flag to the open command", KindCodeModification},
		{"Implement pagination for the /users endpoint", KindCodeModification},
		{"Support Ollama as a provider", KindCodeModification},
		{"please update the login form to show a spinner while submitting", KindCodeModification},
		{"Fix the nil pointer dereference in HandleLogin", KindBugFix},
		{"The app crashes when the config file is empty", KindBugFix},
		{"Why does the server panic on an empty request body?", KindBugFix},
		{"TypeError: undefined is not a function in LoginForm.tsx line 12", KindBugFix},
		{"go test ./... fails with: expected 3 got 4", KindBugFix},
		{"Refactor the provider package to remove the duplicated retry code", KindRefactoring},
		{"Rename UserStore to UserRepository everywhere", KindRefactoring},
		{"Extract a helper function from the long handler", KindRefactoring},
		{"Simplify parse_args", KindRefactoring},
		{"Write unit tests for the backoff function", KindTesting},
		{"Add tests for the migration script", KindTesting},
		{"increase test coverage of the store package", KindTesting},
		{"Document the public API of the retry package", KindDocumentation},
		{"Update the README with the new deploy steps", KindDocumentation},
		{"add docstrings to analytics/report.py", KindDocumentation},
		{"Review my changes in server/handler.go", KindReview},
		{"Can you do a code review of this pull request?", KindReview},
		{"audit the auth code for security issues", KindReview},
		{"Plan the migration from REST to gRPC", KindPlanning},
		{"How should we design the caching layer? Give me the trade-offs", KindPlanning},
		{"Break down the work needed to add multi-tenancy", KindPlanning},
		{"", KindQuestion},
		{"login form", KindCodeModification},
	}
	for _, c := range cases {
		if got := Classify(c.prompt); got != c.want {
			t.Errorf("Classify(%q) = %s, want %s", c.prompt, got, c.want)
		}
	}
}
