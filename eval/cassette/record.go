package cassette

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents"
)

// Recorder records the chat completions of the runs of eval cases into a Cassette.
// It is safe for concurrent use.
type Recorder struct {
	mu  sync.Mutex
	c   Cassette
	seq map[runKey]int
}

type runKey struct {
	name string
	run  int
}

// NewRecorder returns a Recorder for a recording with the models OPENAI_MODEL and
// OPENAI_SMALL_MODEL.
func NewRecorder(model, smallModel string) *Recorder {
	return &Recorder{c: Cassette{Version: Version, Model: model, SmallModel: smallModel}, seq: map[runKey]int{}}
}

// Model returns inner recording every call it answers for run run (from 1) of the
// case name: the request, and the completion or the error.
func (r *Recorder) Model(name string, run int, inner agents.Completer) agents.Completer {
	return completer(func(ctx context.Context, req openai.ChatCompletionRequest) (agents.Completion, error) {
		body, err := json.Marshal(req)
		if err != nil {
			return agents.Completion{}, fmt.Errorf("cassette: record: %w", err)
		}
		r.mu.Lock()
		k := runKey{name, run}
		r.seq[k]++
		seq := r.seq[k]
		r.mu.Unlock()
		comp, err := inner.Complete(ctx, req)
		in := Interaction{Case: name, Run: run, Seq: seq, Request: body}
		if err != nil {
			in.Error = err.Error()
		} else {
			in.Response = responseOf(comp)
		}
		r.mu.Lock()
		r.c.Interactions = append(r.c.Interactions, in)
		r.mu.Unlock()
		return comp, err
	})
}

// Save writes what was recorded so far to path (see Cassette.Save).
func (r *Recorder) Save(path string) error {
	r.mu.Lock()
	c := r.c
	c.Interactions = append([]Interaction(nil), r.c.Interactions...)
	r.mu.Unlock()
	c.Recorded = time.Now().UTC().Truncate(time.Second)
	return c.Save(path)
}

// completer adapts a function to agents.Completer.
type completer func(ctx context.Context, req openai.ChatCompletionRequest) (agents.Completion, error)

func (f completer) Complete(ctx context.Context, req openai.ChatCompletionRequest) (agents.Completion, error) {
	return f(ctx, req)
}
