package demo

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// Reading a person's reply to options: the option it chooses, the changes it
// asks for with it, or whether it asks for new options.

var (
	regenerateWords = []string{
		"none of", "neither", "other options", "new options", "different options", "more options",
		"something else", "try again", "start over", "regenerate",
		"ни один", "ни одн", "ничего из", "другие вариант", "новые вариант", "не подходит", "не нравится",
	}
	connectors = []string{", but ", " but ", ", но ", " но ", ", только ", "; ", " — ", " - ", ", "}
	// politeWords are dropped from instructions.
	politeWords = []string{"please", "thanks", "thank you", "пожалуйста", "спасибо"}
	ordinals    = map[string]int{
		"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "fifth": 5, "5th": 5,
	}
	ruOrdinals       = []string{"перв", "втор", "трет", "четв", "пят"}
	labelPrefixRe    = regexp.MustCompile(`(?i)(?:(?:option|variant|вариант)\s+|#\s*)([a-eа-е1-5])(?:[^\p{L}\p{N}]|$)`)
	cyrillicToLatin  = map[rune]string{'А': "A", 'Б': "B", 'В': "B", 'С': "C", 'Г': "D", 'Д': "E", 'Е': "E", 'б': "B", 'г': "D", 'д': "E"}
	cyrillicFromAnyA = map[rune]string{'а': "A", 'в': "B", 'с': "C", 'е': "E"}
)

// interpret reads a reply to options: the option it chooses (by "option X", an
// upper-case letter, an ordinal, a number, a title or shared words, a lower-case
// letter), the changes asked for with it, or whether it asks for new options.
func interpret(reply string, opts []workflow.Option) (label, instructions string, regenerate bool) {
	low := strings.ToLower(reply)
	if strings.Trim(low, " .!") == "none" || containsAny(low, regenerateWords) {
		return "", instructionsOf(reply), true
	}
	labels := make([]string, len(opts))
	for i, o := range opts {
		labels[i] = o.Label
	}
	label = chooseLabel(reply, opts, labels)
	if label == "" {
		return "", "", false // neither a choice nor a request for new options
	}
	for _, o := range opts {
		if o.Label == label && o.Title != "" {
			reply = replaceFold(reply, o.Title, "") // its commas are not connectors
		}
	}
	return label, instructionsOf(reply), false
}

// chooseLabel reads which of opts (with labels) a reply chooses, "" for none.
// The ways a reply names an option are tried in order; the first that
// decides, decides, even for none.
func chooseLabel(reply string, opts []workflow.Option, labels []string) string {
	c := labelReader{reply: reply, low: strings.ToLower(reply), words: tokens(reply), opts: opts, labels: labels}
	for _, step := range []func() (string, bool){
		c.prefixed, c.upperLetter, c.ordinal, c.number, c.title, c.sharedWords, c.lowerLetter,
	} {
		if label, ok := step(); ok {
			return label
		}
	}
	return ""
}

// labelReader reads the option a reply chooses among labels. Each of its
// steps answers the label it reads and whether it decided.
type labelReader struct {
	reply, low string
	words      []string
	opts       []workflow.Option
	labels     []string
}

// valid returns l when it is one of the labels, else "".
func (c labelReader) valid(l string) string {
	if slices.Contains(c.labels, l) {
		return l
	}
	return ""
}

// byPosition returns the label of the n-th option (from 1), or "".
func (c labelReader) byPosition(n int) string {
	if n >= 1 && n <= len(c.labels) {
		return c.labels[n-1]
	}
	return ""
}

// prefixed reads "option b", "вариант Б", "#2".
func (c labelReader) prefixed() (string, bool) {
	m := labelPrefixRe.FindStringSubmatch(c.reply)
	if m == nil {
		return "", false
	}
	r, _ := utf8.DecodeRuneInString(m[1])
	var l string
	switch {
	case unicode.IsDigit(r):
		l = c.byPosition(int(r - '0'))
	case r < utf8.RuneSelf:
		l = c.valid(strings.ToUpper(m[1]))
	default:
		l = c.valid(cyrillicToLatin[unicode.ToUpper(r)])
	}
	return l, l != ""
}

// upperLetter reads an upper-case letter standing alone: "B, but shorter", "Б".
// A first word that is also a word of its own ("A shorter one", "В целом…")
// counts only when punctuation follows it.
func (c labelReader) upperLetter() (string, bool) {
	for i, w := range c.words {
		r := firstRune(w)
		if utf8.RuneCountInString(w) != 1 || !unicode.IsUpper(r) {
			continue
		}
		l := c.valid(w)
		if l == "" {
			l = c.valid(cyrillicToLatin[r])
		}
		if l == "" || (i == 0 && len(c.words) > 1 && strings.ContainsRune("AАВС", r) && !separatedAfterFirst(c.reply)) {
			continue
		}
		return l, true
	}
	return "", false
}

// ordinal reads "second", "3rd", "last", "второй", "последний".
func (c labelReader) ordinal() (string, bool) {
	for _, w := range c.words {
		lw := strings.ToLower(w)
		if n, ok := ordinals[lw]; ok {
			return c.byPosition(n), true
		}
		if lw == "last" || strings.HasPrefix(lw, "последн") {
			return c.byPosition(len(c.labels)), true
		}
		for i, p := range ruOrdinals {
			if strings.HasPrefix(lw, p) && utf8.RuneCountInString(lw) > 3 {
				return c.byPosition(i + 1), true
			}
		}
	}
	return "", false
}

// number reads an option's number: "2".
func (c labelReader) number() (string, bool) {
	for _, w := range c.words {
		if n, err := strconv.Atoi(w); err == nil && n >= 1 && n <= len(c.labels) {
			return c.byPosition(n), true
		}
	}
	return "", false
}

// title reads an option's title in the reply.
func (c labelReader) title() (string, bool) {
	for _, o := range c.opts {
		if o.Title != "" && strings.Contains(c.low, strings.ToLower(o.Title)) {
			return o.Label, true
		}
	}
	return "", false
}

// sharedWords reads the option that clearly shares the most words with the
// reply (byWords).
func (c labelReader) sharedWords() (string, bool) {
	l := byWords(c.low, c.opts)
	return l, l != ""
}

// lowerLetter reads a lower-case letter standing alone: "b", "a, but
// shorter", "б"; a Cyrillic letter that looks like a Latin one counts when
// it is the whole reply.
func (c labelReader) lowerLetter() (string, bool) {
	for i, w := range c.words {
		if utf8.RuneCountInString(w) != 1 {
			continue
		}
		r := firstRune(w)
		switch {
		case r == 'a':
			if i == 0 && separatedAfterFirst(c.reply) {
				return c.valid("A"), true
			}
		case r >= 'b' && r <= 'e':
			if l := c.valid(strings.ToUpper(w)); l != "" {
				return l, true
			}
		case cyrillicToLatin[r] != "":
			if l := c.valid(cyrillicToLatin[r]); l != "" {
				return l, true
			}
		case cyrillicFromAnyA[r] != "" && len(c.words) == 1:
			return c.valid(cyrillicFromAnyA[r]), true
		}
	}
	return "", false
}

// byWords picks the option that shares the most words (of five letters or more,
// compared by their first five letters) with the reply, when one clearly does.
func byWords(low string, opts []workflow.Option) string {
	stems := func(s string) map[string]bool {
		out := map[string]bool{}
		for _, w := range tokens(strings.ToLower(s)) {
			if utf8.RuneCountInString(w) < 5 || stopWords[w] {
				continue
			}
			out[string([]rune(w)[:5])] = true
		}
		return out
	}
	reply := stems(low)
	best, bestScore, tie := "", 0, false
	for _, o := range opts {
		score := 0
		title, text := stems(o.Title), stems(o.Text)
		for s := range reply {
			if title[s] {
				score += 2
			} else if text[s] {
				score++
			}
		}
		switch {
		case score > bestScore:
			best, bestScore, tie = o.Label, score, false
		case score == bestScore && score > 0:
			tie = true
		}
	}
	if tie {
		return ""
	}
	return best
}

var stopWords = map[string]bool{
	"option": true, "options": true, "about": true, "which": true, "would": true, "these": true,
	"there": true, "their": true, "other": true, "think": true, "prefer": true, "shorter": true,
	"longer": true, "better": true, "please": true, "maybe": true, "really": true, "lets": true,
	"вариант": true, "давайте": true, "пожалуйста": true, "короче": true,
}

// separatedAfterFirst reports whether the reply's first word is followed by
// punctuation or nothing: "a, but shorter", "a."
func separatedAfterFirst(reply string) bool {
	s := strings.TrimSpace(reply)
	_, size := utf8.DecodeRuneInString(s)
	rest := strings.TrimLeft(s[size:], " ")
	if rest == "" {
		return true
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return unicode.IsPunct(r)
}

// instructionsOf returns what follows the reply's first connector (", but", "; ",
// ", ", …), without polite words.
func instructionsOf(reply string) string {
	s := oneLine(reply)
	low := strings.ToLower(s)
	at, size := -1, 0
	for _, c := range connectors {
		if i := strings.Index(low, c); i >= 0 && (at < 0 || i < at) {
			at, size = i, len(c)
		}
	}
	if at < 0 {
		return ""
	}
	rest := strings.TrimSpace(s[at+size:])
	for again := true; again; {
		again = false
		for _, p := range []string{"make it ", "just ", "only ", "but ", "and ", "сделай ", "сделайте ", "но ", "и "} {
			if strings.HasPrefix(strings.ToLower(rest), p) {
				rest, again = rest[len(p):], true
			}
		}
	}
	for _, w := range politeWords {
		rest = replaceFold(rest, w, "")
	}
	return strings.Trim(oneLine(rest), " ,.;:!?")
}
