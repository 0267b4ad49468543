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

// TestSplitBatch_OneItemUnderATitle: a one-item batch (a plan of one section, or a
// batch run again for the one item it did not finish) written under a title heading,
// as the other batches are, still gives the item its section.
func TestSplitBatch_OneItemUnderATitle(t *testing.T) {
	for _, text := range []string{
		"# Research\n\n## delta\nbatch notes on Delta\n",
		"# Research\n\nIntro.\n\n## Delta:\nbatch notes on Delta\n\n# Appendix\nnot Delta's",
		"## Delta\nbatch notes on Delta",
		"### **Delta**\nbatch notes on Delta\n#### Sub\nmore",
	} {
		got := workflow.SplitBatch(text, []string{"Delta"})
		want := "batch notes on Delta"
		if text[0:3] == "###" {
			want += "\n#### Sub\nmore"
		}
		if got[0] != want {
			t.Errorf("SplitBatch(%q) = %v; want item 0 %q", text, got, want)
		}
	}
}

// TestSplitBatch_ListedTitles: the batch prompt lists its items as "Item 1 of 2:
// Market size"; a model that titles its sections as listed ("## Item 1 of 2: Market
// size"), or numbers them ("## 2. Competitor pricing"), still gives each item its
// section (else the whole batch is wasted and every item written again alone).
func TestSplitBatch_ListedTitles(t *testing.T) {
	titles := []string{"Market size", "Competitor pricing", "2024: the year"}
	text := "## Item 1 of 3: Market size\nBig.\n\n## 2. Competitor pricing\nCheap.\n\n## Item 3 of 3: 2024: the year\nBusy."
	got := workflow.SplitBatch(text, titles)
	want := map[int]string{0: "Big.", 1: "Cheap.", 2: "Busy."}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SplitBatch = %v; want %v", got, want)
	}
	if got := workflow.SplitBatch("# Research\n## Item 1 of 1: Market size\nBig.", titles[:1]); got[0] != "Big." {
		t.Errorf("SplitBatch of one listed item = %v", got)
	}
}
