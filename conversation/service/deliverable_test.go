package service_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/service"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// slotAgent writes a first draft with a "[product]" slot and, asked to revise, fills
// the slots its instructions name, unless stubborn.
type slotAgent struct {
	*scriptedAgent
	stubborn bool
}

func (a *slotAgent) Write(ctx context.Context, r conversation.ArtifactRequest) (string, conversation.Usage, error) {
	text, u, err := a.scriptedAgent.Write(ctx, r)
	return "For busy parents, [product] plans the week. See [the site](https://example.com) [1]. " + text, u, err
}

func (a *slotAgent) Revise(ctx context.Context, r conversation.ArtifactRequest) (string, conversation.Usage, error) {
	if err := a.record(ctx, "revise", r); err != nil {
		return "", conversation.Usage{}, err
	}
	if a.stubborn || !strings.Contains(r.Instructions, "[product]") {
		return r.Current + "\n\n_Revised as asked: " + r.Instructions + "._", conversation.Usage{}, nil
	}
	return strings.ReplaceAll(r.Current, "[product]", "MealPlan"), conversation.Usage{}, nil
}

// newSlotWF is a harness of the twin workflow whose writer leaves "[product]" in the
// intro and whose editor fills it (leaves it, when stubborn). It starts one service
// only: a second one on the same store (this harness once left newWFOf's running)
// could take the thread's input and write it without the slot agent, and the tests
// that use it failed now and then.
func newSlotWF(t *testing.T, stubborn bool) *wfHarness {
	t.Helper()
	def, err := workflow.Parse("test.yaml", []byte(twinYAML))
	if err != nil {
		t.Fatal(err)
	}
	set, err := workflow.NewSet(def)
	if err != nil {
		t.Fatal(err)
	}
	h := &wfHarness{t: t, st: openStore(t, t.TempDir()), msgr: newMessenger(), agent: &scriptedAgent{fail: map[string]error{}}, sum: &foldSummarizer{}}
	h.svc = newService(t, service.Config{Store: h.st, Messenger: h.msgr, Executor: &echo{}, Workflows: set, Agent: &slotAgent{scriptedAgent: h.agent, stubborn: stubborn}})
	return h
}

// TestWorkflowPlaceholderFixedBeforeReview: a first draft that leaves "[product]" is
// given to the editor to fill before anyone sees it; links and citation markers are
// not placeholders.
func TestWorkflowPlaceholderFixedBeforeReview(t *testing.T) {
	h := newSlotWF(t, false)
	h.say("U1", "start twin")
	st := h.artifact("intro")
	if strings.Contains(st.Text, "[product]") || !strings.Contains(st.Text, "MealPlan") || !strings.Contains(st.Text, "[the site](https://example.com) [1]") {
		t.Fatalf("intro under review = %q; want [product] filled, the link and marker kept", st.Text)
	}
	if !slices.Contains(h.agent.calls, "revise intro") {
		t.Errorf("no editor pass for the placeholder: %q", h.agent.calls)
	}
	for _, r := range st.Eval {
		if !r.Pass {
			t.Errorf("failing criterion after the fix: %+v", r)
		}
	}
}

// TestWorkflowPlaceholderLeftFailsTheEvaluation: when the editor leaves the slot, the
// evaluation fails the placeholders criterion, naming it, and the card says so on a
// line of its own.
func TestWorkflowPlaceholderLeftFailsTheEvaluation(t *testing.T) {
	h := newSlotWF(t, true)
	h.say("U1", "start twin")
	st := h.artifact("intro")
	var failed []workflow.CriterionResult
	for _, r := range st.Eval {
		if !r.Pass {
			failed = append(failed, r)
		}
	}
	if len(failed) != 1 || failed[0].ID != conversation.CriterionPlaceholders || !strings.Contains(failed[0].Reason, "[product]") {
		t.Fatalf("evaluation = %+v; want the placeholders criterion failing on [product]", st.Eval)
	}
	if strings.Contains(st.Text, "Revised as asked") || !strings.Contains(st.Note, "Revised as asked: ") {
		t.Errorf("text = %q, note = %q; want the editor's note apart from the text", st.Text, st.Note)
	}
	text := h.msgr.cardText(st.MessageTS)
	// The revision was automatic: labelled so, without the editor's "as asked".
	if !strings.Contains(text, "✏️ *Revised automatically:* _The check") || strings.Contains(text, "Revised as asked") {
		t.Errorf("card = %q; want the editor's note labelled automatic", text)
	}
	if !strings.Contains(text, "0 of 1 criteria met\n❌ *No placeholders*: still in the text after an automatic fix: [product]") {
		t.Errorf("card = %q; want the summary and the failing criterion on its own line", text)
	}
}

// TestPipelineShowFullText: a foreach artifact's card shows each item's first line,
// shortened, with a "Show full text" button that posts the whole text to whoever
// clicked it, and only to them.
func TestPipelineShowFullText(t *testing.T) {
	pa := newPipelineAgent()
	h := newPipeline(t, nil, pa, 4)
	h.toPipeline()
	st := h.artifact("research")
	if labels := strings.Join(h.msgr.buttons(st.MessageTS), "|"); !strings.Contains(labels, "Show full text") {
		t.Fatalf("the research card offers %q; want Show full text", labels)
	}
	h.drain()
	h.click("U2", conversation.ActionFullText, "research", "", "")
	var shown string
	for _, p := range h.drain() {
		if strings.HasPrefix(p, "(ephemeral) ") {
			shown += p
		}
	}
	items := h.artifact("research").Items
	if len(items) == 0 {
		t.Fatal("research has no items")
	}
	if !strings.Contains(shown, "*Research*") {
		t.Errorf("ephemeral = %q; want the research's title", shown)
	}
	for _, it := range items {
		if text := strings.TrimSpace(workflow.ItemText(it)); !strings.Contains(shown, text) {
			t.Errorf("ephemeral = %q; want item %s's whole text %q", shown, it.Title, text)
		}
	}
}
