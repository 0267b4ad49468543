package render

import (
	"bytes"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// update rewrites the golden files: go test ./conversation/render -run TestGolden -update.
var update = flag.Bool("update", false, "rewrite testdata/golden")

// goldenWorkflow has what the cards show: inputs, critical and other criteria, a
// check, an enhancement pass and a dependency that can go stale.
const goldenWorkflow = `name: brief
title: Product brief
description: A one-page brief, one part at a time.
artifacts:
  - id: problem
    title: Problem
    criteria:
      - {id: who, description: Names who has the problem, critical: true}
      - {id: nosolution, description: Does not describe the solution}
      - {id: evidence, description: Gives evidence}
  - id: pitch
    title: Pitch
    depends_on: [problem]
    enhance: {model: enhance, prompt: Tighten it.}
    criteria:
      - {id: short, description: Is at most 80 words}
`

// goldenCards are every card, notice and modal of the golden set in lang, by name.
func goldenCards(t *testing.T, lang string) map[string]any {
	t.Helper()
	def, err := workflow.Parse("brief.yaml", []byte(goldenWorkflow))
	if err != nil {
		t.Fatal(err)
	}
	c := Cards{Lang: lang, Def: def, Format: func(s string) string { return s }, Key: conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.0"}}
	problem, _ := def.Artifact("problem")
	pitch, _ := def.Artifact("pitch")
	ws := &workflow.State{Name: "brief", StartedBy: "U1", Locale: lang, Status: workflow.RunRunning,
		Inputs: map[string]string{"topic": "meal kits for students"}, TopicFrom: "U2", Artifacts: map[string]*workflow.ArtifactState{}}
	options := &workflow.ArtifactState{Status: workflow.StatusOptionsGenerated, Rev: 1, Reviewed: true, Options: []workflow.Option{
		{Label: "A", Title: "Late dinners", Text: "Students cook late and alone."}, {Label: "B", Title: "Tight budgets", Text: "Groceries eat the budget."}}}
	failing := &workflow.ArtifactState{Status: workflow.StatusGenerated, Rev: 2, Text: "Students skip dinner.", Eval: []workflow.CriterionResult{
		{ID: "who", Pass: true}, {ID: "nosolution", Pass: false, Reason: "The last paragraph pitches a meal kit; take it out."}, {ID: "evidence", Pass: true}}}
	revised := &workflow.ArtifactState{Status: workflow.StatusGenerated, Rev: 3, Text: "Students skip dinner.", Note: "_Revised as asked: named the students._",
		PriorEval: []workflow.CriterionResult{{ID: "who", Pass: false, Reason: "Nobody is named."}, {ID: "nosolution", Pass: true}, {ID: "evidence", Pass: true}},
		Eval:      []workflow.CriterionResult{{ID: "who", Pass: true}, {ID: "nosolution", Pass: true}, {ID: "evidence", Pass: true}}}
	claimed := &workflow.ArtifactState{Status: workflow.StatusGenerated, Rev: 4, Text: "Students skip dinner.", Note: "_Revised as asked: mention commuting parents._",
		Eval: []workflow.CriterionResult{{ID: "who", Pass: true}, {ID: "nosolution", Pass: true}, {ID: "evidence", Pass: true}}}
	enhanced := &workflow.ArtifactState{Status: workflow.StatusGenerated, Rev: 1, Text: "Dinner in ten minutes.", Enhancement: workflow.EnhanceSkipped,
		Eval: []workflow.CriterionResult{{ID: "short", Pass: true}}}
	ws.Artifacts["problem"], ws.Artifacts["pitch"] = revised, enhanced
	stale := &workflow.StaleList{Changed: "problem", Rows: []workflow.StaleRow{{Artifact: "pitch"}}}
	now := time.Date(2026, 12, 1, 22, 47, 0, 0, time.UTC)
	held := ws.Clone()
	held.TopicHeld = true
	piped := ws.Clone()
	piped.Pipeline = &workflow.PipelineState{ID: "p1", StartedAt: now.Add(-90 * time.Second), Artifacts: []string{"pitch"}}
	inputs := []workflow.Input{{ID: "topic", Label: "What is it about?", Required: true, Type: workflow.InputText}}
	return map[string]any{
		"started":         c.Started(ws),
		"started_held":    c.Started(held),
		"status_held":     c.Status(held, workflow.Machine{Def: def}.Waiting(held)),
		"options":         c.Live(problem, options),
		"review_failing":  c.Live(problem, failing),
		"review_revised":  c.Live(problem, revised),
		"review_enhanced": c.Live(pitch, enhanced),
		"review_claimed":  c.Live(problem, claimed),
		"approved":        c.Closed(problem, revised, "✓ "+Tr(lang, "approved_by", "U1")),
		"menu":            c.MenuCard(problem, revised),
		"meaning":         c.Meaning(problem, revised, "shorter?"),
		"ask_inputs":      c.AskInputs(inputs),
		"inputs_modal":    InputsModal(def, lang, inputs),
		"stale":           c.Stale(stale, ws),
		"status":          c.Status(ws, workflow.Machine{Def: def}.Waiting(ws)),
		"progress":        c.Progress(piped, now),
		"failed":          c.Failed(Tr(lang, "failed.model")+" "+Tr(lang, "retry.step"), "in1"),
		"which":           Which(lang, []Run{{Key: c.Key, Def: def, State: ws, Waiting: workflow.Machine{Def: def}.Waiting(ws), Link: "https://t.slack.com/archives/C1/p1"}}, "export", "export"),
		"command_usage":   CommandUsage(lang),
		"notices": []string{Tr(lang, "not_allowed", Tr(lang, "the_starter", "U1")), Tr(lang, "none_running"), Tr(lang, "reply_unclear"),
			Tr(lang, "flood.rate", WaitWords(lang, 30*time.Second)), Tr(lang, "pipeline.auto"), Tr(lang, "pass.enhance_skipped"),
			OutOfScopeReply(lang, []conversation.Entity{{ID: "e1", Title: "the weather", Reason: "not about briefs"}})},
	}
}

// TestGolden compares every card, notice and modal, in English and Russian, with its
// golden file in testdata/golden, so that a change of wording is a reviewed diff;
// -update rewrites them.
func TestGolden(t *testing.T) {
	for _, lang := range []string{"en", "ru"} {
		all := goldenCards(t, lang)
		maps.Copy(all, goldenAssistantCards(lang))
		maps.Copy(all, goldenPipelineCards(t, lang))
		for name, v := range all {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false) // "<@U1>" as Slack gets it
			enc.SetIndent("", "  ")
			if err := enc.Encode(v); err != nil {
				t.Fatal(err)
			}
			got := buf.Bytes()
			path := filepath.Join("testdata", "golden", name+"."+lang+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./conversation/render -run TestGolden -update writes it)", err)
			}
			if string(got) != string(want) {
				t.Errorf("%s differs from %s (review, then -update):\n%s", name+"."+lang, path, firstDiff(string(want), string(got)))
			}
		}
	}
}

// firstDiff shows the first line where want and got differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n- " + wl + "\n+ " + gl
		}
	}
	return ""
}
