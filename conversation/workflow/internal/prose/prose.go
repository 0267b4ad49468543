// Package prose reads plain prose for the workflow's deterministic checks
// (conversation/workflow, RunChecks; docs/workflows.md, "Verdicts"): its sentences,
// the phrase a sentence opens with, the entries of a keyword list, and whether a
// keyword occurs in a text. It knows no Markdown beyond emphasis marks and list
// markers; the caller gives it paragraphs.
package prose

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// abbreviations end with a period that does not end a sentence (lower case, without
// the period).
var abbreviations = map[string]bool{
	"e.g": true, "i.e": true, "etc": true, "vs": true, "cf": true, "approx": true,
	"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "st": true, "no": true,
	"fig": true, "т.е": true, "т.д": true, "т.п": true, "др": true, "см": true, "г": true,
}

// possessiveRe matches an English possessive "'s" after a letter or digit.
var possessiveRe = regexp.MustCompile(`([\p{L}\d])['’]s\b`)

// keywordLabels start a heading or line that lists keywords (lower case).
var keywordLabels = []string{"keywords", "key words", "ключевые слова"}

// KeywordsLabel reads s, a heading's title or a line, that starts with a keywords
// label ("Keywords", "Key words", "Ключевые слова", in any case, after emphasis
// marks), then maybe a parenthetical ("Keywords (4–8)"): rest is what follows, with
// emphasis marks and white space trimmed from its left. ok is false when s starts
// otherwise, or the label runs on into a word ("Keywordsmith").
func KeywordsLabel(s string) (rest string, ok bool) {
	s = strings.TrimLeft(s, " \t*_")
	for _, label := range keywordLabels {
		if len(s) < len(label) || !strings.EqualFold(s[:len(label)], label) {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(s[len(label):]); unicode.IsLetter(r) || unicode.IsDigit(r) {
			return "", false
		}
		rest = strings.TrimLeft(s[len(label):], " \t*_")
		if strings.HasPrefix(rest, "(") {
			if i := strings.IndexByte(rest, ')'); i >= 0 {
				rest = strings.TrimLeft(rest[i+1:], " \t*_")
			}
		}
		return rest, true
	}
	return "", false
}

// Sentences splits paragraph into its sentences, trimmed, in order. A sentence ends
// at ".", "!", "?" or "…" (a run of them, then closing quotes or brackets) followed
// by white space or the end; a period after an abbreviation ("e.g.", "Dr.", "U.S.";
// see abbreviated) ends none, while one after a number, "%" or a link does. A last piece
// without a letter ("[3]", a citation after the period) joins the sentence before
// it; text with no letter has no sentence.
func Sentences(paragraph string) []string {
	var out []string
	start := 0
	for i := 0; i < len(paragraph); {
		r, size := utf8.DecodeRuneInString(paragraph[i:])
		if !isTerminal(r) {
			i += size
			continue
		}
		end := i + size
		for end < len(paragraph) {
			r2, s2 := utf8.DecodeRuneInString(paragraph[end:])
			if !isTerminal(r2) && !strings.ContainsRune(`"'”’»)]*_`, r2) {
				break
			}
			end += s2
		}
		next, _ := utf8.DecodeRuneInString(paragraph[end:])
		if end < len(paragraph) && !unicode.IsSpace(next) || r == '.' && abbreviated(paragraph[start:i]) {
			i = end
			continue
		}
		out = appendSentence(out, paragraph[start:end])
		start, i = end, end
	}
	return appendSentence(out, paragraph[start:])
}

// isTerminal reports whether r ends a sentence.
func isTerminal(r rune) bool { return r == '.' || r == '!' || r == '?' || r == '…' }

// abbreviated reports whether the period after before ends an abbreviation: its last
// word is a known one, or is made of periods and runs of one or two letters ("U.S",
// "Ph.D", "т.е"). A word that ends in a digit ("1.18"), "%" or a link's ")", or has a
// longer part ("go.dev"), is no abbreviation: its period ends the sentence.
func abbreviated(before string) bool {
	word := before[strings.LastIndexFunc(before, unicode.IsSpace)+1:]
	word = strings.TrimLeft(word, `"'“‘«([`)
	if word == "" {
		return false
	}
	low := strings.ToLower(word)
	if abbreviations[low] {
		return true
	}
	if !strings.Contains(word, ".") {
		return false
	}
	for _, part := range strings.Split(word, ".") {
		if n := utf8.RuneCountInString(part); n == 0 || n > 2 || strings.IndexFunc(part, func(r rune) bool { return !unicode.IsLetter(r) }) >= 0 {
			return false
		}
	}
	return true
}

// appendSentence appends s, trimmed, to out; without a letter, it joins the last one.
func appendSentence(out []string, s string) []string {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return out
	case strings.IndexFunc(s, unicode.IsLetter) < 0:
		if len(out) > 0 {
			out[len(out)-1] += " " + s
		}
		return out
	}
	return append(out, s)
}

// Opener returns the entry of phrases that sentence opens with (ignoring case,
// leading emphasis marks, quotes and brackets), followed by the end or a character
// that is no letter or digit ("In conclusion," but not "In conclusions"); ok is false
// when none does.
func Opener(sentence string, phrases []string) (phrase string, ok bool) {
	s := strings.TrimLeft(sentence, " \t*_\"'“‘«([>")
	for _, p := range phrases {
		p = strings.TrimSpace(p)
		if p == "" || len(s) < len(p) || !strings.EqualFold(s[:len(p)], p) {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(s[len(p):]); len(s) == len(p) || !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return p, true
		}
	}
	return "", false
}

// List reads the entries of a keyword list: s split at commas, semicolons and line
// breaks, each entry without a list marker ("-", "*", "1."), emphasis, quotes or a
// final period; empty entries are dropped, and a repeated one (ignoring case) is kept
// once.
func List(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' || r == '\n' || r == '\r' }) {
		e = strings.TrimSpace(e)
		e = strings.TrimLeft(e, "-*+• \t")
		if i := strings.IndexFunc(e, func(r rune) bool { return r < '0' || r > '9' }); i > 0 && (e[i] == '.' || e[i] == ')') {
			e = e[i+1:]
		}
		e = strings.Trim(e, " \t*_`\"'“”‘’«».")
		if e == "" || seen[strings.ToLower(e)] {
			continue
		}
		seen[strings.ToLower(e)] = true
		out = append(out, e)
	}
	return out
}

// Words returns the words of s, lower-cased: runs of letters and digits (so
// "stand-ups" is "stand", "ups"), without an English possessive "'s" ("Go's" is "go"). Index a text once with it for Contains.
func Words(s string) []string {
	s = possessiveRe.ReplaceAllString(s, "$1")
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// Contains reports whether the words of keyword occur in text, words indexed by
// Words, one after the other. Two words match when they are equal, or equal once a
// plural ending ("s", "es") is taken off either ("async stand-up" occurs in "async
// stand-ups"), or are forms of one Russian word ("инженеры данных" occurs in
// "инженеров данных"; see sameWord). A keyword without a word occurs nowhere.
func Contains(text []string, keyword string) bool {
	kw := Words(keyword)
	if len(kw) == 0 {
		return false
	}
	for i := 0; i+len(kw) <= len(text); i++ {
		match := true
		for j, w := range kw {
			if !sameWord(text[i+j], w) {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// sameWord reports whether a and b are the same word: equal, or equal but for a
// plural ending "s" or "es" on one of them (a word of two letters or more), or, for
// Russian words, one is the other's Stem and an ending of at most three letters
// ("инженеры" and "инженеров").
func sameWord(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if rest, ok := strings.CutPrefix(b, a); ok && (rest == "" || len(a) > 1 && (rest == "s" || rest == "es")) {
		return true
	}
	return russian(a) && russian(b) && (endsOnly(b, Stem(a)) || endsOnly(a, Stem(b)))
}

// endsOnly reports whether w is stem followed by at most three letters.
func endsOnly(w, stem string) bool {
	rest, ok := strings.CutPrefix(w, stem)
	return ok && utf8.RuneCountInString(rest) <= 3
}

// russian reports whether w, lower-case, starts with a Cyrillic letter.
func russian(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return r >= 'а' && r <= 'я' || r == 'ё'
}

// Stem cuts w, a lower-case word, to a stem that its other forms share: without an
// English ending (-ing, -ed, -es, -s, -e) when four letters or more remain, or, for a
// Russian word of five letters or more, without its last one or two letters
// ("инженеры" → "инжене"). Other words are returned as they are.
func Stem(w string) string {
	r := []rune(w)
	if r[0] >= 'а' && r[0] <= 'я' || r[0] == 'ё' {
		switch {
		case len(r) >= 7:
			return string(r[:len(r)-2])
		case len(r) >= 5:
			return string(r[:len(r)-1])
		}
		return w
	}
	for _, suffix := range []string{"ing", "ed", "es", "s", "e"} {
		if s := strings.TrimSuffix(w, suffix); s != w && len(s) >= 4 {
			return s
		}
	}
	return w
}
