package service_test

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/service"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// sourcesYAML: research per outline item, the pages its notes link to (fetch), and
// sections written from both.
const sourcesYAML = `
name: src
title: Sources
artifacts:
  - id: outline
    title: Outline
  - id: research
    title: Research
    mode: auto
    depends_on: [outline]
    foreach: outline
  - id: sources
    title: Sources
    mode: auto
    depends_on: [outline, research]
    foreach: outline
    fetch: research
  - id: sections
    title: Sections
    mode: auto
    depends_on: [outline, research, sources]
    foreach: outline
`

// batchYAML: research written in one batch, with an editor pass, then a draft.
const batchYAML = `
name: batch
title: Batch
artifacts:
  - id: outline
    title: Outline
  - id: research
    title: Research
    mode: auto
    depends_on: [outline]
    foreach: outline
    research_strategy: batch
    retries: 1
    editor: {prompt: tighten, model: editor}
  - id: final
    title: Final
    depends_on: [research]
`

// sourcesAgent is a pipelineAgent that writes research notes (notes), records what
// sections are written from, and answers batch writes (a section per item but miss).
type sourcesAgent struct {
	*pipelineAgent
	notes func(title string) string

	smu       sync.Mutex
	fromPages map[string]string // section item title → the sources it was given
	batches   []conversation.ArtifactRequest
	failBatch bool
	miss      string        // an item title the batch text leaves out
	hangBatch chan struct{} // when set, a batch write is reported on it and never returns (until ctx ends)
}

func newSourcesAgent() *sourcesAgent {
	return &sourcesAgent{pipelineAgent: newPipelineAgent(), fromPages: map[string]string{}}
}

func (a *sourcesAgent) Write(ctx context.Context, r conversation.ArtifactRequest) (string, conversation.Usage, error) {
	switch {
	case r.Batch != nil:
		if err := a.record(ctx, "batch", r); err != nil {
			return "", conversation.Usage{}, err
		}
		a.smu.Lock()
		hang := a.hangBatch
		a.smu.Unlock()
		if hang != nil {
			hang <- struct{}{}
			<-ctx.Done()
			return "", conversation.Usage{}, ctx.Err()
		}
		a.smu.Lock()
		defer a.smu.Unlock()
		a.batches = append(a.batches, r)
		if a.failBatch || r.Item != nil {
			return "", conversation.Usage{PromptTokens: 1}, errors.New("the model is down")
		}
		var b strings.Builder
		b.WriteString("# Research\n")
		for _, it := range r.Batch {
			if it.Title != a.miss {
				fmt.Fprintf(&b, "\n## %s\nbatch notes on %s\n", strings.ToLower(it.Title), it.Title)
			}
		}
		return b.String(), conversation.Usage{PromptTokens: 1}, nil
	case r.Item != nil && r.Artifact.ID == "research" && a.notes != nil:
		if err := a.record(ctx, "write", r); err != nil {
			return "", conversation.Usage{}, err
		}
		return a.notes(r.Item.Title), conversation.Usage{}, nil
	case r.Item != nil && r.Artifact.ID == "sections":
		if err := a.record(ctx, "write", r); err != nil {
			return "", conversation.Usage{}, err
		}
		a.smu.Lock()
		a.fromPages[r.Item.Title] = r.Approved["sources"]
		a.smu.Unlock()
		return "section " + r.Item.Title, conversation.Usage{}, nil
	}
	return a.pipelineAgent.Write(ctx, r)
}

// fakeFetcher serves every URL but those with "broken" in them (an HTTP 500): the
// page's title and text name its last path element. While gate is set, fetches wait
// for it (or ctx), each reported on started.
type fakeFetcher struct {
	mu        sync.Mutex
	calls     []string
	inFlight  int
	maxFlight int
	gate      chan struct{}
	started   chan string
}

func (f *fakeFetcher) FetchSource(ctx context.Context, url string) (conversation.SourcePage, error) {
	f.mu.Lock()
	f.calls = append(f.calls, url)
	f.inFlight++
	f.maxFlight = max(f.maxFlight, f.inFlight)
	gate, started := f.gate, f.started
	f.mu.Unlock()
	defer func() { f.mu.Lock(); f.inFlight--; f.mu.Unlock() }()
	if started != nil {
		select {
		case started <- url:
		case <-ctx.Done():
			return conversation.SourcePage{}, ctx.Err()
		}
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return conversation.SourcePage{}, ctx.Err()
		}
	}
	if err := ctx.Err(); err != nil {
		return conversation.SourcePage{}, err
	}
	if strings.Contains(url, "broken") {
		return conversation.SourcePage{}, fmt.Errorf("fetch %s: HTTP 500 Internal Server Error", url)
	}
	slug := path.Base(url)
	return conversation.SourcePage{URL: url, Title: "Page " + slug, Text: "Body of " + slug + ".\n\nMore of " + slug + "."}, nil
}

func (f *fakeFetcher) count(prefix string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

// sourcesHarness runs workflow yaml in st (nil: a new store) with agent sa and
// fetcher (nil: none).
func sourcesHarness(t *testing.T, st conversation.Store, yaml string, sa *sourcesAgent, fetcher conversation.SourceFetcher, concurrency int) *wfHarness {
	t.Helper()
	def, err := workflow.Parse("custom.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	set, err := workflow.NewSet(def)
	if err != nil {
		t.Fatal(err)
	}
	if st == nil {
		st = openStore(t, t.TempDir())
	}
	h := &wfHarness{t: t, st: st, msgr: newMessenger(), agent: &sa.scriptedAgent, sum: &foldSummarizer{}}
	h.msgr.updates = true
	cfg := service.Config{Store: st, Messenger: h.msgr, Executor: &echo{}, Workflows: set, Agent: sa, PipelineConcurrency: concurrency}
	if fetcher != nil {
		cfg.Fetcher = fetcher
	}
	h.svc = newService(t, cfg)
	return h
}

func TestPipelineFetchesSources(t *testing.T) {
	sa := newSourcesAgent()
	sa.notes = func(title string) string {
		slug := strings.ToLower(title)
		switch title {
		case "Gamma": // more URLs than are fetched
			var b strings.Builder
			for i := 1; i <= workflow.MaxFetchURLs+2; i++ {
				fmt.Fprintf(&b, "Fact %d: https://pages.test/gamma-%d\n", i, i)
			}
			return b.String()
		case "Delta":
			return "Notes on delta, from memory."
		}
		return fmt.Sprintf("Notes on %s [1](https://pages.test/%s), again https://pages.test/%s.\nAlso https://broken.test/%s.", title, slug, slug, slug)
	}
	f := &fakeFetcher{}
	h := sourcesHarness(t, nil, sourcesYAML, sa, f, 2)
	h.say("U1", "start src")
	h.click("U1", conversation.ActionApprove, "outline", "", "")
	h.wait()
	ws := h.state()
	for _, id := range []string{"research", "sources", "sections"} {
		if ws.Artifacts[id].Status != workflow.StatusApproved {
			t.Fatalf("%s = %s; want approved", id, ws.Artifacts[id].Status)
		}
	}
	src := ws.Artifacts["sources"]
	alpha := src.Items[0]
	wantAlpha := "### Page alpha\nSource: https://pages.test/alpha\nBody of alpha.\n\nMore of alpha.\n\n" +
		"### https://broken.test/alpha\nSource: https://broken.test/alpha\nNot fetched: fetch https://broken.test/alpha: HTTP 500 Internal Server Error"
	if alpha.Status != workflow.ItemDone || alpha.Text != wantAlpha {
		t.Errorf("sources item Alpha = %s %q\nwant done %q", alpha.Status, alpha.Text, wantAlpha)
	}
	if it := src.Items[3]; it.Status != workflow.ItemDone || it.Text != "No URLs were found in the notes." {
		t.Errorf("sources item Delta = %s %q", it.Status, it.Text)
	}
	// Each URL once (the repeated one is fetched once), at most MaxFetchURLs per item.
	if n := f.count("https://pages.test/alpha"); n != 1 {
		t.Errorf("https://pages.test/alpha fetched %d times; want 1", n)
	}
	if n := f.count("https://pages.test/gamma-"); n != workflow.MaxFetchURLs {
		t.Errorf("Gamma: %d URLs fetched; want %d", n, workflow.MaxFetchURLs)
	}
	if !strings.Contains(src.Items[2].Text, "Body of gamma-10.") || strings.Contains(src.Items[2].Text, "gamma-11") {
		t.Errorf("sources item Gamma = %q", src.Items[2].Text)
	}
	// A section is written from its own item's pages.
	sa.smu.Lock()
	beta := sa.fromPages["Beta"]
	sa.smu.Unlock()
	if !strings.Contains(beta, "Body of beta.") || strings.Contains(beta, "Body of alpha.") {
		t.Errorf("section Beta was given sources %q; want Beta's page only", beta)
	}
	// No model wrote the sources, nor fixed or evaluated them.
	if n := sa.count("write sources") + sa.count("revise sources"); n != 0 {
		t.Errorf("%d model calls for the sources", n)
	}
}

func TestPipelineFetchWithoutFetcher(t *testing.T) {
	sa := newSourcesAgent()
	sa.notes = func(title string) string { return "See https://pages.test/" + strings.ToLower(title) }
	h := sourcesHarness(t, nil, sourcesYAML, sa, nil, 2)
	h.say("U1", "start src")
	h.click("U1", conversation.ActionApprove, "outline", "", "")
	h.wait()
	st := h.artifact("sources")
	if st.Status != workflow.StatusApproved {
		t.Fatalf("sources = %s", st.Status)
	}
	want := "### https://pages.test/alpha\nSource: https://pages.test/alpha\nNot fetched: fetching is off in this deployment"
	if got := st.Items[0].Text; got != want {
		t.Errorf("sources item Alpha = %q; want %q", got, want)
	}
}

// TestPipelineBatchWrite: one request writes every item; the item it misses is
// written alone; each item gets the editor pass.
func TestPipelineBatchWrite(t *testing.T) {
	sa := newSourcesAgent()
	sa.miss = "Gamma"
	h := sourcesHarness(t, nil, batchYAML, sa, nil, 4)
	h.say("U1", "start batch")
	h.click("U1", conversation.ActionApprove, "outline", "", "")
	h.wait()
	if len(sa.batches) != 1 {
		t.Fatalf("%d batch writes; want 1", len(sa.batches))
	}
	b := sa.batches[0]
	var titles []string
	for i, it := range b.Batch {
		if it.Index != i || it.Total != 4 {
			t.Errorf("batch item %d = %+v", i, it)
		}
		titles = append(titles, it.Title)
	}
	if got := strings.Join(titles, ","); got != "Alpha,Beta,Gamma,Delta" || b.Item != nil {
		t.Errorf("batch covers %s (item %v); want every item", got, b.Item)
	}
	for _, title := range []string{"Alpha", "Beta", "Delta"} {
		if n := sa.tries["research/"+title]; n != 0 {
			t.Errorf("%s written alone %d times; the batch wrote it", title, n)
		}
	}
	if n := sa.tries["research/Gamma"]; n != 1 {
		t.Errorf("Gamma, missed by the batch, written alone %d times; want 1", n)
	}
	st := h.artifact("research")
	if st.Status != workflow.StatusApproved || !st.Batched {
		t.Fatalf("research = %s batched=%v", st.Status, st.Batched)
	}
	if got := st.Items[0].Text; got != "batch notes on Alpha [revised: tighten]" {
		t.Errorf("Alpha = %q; want the batch's section, edited", got)
	}
	if got := st.Items[2].Text; !strings.HasPrefix(got, "research of Gamma (3/4)") || !strings.HasSuffix(got, "[revised: tighten]") {
		t.Errorf("Gamma = %q; want its own write, edited", got)
	}
	if n := sa.count("revise research"); n != 4 {
		t.Errorf("%d editor passes; want 4", n)
	}
	if h.artifact("final").Status != workflow.StatusGenerated {
		t.Errorf("final = %s; want generated", h.artifact("final").Status)
	}
}

func TestPipelineBatchFailureWritesItemsAlone(t *testing.T) {
	sa := newSourcesAgent()
	sa.failBatch = true
	h := sourcesHarness(t, nil, batchYAML, sa, nil, 4)
	h.say("U1", "start batch")
	h.click("U1", conversation.ActionApprove, "outline", "", "")
	h.wait()
	if len(sa.batches) != 1 {
		t.Errorf("%d batch writes; want 1 (tried once)", len(sa.batches))
	}
	for _, title := range []string{"Alpha", "Beta", "Gamma", "Delta"} {
		if n := sa.tries["research/"+title]; n != 1 {
			t.Errorf("%s written alone %d times; want 1", title, n)
		}
	}
	if st := h.artifact("research"); st.Status != workflow.StatusApproved || len(workflow.FailedItems(st.Items)) != 0 {
		t.Errorf("research = %s %+v", st.Status, st.Items)
	}
}

// TestPipelineBatchCutByRestartRunsAgain: a batch write cut by a shutdown is not an
// end: after the restart the batch runs again, and no item is written alone.
func TestPipelineBatchCutByRestartRunsAgain(t *testing.T) {
	st := openStore(t, t.TempDir())
	sa := newSourcesAgent()
	sa.hangBatch = make(chan struct{}, 1)
	h := sourcesHarness(t, st, batchYAML, sa, nil, 4)
	h.say("U1", "start batch")
	approve := conversation.Action{Name: conversation.ActionApprove, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Artifact: "outline", Rev: h.artifact("outline").Rev}
	if ok, err := h.svc.Submit(context.Background(), conversation.Input{ID: "int:approve", Key: key, Kind: conversation.KindAction,
		Action: &conversation.ActionInput{Action: approve, UserID: "U1"}}); err != nil || !ok {
		t.Fatal(ok, err)
	}
	<-sa.hangBatch
	h.kill()
	if r := h.artifact("research"); r.Batched || workflow.PendingItems(r.Items) != 4 {
		t.Fatalf("after a cut batch: batched=%v, %d items pending; want the batch still to run", r.Batched, workflow.PendingItems(r.Items))
	}

	sa2 := newSourcesAgent()
	h2 := sourcesHarness(t, st, batchYAML, sa2, nil, 4)
	h2.wait()
	if len(sa2.batches) != 1 {
		t.Errorf("%d batch writes after the restart; want 1", len(sa2.batches))
	}
	if n := sa2.count("write research"); n != 0 {
		t.Errorf("%d items written alone after the restart; want none", n)
	}
	if r := h2.artifact("research"); r.Status != workflow.StatusApproved {
		t.Errorf("research = %s", r.Status)
	}
}

// TestPipelineBatchCutByStopRunsAgain: a batch write cut by Stop runs again after
// Continue, and no item is written alone.
func TestPipelineBatchCutByStopRunsAgain(t *testing.T) {
	sa := newSourcesAgent()
	sa.hangBatch = make(chan struct{}, 1)
	h := sourcesHarness(t, nil, batchYAML, sa, nil, 4)
	h.say("U1", "start batch")
	approve := conversation.Action{Name: conversation.ActionApprove, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Artifact: "outline", Rev: h.artifact("outline").Rev}
	if ok, err := h.svc.Submit(context.Background(), conversation.Input{ID: "int:approve", Key: key, Kind: conversation.KindAction,
		Action: &conversation.ActionInput{Action: approve, UserID: "U1"}}); err != nil || !ok {
		t.Fatal(ok, err)
	}
	<-sa.hangBatch
	ws := waitFor(t, h, func(ws *workflow.State) bool { return ws.Pipeline != nil })
	stop := conversation.Action{Name: conversation.ActionStop, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Arg: "run:" + ws.Pipeline.ID}
	if ok, err := h.svc.Submit(context.Background(), conversation.Input{ID: "int:stop", Key: key, Kind: conversation.KindAction,
		Action: &conversation.ActionInput{Action: stop, UserID: "U1"}}); err != nil || !ok {
		t.Fatalf("stop: %v %v", ok, err)
	}
	h.wait()
	if r := h.artifact("research"); r.Batched || workflow.PendingItems(r.Items) != 4 {
		t.Fatalf("after a stopped batch: batched=%v, %d items pending; want the batch still to run", r.Batched, workflow.PendingItems(r.Items))
	}
	sa.smu.Lock()
	sa.hangBatch = nil
	sa.smu.Unlock()
	cont := conversation.Action{Name: conversation.ActionContinue, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Arg: ws.Pipeline.ID}
	h.do(conversation.Input{ID: "int:continue", Key: key, Kind: conversation.KindAction, Action: &conversation.ActionInput{Action: cont, UserID: "U1"}})
	if len(sa.batches) != 1 {
		t.Errorf("%d batch writes finished; want 1", len(sa.batches))
	}
	if n := sa.count("write research"); n != 0 {
		t.Errorf("%d items written alone; want none", n)
	}
	if r := h.artifact("research"); r.Status != workflow.StatusApproved {
		t.Errorf("research = %s", r.Status)
	}
}

// TestPipelineBatchResumesWithoutRedoing: a restart after the batch ended writes
// only the item it missed, alone, and never the batch again.
func TestPipelineBatchResumesWithoutRedoing(t *testing.T) {
	st := openStore(t, t.TempDir())
	sa := newSourcesAgent()
	sa.miss = "Gamma"
	sa.hang = "Gamma" // its own write never returns: the restart cuts it
	h := sourcesHarness(t, st, batchYAML, sa, nil, 4)
	h.say("U1", "start batch")
	approve := conversation.Action{Name: conversation.ActionApprove, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Artifact: "outline", Rev: h.artifact("outline").Rev}
	if ok, err := h.svc.Submit(context.Background(), conversation.Input{ID: "int:approve", Key: key, Kind: conversation.KindAction,
		Action: &conversation.ActionInput{Action: approve, UserID: "U1"}}); err != nil || !ok {
		t.Fatal(ok, err)
	}
	waitFor(t, h, func(ws *workflow.State) bool {
		r := ws.Artifacts["research"]
		return r.Batched && workflow.PendingItems(r.Items) == 1
	})
	h.kill()

	sa2 := newSourcesAgent()
	h2 := sourcesHarness(t, st, batchYAML, sa2, nil, 4) // it takes the thread over as it starts
	h2.wait()
	if len(sa2.batches) != 0 {
		t.Errorf("%d batch writes after the restart; want none", len(sa2.batches))
	}
	for _, title := range []string{"Alpha", "Beta", "Delta"} {
		if n := sa2.tries["research/"+title]; n != 0 {
			t.Errorf("%s, finished by the batch, written %d times after the restart", title, n)
		}
	}
	if n := sa2.tries["research/Gamma"]; n != 1 {
		t.Errorf("Gamma written %d times after the restart; want 1", n)
	}
	r := h2.artifact("research")
	if r.Status != workflow.StatusApproved || r.Items[0].Text != "batch notes on Alpha [revised: tighten]" {
		t.Errorf("research = %s %+v", r.Status, r.Items)
	}
}
