package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// passesWorkflowYAML: a plan whose options the model reviews once (self_review), then
// a body enhanced on the model profile "enhance" (which need not be defined).
const passesWorkflowYAML = `
name: launch
title: Launch
artifacts:
  - id: plan
    title: Plan
    mode: choice
    self_review: true
    criteria:
      - id: concrete
        description: Names the product and the date
  - id: body
    title: Body
    depends_on: [plan]
    enhance:
      model: enhance
      prompt: Make it vivid and keep every fact.
    criteria:
      - id: vivid
        description: Reads well
`

// reviewSentence is the sentence of the options prompt's review section.
const reviewSentence = "Review these options against the criteria below, then revise them once:"

// enhancedText is what the enhancement profile's model writes.
const enhancedText = "The enhanced body, polished by the second model."

// newPassesHarness starts the bot with the launch workflow; the main model revises
// options under review as "Reviewed X"; profiles, when set, is MODEL_PROFILES.
func newPassesHarness(t *testing.T, profiles string) *wfHarness {
	t.Helper()
	h := newWorkflowHarness(t)
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		if forced(r) == "commit_artifact_options" && strings.Contains(r.LastUserMessage(), reviewSentence) {
			var opts []map[string]string
			for _, l := range []string{"A", "B", "C"} {
				opts = append(opts, map[string]string{"label": l, "title": "Reviewed " + l, "text": "Option " + l + ", revised against the criteria."})
			}
			b, _ := json.Marshal(map[string]any{"options": opts})
			return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "commit_artifact_options", Arguments: string(b)}}}
		}
		return h.model.respond(r)
	})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "launch.yaml"), []byte(passesWorkflowYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	h.env["WORKFLOWS_DIR"] = dir
	if profiles != "" {
		h.env["MODEL_PROFILES"] = writeFile(t, "profiles.yaml", profiles)
	}
	return h
}

// secondModel is a second provider: it writes enhancedText for every text asked of it.
func secondModel(t *testing.T) *openaitest.Server {
	t.Helper()
	s := openaitest.NewServer()
	t.Cleanup(s.Close)
	s.Handle(func(r openaitest.Request) openaitest.Response {
		if forced(r) != "commit_artifact_final_text" {
			return openaitest.Response{Text: "?"}
		}
		b, _ := json.Marshal(map[string]any{"text": enhancedText})
		return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "commit_artifact_final_text", Arguments: string(b)}}}
	})
	return s
}

// texts returns every text in the blocks of the messages of thread, one a line.
func (h *wfHarness) texts(thread string) string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "text" {
					out = append(out, s)
				} else {
					walk(x)
				}
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, m := range h.emu.Thread(general, thread) {
		var blocks any
		if json.Unmarshal(m.Blocks, &blocks) == nil {
			walk(blocks)
		}
		out = append(out, m.Text)
	}
	return strings.Join(out, "\n")
}

// TestE2ESelfReviewedOptions: the model is asked to review its options with the
// review sentence and the first options, and people get the revised ones.
func TestE2ESelfReviewedOptions(t *testing.T) {
	h := newPassesHarness(t, "")
	h.start()
	thread := h.startWorkflow(alice, "launch")
	ts := h.latest(thread, "A: Reviewed A", "")
	for _, l := range []string{"B: Reviewed B", "C: Reviewed C"} {
		if h.find(ts, l, "") == nil {
			t.Errorf("no %q button:\n%s", l, h.transcript(thread))
		}
	}
	if h.find(ts, "A: Direction A", "") != nil {
		t.Error("the first options are shown")
	}
	var reviews []string
	for _, r := range h.ai.Requests() {
		if forced(r) == "commit_artifact_options" && strings.Contains(r.LastUserMessage(), reviewSentence) {
			reviews = append(reviews, r.LastUserMessage())
		}
	}
	if len(reviews) != 1 {
		t.Fatalf("%d review requests, want 1", len(reviews))
	}
	for _, want := range []string{"- concrete: Names the product and the date", "A. Direction A: Option A proposed by the model.", "C. Direction C: Option C proposed by the model."} {
		if !strings.Contains(reviews[0], want) {
			t.Errorf("the review request lacks %q:\n%s", want, reviews[0])
		}
	}
	if texts := h.texts(thread); !strings.Contains(texts, "Reviewed against the criteria and revised once") {
		t.Errorf("the options card does not say they were reviewed:\n%s", texts)
	}
}

// toBody picks and approves the plan: the body is written, evaluated and shown for
// review; it returns the body card's ts.
func (h *wfHarness) toBody(thread string) string {
	h.t.Helper()
	h.click(thread, alice, "A", "")
	h.click(thread, alice, "Approve", "")
	return h.latest(thread, "Approve", "1 of 1 criteria met")
}

// TestE2EEnhancedOnItsProfile: the body's enhancement goes to the profile's provider
// with its model, and the body's card shows the enhanced text.
func TestE2EEnhancedOnItsProfile(t *testing.T) {
	second := secondModel(t)
	h := newPassesHarness(t, "enhance:\n  base_url: "+second.URL()+"\n  model: enhance-model\n")
	h.start()
	thread := h.startWorkflow(alice, "launch")
	ts := h.toBody(thread)
	reqs := second.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests to the enhancement profile, want 1:\n%s", len(reqs), h.transcript(thread))
	}
	if reqs[0].Chat.Model != "enhance-model" || !strings.Contains(reqs[0].LastUserMessage(), "Make it vivid and keep every fact.") ||
		!strings.Contains(reqs[0].LastUserMessage(), "Body: the text the model wrote.") {
		t.Errorf("enhancement request: model %q\n%s", reqs[0].Chat.Model, reqs[0].LastUserMessage())
	}
	var card string
	for _, m := range h.emu.Thread(general, thread) {
		if m.TS == ts {
			card = jsonUnescape.Replace(string(m.Blocks))
		}
	}
	if !strings.Contains(card, enhancedText) || strings.Contains(card, "Body: the text the model wrote.") {
		t.Errorf("the body card does not show the enhanced text:\n%s", card)
	}
	if texts := h.texts(thread); !strings.Contains(texts, `Polished in a second pass.`) {
		t.Errorf("no enhanced line:\n%s", texts)
	}
	// The main model evaluated the enhanced text.
	evaluated := false
	for _, r := range h.ai.Requests() {
		if forced(r) == "commit_evaluation" && strings.Contains(r.LastUserMessage(), enhancedText) {
			evaluated = true
		}
	}
	if !evaluated {
		t.Error("the enhanced text was not evaluated")
	}
}

// TestE2EEnhanceSkippedWithoutProfile: without the profile, nothing is asked of any
// other provider, and the thread says the pass was skipped.
func TestE2EEnhanceSkippedWithoutProfile(t *testing.T) {
	second := secondModel(t)
	// Another profile, on the second provider, is defined; "enhance" is not.
	h := newPassesHarness(t, "spare:\n  base_url: "+second.URL()+"\n  model: spare-model\n")
	h.start()
	thread := h.startWorkflow(alice, "launch")
	h.toBody(thread)
	if n := len(second.Requests()); n != 0 {
		t.Errorf("%d requests to the second provider", n)
	}
	texts := h.texts(thread)
	if !strings.Contains(texts, `The final polish did not run this time; the text is as first written.`) {
		t.Errorf("no skipped line:\n%s", texts)
	}
	if !strings.Contains(texts, "Body: the text the model wrote.") {
		t.Errorf("the body is not the written text:\n%s", texts)
	}
}

// TestCheckProfilesIgnoresEnhance: an enhancement profile is not required at
// start-up, unlike model:.
func TestCheckProfilesIgnoresEnhance(t *testing.T) {
	def, err := workflow.Parse("launch.yaml", []byte(passesWorkflowYAML))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkProfiles([]*workflow.Definition{def}, nil); err != nil {
		t.Fatalf("checkProfiles: %v", err)
	}
}
