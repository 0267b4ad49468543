package demo

import (
	"strings"
	"testing"
)

// The demo's editor places the keywords a section lacks in its "### " heading, once;
// its revision leaves out wrap-up sentences and keeps the headings.
func TestPlaceKeywordsAndDropWrapUps(t *testing.T) {
	text := "Lead one. Lead two.\n\n### What it looks like in practice\n\nBody about async stand-ups."
	got := placeKeywords(text, []string{"remote team updates", "async stand-ups"})
	if !strings.Contains(got, "### Remote team updates: what it looks like in practice\n") {
		t.Errorf("placeKeywords:\n%s", got)
	}
	if again := placeKeywords(got, []string{"daily stand-up alternatives"}); !strings.Contains(again, "### Remote team updates and daily stand-up alternatives: what it looks like in practice\n") {
		t.Errorf("placeKeywords, a second keyword:\n%s", again)
	}
	if same := placeKeywords(got, []string{"Remote Team Updates"}); same != got {
		t.Errorf("placeKeywords placed a keyword the text has:\n%s", same)
	}
	wrapped := "## One\n\n" + text + " **In conclusion**, it works.\n\nIn summary, keep it.\n\n## Two\n\nTo sum up the facts. Then more."
	out := dropWrapUps(wrapped)
	if strings.Contains(out, "In conclusion") || strings.Contains(out, "In summary") || strings.Contains(out, "To sum up") ||
		!strings.Contains(out, "## One\n\nLead one.") || !strings.Contains(out, "## Two\n\nThen more.") || !strings.Contains(out, "Body about async stand-ups.") {
		t.Errorf("dropWrapUps:\n%s", out)
	}
}
