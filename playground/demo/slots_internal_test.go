package demo

import (
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// TestFillSlots: asked to fill a template slot, the demo editor replaces it and adds
// no note; the Markdown link and the citation marker stay.
func TestFillSlots(t *testing.T) {
	text := "For parents, [product] plans meals; see [docs](https://x) [1]."
	if got, want := fillSlots(text, workflow.Placeholders(text)), "For parents, the product plans meals; see [docs](https://x) [1]."; got != want {
		t.Errorf("fillSlots = %q; want %q", got, want)
	}
}
