package conversation

import (
	"context"
	"errors"
	"sync"
)

// ActionStop stops the thread's running turn (the Stop button of a progress message).
// Action.Arg is the id of the input whose turn the button was drawn for.
const ActionStop ActionName = "stop"

// Stopped is the cause of a turn cancelled by a person: by the Stop button or by a new
// message in the thread. It is the context.Cause of the turn's context.
type Stopped struct {
	// By is the Slack user who stopped the turn.
	By string
	// NewMessage is true when a newer message in the thread stopped it.
	NewMessage bool
}

func (s Stopped) Error() string {
	if s.NewMessage {
		return "conversation: stopped by a newer message"
	}
	return "conversation: stopped by " + s.By
}

// active is a running turn that can be stopped.
type active struct {
	inputID string
	cancel  context.CancelCauseFunc
	// stoppable is true once the turn runs the assistant pipeline (workflow steps run
	// to their end).
	stoppable bool
}

// runningTurns tracks the running turn of each thread.
type runningTurns struct {
	mu sync.Mutex
	m  map[Key]*active
}

func (r *runningTurns) start(key Key, inputID string, cancel context.CancelCauseFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[Key]*active{}
	}
	r.m[key] = &active{inputID: inputID, cancel: cancel}
}

func (r *runningTurns) end(key Key) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, key)
}

// allowStop marks the thread's running turn as one a person may stop.
func (r *runningTurns) allowStop(key Key) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a := r.m[key]; a != nil {
		a.stoppable = true
	}
}

// freeze makes the thread's running turn no longer stoppable (its answer is ready:
// posting and saving it must not be cut short).
func (r *runningTurns) freeze(key Key) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a := r.m[key]; a != nil {
		a.stoppable = false
	}
}

// stop cancels the thread's running turn with cause when it is stoppable and, when
// inputID is set, is the turn of that input. It reports whether it did.
func (r *runningTurns) stop(key Key, inputID string, cause Stopped) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.m[key]
	if a == nil || !a.stoppable || (inputID != "" && a.inputID != inputID) {
		return false
	}
	a.cancel(cause)
	return true
}

// stoppedBy returns the Stopped cause of ctx, if a person stopped it.
func stoppedBy(ctx context.Context) (Stopped, bool) {
	var s Stopped
	ok := errors.As(context.Cause(ctx), &s)
	return s, ok
}
