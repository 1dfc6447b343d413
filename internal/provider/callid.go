package provider

import (
	"strconv"
	"sync/atomic"
	"time"
)

// callSeq numbers the ids the runtime gives to tool calls that arrive without
// one (addendum §10: `call_<n>`, unique across the session). One counter serves
// every adapter, so two responses, two tasks or two providers never hand out the
// same id. It starts at the process start time in microseconds so that ids stay
// unique across runtime restarts too (a saved task continues with new calls).
var callSeq atomic.Int64

func init() { callSeq.Store(time.Now().UnixMicro()) }

// NewCallID returns a fresh tool-call id, `call_<n>`, never returned before in
// this process.
func NewCallID() string { return "call_" + strconv.FormatInt(callSeq.Add(1), 10) }
