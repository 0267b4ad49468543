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

func chooseLabel(reply string, opts []workflow.Option, labels []string) string {
	valid := func(l string) string {
		if slices.Contains(labels, l) {
			return l
		}
		return ""
	}
	byPosition := func(n int) string {
		if n >= 1 && n <= len(labels) {
			return labels[n-1]
		}
		return ""
	}
	// "option b", "вариант Б", "#2"
	if m := labelPrefixRe.FindStringSubmatch(reply); m != nil {
		r, _ := utf8.DecodeRuneInString(m[1])
		switch {
		case unicode.IsDigit(r):
			if l := byPosition(int(r - '0')); l != "" {
				return l
			}
		case r < utf8.RuneSelf:
			if l := valid(strings.ToUpper(m[1])); l != "" {
				return l
			}
		default:
			up := unicode.ToUpper(r)
			if l := valid(cyrillicToLatin[up]); l != "" {
				return l
			}
		}
	}
	words := tokens(reply)
	// An upper-case letter standing alone: "B, but shorter", "Б". A first word that
	// is also a word of its own ("A shorter one", "В целом…") counts only when
	// punctuation follows it.
	for i, w := range words {
		r := firstRune(w)
		if utf8.RuneCountInString(w) != 1 || !unicode.IsUpper(r) {
			continue
		}
		l := valid(w)
		if l == "" {
			l = valid(cyrillicToLatin[r])
		}
		if l == "" || (i == 0 && len(words) > 1 && strings.ContainsRune("AАВС", r) && !separatedAfterFirst(reply)) {
			continue
		}
		return l
	}
	for _, w := range words {
		lw := strings.ToLower(w)
		if n, ok := ordinals[lw]; ok {
			return byPosition(n)
		}
		if lw == "last" || strings.HasPrefix(lw, "последн") {
			return byPosition(len(labels))
		}
		for i, p := range ruOrdinals {
			if strings.HasPrefix(lw, p) && utf8.RuneCountInString(lw) > 3 {
				return byPosition(i + 1)
			}
		}
	}
	for _, w := range words {
		if n, err := strconv.Atoi(w); err == nil && n >= 1 && n <= len(labels) {
			return byPosition(n)
		}
	}
	low := strings.ToLower(reply)
	for _, o := range opts {
		if o.Title != "" && strings.Contains(low, strings.ToLower(o.Title)) {
			return o.Label
		}
	}
	if l := byWords(low, opts); l != "" {
		return l
	}
	for i, w := range words {
		if utf8.RuneCountInString(w) != 1 {
			continue
		}
		r := firstRune(w)
		switch {
		case r == 'a':
			if i == 0 && separatedAfterFirst(reply) {
				return valid("A")
			}
		case r >= 'b' && r <= 'e':
			if l := valid(strings.ToUpper(w)); l != "" {
				return l
			}
		case cyrillicToLatin[r] != "":
			if l := valid(cyrillicToLatin[r]); l != "" {
				return l
			}
		case cyrillicFromAnyA[r] != "" && len(words) == 1:
			return valid(cyrillicFromAnyA[r])
		}
	}
	return ""
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
