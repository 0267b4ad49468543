package service_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/service"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// pipelineYAML is a small pipeline: a reviewed outline, research and sections per
// outline item (retries, recovery, an editor pass), then a reviewed article.
const pipelineYAML = `
name: article
title: Article
artifacts:
  - id: outline
    title: Outline
  - id: research
    title: Research
    mode: auto
    depends_on: [outline]
    foreach: outline
    retries: 2
  - id: sections
    title: Sections
    mode: auto
    depends_on: [outline, research]
    foreach: outline
    model: writer
    editor:
      prompt: tighten
      model: editor
  - id: final
    title: Final
    depends_on: [sections]
`

const outlineText = "# My article\n\n## Alpha\nabout alpha\n\n## Beta\nabout beta\n\n## Gamma\nabout gamma\n\n## Delta\nabout delta\n"

// pipelineAgent writes the outline above and per-item texts; research of the items
// named in failFirst fails that many times; a write blocks while gate is set.
type pipelineAgent struct {
	scriptedAgent
	mu        sync.Mutex
	failFirst map[string]int // item title → tries that fail
	tries     map[string]int // "artifact/item" → tries so far
	inFlight  int
	maxFlight int
	gate      chan struct{}  // when not nil, item writes wait for it (or ctx)
	started   chan string    // item writes starting, when not nil
	outline   string         // the outline's text (default outlineText)
	hang      string         // an item title whose writes never return (until ctx ends)
	holdTry   map[string]int // "artifact/item" → the try that never returns
}

func newPipelineAgent() *pipelineAgent {
	return &pipelineAgent{scriptedAgent: scriptedAgent{fail: map[string]error{}}, failFirst: map[string]int{}, tries: map[string]int{}}
}

// newHeldAgent is a pipelineAgent whose item writes wait at its gate, each reported
// on started when it begins.
func newHeldAgent() *pipelineAgent {
	pa := newPipelineAgent()
	pa.gate, pa.started = make(chan struct{}), make(chan string, 64)
	return pa
}

func (a *pipelineAgent) Write(ctx context.Context, r conversation.ArtifactRequest) (string, conversation.Usage, error) {
	if r.Item == nil {
		if r.Artifact.ID == "outline" {
			_ = a.record(ctx, "write", r)
			if a.outline != "" {
				return a.outline, conversation.Usage{}, nil
			}
			return outlineText, conversation.Usage{}, nil
		}
		return a.scriptedAgent.Write(ctx, r)
	}
	if err := ctx.Err(); err != nil {
		return "", conversation.Usage{}, err
	}
	a.mu.Lock()
	_ = a.record(ctx, "write", r)
	k := r.Artifact.ID + "/" + r.Item.Title
	a.tries[k]++
	try := a.tries[k]
	a.inFlight++
	a.maxFlight = max(a.maxFlight, a.inFlight)
	gate, started := a.gate, a.started
	if r.Item.Title == a.hang || a.holdTry[k] == try {
		gate = make(chan struct{})
	}
	a.mu.Unlock()
	defer func() { a.mu.Lock(); a.inFlight--; a.mu.Unlock() }()
	if started != nil {
		started <- k
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return "", conversation.Usage{}, ctx.Err()
		}
	}
	if r.Artifact.ID == "research" && try <= a.failFirst[r.Item.Title] {
		return "", conversation.Usage{PromptTokens: 1}, &conversation.TaskFailure{Reason: fmt.Sprintf("nothing found for %s (try %d)", r.Item.Title, try)}
	}
	if want := map[string]string{"research": "", "sections": "writer"}[r.Artifact.ID]; r.Profile != want {
		return "", conversation.Usage{}, fmt.Errorf("%s written on profile %q; want %q", r.Artifact.ID, r.Profile, want)
	}
	text := fmt.Sprintf("%s of %s (%d/%d)", r.Artifact.ID, r.Item.Title, r.Item.Index+1, r.Item.Total)
	if r.Artifact.ID == "sections" {
		text += " from [" + r.Approved["research"] + "]"
	}
	if r.Instructions != "" {
		text += " following " + strings.ReplaceAll(r.Instructions, "\n", " ")
	}
	return text, conversation.Usage{PromptTokens: 1}, nil
}

// Revise is the editor pass; it checks the editor's model profile is asked for.
func (a *pipelineAgent) Revise(ctx context.Context, r conversation.ArtifactRequest) (string, conversation.Usage, error) {
	if r.Item != nil && r.Profile != "editor" {
		return "", conversation.Usage{}, fmt.Errorf("editor pass on profile %q; want editor", r.Profile)
	}
	return a.scriptedAgent.Revise(ctx, r)
}

func (a *pipelineAgent) writes() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, c := range a.calls {
		if strings.HasPrefix(c, "write ") {
			out = append(out, c)
		}
	}
	return out
}

func (a *pipelineAgent) count(prefix string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, c := range a.calls {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

func pipelineSet(t testing.TB) *workflow.Set {
	t.Helper()
	def, err := workflow.Parse("article.yaml", []byte(pipelineYAML))
	if err != nil {
		t.Fatal(err)
	}
	set, err := workflow.NewSet(def)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

type pipelineHarness struct {
	*wfHarness
	pa *pipelineAgent
}

func newPipeline(t testing.TB, st conversation.Store, pa *pipelineAgent, concurrency int) *pipelineHarness {
	if st == nil {
		st = openStore(t, t.TempDir())
	}
	h := &wfHarness{t: t, st: st, msgr: newMessenger(), agent: &pa.scriptedAgent, sum: &foldSummarizer{}}
	h.msgr.updates = true
	h.svc = newService(t, service.Config{Store: h.st, Messenger: h.msgr, Executor: &echo{}, Workflows: pipelineSet(t), Agent: pa,
		PipelineConcurrency: concurrency})
	return &pipelineHarness{wfHarness: h, pa: pa}
}

// toPipeline starts the workflow and approves the outline.
func (h *pipelineHarness) toPipeline() {
	h.say("U1", "start article")
	h.click("U1", conversation.ActionApprove, "outline", "", "")
}

// startPipeline starts the workflow and submits the outline's approval without
// waiting for it: the pipeline then runs while the test acts.
func (h *pipelineHarness) startPipeline() { h.startPipelineOf("article") }

// startPipelineOf is startPipeline for workflow name.
func (h *pipelineHarness) startPipelineOf(name string) {
	h.t.Helper()
	h.say("U1", "start "+name)
	approve := conversation.Action{Name: conversation.ActionApprove, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Artifact: "outline", Rev: h.artifact("outline").Rev}
	if ok, err := h.svc.Submit(context.Background(), conversation.Input{ID: "int:approve", Key: key, Kind: conversation.KindAction,
		Action: &conversation.ActionInput{Action: approve, UserID: "U1"}}); err != nil || !ok {
		h.t.Fatal(ok, err)
	}
}

// sayWhileHeld mentions the bot with text while the pipeline's items are held at the
// agent's gate, then lets every item run. Submit returns once the message is stored
// and the running turn knows it waits behind it.
func (h *pipelineHarness) sayWhileHeld(text string) {
	h.t.Helper()
	h.n++
	if ok, err := h.svc.Submit(context.Background(), mention(key, fmt.Sprintf("100.%03d", h.n), text)); err != nil || !ok {
		h.t.Fatal(ok, err)
	}
	h.pa.mu.Lock()
	close(h.pa.gate)
	h.pa.gate, h.pa.started = nil, nil
	h.pa.mu.Unlock()
}

func TestPipelineRunsItemsJoinsAndContinues(t *testing.T) {
	pa := newPipelineAgent()
	pa.failFirst["Beta"] = 2  // fails twice, recovered, succeeds on the third try
	pa.failFirst["Gamma"] = 9 // fails every try
	h := newPipeline(t, nil, pa, 2)
	h.toPipeline()

	ws := h.state()
	if ws.Pipeline != nil {
		t.Errorf("pipeline still running after the run: %+v", ws.Pipeline)
	}
	research, sections := ws.Artifacts["research"], ws.Artifacts["sections"]
	if research.Status != workflow.StatusApproved || sections.Status != workflow.StatusApproved {
		t.Fatalf("research %s, sections %s; want both approved", research.Status, sections.Status)
	}
	if got := ws.Artifacts["final"].Status; got != workflow.StatusGenerated {
		t.Errorf("final = %s; want generated (written after the pipeline, for review)", got)
	}
	var titles []string
	for _, it := range research.Items {
		titles = append(titles, it.Title)
	}
	if strings.Join(titles, ",") != "Alpha,Beta,Gamma,Delta" {
		t.Fatalf("research items %v; want the outline's headings in order", titles)
	}
	beta, gamma := research.Items[1], research.Items[2]
	if beta.Status != workflow.ItemDone || beta.Attempts != 3 || beta.Recovery == nil || !strings.Contains(beta.Text, "following try narrower queries") {
		t.Errorf("Beta = %+v; want done on the 3rd try with the recovery's instructions", beta)
	}
	if gamma.Status != workflow.ItemFailed || gamma.Attempts != 3 || !strings.Contains(gamma.Reason, "nothing found for Gamma (try 3)") {
		t.Errorf("Gamma = %+v; want failed after 3 tries with the last reason", gamma)
	}
	if n := pa.count("recover research"); n != 2 {
		t.Errorf("recovery calls = %d; want 2 (Beta and Gamma, before their last try)", n)
	}
	wantResearch := "## Alpha\n\nresearch of Alpha (1/4)\n\n## Beta\n\nresearch of Beta (2/4) following try narrower queries\n\n## Gamma\n\n_No result: nothing found for Gamma (try 3)_\n\n## Delta\n\nresearch of Delta (4/4)"
	if research.Text != wantResearch {
		t.Errorf("research text:\n%s\nwant:\n%s", research.Text, wantResearch)
	}
	// Sections see their own item's research only, and went through the editor.
	if got := sections.Items[0].Text; got != "sections of Alpha (1/4) from [research of Alpha (1/4)] [revised: tighten]" {
		t.Errorf("sections item 0 = %q", got)
	}
	if got := sections.Items[2].Text; !strings.Contains(got, "from [_No result: nothing found for Gamma (try 3)_]") {
		t.Errorf("sections of the failed research item = %q; want its no-result note", got)
	}
	if pa.maxFlight > 2 {
		t.Errorf("%d items ran at once; want at most PipelineConcurrency 2", pa.maxFlight)
	}
	posted := strings.Join(h.drain(), "\n")
	for _, want := range []string{"3 of 4 items written · 1 failed: Gamma", "pipeline finished in", "Research 4/4 (1 failed) · Sections 4/4"} {
		if !strings.Contains(posted, want) {
			t.Errorf("thread lacks %q:\n%s", want, posted)
		}
	}
	// One progress message, updated in place.
	if n := strings.Count(posted, "\n⏳"); n != 1 {
		t.Errorf("%d progress messages posted; want 1 (then updates)", n)
	}
}

func TestPipelineRestartRerunsOnlyThatPhase(t *testing.T) {
	pa := newPipelineAgent()
	h := newPipeline(t, nil, pa, 4)
	h.toPipeline()
	before := len(pa.writes())
	h.say("U1", "restart sections")
	ws := h.state()
	if got := len(pa.writes()) - before; got != 4 {
		t.Errorf("restart sections wrote %d items; want 4 (research is not repeated)", got)
	}
	if ws.Artifacts["sections"].Status != workflow.StatusApproved || ws.Artifacts["final"].Status != workflow.StatusStale {
		t.Errorf("after restart: sections %s, final %s; want approved and stale", ws.Artifacts["sections"].Status, ws.Artifacts["final"].Status)
	}
}

func TestPipelineStopAndContinue(t *testing.T) {
	pa := newHeldAgent()
	h := newPipeline(t, nil, pa, 1)
	h.startPipeline()
	<-pa.started // Alpha runs
	pa.gate <- struct{}{}
	<-pa.started // Beta runs: stop now
	ws := waitFor(t, h.wfHarness, func(ws *workflow.State) bool {
		return ws.Pipeline != nil && ws.Artifacts["research"].Items[0].Status == workflow.ItemDone
	})
	stop := conversation.Action{Name: conversation.ActionStop, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Arg: "run:" + ws.Pipeline.ID}
	if ok, err := h.svc.Submit(context.Background(), conversation.Input{ID: "int:stop", Key: key, Kind: conversation.KindAction,
		Action: &conversation.ActionInput{Action: stop, UserID: "U2"}}); err != nil || !ok {
		t.Fatalf("stop: %v %v", ok, err)
	}
	h.wait()
	ws = h.state()
	if ws.Pipeline == nil || ws.Pipeline.StoppedBy != "U2" {
		t.Fatalf("pipeline after Stop = %+v; want stopped by U2", ws.Pipeline)
	}
	items := ws.Artifacts["research"].Items
	if items[0].Status != workflow.ItemDone || items[1].Status != workflow.ItemPending || items[3].Status != workflow.ItemPending {
		t.Fatalf("items after Stop = %+v; want Alpha done, the rest pending", items)
	}
	if posted := strings.Join(h.drain(), "\n"); !strings.Contains(posted, "stopped by <@U2>") {
		t.Errorf("no stopped progress message:\n%s", posted)
	}
	writes := len(pa.writes())

	close(pa.gate)
	pa.mu.Lock()
	pa.gate = nil
	pa.mu.Unlock()
	h.n++
	cont := conversation.Action{Name: conversation.ActionContinue, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Arg: ws.Pipeline.ID}
	h.do(conversation.Input{ID: "int:continue", Key: key, Kind: conversation.KindAction, Action: &conversation.ActionInput{Action: cont, UserID: "U1"}})
	ws = h.state()
	if ws.Pipeline != nil || ws.Artifacts["sections"].Status != workflow.StatusApproved {
		t.Fatalf("after Continue: pipeline %+v, sections %s", ws.Pipeline, ws.Artifacts["sections"].Status)
	}
	// Continue wrote Beta (again: it was cut), Gamma, Delta, 4 sections and the final
	// draft; never Alpha.
	if got := len(pa.writes()) - writes; got != 8 {
		t.Errorf("Continue made %d writes; want 8: %v", got, pa.writes()[writes:])
	}
	if pa.tries["research/Alpha"] != 1 {
		t.Errorf("Alpha written %d times; want once", pa.tries["research/Alpha"])
	}
}

func TestPipelineResumesAfterRestartWithoutRepeating(t *testing.T) {
	st := openStore(t, t.TempDir())
	pa := newHeldAgent()
	h := newPipeline(t, st, pa, 2)
	h.startPipeline()
	<-pa.started
	<-pa.started
	pa.gate <- struct{}{} // one of Alpha/Beta finishes; the other is cut by the shutdown
	waitFor(t, h.wfHarness, func(ws *workflow.State) bool {
		n := 0
		for _, it := range ws.Artifacts["research"].Items {
			if it.Status == workflow.ItemDone {
				n++
			}
		}
		return n == 1
	})
	h.kill()
	// Until the next start the progress message says the run was interrupted, with no
	// Stop: no turn runs that it could stop.
	progress := h.state().Pipeline.ProgressTS
	if text, labels := h.msgr.cardText(progress), h.msgr.buttons(progress); !strings.Contains(text, "interrupted by a restart") || len(labels) != 0 {
		t.Fatalf("progress message after a shutdown: %q, buttons %q", text, labels)
	}
	done := map[string]bool{}
	for _, it := range h.state().Artifacts["research"].Items {
		if it.Status == workflow.ItemDone {
			done["write research/"+it.Title] = true
		}
	}

	pa2 := newPipelineAgent()
	h2 := newPipeline(t, st, pa2, 2) // it takes the thread over as it starts
	h2.wait()
	ws := h2.state()
	if ws.Artifacts["sections"].Status != workflow.StatusApproved || ws.Artifacts["final"].Status != workflow.StatusGenerated {
		t.Fatalf("after resume: %s", h2.statuses(mustDef(t)))
	}
	var research []string
	for _, w := range pa2.writes() {
		if strings.HasPrefix(w, "write research") {
			research = append(research, w)
		}
	}
	for k := range done {
		if pa2.tries[strings.TrimPrefix(k, "write ")] > 0 {
			t.Errorf("%s was finished before the restart and written again", k)
		}
	}
	if len(research) != 3 {
		t.Errorf("research writes after the restart = %v; want the 3 unfinished items", research)
	}
	for i, it := range ws.Artifacts["research"].Items {
		if it.Status != workflow.ItemDone || !strings.HasPrefix(it.Text, "research of "+it.Title) {
			t.Errorf("research item %d = %+v", i, it)
		}
	}
}

func mustDef(t *testing.T) *workflow.Definition {
	def, _ := pipelineSet(t).Get("article")
	return def
}

// kill shuts the service down as a SIGTERM that does not wait would: the running turn
// is cancelled and its input stays pending for the next start.
func (h *wfHarness) kill() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	h.svc.Shutdown(ctx)
}

// waitFor polls the saved workflow state until ok.
func waitFor(t *testing.T, h *wfHarness, ok func(*workflow.State) bool) *workflow.State {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if ws := h.state(); ws != nil && ok(ws) {
			return ws
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("state never reached")
	return nil
}

// TestPipelineGivesWayToPeople: a message in the thread while items run is answered
// once the items in flight finish, and the pipeline then goes on where it was.
func TestPipelineGivesWayToPeople(t *testing.T) {
	pa := newHeldAgent()
	h := newPipeline(t, nil, pa, 1)
	h.startPipeline()
	<-pa.started // Alpha runs
	h.sayWhileHeld("how is it going?")
	h.wait()
	ws := h.state()
	if ws.Artifacts["sections"].Status != workflow.StatusApproved {
		t.Fatalf("pipeline did not finish: %s", h.statuses(mustDef(t)))
	}
	posted := h.drain()
	answer, sections := -1, -1
	for i, p := range posted {
		if strings.Contains(p, "how is it going?") {
			answer = i
		}
		if strings.HasPrefix(p, "Sections:") {
			sections = i
		}
	}
	if answer < 0 || sections < 0 || answer > sections {
		t.Fatalf("the answer (%d) did not come before the sections (%d):\n%s", answer, sections, strings.Join(posted, "\n"))
	}
	if pa.tries["research/Alpha"] != 1 {
		t.Errorf("Alpha written %d times; want once", pa.tries["research/Alpha"])
	}
}

// TestPipelineContinuesAcrossTurns: items that outlast half a turn's time continue in
// new turns; an item that never returns fails after two cut turns, and the rest finish.
func TestPipelineContinuesAcrossTurns(t *testing.T) {
	pa := newPipelineAgent()
	pa.hang = "Gamma"
	h := &wfHarness{t: t, st: openStore(t, t.TempDir()), msgr: newMessenger(), agent: &pa.scriptedAgent, sum: &foldSummarizer{}}
	h.svc = newService(t, service.Config{Store: h.st, Messenger: h.msgr, Executor: &echo{}, Workflows: pipelineSet(t), Agent: pa,
		PipelineConcurrency: 2, TurnTimeout: 300 * time.Millisecond})
	ph := &pipelineHarness{wfHarness: h, pa: pa}
	ph.toPipeline()
	ws := h.state()
	gamma := ws.Artifacts["research"].Items[2]
	if gamma.Status != workflow.ItemFailed || gamma.Interrupted != 2 || !strings.Contains(gamma.Reason, "did not finish in time") {
		t.Fatalf("Gamma = %+v; want failed after two interruptions", gamma)
	}
	if ws.Artifacts["sections"].Status != workflow.StatusApproved || ws.Pipeline != nil {
		t.Fatalf("after the run: %s, pipeline %+v", h.statuses(mustDef(t)), ws.Pipeline)
	}
	for _, title := range []string{"Alpha", "Beta", "Delta"} {
		if n := pa.tries["research/"+title]; n != 1 {
			t.Errorf("%s written %d times; want once", title, n)
		}
	}
}

// TestPipelineWithoutItems: an outline with nothing to fan out over is reported, and
// the workflow waits instead of running.
func TestPipelineWithoutItems(t *testing.T) {
	pa := newPipelineAgent()
	pa.outline = "Just one paragraph, no sections at all."
	h := newPipeline(t, nil, pa, 2)
	h.toPipeline()
	ws := h.state()
	if st := ws.Artifacts["research"].Status; st != workflow.StatusPending || ws.Pipeline != nil {
		t.Fatalf("research %s, pipeline %+v; want pending and no pipeline", st, ws.Pipeline)
	}
	if posted := strings.Join(h.drain(), "\n"); !strings.Contains(posted, "couldn't find the items of *Outline* that *Research* is written for") ||
		!strings.Contains(posted, "then `edit outline` or `restart outline`") {
		t.Fatalf("no explanation:\n%s", posted)
	}
}

// TestPipelineHaltsAfterRepeatedFailures: a pipeline input tried more than MaxAttempts
// times (its turns kept dying) stops itself, says so, and Continue runs the rest.
func TestPipelineHaltsAfterRepeatedFailures(t *testing.T) {
	st := openStore(t, t.TempDir())
	pa := newHeldAgent()
	h := newPipeline(t, st, pa, 1)
	h.startPipeline()
	<-pa.started
	h.kill()
	for i := range 3 { // three more deaths: each worker began the input and died
		ctx := context.Background()
		l, _, ok, err := st.Acquire(ctx, key, fmt.Sprintf("dead%d", i), time.Nanosecond)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		in, err := st.Begin(ctx, l)
		if err != nil || in == nil || in.Kind != conversation.KindPipeline {
			t.Fatalf("Begin = %+v, %v; want the pipeline input", in, err)
		}
	}

	pa2 := newPipelineAgent()
	h2 := newPipeline(t, st, pa2, 1) // it takes the thread over as it starts
	h2.wait()
	ws := h2.state()
	if ws.Pipeline == nil || !strings.Contains(ws.Pipeline.Halted, "failed 3 times in a row") {
		t.Fatalf("pipeline = %+v; want halted", ws.Pipeline)
	}
	if n := len(pa2.writes()); n != 0 {
		t.Fatalf("%d writes by a halted pipeline", n)
	}
	if posted := strings.Join(h2.drain(), "\n"); !strings.Contains(posted, "pipeline stopped: it failed 3 times in a row") {
		t.Errorf("not told:\n%s", posted)
	}
	if got := h2.msgr.buttons(ws.Pipeline.ProgressTS); !slices.Equal(got, []string{"Retry"}) {
		t.Errorf("the halted pipeline's buttons = %q; want Retry (every failure's way forward)", got)
	}
	cont := conversation.Action{Name: conversation.ActionContinue, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Arg: ws.Pipeline.ID}
	h2.do(conversation.Input{ID: "int:continue", Key: key, Kind: conversation.KindAction, Action: &conversation.ActionInput{Action: cont, UserID: "U1"}})
	if ws := h2.state(); ws.Pipeline != nil || ws.Artifacts["sections"].Status != workflow.StatusApproved {
		t.Fatalf("after Continue: %s", h2.statuses(mustDef(t)))
	}
}

// TestPipelineRegenerateStaleReruns: after the outline changes, "Regenerate with
// guidance" on stale research runs its items again, over the new outline, each with the
// guidance; regenerating sections first waits for research, and says so.
func TestPipelineRegenerateStaleReruns(t *testing.T) {
	pa := newPipelineAgent()
	h := newPipeline(t, nil, pa, 4)
	h.toPipeline()
	h.click("U1", conversation.ActionApprove, "final", "", "")
	pa.mu.Lock()
	pa.outline = "# My article\n\n## Alpha\n\n## Beta\n\n## Omega\n"
	pa.mu.Unlock()
	h.say("U1", "restart outline")
	h.click("U1", conversation.ActionApprove, "outline", "", "")
	if got := h.statuses(mustDef(t)); got != "outline=approved research=stale sections=stale final=stale" {
		t.Fatalf("after the outline changed: %s", got)
	}
	h.drain()
	h.click("U1", conversation.ActionRegenerateStale, "sections", "", "shorter")
	if posted := strings.Join(h.drain(), "\n"); !strings.Contains(posted, "*Sections* will be written again once *Research* is approved") {
		t.Fatalf("regenerating sections before research:\n%s", posted)
	}
	h.click("U1", conversation.ActionRegenerateStale, "research", "", "use 2025 figures")
	ws := h.state()
	var titles []string
	for _, it := range ws.Artifacts["research"].Items {
		titles = append(titles, it.Title)
		if !strings.HasSuffix(it.Text, "following use 2025 figures") {
			t.Errorf("research item %s = %q; want it written with the guidance", it.Title, it.Text)
		}
	}
	if strings.Join(titles, ",") != "Alpha,Beta,Omega" {
		t.Errorf("research items %v; want the new outline's", titles)
	}
	// sections, waiting for research, ran right after it, with its own guidance.
	if st := ws.Artifacts["sections"]; st.Status != workflow.StatusApproved || !strings.Contains(st.Items[2].Text, "sections of Omega (3/3) from [research of Omega") || !strings.Contains(st.Items[2].Text, "following shorter") {
		t.Errorf("sections = %s %+v", st.Status, st.Items)
	}
	if got := ws.Artifacts["final"].Status; got != workflow.StatusStale {
		t.Errorf("final = %s; want still stale (people decide)", got)
	}
}

// independentYAML has two auto artifacts that depend only on the outline.
const independentYAML = `
name: twin
title: Twin
artifacts:
  - id: outline
    title: Outline
  - id: research
    title: Research
    mode: auto
    depends_on: [outline]
  - id: glossary
    title: Glossary
    mode: auto
    depends_on: [outline]
  - id: final
    title: Final
    depends_on: [research, glossary]
`

// TestPipelineRunsIndependentArtifactsTogether: auto artifacts whose dependencies are
// met run at the same time, and what depends on both waits for both.
func TestPipelineRunsIndependentArtifactsTogether(t *testing.T) {
	pa := newHeldAgent()
	h, _ := customPipeline(t, independentYAML, pa, &wholeAgent{pa}, 0)
	h.startPipelineOf("twin")
	got := map[string]bool{<-pa.started: true, <-pa.started: true} // both before either ends
	if !got["research/Research"] || !got["glossary/Glossary"] {
		t.Fatalf("running at once: %v; want research and glossary", got)
	}
	close(pa.gate)
	h.wait()
	ws := h.state()
	if ws.Artifacts["final"].Status != workflow.StatusGenerated || ws.Artifacts["glossary"].Text != "glossary of Glossary (1/1)" {
		t.Fatalf("after both: final %s, glossary %q", ws.Artifacts["final"].Status, ws.Artifacts["glossary"].Text)
	}
}

// wholeAgent writes whole auto artifacts (no foreach) through pipelineAgent's item
// path, as the single item they are.
type wholeAgent struct{ *pipelineAgent }

func (a *wholeAgent) Write(ctx context.Context, r conversation.ArtifactRequest) (string, conversation.Usage, error) {
	if r.Artifact.Mode == workflow.ModeAuto && r.Item == nil {
		r.Item = &conversation.Item{Index: 0, Total: 1, Title: r.Artifact.Title}
	}
	return a.pipelineAgent.Write(ctx, r)
}

// TestPipelineResumedItemGoesOnWithItsNextTry: failed tries and the recovery are
// checkpointed, so an item cut in its last try tries only that one again after a
// restart, with the recovered instructions and no new recovery call.
func TestPipelineResumedItemGoesOnWithItsNextTry(t *testing.T) {
	st := openStore(t, t.TempDir())
	pa := newPipelineAgent()
	pa.failFirst["Beta"] = 2
	pa.holdTry = map[string]int{"research/Beta": 3}
	pa.started = make(chan string, 64)
	h := newPipeline(t, st, pa, 4)
	h.startPipeline()
	for betas := 0; betas < 3; { // Beta's third try has started
		if <-pa.started == "research/Beta" {
			betas++
		}
	}
	waitFor(t, h.wfHarness, func(ws *workflow.State) bool {
		beta := ws.Artifacts["research"].Items[1]
		return beta.Attempts == 2 && beta.Recovery != nil
	})
	h.kill()

	pa2 := newPipelineAgent()
	h2 := newPipeline(t, st, pa2, 4) // it takes the thread over as it starts
	h2.wait()
	beta := h2.state().Artifacts["research"].Items[1]
	if beta.Status != workflow.ItemDone || beta.Attempts != 3 || len(beta.Failures) != 2 || !strings.Contains(beta.Text, "following try narrower queries") {
		t.Errorf("Beta = %+v; want done on its 3rd try, with the recovered instructions", beta)
	}
	if n := pa2.tries["research/Beta"]; n != 1 {
		t.Errorf("Beta tried %d times after the restart; want 1 (its last try)", n)
	}
	if n := pa2.count("recover"); n != 0 {
		t.Errorf("%d recovery calls after the restart; want 0 (it was checkpointed)", n)
	}
}
