package workflow_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// verdictDef is a workflow whose artifact "a" has one critical criterion and four
// others; "strict" needs every non-critical criterion (pass_share: 1).
const verdictDef = `name: v
title: V
pass_share: 0.75
artifacts:
	- id: a
		title: A
		criteria:
			- {id: key, description: The key one, critical: true}
			- {id: c1, description: One}
			- {id: c2, description: Two}
			- {id: c3, description: Three}
			- {id: c4, description: Four}
	- id: strict
		title: Strict
		pass_share: 1
		criteria:
			- {id: c1, description: One}
			- {id: c2, description: Two}
`

// results builds an evaluation: the ids listed in fail fail, the others pass.
func results(ids []string, fail ...string) []workflow.CriterionResult {
	var out []workflow.CriterionResult
	for _, id := range ids {
		out = append(out, workflow.CriterionResult{ID: id, Pass: !slices.Contains(fail, id), Reason: "because"})
	}
	return out
}

func TestJudge(t *testing.T) {
	d, err := workflow.Parse("v.yaml", []byte(yaml(verdictDef)))
	if err != nil {
		t.Fatal(err)
	}
	all := []string{"key", "c1", "c2", "c3", "c4"}
	tests := []struct {
		name         string
		artifact     string
		eval         []workflow.CriterionResult
		pass         bool
		met          int
		criticalFail []string
	}{
		{"AllPass", "a", results(all), true, 5, nil},
		{"ShareMetExactly", "a", results(all, "c4"), true, 4, nil},             // 3 of 4 = 0.75
		{"ShareMissed", "a", results(all, "c3", "c4"), false, 3, nil},          // 2 of 4 < 0.75
		{"CriticalFails", "a", results(all, "key"), false, 4, []string{"key"}}, // the others all pass
		{"Empty", "a", nil, true, 0, nil},
		{"OnlyCritical", "a", results([]string{"key"}), true, 1, nil},
		// A check the artifact does not declare (no_placeholders) counts as a
		// non-critical criterion: 3 of 5 others < 0.75.
		{"UndeclaredCounts", "a", append(results(all, "c4"), workflow.CriterionResult{ID: "no_placeholders"}), false, 4, nil},
		{"ArtifactShareWins", "strict", results([]string{"c1", "c2"}, "c2"), false, 1, nil},
		{"ArtifactShareAllPass", "strict", results([]string{"c1", "c2"}), true, 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _ := d.Artifact(tt.artifact)
			v := d.Judge(a, tt.eval)
			if v.Pass != tt.pass || v.Met != tt.met || v.Total != len(tt.eval) || !slices.Equal(v.CriticalFailed, tt.criticalFail) {
				t.Errorf("Judge = %+v; want pass %v, %d of %d met, critical failed %v", v, tt.pass, tt.met, len(tt.eval), tt.criticalFail)
			}
			if len(v.Failed) != len(tt.eval)-tt.met {
				t.Errorf("Failed = %v; want the %d failing results", v.Failed, len(tt.eval)-tt.met)
			}
		})
	}
}

func TestPassShareOf(t *testing.T) {
	half, one := 0.5, 1.0
	d := &workflow.Definition{}
	a := &workflow.Artifact{}
	if got := d.PassShareOf(a); got != workflow.DefaultPassShare {
		t.Errorf("default = %v, want %v", got, workflow.DefaultPassShare)
	}
	d.PassShare = &half
	if got := d.PassShareOf(a); got != half {
		t.Errorf("workflow's = %v, want %v", got, half)
	}
	a.PassShare = &one
	if got := d.PassShareOf(a); got != one {
		t.Errorf("artifact's = %v, want %v", got, one)
	}
}

func TestParse_VerdictProblems(t *testing.T) {
	src := yaml(`name: v
title: V
pass_share: 0
artifacts:
	- id: a
		title: A
		pass_share: lots
		criteria:
			- {id: k, description: K, critical: maybe}
	- id: b
		title: B
		pass_share: 1.5
`)
	got := strings.Join(problems(t, src), "\n")
	for _, want := range []string{
		`test.yaml:3: pass_share must be more than 0 and at most 1 (the share of non-critical criteria that must pass), got 0`,
		`test.yaml:7: artifact "a": pass_share: want a number between 0 and 1, like 0.75, got "lots"`,
		`test.yaml:9: artifact "a": criterion "k": critical: want true or false, got "maybe"`,
		`test.yaml:12: artifact "b": pass_share must be more than 0 and at most 1 (the share of non-critical criteria that must pass), got 1.5`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
}
