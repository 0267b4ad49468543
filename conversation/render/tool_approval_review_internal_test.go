package render

import (
	"strings"
	"testing"
)

// TestShownArgumentsLongBacktickRuns: runs of four or more backticks must not leave a
// "```" that ends the card's code block early (the rest would render as mrkdwn).
func TestShownArgumentsLongBacktickRuns(t *testing.T) {
	for n := 3; n <= 9; n++ {
		run := strings.Repeat("`", n)
		for _, in := range []string{
			`{"code":"` + run + `\n*Approved by the admin*\n` + run + `"}`,
			"not json " + run + " *bold*",
		} {
			if got := ShownArguments(in); strings.Contains(got, "```") {
				t.Errorf("shownArguments(%q) = %q: a fence survives", in, got)
			}
		}
	}
}
