package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/threadwright/threadwright/testkit/openaitest"
)

// checkedPostYAML is a workflow whose draft artifact has a words check (against the
// number input wordcount) and a line check, and one criterion the model judges.
const checkedPostYAML = `
name: post
title: Post
pass_share: 1
inputs:
  - {id: topic, label: Topic}
  - {id: wordcount, label: Target length (words), type: number, default: 30}
artifacts:
  - id: post
    title: Post
    criteria:
      - {id: keywords, description: Has a keywords line, check: {line: "Keywords:"}}
      - {id: clear, description: Reads clearly}
      - {id: length, description: Within 15% of the target length, check: {words: wordcount, tolerance: 0.15}}
`

// checkedModel writes the post too short (3 words), and its revision at the target
// length (33 words); it records what every evaluation was asked about and every
// revision's task. Everything else is cannedModel's.
type checkedModel struct {
	canned *cannedModel

	mu        sync.Mutex
	evaluated [][]string
	revisions []string
}

func (m *checkedModel) respond(r openaitest.Request) openaitest.Response {
	fn := forced(r)
	task := r.LastUserMessage()
	call := func(args any) openaitest.Response {
		b, _ := json.Marshal(args)
		return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: fn, Arguments: string(b)}}}
	}
	switch {
	case fn == "commit_evaluation":
		m.mu.Lock()
		m.evaluated = append(m.evaluated, evaluationIDs(r))
		m.mu.Unlock()
	case fn == "commit_artifact_final_text" && strings.HasPrefix(task, "Revise"):
		m.mu.Lock()
		m.revisions = append(m.revisions, task)
		m.mu.Unlock()
		return call(map[string]string{"text": "Keywords: tea, leaves\n\n" + strings.TrimSpace(strings.Repeat("Tea grows slowly on the hills. ", 5))})
	case fn == "commit_artifact_final_text":
		return call(map[string]string{"text": "Keywords: tea\n\nToo short."})
	}
	return m.canned.respond(r)
}

// TestE2ECriteriaChecksAndVerdictRevision: a draft artifact's checks are judged
// without the model (its evaluation is asked about the one other criterion only);
// the first text is too short, so the words check fails the verdict; the editor's
// automatic revision is asked for with the check's reason, the revised text passes,
// and the card in Slack shows the word count and both verdicts.
func TestE2ECriteriaChecksAndVerdictRevision(t *testing.T) {
	h := newWorkflowHarness(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "post.yaml"), []byte(checkedPostYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	h.env["WORKFLOWS_DIR"] = dir
	m := &checkedModel{canned: h.model}
	h.ai.Handle(m.respond)
	h.start()
	thread := h.startWorkflow(alice, "post")

	card := h.latest(thread, "Approve", "")
	sections := strings.Join(blockTexts(h, thread, card, "section"), "\n")
	contexts := strings.Join(blockTexts(h, thread, card, "context"), "\n")
	if !strings.Contains(sections, "Keywords: tea, leaves") {
		t.Errorf("the card does not show the revised text:\n%s", sections)
	}
	for _, want := range []string{
		"✅ 3 of 3 criteria met",
		"✅ *Within 15% of the target length*: 33 words; the target is 30 ± 15% (26–34)",
		"⚖️ *Verdict:* ❌ fail (2 of 3 criteria met) → ✅ pass (3 of 3) after one automatic revision",
	} {
		if !strings.Contains(contexts, want) {
			t.Errorf("the card lacks %q:\n%s", want, contexts)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.evaluated) != 2 {
		t.Errorf("%d evaluations by the model; want 2 (the text and its revision)", len(m.evaluated))
	}
	for _, ids := range m.evaluated {
		if !slices.Equal(ids, []string{"clear"}) {
			t.Errorf("the model was asked about %v; want only [clear] (the others are checks)", ids)
		}
	}
	if len(m.revisions) != 1 {
		t.Fatalf("%d revisions; want one", len(m.revisions))
	}
	if g := m.revisions[0]; !strings.Contains(g, "Within 15% of the target length: 4 words; the target is 30 ± 15% (26–34)") || strings.Contains(g, "Has a keywords line") {
		t.Errorf("the revision's task lacks the failing check's reason (or names a passing one):\n%s", g)
	}
	ws := storedWorkflow(h.harness, thread)
	if p := ws.Artifacts["post"]; len(p.PriorEval) != 3 || p.PriorEval[2].Pass || len(p.Eval) != 3 || !p.Eval[2].Pass {
		t.Errorf("stored post: eval %+v, prior %+v", p.Eval, p.PriorEval)
	}
	assertNoSlackErrors(t, h.harness)
}
