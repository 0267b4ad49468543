package workflow

import (
	"regexp"
	"strings"
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
