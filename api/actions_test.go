package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// runStore holds one run, whose inputs have all run.
type runStore struct {
	Store
	ws *workflow.State
}

func (s runStore) Load(_ context.Context, key conversation.Key, _ int) (*conversation.Checkpoint, error) {
	return &conversation.Checkpoint{Conversation: conversation.Conversation{Key: key, State: conversation.State{Workflow: s.ws.Clone()}}}, nil
}

func (runStore) Messages(ctx context.Context, _ conversation.Key, _ int64, _ int, _ conversation.Role) ([]conversation.Message, error) {
	return nil, ctx.Err()
}

func (runStore) Input(_ context.Context, id string) (conversation.Input, error) {
	return conversation.Input{ID: id, Status: conversation.InputDone}, nil
}

// keptSubmitter keeps the inputs submitted.
type keptSubmitter struct{ inputs []conversation.Input }

func (k *keptSubmitter) Submit(_ context.Context, in conversation.Input) (bool, error) {
	k.inputs = append(k.inputs, in)
	return true, nil
}

const pitchYAML = `
name: pitch
title: Pitch
artifacts:
  - id: idea
    title: Idea
    mode: choice
  - id: text
    title: Text
    depends_on: [idea]
`

// pitchSet returns the workflow set of pitchYAML.
func pitchSet(t *testing.T) *workflow.Set {
	t.Helper()
	def, err := workflow.Parse("pitch.yaml", []byte(pitchYAML))
	if err != nil {
		t.Fatal(err)
	}
	set, err := workflow.NewSet(def)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestNewActionsSubmitWhatSlackDoes: pick, edit and cancel are checked by the
// workflow machine at once (422 for no such option, 409 on another revision or a
// run that is not running, 403 for a token the workflow's rules do not allow, as
// its buttons are refused), submit nothing when refused, and otherwise submit the
// very input Slack makes: the pick button's click, the edit modal's submission, the
// cancel command in the run's thread.
func TestNewActionsSubmitWhatSlackDoes(t *testing.T) {
	set := pitchSet(t)
	const (
		starter = "ci-bot-secret-0123456789"
		other   = "other-secret-0123456789"
		run     = "/v1/runs/T1-C1-1.2"
	)
	newRun := func(idea workflow.ArtifactState, status workflow.RunStatus) (*Server, *keptSubmitter) {
		ws := &workflow.State{Name: "pitch", StartedBy: "api:ci-bot", Status: status, Artifacts: map[string]*workflow.ArtifactState{
			"idea": &idea, "text": {Status: workflow.StatusPending}}}
		sub := &keptSubmitter{}
		s := newServer(Config{Store: runStore{ws: ws}, Submitter: sub, Workflows: set, TeamID: "T1", Wait: time.Second,
			Tokens: []Token{{Name: "ci-bot", Secret: starter, Scopes: []Scope{ScopeRunsWrite}},
				{Name: "other", Secret: other, Scopes: []Scope{ScopeRunsWrite}}}})
		return s, sub
	}
	options := workflow.ArtifactState{Status: workflow.StatusOptionsGenerated, Rev: 2,
		Options: []workflow.Option{{Label: "A", Title: "One"}, {Label: "B", Title: "Two"}}, MessageTS: "5.6"}
	approved := workflow.ArtifactState{Status: workflow.StatusApproved, Rev: 4, Text: "The idea.", Selected: "A", MessageTS: "5.7"}

	for _, tc := range []struct {
		name   string
		idea   workflow.ArtifactState
		status workflow.RunStatus
		secret string
		path   string
		body   any
		want   int
		// check checks the one input submitted (refusals submit none).
		check func(t *testing.T, in conversation.Input)
	}{
		{name: "PickNoSuchOption", idea: options, secret: starter, path: "/artifacts/idea:pick", body: map[string]any{"revision": 2, "option": "Z"}, want: http.StatusUnprocessableEntity},
		{name: "PickOtherRevision", idea: options, secret: starter, path: "/artifacts/idea:pick", body: map[string]any{"revision": 1, "option": "B"}, want: http.StatusConflict},
		{name: "PickOfNoOptions", idea: approved, secret: starter, path: "/artifacts/idea:pick", body: map[string]any{"revision": 4, "option": "B"}, want: http.StatusConflict},
		{name: "Pick", idea: options, secret: other, path: "/artifacts/idea:pick", body: map[string]any{"revision": 2, "option": "b"}, want: http.StatusOK,
			check: func(t *testing.T, in conversation.Input) {
				a := in.Action
				if in.Kind != conversation.KindAction || a.Action.Name != conversation.ActionPick || a.Action.Arg != "b" || a.Action.Rev != 2 ||
					a.Action.Artifact != "idea" || a.UserID != "api:other" || a.MessageTS != "5.6" {
					t.Errorf("the pick's input: %+v %+v", in, a)
				}
			}},
		{name: "EditNotAllowed", idea: approved, secret: other, path: "/artifacts/idea:edit", body: map[string]any{"revision": 4, "text": "shorter"}, want: http.StatusForbidden},
		{name: "EditWithoutText", idea: options, secret: starter, path: "/artifacts/idea:edit", body: map[string]any{"revision": 2, "text": "shorter"}, want: http.StatusConflict},
		{name: "EditOfACompletedRun", idea: approved, status: workflow.RunCompleted, secret: starter, path: "/artifacts/idea:edit",
			body: map[string]any{"revision": 4, "text": "shorter"}, want: http.StatusOK,
			check: func(t *testing.T, in conversation.Input) {
				a := in.Action
				if in.Kind != conversation.KindAction || a.Action.Name != conversation.ActionEdit || a.Text != "shorter" || a.Action.Rev != 4 || a.UserID != "api:ci-bot" {
					t.Errorf("the edit's input: %+v %+v", in, a)
				}
			}},
		{name: "RegenerateNotStale", idea: approved, secret: starter, path: "/artifacts/idea:regenerate", body: map[string]any{"revision": 4}, want: http.StatusConflict},
		{name: "CancelNotAllowed", idea: options, secret: other, path: ":cancel", want: http.StatusForbidden},
		{name: "CancelNotRunning", idea: approved, status: workflow.RunCancelled, secret: starter, path: ":cancel", want: http.StatusConflict},
		{name: "Cancel", idea: options, secret: starter, path: ":cancel", want: http.StatusOK,
			check: func(t *testing.T, in conversation.Input) {
				c := in.Command
				if in.Kind != conversation.KindCommand || in.Key != (conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.2"}) ||
					c.Line != conversation.CmdCancel || c.UserID != "api:ci-bot" || c.Source != conversation.SourceAPI {
					t.Errorf("the cancel's input: %+v %+v", in, c)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status := tc.status
			if status == "" {
				status = workflow.RunRunning
			}
			s, sub := newRun(tc.idea, status)
			w := postAs(t, s, tc.secret, run+tc.path, tc.body)
			if w.Code != tc.want {
				t.Fatalf("%d, want %d: %s", w.Code, tc.want, w.Body)
			}
			if tc.want == http.StatusUnprocessableEntity && !strings.Contains(w.Body.String(), "A, B") {
				t.Errorf("the refusal does not list the options: %s", w.Body)
			}
			switch {
			case tc.check == nil && len(sub.inputs) != 0:
				t.Errorf("a refused action submitted %+v", sub.inputs)
			case tc.check != nil && len(sub.inputs) != 1:
				t.Fatalf("%d inputs submitted, want 1", len(sub.inputs))
			case tc.check != nil:
				tc.check(t, sub.inputs[0])
			}
		})
	}
}

// hangingSubmitter is a Submitter whose store hangs: Submit returns only when its
// context ends. It records whether the context had a deadline and how long was left
// when Submit was called; a context without one is refused at once, so that a test
// of it cannot hang.
type hangingSubmitter struct {
	deadline bool
	left     time.Duration
}

func (h *hangingSubmitter) Submit(ctx context.Context, _ conversation.Input) (bool, error) {
	d, ok := ctx.Deadline()
	if !ok {
		return false, errors.New("hangingSubmitter: the context has no deadline: Submit would hang")
	}
	h.deadline, h.left = true, time.Until(d)
	<-ctx.Done()
	return false, ctx.Err()
}

// writeSecret is the token of the write tests below (writeAPI).
const writeSecret = "ci-bot-secret-0123456789"

// writeTimeout is writeAPI's Config.StoreTimeout.
const writeTimeout = 50 * time.Millisecond

// pendingRun is a running pitch run whose artifacts are all pending.
func pendingRun() *workflow.State {
	return &workflow.State{Name: "pitch", StartedBy: "api:ci-bot", Status: workflow.RunRunning, Artifacts: map[string]*workflow.ArtifactState{
		"idea": {Status: workflow.StatusPending}, "text": {Status: workflow.StatusPending}}}
}

// writeAPI is an API on st and sub for the pitch workflow, with writeSecret's token
// and a StoreTimeout of writeTimeout.
func writeAPI(t *testing.T, st Store, sub Submitter) *Server {
	return newServer(Config{Store: st, Submitter: sub, Workflows: pitchSet(t), TeamID: "T1", Wait: time.Second, StoreTimeout: writeTimeout,
		Tokens: []Token{{Name: "ci-bot", Secret: writeSecret, Scopes: []Scope{ScopeRunsWrite}}}})
}

// TestWriteAgainstAHangingStoreAnswers503: a write whose input the Submitter cannot
// keep within Config.StoreTimeout answers 503, though its request carries no
// deadline of its own, instead of holding the request while the store hangs; the
// answer says the write may still take effect, and to look before trying again.
func TestWriteAgainstAHangingStoreAnswers503(t *testing.T) {
	sub := &hangingSubmitter{}
	s := writeAPI(t, runStore{ws: pendingRun()}, sub)
	w := postAs(t, s, writeSecret, "/v1/runs/T1-C1-1.2:cancel", nil)
	if body := w.Body.String(); w.Code != http.StatusServiceUnavailable || !strings.Contains(body, "may still take effect") ||
		!strings.Contains(body, "before you try again") {
		t.Fatalf("%d, want 503 saying the write may still take effect, to look before trying again: %s", w.Code, body)
	}
	if !sub.deadline || sub.left > writeTimeout {
		t.Errorf("Submit's context: deadline %v, %v left; want one at most StoreTimeout, %v, away", sub.deadline, sub.left, writeTimeout)
	}
	if d := newServer(Config{}).cfg.StoreTimeout; d != DefaultStoreTimeout {
		t.Errorf("default StoreTimeout %v, want %v", d, DefaultStoreTimeout)
	}
}

// failingReads is runStore whose reads after a write's input is kept fail: the
// store went down meanwhile (its input is spooled, and runs in its turn).
type failingReads struct{ runStore }

func (failingReads) Input(_ context.Context, id string) (conversation.Input, error) {
	return conversation.Input{ID: id}, conversation.ErrUnavailable
}

func (failingReads) Forwarded(context.Context, string) ([]conversation.Key, error) {
	return nil, conversation.ErrUnavailable
}

// flakyReads is runStore whose Input and Forwarded fail their first fails calls
// each, as a store does for a moment (a failover, a dropped connection).
type flakyReads struct {
	runStore
	fails        int
	mu           sync.Mutex
	inputs, fwds int
}

func (f *flakyReads) Input(ctx context.Context, id string) (conversation.Input, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.inputs++; f.inputs <= f.fails {
		return conversation.Input{}, conversation.ErrUnavailable
	}
	return f.runStore.Input(ctx, id)
}

func (f *flakyReads) Forwarded(context.Context, string) ([]conversation.Key, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fwds++; f.fwds <= f.fails {
		return nil, conversation.ErrUnavailable
	}
	return []conversation.Key{{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.2"}}, nil
}

// TestWriteWaitOutlastsAStoreFailingForAMoment: a write whose reads fail for a
// moment while it waits for its turn tries them again within its wait, and
// answers with the run (200 done; 201 for a start), not a 202 at the first failure.
func TestWriteWaitOutlastsAStoreFailingForAMoment(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		body       any
		want       int
	}{
		{"Cancel", "/v1/runs/T1-C1-1.2:cancel", nil, http.StatusOK},
		{"Start", "/v1/runs", map[string]any{"workflow": "pitch", "channel": "C1"}, http.StatusCreated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &flakyReads{runStore: runStore{ws: pendingRun()}, fails: 3}
			s := writeAPI(t, st, &keptSubmitter{})
			s.cfg.Wait = 30 * time.Second         // far more than 3 retries take: the test waits on the answer, never on the clock
			s.cfg.StoreTimeout = 10 * time.Second // writeAPI's 50 ms is for the hanging stores' tests
			w := postAs(t, s, writeSecret, tc.path, tc.body)
			var out keptAnswer
			if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil || w.Code != tc.want || out.Run == nil {
				t.Errorf("%d %s (%v): want %d with the run", w.Code, w.Body, err, tc.want)
			}
		})
	}
}

// hangingLoad is runStore whose Load hangs until its context ends; a context
// without a deadline is refused at once, so that a test of it cannot hang.
type hangingLoad struct{ runStore }

func (hangingLoad) Load(ctx context.Context, _ conversation.Key, _ int) (*conversation.Checkpoint, error) {
	if _, ok := ctx.Deadline(); !ok {
		return nil, errors.New("hangingLoad: the context has no deadline: Load would hang")
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// secondLoadFails is runStore whose second Load fails: the run read before an
// action works, the one after its turn does not.
type secondLoadFails struct {
	runStore
	loads *int
}

func (s secondLoadFails) Load(ctx context.Context, key conversation.Key, recent int) (*conversation.Checkpoint, error) {
	if *s.loads++; *s.loads > 1 {
		return nil, conversation.ErrUnavailable
	}
	return s.runStore.Load(ctx, key, recent)
}

// stuckLoad is runStore whose Load ignores its context, as a call on a connection
// that hangs does (lib/pq does not interrupt one), until the test ends, or for
// stuckFor at most: long past the test's deadlines, short of hanging the test when
// nothing gives the call up.
type stuckLoad struct {
	runStore
	release <-chan struct{}
}

const stuckFor = 10 * time.Second

func (s stuckLoad) Load(context.Context, conversation.Key, int) (*conversation.Checkpoint, error) {
	t := time.NewTimer(stuckFor)
	defer t.Stop()
	select {
	case <-s.release:
	case <-t.C:
	}
	return nil, errors.New("stuckLoad: not given up")
}

// keptAnswer is what the tests read of a write's answer once its input is kept.
type keptAnswer struct {
	InputID string          `json:"input_id"`
	Done    bool            `json:"done"`
	Run     json.RawMessage `json:"run"`
}

// TestWriteKeptAnswers202WhateverTheStoreDoesNext: once a write's input is kept,
// the store failing to tell what came of it answers 202 with the input's id and no
// run, not an error, which a client would send again (a second action, a second
// run); a store that hangs before the input is kept answers 503, nothing submitted.
func TestWriteKeptAnswers202WhateverTheStoreDoesNext(t *testing.T) {
	for _, tc := range []struct {
		name string
		path string
		body any
	}{
		{"Cancel", "/v1/runs/T1-C1-1.2:cancel", nil},
		{"Start", "/v1/runs", map[string]any{"workflow": "pitch", "channel": "C1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sub := &keptSubmitter{}
			w := postAs(t, writeAPI(t, failingReads{runStore{ws: pendingRun()}}, sub), writeSecret, tc.path, tc.body)
			var out keptAnswer
			if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil || w.Code != http.StatusAccepted {
				t.Fatalf("%d, want 202: %s (%v)", w.Code, w.Body, err)
			}
			if len(sub.inputs) != 1 || out.InputID != sub.inputs[0].ID || out.Done || out.Run != nil {
				t.Errorf("answer %s for inputs %+v: want the one input's id, not done, no run", w.Body, sub.inputs)
			}
		})
	}
	t.Run("RunNotReadAfterTheTurn", func(t *testing.T) {
		// The turn ran (InputStatus says done), the run cannot be read: 202, done,
		// no run, not a 200 whose applied false would read as a refusal.
		loads := 0
		sub := &keptSubmitter{}
		w := postAs(t, writeAPI(t, secondLoadFails{runStore{ws: pendingRun()}, &loads}, sub), writeSecret, "/v1/runs/T1-C1-1.2:cancel", nil)
		var out keptAnswer
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil || w.Code != http.StatusAccepted || !out.Done || out.Run != nil ||
			len(sub.inputs) != 1 || out.InputID != sub.inputs[0].ID {
			t.Errorf("%d %s (%v): want 202, done, the input's id, no run", w.Code, w.Body, err)
		}
	})
	release := make(chan struct{})
	defer close(release)
	for name, st := range map[string]Store{
		"StuckLoad":   stuckLoad{runStore{ws: pendingRun()}, release}, // ignores its context: given up by the deadline and grace
		"HangingLoad": hangingLoad{runStore{ws: pendingRun()}},
	} {
		t.Run(name, func(t *testing.T) {
			sub := &keptSubmitter{}
			w := postAs(t, writeAPI(t, st, sub), writeSecret, "/v1/runs/T1-C1-1.2:cancel", nil)
			if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "did not answer in time") || len(sub.inputs) != 0 {
				t.Errorf("%d %s with %d inputs submitted, want 503 saying the store did not answer in time, none submitted", w.Code, w.Body, len(sub.inputs))
			}
		})
	}
}

// TestReadAgainstAHangingStoreAnswers503: a GET whose store read hangs, honouring its
// context or not, answers 503 within Config.StoreTimeout and the grace, though the
// request carries no deadline of its own.
func TestReadAgainstAHangingStoreAnswers503(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	for name, st := range map[string]Store{
		"StuckLoad":   stuckLoad{runStore{ws: pendingRun()}, release},
		"HangingLoad": hangingLoad{runStore{ws: pendingRun()}},
	} {
		t.Run(name, func(t *testing.T) {
			s := newServer(Config{Store: st, Submitter: &keptSubmitter{}, Workflows: pitchSet(t), TeamID: "T1", StoreTimeout: writeTimeout,
				Tokens: []Token{{Name: "ci-bot", Secret: writeSecret, Scopes: []Scope{ScopeRunsRead}}}})
			w := requestAs(s, writeSecret, http.MethodGet, "/v1/runs/T1-C1-1.2")
			if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "did not answer in time") {
				t.Errorf("%d %s, want 503 saying the store did not answer in time", w.Code, w.Body)
			}
		})
	}
}

// slowLinks is a Permalinker that answers only when its context ends, as
// chat.getPermalink does while slack-go waits out a 429's Retry-After.
type slowLinks struct{}

func (slowLinks) Permalink(ctx context.Context, _ conversation.Key, _ string) (string, error) {
	if _, ok := ctx.Deadline(); !ok {
		return "", errors.New("slowLinks: the context has no deadline: Permalink would hang")
	}
	<-ctx.Done()
	return "", ctx.Err()
}

// TestReadWithASlowSlackAnswersTheRun: a GET of a run while Slack does not answer
// chat.getPermalink answers 200 with the run and no link once the link's own bound
// passes, not a 503 blaming the store, whose reads come after it.
func TestReadWithASlowSlackAnswersTheRun(t *testing.T) {
	s := newServer(Config{Store: runStore{ws: pendingRun()}, Submitter: &keptSubmitter{}, Workflows: pitchSet(t), TeamID: "T1",
		StoreTimeout: permalinkTimeout + time.Second, Links: slowLinks{},
		Tokens: []Token{{Name: "ci-bot", Secret: writeSecret, Scopes: []Scope{ScopeRunsRead}}}})
	w := requestAs(s, writeSecret, http.MethodGet, "/v1/runs/T1-C1-1.2")
	if w.Code != http.StatusOK || strings.Contains(w.Body.String(), "permalink") {
		t.Errorf("%d %s, want 200 with the run and no permalink", w.Code, w.Body)
	}
}
