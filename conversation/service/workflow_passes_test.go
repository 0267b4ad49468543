package service_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/service"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// passesYAML has a choice artifact with self_review and a draft one with an
// enhancement pass; autopassYAML an auto foreach artifact with an editor and an
// enhancement pass.
const passesYAML = `
name: passes
title: Passes
inputs:
  - id: topic
    label: Topic
    required: true
artifacts:
  - id: plan
    title: Plan
    mode: choice
    self_review: true
    criteria:
      - id: clear
        description: Is clear
  - id: body
    title: Body
    depends_on: [plan]
    enhance:
      model: enhance
      prompt: 'Polish it for {{ input "topic" }}'
    criteria:
      - id: good
        description: Is good
`

const autopassYAML = `
name: autopass
title: Auto pass
artifacts:
  - id: outline
    title: Outline
  - id: notes
    title: Notes
    mode: auto
    depends_on: [outline]
    foreach: outline
    editor: {prompt: tighten}
    enhance: {model: enhance, prompt: Polish the notes}
    criteria:
      - id: good
        description: Is good
`

// passAgent is a scriptedAgent that revises options under review ("Revised …"),
// enhances on the profile "enhance" ("ENHANCED(…)"), and records the requests of
// both passes and the texts it evaluates.
type passAgent struct {
	scriptedAgent
	mu          sync.Mutex
	proposals   []conversation.ArtifactRequest
	enhances    []conversation.ArtifactRequest
	evaluated   map[string][]string // artifact → texts evaluated
	failReview  error
	failEnhance error
}

func newPassAgent() *passAgent {
	return &passAgent{scriptedAgent: scriptedAgent{fail: map[string]error{}}, evaluated: map[string][]string{}}
}

func (a *passAgent) ProposeOptions(ctx context.Context, r conversation.ArtifactRequest) ([]workflow.Option, conversation.Usage, error) {
	if err := ctx.Err(); err != nil {
		return nil, conversation.Usage{}, err
	}
	a.mu.Lock()
	a.proposals = append(a.proposals, r)
	a.mu.Unlock()
	if r.Review == nil {
		return a.scriptedAgent.ProposeOptions(ctx, r)
	}
	if a.failReview != nil {
		return nil, conversation.Usage{}, a.failReview
	}
	var out []workflow.Option
	for _, o := range r.Review {
		out = append(out, workflow.Option{Label: o.Label, Title: "Revised " + o.Label, Text: "revised: " + o.Text})
	}
	return out, conversation.Usage{}, nil
}

func (a *passAgent) Write(ctx context.Context, r conversation.ArtifactRequest) (string, conversation.Usage, error) {
	if r.Artifact.ID == "outline" {
		if err := a.record(ctx, "write", r); err != nil {
			return "", conversation.Usage{}, err
		}
		return outlineText, conversation.Usage{}, nil
	}
	return a.scriptedAgent.Write(ctx, r)
}

func (a *passAgent) Revise(ctx context.Context, r conversation.ArtifactRequest) (string, conversation.Usage, error) {
	if r.Profile != "enhance" {
		return a.scriptedAgent.Revise(ctx, r)
	}
	if err := a.record(ctx, "enhance", r); err != nil {
		return "", conversation.Usage{}, err
	}
	a.mu.Lock()
	a.enhances = append(a.enhances, r)
	a.mu.Unlock()
	if a.failEnhance != nil {
		return "", conversation.Usage{}, a.failEnhance
	}
	return "ENHANCED(" + r.Current + ")", conversation.Usage{}, nil
}

func (a *passAgent) Evaluate(ctx context.Context, r conversation.ArtifactRequest, text string) ([]workflow.CriterionResult, conversation.Usage, error) {
	a.mu.Lock()
	a.evaluated[r.Artifact.ID] = append(a.evaluated[r.Artifact.ID], text)
	a.mu.Unlock()
	return a.scriptedAgent.Evaluate(ctx, r, text)
}

// newPasses runs a Service with the workflows above and pa; defined lists the model
// profiles the deployment defines.
func newPasses(t *testing.T, pa *passAgent, defined ...string) *wfHarness {
	t.Helper()
	var defs []*workflow.Definition
	for name, src := range map[string]string{"passes.yaml": passesYAML, "autopass.yaml": autopassYAML} {
		d, err := workflow.Parse(name, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		defs = append(defs, d)
	}
	set, err := workflow.NewSet(defs...)
	if err != nil {
		t.Fatal(err)
	}
	h := &wfHarness{t: t, st: openStore(t, t.TempDir()), msgr: newMessenger(), agent: &pa.scriptedAgent, sum: &foldSummarizer{}}
	h.msgr.updates = true
	cfg := service.Config{Store: h.st, Messenger: h.msgr, Executor: &echo{}, Workflows: set, Agent: pa}
	if defined != nil {
		cfg.ProfileDefined = func(name string) bool { return slices.Contains(defined, name) }
	}
	h.svc = newService(t, cfg)
	return h
}

// cardText is every text of a card: its blocks and their buttons' labels.
func passCardText(c conversation.Card) string {
	parts := []string{c.Text}
	for _, b := range c.Blocks {
		parts = append(parts, b.Text)
		for _, btn := range b.Buttons {
			parts = append(parts, "["+btn.Label+"]")
		}
	}
	return strings.Join(parts, "\n")
}

// shownCard is the text of the card that shows artifact id now.
func (h *wfHarness) shownCard(id string) string {
	return passCardText(h.msgr.card(h.artifact(id).MessageTS))
}

const reviewedLine = "Reviewed against the criteria and revised once"

func TestSelfReviewRevisesOptionsOnce(t *testing.T) {
	pa := newPassAgent()
	h := newPasses(t, pa)
	h.say("U1", "start passes kettles")
	if len(pa.proposals) != 2 {
		t.Fatalf("%d ProposeOptions calls, want 2 (the options, then their review)", len(pa.proposals))
	}
	first, review := pa.proposals[0], pa.proposals[1]
	if first.Review != nil || len(review.Review) != 3 {
		t.Fatalf("Review of the calls: %v, %v", first.Review, review.Review)
	}
	if review.Review[1].Text != "plan option B" || review.Artifact.ID != "plan" {
		t.Errorf("the review request does not carry the first options: %+v", review.Review)
	}
	st := h.artifact("plan")
	if !st.Reviewed || st.Options[0].Title != "Revised A" || st.Options[2].Text != "revised: plan option C" {
		t.Fatalf("options kept: reviewed %v %+v", st.Reviewed, st.Options)
	}
	card := h.shownCard("plan")
	if !strings.Contains(card, reviewedLine) || !strings.Contains(card, "[A: Revised A]") || strings.Contains(card, "plan A]") {
		t.Errorf("options card:\n%s", card)
	}
	// The revised option is what is written from.
	h.click("U1", conversation.ActionPick, "plan", "B", "")
	if got := h.artifact("plan").Text; got != "plan text from revised: plan option B" {
		t.Errorf("written from %q", got)
	}
	// The chosen options card keeps its line.
	h.click("U1", conversation.ActionApprove, "plan", "", "")
}

func TestSelfReviewFailureShowsFirstOptions(t *testing.T) {
	pa := newPassAgent()
	pa.failReview = errors.New("model overloaded")
	h := newPasses(t, pa)
	h.say("U1", "start passes kettles")
	if len(pa.proposals) != 2 || pa.proposals[1].Review == nil {
		t.Fatalf("the review was not asked for: %d calls", len(pa.proposals))
	}
	st := h.artifact("plan")
	if st.Status != workflow.StatusOptionsGenerated || st.Reviewed || st.Options[0].Title != "plan A" {
		t.Fatalf("after a failed review: %s reviewed %v %+v", st.Status, st.Reviewed, st.Options)
	}
	if card := h.shownCard("plan"); strings.Contains(card, reviewedLine) || !strings.Contains(card, "[A: plan A]") {
		t.Errorf("options card:\n%s", card)
	}
}

// toBody starts passes with topic and approves its plan: the body is written.
func (h *wfHarness) toBody(topic string) {
	h.say("U1", "start passes "+topic)
	h.click("U1", conversation.ActionPick, "plan", "A", "")
	h.click("U1", conversation.ActionApprove, "plan", "", "")
}

func TestEnhanceDraftOnItsProfile(t *testing.T) {
	pa := newPassAgent()
	h := newPasses(t, pa, "enhance")
	h.toBody("kettles")
	if len(pa.enhances) != 1 {
		t.Fatalf("%d enhancement calls, want 1", len(pa.enhances))
	}
	e := pa.enhances[0]
	const written = "body text from scratch"
	if e.Profile != "enhance" || e.Instructions != "Polish it for kettles" || e.Current != written || e.Artifact.ID != "body" {
		t.Errorf("enhancement request: profile %q, instructions %q, current %q", e.Profile, e.Instructions, e.Current)
	}
	enhanced := "ENHANCED(" + written + ")"
	if got := pa.evaluated["body"]; len(got) != 1 || got[0] != enhanced {
		t.Errorf("evaluated %q, want the enhanced text", got)
	}
	if calls := strings.Join(pa.calls, ","); !strings.Contains(calls, "write body,enhance body,evaluate body") {
		t.Errorf("calls %s", calls)
	}
	st := h.artifact("body")
	if st.Text != enhanced || st.Enhancement != workflow.EnhanceDone {
		t.Fatalf("body: %q (%s)", st.Text, st.Enhancement)
	}
	if card := h.shownCard("body"); !strings.Contains(card, `Polished in a second pass.`) || !strings.Contains(card, enhanced) {
		t.Errorf("body card:\n%s", card)
	}
	// A person's edit is not enhanced, and its card no longer says so.
	h.click("U1", conversation.ActionEdit, "body", "", "shorter")
	if len(pa.enhances) != 1 || h.artifact("body").Enhancement != "" || strings.Contains(h.shownCard("body"), "Polished in") {
		t.Errorf("after an edit: %d enhancements, %q", len(pa.enhances), h.shownCard("body"))
	}
}

func TestEnhanceSkippedWithoutTheProfile(t *testing.T) {
	for _, tc := range []struct{ name, topic, want string }{
		{"en", "kettles", `The final polish did not run this time; the text is as first written.`},
		{"ru", "электрические чайники", `Финальная шлифовка в этот раз не выполнялась; текст в первоначальном виде.`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pa := newPassAgent()
			h := newPasses(t, pa, "writer") // another profile only
			h.toBody(tc.topic)
			if len(pa.enhances) != 0 {
				t.Fatalf("enhanced on an undefined profile: %+v", pa.enhances[0])
			}
			st := h.artifact("body")
			if st.Text != "body text from scratch" || st.Enhancement != workflow.EnhanceSkipped {
				t.Fatalf("body: %q (%s)", st.Text, st.Enhancement)
			}
			if card := h.shownCard("body"); !strings.Contains(card, tc.want) {
				t.Errorf("body card lacks %q:\n%s", tc.want, card)
			}
		})
	}
}

func TestEnhanceFailureKeepsTheText(t *testing.T) {
	pa := newPassAgent()
	pa.failEnhance = errors.New("profile endpoint down")
	h := newPasses(t, pa, "enhance")
	h.toBody("kettles")
	if len(pa.enhances) != 1 {
		t.Fatalf("%d enhancement calls", len(pa.enhances))
	}
	st := h.artifact("body")
	if st.Status != workflow.StatusGenerated || st.Text != "body text from scratch" || st.Enhancement != workflow.EnhanceFailed {
		t.Fatalf("body: %s %q (%s)", st.Status, st.Text, st.Enhancement)
	}
	if got := pa.evaluated["body"]; len(got) != 1 || got[0] != "body text from scratch" {
		t.Errorf("evaluated %q", got)
	}
	if card := h.shownCard("body"); !strings.Contains(card, `The final polish did not work out; the text is as first written.`) {
		t.Errorf("body card:\n%s", card)
	}
}

func TestEnhancePipelineItems(t *testing.T) {
	pa := newPassAgent()
	h := newPasses(t, pa, "enhance")
	h.say("U1", "start autopass")
	h.click("U1", conversation.ActionApprove, "outline", "", "")
	st := h.artifact("notes")
	if st.Status != workflow.StatusApproved || len(st.Items) != 4 {
		t.Fatalf("notes: %s, %d items", st.Status, len(st.Items))
	}
	const want = "ENHANCED(notes text from scratch [revised: tighten])" // after the editor pass
	for _, it := range st.Items {
		if it.Text != want {
			t.Errorf("item %s: %q", it.Title, it.Text)
		}
	}
	if len(pa.enhances) != 4 || pa.enhances[0].Instructions != "Polish the notes" || pa.enhances[0].Item == nil {
		t.Fatalf("%d enhancements: %+v", len(pa.enhances), pa.enhances)
	}
	if got := pa.evaluated["notes"]; len(got) != 1 || strings.Count(got[0], "ENHANCED(") != 4 {
		t.Errorf("evaluated %q", got)
	}
	if st.Enhancement != workflow.EnhanceDone || !strings.Contains(h.shownCard("notes"), `Polished in a second pass.`) {
		t.Errorf("notes card (%s):\n%s", st.Enhancement, h.shownCard("notes"))
	}
	if posted := strings.Join(h.drain(), "\n"); strings.Contains(posted, "skipped") {
		t.Errorf("a skipped pass was reported:\n%s", posted)
	}
}

func TestEnhancePipelineSkippedSaysSo(t *testing.T) {
	pa := newPassAgent()
	h := newPasses(t, pa)
	h.say("U1", "start autopass")
	h.click("U1", conversation.ActionApprove, "outline", "", "")
	st := h.artifact("notes")
	if st.Status != workflow.StatusApproved || len(pa.enhances) != 0 {
		t.Fatalf("notes %s; %d enhancements", st.Status, len(pa.enhances))
	}
	if st.Items[0].Text != "notes text from scratch [revised: tighten]" {
		t.Errorf("item text %q", st.Items[0].Text)
	}
	const skipped = `The final polish did not run this time; the text is as first written.`
	var progress []string
	for _, p := range h.drain() {
		if strings.Contains(p, "pipeline:") {
			progress = append(progress, p)
		}
	}
	if len(progress) == 0 || !strings.Contains(progress[0], "*Notes*: "+skipped) {
		t.Errorf("progress messages:\n%s", strings.Join(progress, "\n"))
	}
	if st.Enhancement != workflow.EnhanceSkipped || !strings.Contains(h.shownCard("notes"), skipped) {
		t.Errorf("notes card (%s):\n%s", st.Enhancement, h.shownCard("notes"))
	}
}

// TestEnhancePipelineFailureKeepsItems: an item whose enhancement fails keeps its
// edited text; the artifact's card says the pass failed.
func TestEnhancePipelineFailureKeepsItems(t *testing.T) {
	pa := newPassAgent()
	pa.failEnhance = errors.New("profile endpoint down")
	h := newPasses(t, pa, "enhance")
	h.say("U1", "start autopass")
	h.click("U1", conversation.ActionApprove, "outline", "", "")
	st := h.artifact("notes")
	if st.Status != workflow.StatusApproved || len(workflow.FailedItems(st.Items)) != 0 || st.Items[2].Text != "notes text from scratch [revised: tighten]" {
		t.Fatalf("notes %s: %+v", st.Status, st.Items)
	}
	if st.Enhancement != workflow.EnhanceFailed || !strings.Contains(h.shownCard("notes"), `The final polish did not work out`) {
		t.Errorf("notes card (%s):\n%s", st.Enhancement, h.shownCard("notes"))
	}
}
