package demo

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/threadwright/threadwright/internal/textcut"
)

// Words and sentences: the small text operations the demo writes its answers
// with (a sentence, the first sentences, a shorter text, a cut), and the two
// languages of its chat replies.

func wantsShorter(instr string) bool {
	return containsAny(strings.ToLower(instr), []string{
		"short", "brief", "concise", "trim", "tighter", "fewer words", "less text", "condense",
		"короче", "сократ", "кратк", "покороче", "меньше текста",
	})
}

func wantsLonger(instr string) bool {
	return containsAny(strings.ToLower(instr), []string{
		"longer", "more detail", "expand", "elaborate", "detailed", "flesh out",
		"подробн", "длиннее", "расширь", "дополни",
	})
}

// shorten returns about half of text: its first blocks (paragraphs, lists, tables
// kept whole) that fit, or the first sentences of its first paragraph.
func shorten(text string) string {
	text = strings.TrimSpace(text)
	total := utf8.RuneCountInString(text)
	target := total / 2
	blocks := strings.Split(text, "\n\n")
	out := []string{}
	n := 0
	for _, b := range blocks {
		size := utf8.RuneCountInString(b)
		if len(out) > 0 && n+size > target {
			break
		}
		out = append(out, b)
		n += size + 2
	}
	s := strings.Join(out, "\n\n")
	if utf8.RuneCountInString(s) <= target+target/4 {
		return s
	}
	// The first block alone is too long: keep its first lines or sentences.
	first := out[0]
	if strings.Contains(first, "\n") && !strings.Contains(first, "|") {
		lines := strings.Split(first, "\n")
		keep := []string{lines[0]}
		n = utf8.RuneCountInString(lines[0])
		for _, l := range lines[1:] {
			if n+utf8.RuneCountInString(l) > target {
				break
			}
			keep = append(keep, l)
			n += utf8.RuneCountInString(l) + 1
		}
		if len(keep) < len(lines) {
			return strings.Join(keep, "\n")
		}
	}
	for k := 3; k >= 1; k-- {
		if s := firstSentences(first, k); utf8.RuneCountInString(s) <= target || k == 1 {
			if utf8.RuneCountInString(s) < total {
				return s
			}
		}
	}
	return textcut.Ellipsis(first, max(target, 20), unicode.IsSpace)
}

var sentenceEndRe = regexp.MustCompile(`[.!?…](\*\*|_|["”»)])*\s`)

// firstSentences returns the first n sentences of s.
func firstSentences(s string, n int) string {
	s = strings.TrimSpace(s)
	rest, end := s, 0
	for i := 0; i < n; i++ {
		loc := sentenceEndRe.FindStringIndex(rest)
		if loc == nil {
			return s
		}
		end += loc[1]
		rest = rest[loc[1]:]
	}
	return strings.TrimSpace(s[:end])
}

// splitSentences splits a paragraph into its sentences.
func splitSentences(p string) []string {
	var out []string
	rest := strings.TrimSpace(p)
	for rest != "" {
		loc := sentenceEndRe.FindStringIndex(rest)
		if loc == nil {
			out = append(out, rest)
			break
		}
		out = append(out, strings.TrimSpace(rest[:loc[1]]))
		rest = strings.TrimSpace(rest[loc[1]:])
	}
	return out
}

// firstWords returns the whole sentences of s that fit in n words (at least one).
func firstWords(s string, n int) string {
	var keep []string
	words := 0
	for _, sen := range splitSentences(s) {
		w := wordCount(sen)
		if len(keep) > 0 && words+w > n {
			break
		}
		keep = append(keep, sen)
		words += w
	}
	return strings.Join(keep, " ")
}

// sentence returns s as one line ending with a full stop, or "".
func sentence(s string) string {
	s = oneLine(s)
	if s == "" {
		return ""
	}
	if !strings.ContainsAny(s[len(s)-1:], ".!?") {
		s += "."
	}
	return s
}

// upperFirst returns s with its first letter in upper case.
func upperFirst(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}

// lowerFirst lowers the first letter of s, unless its first word is a name or an
// abbreviation.
func lowerFirst(s string) string {
	word, _, _ := strings.Cut(s, " ")
	if properNouns[strings.TrimRight(word, ",:;")] {
		return s
	}
	r, size := utf8.DecodeRuneInString(s)
	if next, _ := utf8.DecodeRuneInString(s[size:]); unicode.IsUpper(next) {
		return s // "API", "UK"
	}
	return string(unicode.ToLower(r)) + s[size:]
}

// properNouns keep their capital where a sentence is joined to another.
var properNouns = map[string]bool{"Slack": true, "Slack's": true, "Fernhill": true, "Lisbon": true, "Berlin": true, "Toronto": true, "I": true}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// trimEnd removes closing punctuation.
func trimEnd(s string) string { return strings.TrimRight(strings.TrimSpace(s), ".!?…;:, ") }

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

func wordCount(s string) int { return len(strings.Fields(s)) }

// tokens splits s into words of letters and digits.
func tokens(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// replaceFold replaces every case-insensitive occurrence of the word old in s.
func replaceFold(s, old, repl string) string {
	expr := `(?i)\b` + regexp.QuoteMeta(old) + `\b`
	if strings.IndexFunc(old, func(r rune) bool { return r >= utf8.RuneSelf }) >= 0 {
		expr = `(?i)` + regexp.QuoteMeta(old) // \b knows only ASCII letters
	}
	return regexp.MustCompile(expr).ReplaceAllString(s, repl)
}

func containsAny(s string, subs []string) bool {
	for _, w := range subs {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func containsWord(list []string, w string) bool {
	for _, x := range list {
		if x == w {
			return true
		}
	}
	return false
}

func slicesContainsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// isRussian reports whether s is written mostly in Cyrillic letters.
func isRussian(s string) bool {
	cyr, lat := 0, 0
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Cyrillic, r):
			cyr++
		case unicode.IsLetter(r) && r < 0x250:
			lat++
		}
	}
	return cyr > 0 && cyr >= lat
}

func pick2(ru bool, en, rus string) string {
	if ru {
		return rus
	}
	return en
}
