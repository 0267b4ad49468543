package service_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/service"
	"github.com/threadwright/threadwright/conversation/workflow"
)

func customPipeline(t *testing.T, yaml string, pa *pipelineAgent, agent conversation.WorkflowAgent, concurrency int) (*pipelineHarness, *workflow.Definition) {
	t.Helper()
	def, err := workflow.Parse("custom.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	set, err := workflow.NewSet(def)
	if err != nil {
		t.Fatal(err)
	}
	if agent == nil {
		agent = pa
	}
	h := &wfHarness{t: t, st: openStore(t, t.TempDir()), msgr: newMessenger(), agent: &pa.scriptedAgent, sum: &foldSummarizer{}}
	h.msgr.updates = true
	h.svc = newService(t, service.Config{Store: h.st, Messenger: h.msgr, Executor: &echo{}, Workflows: set, Agent: agent, PipelineConcurrency: concurrency})
	return &pipelineHarness{wfHarness: h, pa: pa}, def
}

// splitYAML: approving notes makes two auto artifacts ready at once, and notes (no
// headings, no list) cannot be split into glossary's items.
const splitYAML = `
name: split
title: Split
artifacts:
  - id: outline
    title: Outline
  - id: notes
    title: Notes
  - id: research
    title: Research
    mode: auto
    depends_on: [outline]
    foreach: outline
  - id: glossary
    title: Glossary
    mode: auto
    depends_on: [notes]
    foreach: notes
`

func TestPipelineUnsplittableArtifactLeavesOthersRunning(t *testing.T) {
	pa := newPipelineAgent()
	h, def := customPipeline(t, splitYAML, pa, nil, 2)
	h.say("U1", "start split")
	h.click("U1", conversation.ActionApprove, "outline", "", "")
	h.click("U1", conversation.ActionApprove, "notes", "", "") // notes has no items → glossary can't split
	ws := h.state()
	if got := h.statuses(def); got != "outline=approved notes=approved research=approved glossary=pending" || ws.Pipeline != nil {
		t.Fatalf("%s, pipeline %+v; want research written and glossary left pending", got, ws.Pipeline)
	}
	if posted := strings.Join(h.drain(), "\n"); !strings.Contains(posted, "couldn't find the items of *Notes* that *Glossary* is written for") {
		t.Fatalf("not told why glossary waits:\n%s", posted)
	}
}

// strandYAML: notes (auto, one item) and glossary (auto, foreach outline) run
// together; notes finishes first, and research (foreach notes) cannot be split while
// glossary still runs.
const strandYAML = `
name: strand
title: Strand
artifacts:
  - id: outline
    title: Outline
  - id: notes
    title: Notes
    mode: auto
    depends_on: [outline]
  - id: research
    title: Research
    mode: auto
    depends_on: [notes]
    foreach: notes
  - id: glossary
    title: Glossary
    mode: auto
    depends_on: [outline]
    foreach: outline
`

func TestPipelineUnsplittableArtifactMidRunLeavesOthersRunning(t *testing.T) {
	pa := newPipelineAgent()
	h, _ := customPipeline(t, strandYAML, pa, nil, 1)
	h.say("U1", "start strand")
	h.click("U1", conversation.ActionApprove, "outline", "", "")
	ws := h.state()
	if g := ws.Artifacts["glossary"]; g.Status == workflow.StatusRunning && ws.Pipeline == nil {
		t.Fatalf("glossary is running with no pipeline (items %+v): stuck", g.Items)
	}
	if g := ws.Artifacts["glossary"]; g.Status != workflow.StatusApproved {
		t.Fatalf("glossary = %s; want approved (it does not depend on the item-less notes)", g.Status)
	}
}

// Regenerate with guidance on a stale auto artifact whose dependencies are all
// approved, while another (independent) stale artifact comes earlier in the order:
// it runs at once; the stale one waits for its own Keep or Regenerate.
func TestPipelineRerunPassesUnrelatedStale(t *testing.T) {
	pa := newPipelineAgent()
	h, def := customPipeline(t, independentYAML, pa, &wholeAgent{pa}, 4)
	h.say("U1", "start twin")
	h.click("U1", conversation.ActionApprove, "outline", "", "")
	h.click("U1", conversation.ActionApprove, "final", "", "")
	h.say("U1", "restart outline")
	h.click("U1", conversation.ActionApprove, "outline", "", "")
	if got := h.statuses(def); got != "outline=approved research=stale glossary=stale final=stale" {
		t.Fatalf("setup: %s", got)
	}
	h.drain()
	h.click("U1", conversation.ActionRegenerateStale, "glossary", "", "shorter")
	if got := h.statuses(def); got != "outline=approved research=stale glossary=approved final=stale" {
		t.Fatalf("after regenerating glossary: %s\n%s", got, strings.Join(h.drain(), "\n"))
	}
	if g := h.artifact("glossary"); !strings.Contains(g.Text, "following shorter") {
		t.Errorf("glossary = %q; want it written with the guidance", g.Text)
	}
}

// "edit research" while research runs again (after a restart) is refused: its text is
// the previous run's, and editing it would drop the run.
func TestPipelineEditWhileRunningIsRefused(t *testing.T) {
	pa := newPipelineAgent()
	h := newPipeline(t, nil, pa, 1)
	h.toPipeline()
	pa.mu.Lock()
	pa.gate = make(chan struct{})
	pa.started = make(chan string, 64)
	pa.mu.Unlock()
	h.n++
	if ok, err := h.svc.Submit(context.Background(), mention(key, fmt.Sprintf("100.%03d", h.n), "restart research")); err != nil || !ok {
		t.Fatal(ok, err)
	}
	<-pa.started
	h.sayWhileHeld("edit research shorter")
	h.wait()
	ws := h.state()
	r := ws.Artifacts["research"]
	var st []string
	for _, it := range r.Items {
		st = append(st, string(it.Status))
	}
	posted := strings.Join(h.drain(), "\n")
	if r.Status == workflow.StatusApproved && slices.Contains(st, string(workflow.ItemPending)) || !strings.Contains(posted, "is being written by the pipeline") {
		t.Fatalf("research approved with pending items %v (the restarted run was dropped)", st)
	}
}

// peopleFirstYAML: extra (auto) comes after review (reviewed by people) in the order.
const peopleFirstYAML = `
name: pf
title: People first
artifacts:
  - id: outline
    title: Outline
  - id: research
    title: Research
    mode: auto
    depends_on: [outline]
  - id: review
    title: Review
    depends_on: [research]
  - id: extra
    title: Extra
    mode: auto
    depends_on: [outline]
`

// TestPipelineRerunWaitsForPeople: regenerating a stale auto artifact while an earlier
// artifact waits for people's review waits for that review, and says so.
func TestPipelineRerunWaitsForPeople(t *testing.T) {
	pa := newPipelineAgent()
	h, def := customPipeline(t, peopleFirstYAML, pa, &wholeAgent{pa}, 4)
	h.say("U1", "start pf")
	h.click("U1", conversation.ActionApprove, "outline", "", "")
	h.click("U1", conversation.ActionApprove, "review", "", "")
	h.say("U1", "restart outline")
	h.click("U1", conversation.ActionApprove, "outline", "", "")
	h.click("U1", conversation.ActionKeep, "research", "", "")
	h.click("U1", conversation.ActionRegenerateStale, "review", "", "")
	if got := h.statuses(def); got != "outline=approved research=approved review=generated extra=stale" {
		t.Fatalf("setup: %s", got)
	}
	h.drain()
	h.click("U1", conversation.ActionRegenerateStale, "extra", "", "")
	if posted := strings.Join(h.drain(), "\n"); !strings.Contains(posted, "*Extra* will be written again once *Review* is approved") {
		t.Fatalf("not told what extra waits for:\n%s", posted)
	}
	h.click("U1", conversation.ActionApprove, "review", "", "")
	if got := h.statuses(def); got != "outline=approved research=approved review=approved extra=approved" {
		t.Fatalf("after the review: %s", got)
	}
}
