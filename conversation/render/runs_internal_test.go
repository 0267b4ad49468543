package render

import (
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// TestRunLine checks a run's line in both languages: title linked, subject, the step
// and who it waits for, with several people joined by the language's "or".
func TestRunLine(t *testing.T) {
	def, err := workflow.Parse("t.yaml", []byte("name: t\ntitle: Launch plan\ndescription: d\ninputs: [{id: topic, label: Topic}]\nartifacts:\n  - id: pitch\n    title: Pitch\n"))
	if err != nil {
		t.Fatal(err)
	}
	ws := &workflow.State{Status: workflow.RunRunning, Inputs: map[string]string{"topic": "meal kits"}}
	w := workflow.Waiting{Artifact: "pitch", Status: workflow.StatusGenerated, Action: workflow.PermApprove, People: []string{"U1", "U2", "U3"}}
	r := Run{Def: def, State: ws, Waiting: w, Link: "https://x.slack.com/archives/C1/p1"}
	for lang, want := range map[string]string{
		"en": "• <https://x.slack.com/archives/C1/p1|*Launch plan*> — meal kits · *Pitch*: awaiting review by <@U1>, <@U2> or <@U3>",
		"ru": "• <https://x.slack.com/archives/C1/p1|*Launch plan*> — meal kits · *Pitch*: ждёт проверки: <@U1>, <@U2> или <@U3>",
	} {
		if got := RunLine(lang, r); got != want {
			t.Errorf("%s:\n got %s\nwant %s", lang, got, want)
		}
	}
	r.Link, r.Waiting = "", workflow.Waiting{Artifact: "pitch", Status: workflow.StatusStale, Action: workflow.PermKeep, People: []string{"U1"}}
	if got, want := RunLine("en", r), "• *Launch plan* — meal kits · *Pitch*: out of date: <@U1> can keep or regenerate it"; got != want {
		t.Errorf("without a link:\n got %s\nwant %s", got, want)
	}
	if got := r.Label(); got != "Launch plan — meal kits" {
		t.Errorf("label %q", got)
	}
}
