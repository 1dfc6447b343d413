package session

import (
	"github.com/task-x/task-x-runtime/internal/editlog"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// The domain types a front end encodes as they are: the session's methods
// answer them, so a front end names them here and imports no part below
// the session.
type (
	CallChange = editlog.CallChange // CallChanges (ACP diffs)
	Editor     = tool.Editor        // Options.Editor (ACP fs methods)
)
