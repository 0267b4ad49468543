package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/playground/demo"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// subheadingRE matches a "### " subsection heading line.
var subheadingRE = regexp.MustCompile(`(?m)^### .*$`)

// wrapUp is the closing line the styleBreaker's editor adds to the second section.
const wrapUp = "In conclusion, tagging every namespace keeps the bill honest."

// styleBreaker is the demo model, but for the editor pass of the second section of
// the blog's sections: there, the subsection's heading loses the keywords the editor
// placed in it, and a wrap-up paragraph is added. It records the automatic revision
// of the sections.
type styleBreaker struct {
	demo func(openaitest.Request) openaitest.Response

	mu        sync.Mutex
	broken    int
	revisions []string
}

func (m *styleBreaker) respond(r openaitest.Request) openaitest.Response {
	resp := m.demo(r)
	ma := artifactRE.FindStringSubmatch(systemText(r))
	if ma == nil || ma[1] != "sections" || forced(r) != "commit_artifact_final_text" || len(resp.ToolCalls) != 1 {
		return resp
	}
	task := r.LastUserMessage()
	m.mu.Lock()
	defer m.mu.Unlock()
	switch it := itemRE.FindStringSubmatch(task); {
	case strings.Contains(task, "The evaluation failed"):
		m.revisions = append(m.revisions, task)
	case it != nil && it[1] == "2" && strings.Contains(task, "Tighten the prose"):
		var args map[string]any
		if err := json.Unmarshal([]byte(resp.ToolCalls[0].Arguments), &args); err != nil {
			return resp
		}
		text, _ := args["text"].(string)
		args["text"] = subheadingRE.ReplaceAllString(text, "### What it looks like in practice") + "\n\n" + wrapUp
		b, _ := json.Marshal(args)
		resp.ToolCalls[0].Arguments = string(b)
		m.broken++
	}
	return resp
}

// TestE2EBlogSectionChecksRevise runs the built-in blog on the demo model behind the
// fake OpenAI server (the real go-openai client), with the editor pass of the second
// section breaking two rules: it ends on "In conclusion, …", and drops the brief's
// keyword it had placed. The sections' checks, judged without the model, fail both
// (critical), so the verdict fails; the sections get their one automatic revision,
// asked for with both reasons in the reader's terms (the missing keyword as the
// brief lists it); the revision passes every check, and the card shows both
// verdicts. The other checks (the two-sentence lead-in, 250–300-word subsections)
// pass on the demo's sections from the start.
func TestE2EBlogSectionChecksRevise(t *testing.T) {
	h := newWorkflowHarness(t)
	m := &styleBreaker{demo: demoHandler(demo.New())}
	h.ai.Handle(m.respond)
	h.start()
	thread := h.startWorkflow(alice, "blog Kubernetes cost control for platform teams")
	h.click(thread, alice, "A:", "")
	h.click(thread, alice, "Approve", "")
	h.waitFor("the article for review", func() bool {
		return strings.Contains(h.transcript(thread), "Meta keywords:")
	})

	ws := storedWorkflow(h.harness, thread)
	brief := ws.Artifacts["brief"].Text
	_, kws, _ := strings.Cut(brief, "## Keywords\n")
	kws, _, _ = strings.Cut(kws, "\n")
	keywords := strings.Split(kws, ", ")
	if len(keywords) < 2 {
		t.Fatalf("the brief lists no keywords:\n%s", brief)
	}
	missing := keywords[1] // the second section's, which its broken editor pass dropped

	m.mu.Lock()
	broken, revisions := m.broken, append([]string(nil), m.revisions...)
	m.mu.Unlock()
	if broken != 1 || len(revisions) != 1 {
		t.Fatalf("%d broken editor passes, %d automatic revisions of the sections; want 1 and 1", broken, len(revisions))
	}
	for _, want := range []string{
		`the article's conclusion does that once (critical): "`,
		`has a sentence opening with "In conclusion"`,
		`Uses every keyword of the brief at least once across the sections (critical): Keywords from "Article brief" not used: "` + missing + `"`,
	} {
		if !strings.Contains(revisions[0], want) {
			t.Errorf("the revision's task lacks %q:\n%s", want, revisions[0])
		}
	}
	for _, passing := range []string{"Opens under its", `Has "### " subsections`} {
		if strings.Contains(revisions[0], "- "+passing) {
			t.Errorf("the revision's task names the passing check %q:\n%s", passing, revisions[0])
		}
	}

	sec := ws.Artifacts["sections"]
	results := func(eval []workflow.CriterionResult) map[string]bool {
		out := map[string]bool{}
		for _, r := range eval {
			out[r.ID] = r.Pass
		}
		return out
	}
	before, after := results(sec.PriorEval), results(sec.Eval)
	for id, want := range map[string]bool{"lead_in": true, "subsections": true, "no_wrap_up": false, "keywords": false} {
		if got, ok := before[id]; !ok || got != want {
			t.Errorf("before the revision, %s passed %v (judged %v); want %v", id, got, ok, want)
		}
		if !after[id] {
			t.Errorf("after the revision, %s fails: %+v", id, sec.Eval)
		}
	}
	if strings.Contains(sec.Text, "In conclusion") || !strings.Contains(strings.ToLower(sec.Text), strings.ToLower(missing)) {
		t.Errorf("the revised sections keep the wrap-up or lack %q:\n%s", missing, sec.Text)
	}
	if !strings.Contains(h.transcript(thread), "criteria met) → ✅ pass (") {
		t.Errorf("the thread does not show the sections' failing verdict and the revision's passing one:\n%s", h.transcript(thread))
	}
	assertNoSlackErrors(t, h.harness)
}
