package workflow

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/threadwright/threadwright/conversation/workflow/internal/prose"
)

// placeholderRe matches a square-bracketed template slot such as "[product]" or
// "[Company name]": a letter, then 1 to 40 letters, digits, spaces, "_" or "-". Group 1
// is the character before it and group 3 the one after, so that Placeholders can
// leave out Markdown links ("[text](url)", "[text][ref]", "[ref]: url"), images and
// citation markers ("[1]").
var placeholderRe = regexp.MustCompile(`(^|[^\]\\!])\[(\p{L}[\p{L}\p{N} _-]{1,40})\]([\(\[:]?)`)

// codeRe matches code the placeholder check skips: fenced blocks and inline spans.
var codeRe = regexp.MustCompile("(?s)```.*?```|`[^`\n]*`")

// Placeholders returns the template slots left in text, such as "[product]", each
// once, in the order they first appear, brackets included. Markdown links, images,
// reference definitions, citation markers ("[1]"), task-list boxes and code are not
// placeholders. See docs/workflows.md, "Workflows".
func Placeholders(text string) []string {
	text = codeRe.ReplaceAllString(text, "")
	var out []string
	seen := map[string]bool{}
	for _, m := range placeholderRe.FindAllStringSubmatch(text, -1) {
		if m[3] != "" { // a link, a reference link or a reference definition
			continue
		}
		p := "[" + m[2] + "]"
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// revisionNoteRe matches a note an editor added about its own work, on a line of its
// own in italics: "_Revised as asked: make it shorter._".
var revisionNoteRe = regexp.MustCompile(`(?m)^[ \t]*[_*](?:Revised|Written|Edited|Updated|Rewritten)(?: as asked)?: [^\n]*[_*][ \t]*$\n?`)

// StripNotes returns text without the revision notes an editor left in it, so they
// stay on the Slack card and never enter the report.
func StripNotes(text string) string {
	if !strings.ContainsAny(text, "_*") {
		return text
	}
	return strings.TrimSpace(revisionNoteRe.ReplaceAllString(text, ""))
}

// blankLinesRe matches the blank lines a removed note leaves between two paragraphs.
var blankLinesRe = regexp.MustCompile(`\n[ \t]*\n(?:[ \t]*\n)+`)

// UnmarkNotes returns text with the italics marks taken off the lines that SplitNotes
// would take for an editor's revision notes ("_Updated: March 2024_" becomes
// "Updated: March 2024"), so that a text no editor wrote (a fetched page) keeps them
// as its own lines.
func UnmarkNotes(text string) string {
	if !strings.ContainsAny(text, "_*") {
		return text
	}
	return revisionNoteRe.ReplaceAllStringFunc(text, func(m string) string {
		line := strings.TrimSpace(m)
		line = line[1 : len(line)-1] // the marks around it
		if strings.HasSuffix(m, "\n") {
			line += "\n"
		}
		return line
	})
}

// SplitNotes returns text without the revision notes an editor left in it (see
// StripNotes), and those notes, one a line, without their italics marks ("Revised as
// asked: make it shorter."); note is "" when text has none. The machine keeps the
// note apart from the text (ArtifactState.Note), so that prompts, the edit modal, the
// report and the API read the text alone.
func SplitNotes(text string) (clean, note string) {
	if !strings.ContainsAny(text, "_*") {
		return text, ""
	}
	var notes []string
	for _, m := range revisionNoteRe.FindAllString(text, -1) {
		if n := strings.TrimSpace(strings.Trim(strings.TrimSpace(m), "_*")); n != "" {
			notes = append(notes, n)
		}
	}
	if len(notes) == 0 {
		return text, ""
	}
	clean = blankLinesRe.ReplaceAllString(revisionNoteRe.ReplaceAllString(text, ""), "\n\n")
	return strings.TrimSpace(clean), strings.Join(notes, "\n")
}

// ClaimRe reads an editor's claim that it made a change a person asked for: its
// verb and what was asked ("Revised as asked: mention commuting parents").
var ClaimRe = regexp.MustCompile(`(?i)^(?:revised|written|edited|updated|rewritten)(?: as asked)?:\s*(.*)$`)

// asksTakeInRe reads a request that asks the text to take something in, in English
// or Russian: "mention commuting parents" → "commuting parents".
var asksTakeInRe = regexp.MustCompile(`(?i)^(?:please\s+|пожалуйста,?\s+)?(?:mention|add|include|cover|talk about|say something about|refer to|name|cite|упомяни(?:те)?|добавь(?:те)?|включи(?:те)?|назови(?:те)?|укажи(?:те)?|расскажи(?:те)? о|напиши(?:те)? о|процитируй(?:те)?)\s+(.+)$`)

// quotedRe matches a phrase in quotes: "…", “…”, «…».
var quotedRe = regexp.MustCompile(`"([^"]+)"|“([^”]+)”|«([^»]+)»`)

// claimStopWords are words a request's object has that the text need not repeat.
var claimStopWords = map[string]bool{
	"the": true, "a": true, "an": true, "and": true, "or": true, "of": true, "for": true, "to": true, "in": true, "on": true,
	"about": true, "some": true, "also": true, "more": true, "with": true, "their": true, "its": true, "our": true, "your": true,
	"that": true, "this": true, "these": true, "those": true, "who": true, "how": true, "why": true, "what": true, "it": true,
	"и": true, "или": true, "о": true, "об": true, "про": true, "для": true, "в": true, "на": true, "с": true, "по": true, "их": true, "ещё": true, "еще": true, "тоже": true,
}

// removeRe reads a request to take words out ("removed "synergy"", "убери «дешёвый»").
var removeRe = regexp.MustCompile(`(?i)^(?:please\s+|пожалуйста,?\s+)?(?:remov(?:e|ed|es|ing)|delet(?:e|ed|es|ing)|drop(?:ped|s)?|cut|strip(?:ped)?|take out|took out|убери(?:те)?|убрал[аи]?|удали(?:те|л[аи]?)?|вычеркни(?:те)?|вычеркнул[аи]?)(?:\s|$)`)

// replaceRe reads a request to put a phrase in place of another ("replace "stand-up"
// with "check-in"", "замени «митинг» на «встречу»"): the last quoted phrase is the new one.
var replaceRe = regexp.MustCompile(`(?i)^(?:please\s+|пожалуйста,?\s+)?(?:replac(?:e|ed|es|ing)|swap(?:ped)?|chang(?:e|ed|es|ing)|rename[ds]?|замени(?:те)?|заменил[аи]?|поменя(?:й|йте|л|ла|ли)|переименуй(?:те)?)(?:\s|$)`)

// structuralWords start words that name a part of the text, not what it says
// ("add a section on costs" asks for costs, not the word "section").
var structuralWords = []string{"section", "subsection", "paragraph", "sentence", "heading", "раздел", "подраздел", "абзац", "предложени", "заголов"}

// ClaimFound judges a claim that asked (what a person asked for, a ClaimRe's second
// group) was done in text. judged is false when no check can tell (asked is not a
// request about certain words: "make it shorter", "remove the last sentence");
// otherwise found says whether the text has every content word of the quoted
// phrases, or of what the request asks to take in, by their stems ("commuting
// parents" is found in "parents who commute"). A request to remove quoted phrases is
// found when the text has none of them; one to replace a phrase, when it has the
// new one (the last quoted). Words that name a part of the text ("section", "абзац")
// are not looked for.
func ClaimFound(asked, text string) (judged, found bool) {
	asked = strings.TrimRight(strings.TrimSpace(asked), ".!")
	var wanted []string
	for _, m := range quotedRe.FindAllStringSubmatch(asked, -1) {
		wanted = append(wanted, m[1]+m[2]+m[3])
	}
	body := strings.ToLower(text)
	switch {
	case removeRe.MatchString(asked):
		for _, phrase := range wanted {
			if j, f := hasPhrase(body, phrase); j {
				judged = true
				if f {
					return true, false
				}
			}
		}
		return judged, judged
	case replaceRe.MatchString(asked) && len(wanted) > 0:
		wanted = wanted[len(wanted)-1:]
	case len(wanted) == 0:
		m := asksTakeInRe.FindStringSubmatch(asked)
		if m == nil {
			return false, false
		}
		wanted = []string{m[1]}
	}
	for _, phrase := range wanted {
		j, f := hasPhrase(body, phrase)
		if j && !f {
			return true, false
		}
		judged = judged || j
	}
	return judged, judged
}

// hasPhrase reports whether body, lower-case, has the stem of every content word of
// phrase; judged is false when phrase has none (only stop words, short or
// structural ones).
func hasPhrase(body, phrase string) (judged, found bool) {
	for _, w := range strings.FieldsFunc(strings.ToLower(phrase), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if claimStopWords[w] || len([]rune(w)) < 3 || structural(w) {
			continue
		}
		judged = true
		if !strings.Contains(body, prose.Stem(w)) {
			return true, false
		}
	}
	return judged, judged
}

// structural reports whether w, lower-case, names a part of the text (structuralWords).
func structural(w string) bool {
	for _, s := range structuralWords {
		if strings.HasPrefix(w, s) {
			return true
		}
	}
	return false
}
