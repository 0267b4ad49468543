package service_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/service"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// countingStore counts the pipeline inputs enqueued by saves.
type countingStore struct {
	conversation.Store
	mu    chan struct{}
	parts int
}

func (s *countingStore) Save(ctx context.Context, turn conversation.Turn) (conversation.Saved, error) {
	for _, in := range turn.Enqueue {
		if in.Kind == conversation.KindPipeline {
			s.mu <- struct{}{}
			s.parts++
			<-s.mu
		}
	}
	return s.Store.Save(ctx, turn)
}

func (s *countingStore) n() int { s.mu <- struct{}{}; defer func() { <-s.mu }(); return s.parts }

// A person restarts a running auto artifact while the pipeline works: the pipeline
// gives way (enqueuing its next part) and the restart enqueues another part; only the
// newest runs, so the two never give way to each other forever.
func TestPipelineRestartWhileRunningSettles(t *testing.T) {
	cs := &countingStore{Store: openStore(t, t.TempDir()), mu: make(chan struct{}, 1)}
	pa := newHeldAgent()
	h := newPipeline(t, cs, pa, 1)
	h.startPipeline()
	<-pa.started // Alpha runs
	h.n++
	in := mention(key, fmt.Sprintf("100.%03d", h.n), "restart research")
	if ok, err := h.svc.Submit(context.Background(), in); err != nil || !ok {
		t.Fatal(ok, err)
	}
	// Submit returned: the input is stored and the running turn knows it waits, so
	// the pipeline gives way once its item ends.
	pa.mu.Lock()
	close(pa.gate)
	pa.gate, pa.started = nil, nil
	pa.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err := h.svc.Wait(ctx)
	parts := cs.n()
	if err != nil || parts > 20 {
		t.Fatalf("Wait = %v; %d pipeline parts enqueued (writes: %d)", err, parts, len(pa.writes()))
	}
	if ws := h.state(); ws.Artifacts["sections"].Status != workflow.StatusApproved {
		t.Fatalf("not finished: %s", h.statuses(mustDef(t)))
	}
}

// Stop then Continue clicked while the pipeline's next part waits behind a person's
// turn: Continue enqueues a new part while the old one is still pending; only the
// newest runs, so the thread settles instead of parts giving way to each other.
func TestPipelineStopContinueWhileQueuedSettles(t *testing.T) {
	cs := &countingStore{Store: openStore(t, t.TempDir()), mu: make(chan struct{}, 1)}
	pa := newHeldAgent()
	exec := &blockingExecutor{started: make(chan string, 4), release: make(chan struct{})}
	h := &wfHarness{t: t, st: cs, msgr: newMessenger(), agent: &pa.scriptedAgent, sum: &foldSummarizer{}}
	h.svc = newService(t, service.Config{Store: cs, Messenger: h.msgr, Executor: exec, Workflows: pipelineSet(t), Agent: pa, PipelineConcurrency: 1})
	ph := &pipelineHarness{wfHarness: h, pa: pa}
	ph.startPipeline()
	<-pa.started // Alpha runs
	ph.sayWhileHeld("how is it going?")
	<-exec.started // the pipeline gave way; the person's turn runs, the next part waits
	ws := h.state()
	stop := conversation.Action{Name: conversation.ActionStop, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Arg: "run:" + ws.Pipeline.ID}
	if _, err := h.svc.Submit(context.Background(), conversation.Input{ID: "int:stop", Key: key, Kind: conversation.KindAction,
		Action: &conversation.ActionInput{Action: stop, UserID: "U2"}}); err != nil {
		t.Fatal(err)
	}
	cont := conversation.Action{Name: conversation.ActionContinue, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Arg: ws.Pipeline.ID}
	if _, err := h.svc.Submit(context.Background(), conversation.Input{ID: "int:continue", Key: key, Kind: conversation.KindAction,
		Action: &conversation.ActionInput{Action: cont, UserID: "U2"}}); err != nil {
		t.Fatal(err)
	}
	close(exec.release)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err := h.svc.Wait(ctx)
	if parts := cs.n(); err != nil || parts > 20 {
		t.Fatalf("Wait = %v; %d pipeline parts enqueued", err, parts)
	}
}

// A person edits the outline while research runs: research goes back to pending (its
// dependency is no longer approved), and the progress message says the run ended
// before it finished, not that it finished.
func TestPipelineEndedByAnEditSaysSo(t *testing.T) {
	pa := newHeldAgent()
	h := newPipeline(t, nil, pa, 1)
	h.startPipeline()
	<-pa.started // Alpha runs
	h.sayWhileHeld("edit outline add an Epsilon section")
	h.wait()
	ws := h.state()
	posted := strings.Join(h.drain(), "\n")
	if ws.Artifacts["research"].Status != workflow.StatusPending || strings.Contains(posted, "pipeline finished") || !strings.Contains(posted, "pipeline ended before it finished") {
		t.Fatalf("research %s; thread:\n%s", ws.Artifacts["research"].Status, posted)
	}
}

// slowAgent: section items take itemDelay, the final's write takes finalDelay (or
// until ctx ends).
type slowAgent struct {
	*pipelineAgent
	itemDelay, finalDelay time.Duration
	finalStarted          chan struct{}
}

func (a *slowAgent) Write(ctx context.Context, r conversation.ArtifactRequest) (string, conversation.Usage, error) {
	var d time.Duration
	switch {
	case r.Item != nil && r.Artifact.ID == "sections":
		d = a.itemDelay
	case r.Item == nil && r.Artifact.ID == "final":
		d = a.finalDelay
		if a.finalStarted != nil {
			a.finalStarted <- struct{}{}
		}
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return "", conversation.Usage{}, ctx.Err()
	}
	return a.pipelineAgent.Write(ctx, r)
}

// The reviewed artifact after the pipeline (final) is written in a turn of its own,
// with the whole TurnTimeout, not with what the pipeline's last turn has left.
func TestPipelineNextStepGetsAWholeTurn(t *testing.T) {
	pa := newPipelineAgent()
	sa := &slowAgent{pipelineAgent: pa, itemDelay: 140 * time.Millisecond, finalDelay: 200 * time.Millisecond}
	h := &wfHarness{t: t, st: openStore(t, t.TempDir()), msgr: newMessenger(), agent: &pa.scriptedAgent, sum: &foldSummarizer{}}
	h.svc = newService(t, service.Config{Store: h.st, Messenger: h.msgr, Executor: &echo{}, Workflows: pipelineSet(t), Agent: sa,
		PipelineConcurrency: 4, TurnTimeout: 300 * time.Millisecond})
	(&pipelineHarness{wfHarness: h, pa: pa}).toPipeline()
	posted := strings.Join(h.drain(), "\n")
	if got := h.artifact("final").Status; got != workflow.StatusGenerated {
		t.Fatalf("final = %s; want generated (its write needs 200ms of a 300ms turn)\n%s", got, posted)
	}
}

// Stop, clicked on the progress message while the reviewed final artifact is being
// written after the run, does not cut that write.
func TestPipelineStopDoesNotCutTheNextStep(t *testing.T) {
	pa := newPipelineAgent()
	sa := &slowAgent{pipelineAgent: pa, finalDelay: 300 * time.Millisecond, finalStarted: make(chan struct{}, 1)}
	h := &wfHarness{t: t, st: openStore(t, t.TempDir()), msgr: newMessenger(), agent: &pa.scriptedAgent, sum: &foldSummarizer{}}
	h.msgr.updates = true
	h.svc = newService(t, service.Config{Store: h.st, Messenger: h.msgr, Executor: &echo{}, Workflows: pipelineSet(t), Agent: sa, PipelineConcurrency: 4})
	ph := &pipelineHarness{wfHarness: h, pa: pa}
	ph.startPipeline()
	<-sa.finalStarted
	ws := h.state()
	stop := conversation.Action{Name: conversation.ActionStop, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Arg: "run:" + ws.Pipeline.ID}
	if _, err := h.svc.Submit(context.Background(), conversation.Input{ID: "int:stop", Key: key, Kind: conversation.KindAction,
		Action: &conversation.ActionInput{Action: stop, UserID: "U2"}}); err != nil {
		t.Fatal(err)
	}
	h.wait()
	posted := strings.Join(h.drain(), "\n")
	if got := h.artifact("final").Status; got == workflow.StatusPending {
		t.Fatalf("final left pending after Stop; thread:\n%s", posted)
	}
}

// A person edits research (a foreach auto artifact) after the run; sections, restarted,
// are written from the edited text, not from research's old per-item results.
func TestPipelineEditedForeachTextReachesDependents(t *testing.T) {
	pa := newPipelineAgent()
	h := newPipeline(t, nil, pa, 4)
	h.toPipeline()
	h.say("U1", "edit research use the 2025 figures")
	if txt := h.artifact("research").Text; !strings.Contains(txt, "2025 figures") {
		t.Fatalf("research not edited: %q", txt)
	}
	h.say("U1", "restart sections")
	ws := h.state()
	if got := ws.Artifacts["sections"].Items[0].Text; !strings.Contains(got, "2025 figures") {
		t.Fatalf("sections item 0 = %q; written from the research as it was before the person's edit", got)
	}
}

// Cancelling the workflow while its pipeline is stopped (or halted) closes the
// progress message, instead of leaving "stopped … Continue" on it.
func TestPipelineCancelClosesProgress(t *testing.T) {
	pa := newHeldAgent()
	h := newPipeline(t, nil, pa, 1)
	h.startPipeline()
	<-pa.started
	ws := waitFor(t, h.wfHarness, func(ws *workflow.State) bool { return ws.Pipeline != nil })
	stop := conversation.Action{Name: conversation.ActionStop, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Arg: "run:" + ws.Pipeline.ID}
	if ok, err := h.svc.Submit(context.Background(), conversation.Input{ID: "int:stop", Key: key, Kind: conversation.KindAction,
		Action: &conversation.ActionInput{Action: stop, UserID: "U2"}}); err != nil || !ok {
		t.Fatalf("stop: %v %v", ok, err)
	}
	h.wait()
	pa.mu.Lock()
	close(pa.gate)
	pa.gate, pa.started = nil, nil
	pa.mu.Unlock()
	h.say("U1", "cancel")
	posted := h.drain()
	last := ""
	for _, p := range posted {
		if strings.HasPrefix(p, "(update 99.3)") {
			last = p
		}
	}
	if !strings.Contains(last, "cancelled") {
		t.Fatalf("progress message after cancel: %q", last)
	}
}

// evalYAML is pipelineYAML with a criterion on research instead of its retries.
var evalYAML = strings.Replace(pipelineYAML, "    retries: 2\n", "    criteria:\n      - id: sourced\n        description: Cites sources\n", 1)

// evalAgent: evaluating research blocks until ctx ends (a model call cut by Stop).
type evalAgent struct {
	*pipelineAgent
	evalStarted chan struct{}
}

func (a *evalAgent) Evaluate(ctx context.Context, r conversation.ArtifactRequest, text string) ([]workflow.CriterionResult, conversation.Usage, error) {
	if r.Artifact.ID == "research" {
		a.evalStarted <- struct{}{}
		<-ctx.Done()
		return nil, conversation.Usage{}, ctx.Err()
	}
	return a.pipelineAgent.Evaluate(ctx, r, text)
}

// ctxMessenger fails posts on a cancelled context, as the Slack client does.
type ctxMessenger struct{ *fakeMessenger }

func (m ctxMessenger) PostCard(ctx context.Context, k conversation.Key, c conversation.Card, tag conversation.Tag) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return m.fakeMessenger.PostCard(ctx, k, c, tag)
}

// Stop while a finished artifact is being evaluated: nothing is completed after a
// stop, so the artifact stays running (not approved without its evaluation, its card
// not lost to a cancelled context) and the next part completes it.
func TestPipelineStopDuringEvaluateCompletesLater(t *testing.T) {
	def, err := workflow.Parse("article.yaml", []byte(evalYAML))
	if err != nil {
		t.Fatal(err)
	}
	set, _ := workflow.NewSet(def)
	pa := newPipelineAgent()
	ea := &evalAgent{pipelineAgent: pa, evalStarted: make(chan struct{}, 1)}
	h := &wfHarness{t: t, st: openStore(t, t.TempDir()), msgr: newMessenger(), agent: &pa.scriptedAgent, sum: &foldSummarizer{}}
	h.svc = newService(t, service.Config{Store: h.st, Messenger: ctxMessenger{h.msgr}, Executor: &echo{}, Workflows: set, Agent: ea, PipelineConcurrency: 4})
	(&pipelineHarness{wfHarness: h, pa: pa}).startPipeline()
	<-ea.evalStarted
	ws := h.state()
	stop := conversation.Action{Name: conversation.ActionStop, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Arg: "run:" + ws.Pipeline.ID}
	if ok, err := h.svc.Submit(context.Background(), conversation.Input{ID: "int:stop", Key: key, Kind: conversation.KindAction,
		Action: &conversation.ActionInput{Action: stop, UserID: "U2"}}); err != nil || !ok {
		t.Fatal(ok, err)
	}
	h.wait()
	ws = h.state()
	if r := ws.Artifacts["research"]; r.Status != workflow.StatusRunning || ws.Pipeline == nil || ws.Pipeline.StoppedBy != "U2" {
		t.Fatalf("after Stop: research %s (eval %v, message %q), pipeline %+v; want it still running, stopped", r.Status, r.Eval, r.MessageTS, ws.Pipeline)
	}
}

// failOnceStore fails the first checkpoint (a Save without InputID) once.
type failOnceStore struct {
	conversation.Store
	mu     chan struct{}
	failed bool
	// didFail is closed when the checkpoint has failed.
	didFail chan struct{}
}

func (s *failOnceStore) Save(ctx context.Context, turn conversation.Turn) (conversation.Saved, error) {
	s.mu <- struct{}{}
	fail := !s.failed && turn.InputID == ""
	if fail {
		s.failed = true
		close(s.didFail)
	}
	<-s.mu
	if fail {
		return conversation.Saved{}, fmt.Errorf("db: connection reset: %w", conversation.ErrUnavailable)
	}
	return s.Store.Save(ctx, turn)
}

// A checkpoint fails once (a transient error): the results of the items still in
// flight are kept, so they are not written again.
func TestPipelineFailedCheckpointKeepsFinishedItems(t *testing.T) {
	fs := &failOnceStore{Store: openStore(t, t.TempDir()), mu: make(chan struct{}, 1), didFail: make(chan struct{})}
	pa := newHeldAgent()
	h := newPipeline(t, fs, pa, 2)
	h.startPipeline()
	<-pa.started
	<-pa.started          // Alpha and Beta run
	pa.gate <- struct{}{} // one finishes: its checkpoint fails
	<-fs.didFail
	pa.mu.Lock()
	close(pa.gate)
	pa.gate, pa.started = nil, nil
	pa.mu.Unlock()
	h.wait()
	for _, k := range []string{"research/Alpha", "research/Beta"} {
		if pa.tries[k] != 1 {
			t.Errorf("%s written %d times; want once", k, pa.tries[k])
		}
	}
}

// A shutdown (deploy) or crash while the reviewed final artifact is written after
// the run: its pipeline part stays pending, and after the restart it writes final.
func TestPipelineShutdownDuringNextStepResumes(t *testing.T) {
	st := openStore(t, t.TempDir())
	pa := newPipelineAgent()
	sa := &slowAgent{pipelineAgent: pa, finalDelay: time.Hour, finalStarted: make(chan struct{}, 1)}
	h := &wfHarness{t: t, st: st, msgr: newMessenger(), agent: &pa.scriptedAgent, sum: &foldSummarizer{}}
	h.svc = newService(t, service.Config{Store: st, Messenger: h.msgr, Executor: &echo{}, Workflows: pipelineSet(t), Agent: sa, PipelineConcurrency: 4})
	(&pipelineHarness{wfHarness: h, pa: pa}).startPipeline()
	<-sa.finalStarted
	h.kill()

	pa2 := newPipelineAgent()
	h2 := newPipeline(t, st, pa2, 4) // it takes the thread over as it starts
	h2.wait()
	if got := h2.artifact("final").Status; got != workflow.StatusGenerated {
		t.Fatalf("final = %s after the restart; want generated", got)
	}
}
