package demo

import (
	"slices"
	"testing"
)

// TestParseBrief reads a brief in blog.yaml's shape: its keywords, and the key
// message and words of each section, whose heading is compared loosely.
func TestParseBrief(t *testing.T) {
	b := parseBrief("## Reader\nTeam leads.\n\n## Angle\nIt works.\n\n## Key messages\n- **Why it matters**: Time is short.\n- **How to start**: Small steps.\n\n" +
		"## Tone\nFriendly.\n\n## Keywords\nasync, stand-ups, small teams, remote work\n\n## Words per section\n- **Why it matters**: about 320 words\n- **How to start**: about 1,050 words\n- **Conclusion**: about 120 words")
	if want := []string{"async", "stand-ups", "small teams", "remote work"}; !slices.Equal(b.keywords, want) {
		t.Errorf("keywords %q, want %q", b.keywords, want)
	}
	if b.message("why it matters") != "Time is short." || b.message("How to start") != "Small steps." {
		t.Errorf("messages %q", b.messages)
	}
	if b.words[titleKey("Why it matters")] != 320 || b.words[titleKey("How to start")] != 1050 {
		t.Errorf("words %v", b.words)
	}
}
