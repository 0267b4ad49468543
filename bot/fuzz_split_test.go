package bot_test

import (
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/threadwright/threadwright/bot"
)

// FuzzSplitText checks SplitText's contract: every piece within the limit and not
// empty, each piece's ``` fences balanced when the text's are (fences being lines of
// their own, the only backticks), the pieces together
// holding the text (whitespace at the cuts and the fences added aside), and no more
// pieces than one per half a piece of text.
func FuzzSplitText(f *testing.F) {
	for _, seed := range []struct {
		text  string
		limit int
	}{
		{"hello", 100},
		{strings.Repeat("word ", 500), 50},
		{strings.Repeat("x", 1000), 17},
		{"```\n" + strings.Repeat("code line\n", 100) + "```\nafter", 40},
		{strings.Repeat("ünïcødé ", 300) + strings.Repeat("😀", 200), 30},
		{"a\n\nb\n\n" + strings.Repeat("```", 20) + "\t\r\n" + strings.Repeat("``", 50), 20},
		{strings.Repeat("Sentence one. ", 300), bot.MaxMessageChars},
	} {
		f.Add(seed.text, seed.limit)
	}
	f.Fuzz(func(t *testing.T, text string, limit int) {
		if limit <= 16 || limit > 1<<16 || !utf8.ValidString(text) {
			t.Skip()
		}
		pieces := bot.SplitText(text, limit)
		balanced := strings.Count(text, "```")%2 == 0 && fencesOnly(text)
		for i, p := range pieces {
			if n := utf8.RuneCountInString(p); n > limit || strings.TrimSpace(p) == "" {
				t.Fatalf("piece %d of %d has %d characters (limit %d): %q", i, len(pieces), n, limit, p)
			}
			if balanced && strings.Count(p, "```")%2 != 0 {
				t.Errorf("piece %d has an unbalanced fence: %q", i, p)
			}
		}
		joined := strings.Join(pieces, "")
		if got, want := content(joined), content(text); got != want {
			t.Fatalf("the pieces hold %q, the text %q", got, want)
		}
		if added := strings.Count(joined, "`") - strings.Count(text, "`"); added < 0 || added%6 != 0 {
			t.Errorf("the pieces have %d backticks more than the text; fences come in pairs", added)
		}
		if most := 2*len(text)/(limit-8) + 1; len(pieces) > most {
			t.Errorf("%d pieces of %d bytes at limit %d, want at most %d", len(pieces), len(text), limit, most)
		}
	})
}

// fencesOnly reports whether every backtick of text is in a line of its own that
// opens or closes a code block: ``` and a language name.
func fencesOnly(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "`") && !fenceLine.MatchString(line) {
			return false
		}
	}
	return true
}

var fenceLine = regexp.MustCompile("^```[a-z]*$")

// content returns s without whitespace and backticks.
func content(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '`' {
			return -1
		}
		return r
	}, s)
}

// FuzzDefuseMentions checks that no special mention is left in a text, nor formed
// by the text that follows it (the next chunk of a stream), and that text without <!
// keeps its user mentions.
func FuzzDefuseMentions(f *testing.F) {
	for _, seed := range [][2]string{
		{"<!channel> <!here|here> <!everyone>", "<!subteam^S1|@team>"},
		{"ping <", "!here>"}, {"<<!", "!>>"}, {"<@U0ALICE> and <#C0GENERAL|general>", "<!date^1^{date}|x>"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		out := bot.DefuseMentions(a) + bot.DefuseMentions(b)
		if strings.Contains(out, "<!") {
			t.Fatalf("special mention in %q (from %q and %q)", out, a, b)
		}
		if !strings.Contains(a, "<!") && !strings.HasSuffix(a, "<") && bot.DefuseMentions(a) != a {
			t.Errorf("%q changed to %q", a, bot.DefuseMentions(a))
		}
	})
}
