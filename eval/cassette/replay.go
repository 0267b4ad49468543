package cassette

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents"
)

// ErrDrift means a replayed request matches no recorded one: the prompts, the
// settings or the model's earlier answers changed since the recording. A replay
// never calls a model instead.
var ErrDrift = errors.New("cassette: drift: no recorded response matches the request")

// Player answers chat completions from a Cassette. It is safe for concurrent use.
type Player struct {
	c *Cassette
	// byRun holds each case's recorded runs, by run number.
	byRun map[string]map[int][]Interaction
}

// NewPlayer returns a Player of c.
func NewPlayer(c *Cassette) *Player {
	p := &Player{c: c, byRun: map[string]map[int][]Interaction{}}
	for _, in := range c.Interactions {
		runs := p.byRun[in.Case]
		if runs == nil {
			runs = map[int][]Interaction{}
			p.byRun[in.Case] = runs
		}
		runs[in.Run] = append(runs[in.Run], in)
	}
	return p
}

// Models returns the OPENAI_MODEL and OPENAI_SMALL_MODEL of the recording.
func (p *Player) Models() (model, small string) { return p.c.Model, p.c.SmallModel }

// Model returns the Completer that answers the calls of run run (from 1) of the case
// name from the recording of that run; a replay with more runs than were recorded
// takes the recorded runs in turn. A call is answered with the recorded response of
// an equal request once normalized (Normalize): the first not answered yet, else the
// first one (an identical request gets the identical answer). A request that matches
// none fails with an error wrapping ErrDrift that says where it differs from the
// nearest recorded one; nothing is called.
func (p *Player) Model(name string, run int) agents.Completer {
	r := p.replay(name, run)
	return completer(func(ctx context.Context, req openai.ChatCompletionRequest) (agents.Completion, error) {
		if err := ctx.Err(); err != nil {
			return agents.Completion{}, fmt.Errorf("cassette: replay: %w", err)
		}
		return r.answer(ctx, req)
	})
}

// replay is the state of one run's replay: which recordings it used.
type replay struct {
	name  string
	run   int
	known bool // the case is in the cassette
	ins   []Interaction
	keys  []string

	mu   sync.Mutex
	n    int // requests so far
	used []bool
}

// replay prepares the replay of run run of the case name.
func (p *Player) replay(name string, run int) *replay {
	r := &replay{name: name, run: run}
	runs := p.byRun[name]
	if len(runs) == 0 {
		return r
	}
	r.known = true
	nums := make([]int, 0, len(runs))
	for n := range runs {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	rec := nums[(run-1)%len(nums)]
	r.ins = runs[rec]
	r.used = make([]bool, len(r.ins))
	for _, in := range r.ins {
		k, err := Normalize(in.Request)
		if err != nil {
			k = "" // matches nothing
		}
		r.keys = append(r.keys, k)
	}
	return r
}

// answer answers req from the recording, or fails with ErrDrift.
func (r *replay) answer(ctx context.Context, req openai.ChatCompletionRequest) (agents.Completion, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return agents.Completion{}, fmt.Errorf("cassette: replay: %w", err)
	}
	key, err := Normalize(body)
	if err != nil {
		return agents.Completion{}, err
	}
	r.mu.Lock()
	r.n++
	n := r.n
	match := -1
	for i, k := range r.keys {
		if k == key && (match < 0 || !r.used[i] && r.used[match]) {
			match = i
		}
	}
	if match >= 0 {
		r.used[match] = true
	}
	r.mu.Unlock()
	if match < 0 {
		return agents.Completion{}, r.drift(n, req, key)
	}
	in := r.ins[match]
	if in.Error != "" {
		return agents.Completion{}, fmt.Errorf("cassette: the recorded call failed: %s", in.Error)
	}
	comp := in.Response.completion()
	if sink := agents.TextSinkFrom(ctx); sink != nil && comp.Content != "" {
		sink.Write(comp.Content) // as the client streams it, in one piece
	}
	return comp, nil
}

// drift returns the ErrDrift of request n, req (normalized: key), naming where it
// differs from the nearest recorded request: one of the same model and forced
// function with the longest common beginning.
func (r *replay) drift(n int, req openai.ChatCompletionRequest, key string) error {
	if !r.known {
		return fmt.Errorf("%w: request %d of %s: the case is not in the cassette (record it with --record)", ErrDrift, n, r.name)
	}
	best, bestLen := -1, -1
	for i, in := range r.ins {
		var rec openai.ChatCompletionRequest
		if json.Unmarshal(in.Request, &rec) != nil || rec.Model != req.Model || forced(rec.ToolChoice) != forced(req.ToolChoice) {
			continue
		}
		if l := commonPrefix(key, r.keys[i]); l > bestLen {
			best, bestLen = i, l
		}
	}
	if best < 0 {
		return fmt.Errorf("%w: request %d of %s (model %s%s): the recording has no request of that model and function",
			ErrDrift, n, r.name, req.Model, forcedNote(req.ToolChoice))
	}
	return fmt.Errorf("%w: request %d of %s (model %s%s): nearest recorded request (%d) differs in %s",
		ErrDrift, n, r.name, req.Model, forcedNote(req.ToolChoice), r.ins[best].Seq, difference(key, r.keys[best]))
}

func commonPrefix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// forced returns the function a tool_choice forces, or "".
func forced(choice any) string {
	var tc openai.ToolChoice
	b, err := json.Marshal(choice)
	if err != nil || json.Unmarshal(b, &tc) != nil {
		return ""
	}
	return tc.Function.Name
}

func forcedNote(choice any) string {
	if f := forced(choice); f != "" {
		return ", forcing " + f
	}
	return ""
}
