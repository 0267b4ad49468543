package bot_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/threadwright/threadwright/bot"
)

func TestSplitText(t *testing.T) {
	t.Run("Short", func(t *testing.T) {
		got := bot.SplitText("  hello  ", 100)
		if len(got) != 1 || got[0] != "hello" {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("Empty", func(t *testing.T) {
		if got := bot.SplitText(" \n ", 100); len(got) != 0 {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("ParagraphBoundary", func(t *testing.T) {
		text := strings.Repeat("a", 60) + "\n\n" + strings.Repeat("b", 60)
		got := bot.SplitText(text, 100)
		if len(got) != 2 || got[0] != strings.Repeat("a", 60) || got[1] != strings.Repeat("b", 60) {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("FiftyThousandCharsKeepsEverything", func(t *testing.T) {
		text := strings.TrimSpace(strings.Repeat("wörd ", 10000)) // 50,000 characters
		pieces := bot.SplitText(text, bot.MaxMessageChars)
		for i, p := range pieces {
			if n := utf8.RuneCountInString(p); n > bot.MaxMessageChars {
				t.Fatalf("piece %d has %d characters", i, n)
			}
		}
		if joined := strings.Join(pieces, " "); joined != text {
			t.Fatalf("joined pieces differ from the text (%d vs %d bytes)", len(joined), len(text))
		}
	})
	t.Run("NoSpaces", func(t *testing.T) {
		text := strings.Repeat("x", 250)
		pieces := bot.SplitText(text, 100)
		if strings.Join(pieces, "") != text || len(pieces) != 3 {
			t.Fatalf("got %d pieces", len(pieces))
		}
	})
	t.Run("CodeFenceClosedAndReopened", func(t *testing.T) {
		code := "```\n" + strings.Repeat("line of code\n", 20) + "```"
		pieces := bot.SplitText(code, 120)
		if len(pieces) < 2 {
			t.Fatalf("want several pieces, got %d", len(pieces))
		}
		for i, p := range pieces {
			if strings.Count(p, "```")%2 != 0 {
				t.Errorf("piece %d has an unbalanced fence: %q", i, p)
			}
			if utf8.RuneCountInString(p) > 120 {
				t.Errorf("piece %d too long", i)
			}
		}
	})
}

func BenchmarkSplitText(b *testing.B) {
	text := strings.Repeat("A sentence of moderate length. ", 1700) // ~50,000 characters
	b.ReportAllocs()
	for b.Loop() {
		bot.SplitText(text, bot.MaxMessageChars)
	}
}
