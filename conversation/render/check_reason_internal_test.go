package render

import (
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

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
		{"en", workflow.CheckResult{Kind: workflow.CheckLead, Count: 2, Problem: workflow.CheckNoOpening, Spots: []workflow.CheckSpot{
			{Problem: workflow.CheckNoOpening}, {Problem: workflow.CheckLeadLength, Section: "Why", Count: 4}}},
			`The text does not start with a "## " heading; "Why": 4 sentences before its first subsection; 2 wanted`},
		{"ru", workflow.CheckResult{Kind: workflow.CheckLead, Count: 2, Problem: workflow.CheckLeadLength, Spots: []workflow.CheckSpot{{Problem: workflow.CheckLeadLength, Section: "Зачем", Count: 1}}},
			`«Зачем»: предложений до первого подраздела: 1; нужно 2`},
		{"en", workflow.CheckResult{Kind: workflow.CheckSubsections, Want: "250–300", Tolerance: 0.1, Min: 225, Max: 330, Problem: workflow.CheckOutOfRange, Spots: []workflow.CheckSpot{
			{Problem: workflow.CheckOutOfRange, Section: "Why", Subsection: "Costs", Count: 1412}, {Problem: workflow.CheckNoSubsections, Section: "How"},
			{Problem: workflow.CheckOutOfRange, Subsection: "Alone", Count: 3}, {Problem: workflow.CheckNoSubsections, Section: "End"}, {Problem: workflow.CheckNoSubsections, Section: "More"}}},
			`"Costs" in "Why": 1,412 words; 250–300 words wanted ± 10% (225–330); "How" has no "### " subsection; "Alone": 3 words; 250–300 words wanted ± 10% (225–330); and 2 more`},
		{"en", workflow.CheckResult{Kind: workflow.CheckSubsections, Pass: true, Min: 225, Max: 330}, "Every subsection has 225–330 words"},
		{"en", workflow.CheckResult{Kind: workflow.CheckBannedOpeners, Problem: workflow.CheckBanned, Spots: []workflow.CheckSpot{
			{Problem: workflow.CheckBanned, Section: "Why", Phrase: "In conclusion"}, {Problem: workflow.CheckBanned, Phrase: "In summary"}}},
			`"Why" has a sentence opening with "In conclusion"; A sentence opens with "In summary"`},
		{"en", workflow.CheckResult{Kind: workflow.CheckBannedOpeners, Pass: true}, ""},
		{"en", workflow.CheckResult{Kind: workflow.CheckKeywords, Want: "Article brief", Count: 5, Problem: workflow.CheckMissing, Missing: []string{"async stand-ups", "remote updates"}},
			`Keywords from "Article brief" not used: "async stand-ups", "remote updates"`},
		{"ru", workflow.CheckResult{Kind: workflow.CheckKeywords, Want: "Бриф", Count: 5, Problem: workflow.CheckMissing, Missing: []string{"закваска"}},
			`Ключевые слова из «Бриф» не использованы: «закваска»`},
		{"en", workflow.CheckResult{Kind: workflow.CheckKeywords, Want: "Article brief", Count: 5, Pass: true}, `All 5 keywords from "Article brief" are used`},
		{"en", workflow.CheckResult{Kind: workflow.CheckKeywords, Want: "Article brief", Problem: workflow.CheckNoKeywords}, `"Article brief" lists no keywords to look for`},
	}
	for _, tt := range tests {
		if got := checkReason(tt.lang, tt.r); got != tt.want {
			t.Errorf("%s %+v: %q; want %q", tt.lang, tt.r, got, tt.want)
		}
	}
}

// A huge target is worded short ("1e+300"), not as its 301 digits, and its bounds
// are whole, not negative.
func TestCheckReasonHugeTarget(t *testing.T) {
	a := &workflow.Artifact{ID: "a", Criteria: []workflow.Criterion{{ID: "w", Check: &workflow.Check{Words: "n"}}}}
	r := workflow.RunChecks(a, "a few words", workflow.CheckEnv{Inputs: map[string]string{"n": "1e300"}})[0]
	got := checkReason("en", r)
	if len(got) > 120 || !strings.Contains(got, "1e+300") || strings.Contains(got, "(-") {
		t.Errorf("reason %q; want a short one with 1e+300 and bounds not negative", got)
	}
}
