package demo

import (
	"time"

	"github.com/threadwright/threadwright/agents"
)

// ModelName is the model name every Completion of the demo model reports
// (Completion.Model), so that logs and pages can label its answers.
const ModelName = "threadwright-demo"

// Model is the offline demo model: an agents.Completer that answers from canned
// content, without a network or an API key. It reads only the request, keeps no
// state, and gives the same answer to the same request. It is safe for concurrent
// use; set its fields before the first call.
type Model struct {
	// Delay is how long each Complete call waits before answering, so that the
	// "working…" status can be seen (default 0: at once). The wait ends early, with
	// an error, when the call's context ends.
	Delay time.Duration
}

var _ agents.Completer = (*Model)(nil)

// New returns a demo model that answers at once.
func New() *Model { return &Model{} }
