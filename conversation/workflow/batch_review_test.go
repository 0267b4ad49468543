package workflow_test

import (
	"reflect"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// TestSplitBatch_RepeatedTitles: two items with the same title each get their own
// section, in order, not both the first one.
func TestSplitBatch_RepeatedTitles(t *testing.T) {
	text := "## Examples\nFirst examples.\n\n## Intro\nThe intro.\n\n## Examples\nSecond examples.\n"
	got := workflow.SplitBatch(text, []string{"Examples", "Intro", "Examples"})
	want := map[int]string{0: "First examples.", 1: "The intro.", 2: "Second examples."}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SplitBatch = %v; want %v", got, want)
	}
	// A title asked twice but written once: the second item is missing (written alone).
	got = workflow.SplitBatch("## Examples\nOnly once.\n\n## Intro\nThe intro.\n", []string{"Examples", "Intro", "Examples"})
	want = map[int]string{0: "Only once.", 1: "The intro."}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SplitBatch = %v; want %v", got, want)
	}
}
