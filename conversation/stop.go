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
	// run, when set, names the pipeline run the turn works on: a Stop button naming
	// it stops the turn, whatever part of the run the turn is, and a newer message
	// in the thread does not (people talk while a pipeline works).
	run string
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

// allowRunStop marks the thread's running turn as the pipeline run id, which its
// Stop button may stop.
func (r *runningTurns) allowRunStop(key Key, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a := r.m[key]; a != nil {
		a.stoppable, a.run = true, id
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
// id is set, is the turn of that input or of that pipeline run; a pipeline run is
// stopped only by its id. It reports whether it did.
func (r *runningTurns) stop(key Key, id string, cause Stopped) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.m[key]
	if a == nil || !a.stoppable {
		return false
	}
	if a.run != "" && id != a.run || a.run == "" && id != "" && a.inputID != id {
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
