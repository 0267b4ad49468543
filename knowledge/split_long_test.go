package knowledge

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestSplitTextLongWordIsLinear: a document that is one long word (no space, no
// sentence end), as an upload of the HTTP API may be, is cut in time linear in its
// size: 8 MB takes well under a second (it took minutes when each cut counted the
// rest of the word again).
func TestSplitTextLongWordIsLinear(t *testing.T) {
	word := strings.Repeat("x", 8<<20)
	start := time.Now()
	chunks := SplitText(word)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("SplitText of an 8 MB word took %v", d)
	}
	total := 0
	for _, c := range chunks {
		if n := utf8.RuneCountInString(c.Text); n > MaxChunkChars {
			t.Fatalf("a chunk of %d characters", n)
		}
		total += len(c.Text)
	}
	if total != len(word) {
		t.Errorf("the chunks hold %d bytes; want %d", total, len(word))
	}
}
