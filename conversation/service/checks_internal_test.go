package service

import (
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// The checks' and the model's results come out in criteria order, whatever order
// the model answered in; a result for an undeclared id follows.
func TestMergeResults(t *testing.T) {
	a := &workflow.Artifact{ID: "a", Criteria: []workflow.Criterion{
		{ID: "m1"}, {ID: "c1", Check: &workflow.Check{Line: "X:"}}, {ID: "m2"}, {ID: "c2", Check: &workflow.Check{Heading: "Y"}},
	}}
	checks := []workflow.CriterionResult{{ID: "c1", Pass: true}, {ID: "c2", Pass: false}}
	model := []workflow.CriterionResult{{ID: "extra"}, {ID: "m2", Pass: true}, {ID: "m1", Pass: true}}
	var ids []string
	for _, r := range mergeResults(a, checks, model) {
		ids = append(ids, r.ID)
	}
	if got := ids; len(got) != 5 || got[0] != "m1" || got[1] != "c1" || got[2] != "m2" || got[3] != "c2" || got[4] != "extra" {
		t.Fatalf("merged %v; want m1 c1 m2 c2 extra", got)
	}
}

func TestCheckReason(t *testing.T) {
	words := workflow.CheckResult{Kind: workflow.CheckWords, Want: "wordcount", Count: 1180, Value: "1500", Target: 1500, Tolerance: 0.15, Min: 1275, Max: 1725, Problem: workflow.CheckOutOfRange}
	tests := []struct {
		lang string
		r    workflow.CheckResult
		want string
	}{
		{"en", words, "1,180 words; the target is 1,500 ± 15% (1,275–1,725)"},
		{"ru", words, "слов: 1\u00a0180; цель — 1\u00a0500 ± 15% (1\u00a0275–1\u00a0725)"},
		{"en", workflow.CheckResult{Kind: workflow.CheckWords, Want: "wordcount", Count: 12, Problem: workflow.CheckNoTarget}, `12 words; no target: the input "wordcount" is empty`},
		{"en", workflow.CheckResult{Kind: workflow.CheckWords, Want: "wordcount", Count: 12, Value: "lots", Problem: workflow.CheckNoTarget}, `12 words; no target: the input "wordcount" is not a number above 0 ("lots")`},
		{"en", workflow.CheckResult{Kind: workflow.CheckLine, Want: "Meta keywords:", Problem: workflow.CheckMissing}, `No "Meta keywords:" line`},
		{"ru", workflow.CheckResult{Kind: workflow.CheckLine, Want: "Meta keywords:", Problem: workflow.CheckEmpty}, `В строке «Meta keywords:» ничего нет после начала`},
		{"en", workflow.CheckResult{Kind: workflow.CheckHeading, Want: "TL;DR", Problem: workflow.CheckMissing}, `No "TL;DR" heading`},
		{"en", workflow.CheckResult{Kind: workflow.CheckHeading, Want: "TL;DR", Pass: true}, ""},
		{"en", workflow.CheckResult{Kind: workflow.CheckWords, Count: 1234567, Target: 2.5, Tolerance: 0.125, Min: 3, Max: 2}, "1,234,567 words; the target is 2.5 ± 12.5% (3–2)"},
	}
	for _, tt := range tests {
		if got := checkReason(tt.lang, tt.r); got != tt.want {
			t.Errorf("%s %+v: %q; want %q", tt.lang, tt.r, got, tt.want)
		}
	}
}
