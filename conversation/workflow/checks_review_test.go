package workflow_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// A field line whose label the model wrote in emphasis, the colon inside or outside
// it, passes a line check; a different label, or the label without its colon, does
// not, and a label with nothing after it is empty.
func TestRunChecksLineEmphasisAroundLabel(t *testing.T) {
	a := checksArtifact(t)
	in := map[string]string{"wordcount": "100"}
	for _, tt := range []struct {
		line string
		want workflow.CheckProblem
	}{
		{"**Meta keywords**: a, b", ""},
		{"**Meta Keywords:** a, b", ""},
		{"_Meta keywords_: a, b", ""},
		{"*Meta keywords*: a, b", ""},
		{"**Meta keywords**:", workflow.CheckEmpty},
		{"**Meta keywords**: **", workflow.CheckEmpty},
		{"**Meta keywords** a, b", workflow.CheckMissing},
		{"Meta_keywords: a, b", workflow.CheckMissing},
		{"Meta keywords - a, b", workflow.CheckMissing},
	} {
		text := strings.Replace(article(100), "Meta keywords: a, b", tt.line, 1)
		for _, r := range workflow.RunChecks(a, text, workflow.CheckEnv{Inputs: in}) {
			if r.ID == "keywords" && (r.Problem != tt.want || r.Pass != (tt.want == "")) {
				t.Errorf("%q: problem %q pass %v; want %q", tt.line, r.Problem, r.Pass, tt.want)
			}
		}
	}
}

// A target too large for any text still gives bounds that hold it: whole, not
// negative, Min ≤ Max; the count is out of range.
func TestRunChecksWordsHugeTarget(t *testing.T) {
	a := checksArtifact(t)
	for _, v := range []string{"1e19", "1e300", "9223372036854775807"} {
		got := workflow.RunChecks(a, article(100), workflow.CheckEnv{Inputs: map[string]string{"wordcount": v}})
		r := got[len(got)-1]
		if r.Problem != workflow.CheckOutOfRange || r.Min < 0 || r.Max < r.Min {
			t.Errorf("wordcount %s: %+v; want out of range with 0 ≤ Min ≤ Max", v, r)
		}
	}
}

// Counting the words of a large text (2 MiB of one-letter words, one line, no
// heading) allocates little beyond the text's line index: not a string per word.
func TestRunChecksWordsLargeTextMemory(t *testing.T) {
	a := checksArtifact(t)
	text := strings.Repeat("a ", 1<<20)
	in := map[string]string{"wordcount": "100"}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := workflow.RunChecks(a, text, workflow.CheckEnv{Inputs: in})
	runtime.ReadMemStats(&after)
	if got := r[len(r)-1].Count; got != 1<<20 {
		t.Fatalf("count %d; want %d", got, 1<<20)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("RunChecks allocated %d bytes for a %d-byte text; want under 1 MiB", alloc, len(text))
	}
}
