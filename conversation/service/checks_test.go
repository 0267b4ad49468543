package service_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/service"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// checksWorkflow has a draft artifact with a judged criterion between two checks,
// and (after it) a foreach pipeline artifact with a words check of its own.
const checksWorkflow = `
name: checked
title: Checked
%s
inputs:
  - {id: topic, label: Topic}
  - {id: wordcount, label: Words, type: number, default: 20}
artifacts:
  - id: article
    title: Article
    criteria:
      - {id: keywords, description: Has a keywords line, check: {line: "Keywords:"}}
      - {id: clear, description: Reads clearly}
      - {id: length, description: Near the target length, check: {words: wordcount, tolerance: 0.15}}
`

// checkAgent writes a text of write (or, asked to revise, revise) and records the
// criteria each evaluation was asked about and every revision's instructions.
type checkAgent struct {
	scriptedAgent
	mu             sync.Mutex
	write, revise  map[string]string // artifact id (or "id/item") → text
	asked          [][]string        // criterion ids per Evaluate call
	evaluated      []string          // the texts evaluated
	failWrite      map[string]bool   // "id/item" whose writes fail
	revisions      []string          // Revise instructions
	revisedCurrent []string          // Revise's Current
}

func (a *checkAgent) Write(ctx context.Context, r conversation.ArtifactRequest) (string, conversation.Usage, error) {
	if err := a.record(ctx, "write", r); err != nil {
		return "", conversation.Usage{}, err
	}
	k := r.Artifact.ID
	if r.Item != nil {
		k += "/" + r.Item.Title
	}
	if a.failWrite[k] {
		return "", conversation.Usage{}, &conversation.TaskFailure{Reason: "nothing found"}
	}
	if s, ok := a.write[k]; ok {
		return s, conversation.Usage{}, nil
	}
	return a.scriptedAgent.Write(ctx, r)
}

func (a *checkAgent) Revise(ctx context.Context, r conversation.ArtifactRequest) (string, conversation.Usage, error) {
	if err := a.record(ctx, "revise", r); err != nil {
		return "", conversation.Usage{}, err
	}
	a.mu.Lock()
	a.revisions = append(a.revisions, r.Instructions)
	a.revisedCurrent = append(a.revisedCurrent, r.Current)
	a.mu.Unlock()
	if s, ok := a.revise[r.Artifact.ID]; ok {
		return s, conversation.Usage{}, nil
	}
	return r.Current, conversation.Usage{}, nil
}

func (a *checkAgent) Evaluate(ctx context.Context, r conversation.ArtifactRequest, text string) ([]workflow.CriterionResult, conversation.Usage, error) {
	var ids []string
	for _, c := range r.Artifact.Criteria {
		ids = append(ids, c.ID)
	}
	a.mu.Lock()
	a.asked = append(a.asked, ids)
	a.evaluated = append(a.evaluated, text)
	a.mu.Unlock()
	return a.scriptedAgent.Evaluate(ctx, r, text)
}

func (a *checkAgent) revised() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.revisions)
}

func newCheckAgent() *checkAgent {
	return &checkAgent{scriptedAgent: scriptedAgent{fail: map[string]error{}}, write: map[string]string{}, revise: map[string]string{}, failWrite: map[string]bool{}}
}

// checksHarness runs workflow src (a definition) with agent a.
func checksHarness(t *testing.T, src string, a *checkAgent) *wfHarness {
	t.Helper()
	def, err := workflow.Parse("checked.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	set, err := workflow.NewSet(def)
	if err != nil {
		t.Fatal(err)
	}
	h := &wfHarness{t: t, st: openStore(t, t.TempDir()), msgr: newMessenger(), agent: &a.scriptedAgent, sum: &foldSummarizer{}}
	h.svc = newService(t, service.Config{Store: h.st, Messenger: h.msgr, Executor: &echo{}, Workflows: set, Agent: a, PipelineConcurrency: 2})
	return h
}

// cardText is every text of the card posted for artifact id.
func cardText(h *wfHarness, id string) string {
	c := h.msgr.card(h.artifact(id).MessageTS)
	parts := []string{c.Text}
	for _, b := range c.Blocks {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n")
}

func wordsText(n int) string { return strings.TrimSpace(strings.Repeat("word ", n)) }

// A draft artifact's checked criteria are judged without the model (its evaluation
// is asked about the others only), merged in criteria order; a failing check fails
// the verdict, so the text gets its one automatic revision, guided by the check's
// reason, and the card shows the word count and both verdicts.
func TestChecksDraftRevisedOnce(t *testing.T) {
	a := newCheckAgent()
	a.write["article"] = "Keywords: a, b\n\n" + wordsText(5)      // 8 words: too short
	a.revise["article"] = "Keywords: a, b, c\n\n" + wordsText(17) // 21 words
	h := checksHarness(t, fmt.Sprintf(checksWorkflow, "pass_share: 1"), a)
	h.say("U1", "start checked about tea")
	st := h.artifact("article")
	if st.Status != workflow.StatusGenerated || !strings.HasPrefix(st.Text, "Keywords: a, b, c") {
		t.Fatalf("article %s %q; want the revised text for review", st.Status, st.Text)
	}
	for _, ids := range a.asked {
		if !slices.Equal(ids, []string{"clear"}) {
			t.Errorf("the model was asked about %v; want only [clear] (the others are checks)", ids)
		}
	}
	if len(a.asked) != 2 {
		t.Errorf("%d evaluations; want 2 (the text, then its revision)", len(a.asked))
	}
	var ids []string
	for _, r := range st.Eval {
		ids = append(ids, r.ID)
	}
	if strings.Join(ids, ",") != "keywords,clear,length" {
		t.Errorf("evaluation %v; want the criteria's order keywords,clear,length", st.Eval)
	}
	if len(st.PriorEval) != 3 || st.PriorEval[2].Pass || st.PriorEval[2].Reason != "8 words; the target is 20 ± 15% (17–23)" {
		t.Errorf("prior evaluation %+v; want the length check failing with its count", st.PriorEval)
	}
	rev := a.revised()
	if len(rev) != 1 || !strings.Contains(rev[0], "Near the target length: 8 words; the target is 20 ± 15% (17–23)") {
		t.Errorf("revisions %q; want one, guided by the failing check's reason", rev)
	}
	card := cardText(h, "article")
	for _, want := range []string{"✅ *Near the target length*: 21 words; the target is 20 ± 15% (17–23)", "❌ fail (2 of 3 criteria met) → ✅ pass (3 of 3) after one automatic revision"} {
		if !strings.Contains(card, want) {
			t.Errorf("card lacks %q:\n%s", want, card)
		}
	}
}

// An artifact whose every criterion is a check is never given to the model's
// evaluation.
func TestChecksOnlyNoModelEvaluation(t *testing.T) {
	a := newCheckAgent()
	a.write["article"] = "Keywords: a\n\n" + wordsText(18)
	src := strings.Replace(fmt.Sprintf(checksWorkflow, ""), "      - {id: clear, description: Reads clearly}\n", "", 1)
	h := checksHarness(t, src, a)
	h.say("U1", "start checked about tea")
	if st := h.artifact("article"); len(st.Eval) != 2 || !st.Eval[0].Pass || !st.Eval[1].Pass {
		t.Fatalf("evaluation %+v; want both checks passing", st.Eval)
	}
	if len(a.asked) != 0 || strings.Contains(strings.Join(a.calls, "|"), "evaluate") {
		t.Errorf("the model evaluated %v; want no call", a.asked)
	}
}

// The reasons follow the thread's language.
func TestChecksReasonsInRussian(t *testing.T) {
	a := newCheckAgent()
	a.write["article"] = wordsText(1200)
	h := checksHarness(t, fmt.Sprintf(checksWorkflow, "locale: ru"), a)
	h.say("U1", "start checked about tea")
	st := h.artifact("article")
	eval := st.PriorEval
	if eval == nil {
		eval = st.Eval
	}
	if eval[0].Reason != "Нет строки «Keywords:»" || eval[2].Reason != "слов: 1\u00a0200; цель — 20 ± 15% (17–23)" {
		t.Errorf("reasons %q, %q; want them in Russian", eval[0].Reason, eval[2].Reason)
	}
	if card := cardText(h, "article"); !strings.Contains(card, "не пройдено") {
		t.Errorf("card:\n%s", card)
	}
}

// pipelineChecksWorkflow: an outline, then a foreach auto artifact over it whose
// every item must carry a "Source:" line and the whole a length.
const pipelineChecksWorkflow = `
name: checked
title: Checked
inputs:
  - {id: topic, label: Topic}
  - {id: wordcount, label: Words, type: number, default: 12}
artifacts:
  - id: outline
    title: Outline
  - id: notes
    title: Notes
    mode: auto
    depends_on: [outline]
    %s
    criteria:
      - {id: sourced, description: Cites a source, check: {line: "Source:"}}
      - {id: judged, description: Reads well}
      - {id: length, description: Long enough, check: {words: wordcount, tolerance: 0.5}}
`

// startChecked starts the workflow and approves its outline; the pipeline runs.
func startChecked(h *wfHarness) {
	h.say("U1", "start checked")
	h.click("U1", conversation.ActionApprove, "outline", "", "")
}

// A pipeline artifact (no foreach) whose verdict fails is revised once: the revised
// text is approved, its card shows both verdicts.
func TestChecksPipelineRevisedOnce(t *testing.T) {
	a := newCheckAgent()
	a.write["outline"] = "# Plan\n\n## Alpha\n\n## Beta\n"
	a.write["notes"] = "too short"
	a.revise["notes"] = "Source: the archive\nNow there are enough words here."
	h := checksHarness(t, fmt.Sprintf(pipelineChecksWorkflow, ""), a)
	startChecked(h)
	st := h.artifact("notes")
	if st.Status != workflow.StatusApproved || st.Text != "Source: the archive\nNow there are enough words here." {
		t.Fatalf("notes %s %q; want the revision approved", st.Status, st.Text)
	}
	if rev := a.revised(); len(rev) != 1 || !strings.Contains(rev[0], `Cites a source: No "Source:" line`) {
		t.Errorf("revisions %q; want one, guided by the failing checks", rev)
	}
	if v := (&workflow.Definition{}).Judge(nil, st.PriorEval); v.Pass || len(st.Eval) != 3 {
		t.Errorf("prior %+v, eval %+v; want a failing prior and a full evaluation", st.PriorEval, st.Eval)
	}
	card := cardText(h, "notes")
	if !strings.Contains(card, "❌ fail (1 of 3 criteria met) → ✅ pass (3 of 3) after one automatic revision") {
		t.Errorf("card lacks both verdicts:\n%s", card)
	}
}

// A foreach pipeline artifact's revision is split back into its items; one that does
// not give the items' titles in order is discarded, the first text standing.
func TestChecksPipelineForeachSplitBack(t *testing.T) {
	for _, tt := range []struct {
		name, revised string
		kept          bool
	}{
		{"Split", "## Alpha\n\nSource: a\nalpha words here\n\n## Beta\n\nSource: b\nbeta words here", true},
		{"Mismatched", "## Alpha\n\nSource: a\nalpha words here\n\n## Gamma\n\nSource: b\nbeta words here", false},
		{"MissingItem", "## Alpha\n\nSource: a\nalpha words here and beta words too", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newCheckAgent()
			a.write["outline"] = "# Plan\n\n## Alpha\n\n## Beta\n"
			a.write["notes/Alpha"] = "alpha"
			a.write["notes/Beta"] = "beta"
			a.revise["notes"] = tt.revised
			h := checksHarness(t, fmt.Sprintf(pipelineChecksWorkflow, "foreach: outline"), a)
			startChecked(h)
			st := h.artifact("notes")
			if st.Status != workflow.StatusApproved {
				t.Fatalf("notes %s; want approved", st.Status)
			}
			if cur := a.revisedCurrent; len(cur) != 1 || cur[0] != "## Alpha\n\nalpha\n\n## Beta\n\nbeta" {
				t.Fatalf("revised %q; want the items joined, once", cur)
			}
			if rev := a.revised(); !strings.Contains(rev[0], "Keep every \"## \" heading exactly as it is") {
				t.Errorf("revision %q; want it asked to keep the items' headings", rev[0])
			}
			if tt.kept {
				if st.Items[0].Text != "Source: a\nalpha words here" || st.Items[1].Text != "Source: b\nbeta words here" || st.Text != tt.revised {
					t.Errorf("items %q, %q, text %q; want the revision split back", st.Items[0].Text, st.Items[1].Text, st.Text)
				}
				if st.PriorEval == nil || !strings.Contains(cardText(h, "notes"), "→ ✅ pass (3 of 3) after one automatic revision") {
					t.Errorf("prior %+v; card:\n%s", st.PriorEval, cardText(h, "notes"))
				}
				return
			}
			if st.Items[0].Text != "alpha" || st.Items[1].Text != "beta" || st.PriorEval != nil {
				t.Errorf("items %q, %q, prior %+v; want the first text, its evaluation standing", st.Items[0].Text, st.Items[1].Text, st.PriorEval)
			}
			if v := (&workflow.Definition{}).Judge(nil, st.Eval); v.Pass {
				t.Errorf("evaluation %+v; want the first (failing) one", st.Eval)
			}
		})
	}
}

// A failed item of a foreach artifact stays failed through the revision (whatever
// the revision wrote for it), and the revision is evaluated as it is approved.
func TestChecksPipelineForeachFailedItemStays(t *testing.T) {
	a := newCheckAgent()
	a.write["outline"] = "# Plan\n\n## Alpha\n\n## Beta\n"
	a.write["notes/Alpha"] = "alpha"
	a.failWrite["notes/Beta"] = true
	a.revise["notes"] = "## Alpha\n\nSource: a\nalpha words here and more\n\n## Beta\n\nSource: invented\nbeta made up"
	h := checksHarness(t, fmt.Sprintf(pipelineChecksWorkflow, "foreach: outline"), a)
	startChecked(h)
	st := h.artifact("notes")
	if st.Status != workflow.StatusApproved || st.Items[0].Text != "Source: a\nalpha words here and more" || st.Items[1].Status != workflow.ItemFailed {
		t.Fatalf("notes %s, items %+v; want Alpha revised, Beta still failed", st.Status, st.Items)
	}
	if strings.Contains(st.Text, "invented") || !strings.Contains(st.Text, "_No result: nothing found_") {
		t.Errorf("text %q; want the failed item's note, not the revision's invention", st.Text)
	}
	if last := a.evaluated[len(a.evaluated)-1]; last != st.Text || st.PriorEval == nil {
		t.Errorf("last evaluated %q; want the approved text %q (prior %+v)", last, st.Text, st.PriorEval)
	}
}
