package doclinks

import (
	"regexp"
	"strings"
)

// pointerKind says what a pointer asks for.
type pointerKind int

const (
	sectionPointer  pointerKind = iota // a document's section by its heading's text
	unquotedSection                    // a section named without quotes: always a problem
	linkPointer                        // a Markdown link: a path, maybe with #anchor
	pathPointer                        // a repository path, from the root
	localGoFile                        // a bare .go file name, in the comment's directory
)

// pointer is one pointer found in a text.
type pointer struct {
	kind     pointerKind
	line     int
	written  string   // as written, white space collapsed, for the report
	target   string   // a path, or README / architecture
	sections []string // sectionPointer: the quoted headings
	anchor   string   // linkPointer: the fragment after #, if any
}

var (
	// A document, an optional comma, then a quoted section: docs/tools.md,
	// "Tool policy" or architecture "Durable turns". The document is preceded by a non-path
	// character, so that it is not the end of a longer word.
	sectionRE = regexp.MustCompile(`(?:^|[^\w./-])((?:[\w.-]+/)*[\w.-]+\.md|README|architecture),?[ \t\n]+"([^"\n]{1,100}(?:\n[^"\n]{1,100})?)"`)
	// More sections after the first: , "Recall" / and "Durable turns".
	moreSectionRE = regexp.MustCompile(`^(?:,[ \t\n]*(?:and[ \t\n]+)?|[ \t\n]+and[ \t\n]+)"([^"\n]{1,100}(?:\n[^"\n]{1,100})?)"`)
	// A section named without quotes inside parentheses: (<document>, <Section>).
	unquotedRE = regexp.MustCompile(`\(((?:[\w.-]+/)*[\w.-]+\.md|README|architecture),[ \t\n]+([A-Z][^()"\n]{0,60})\)`)
	// A Markdown link or image: [text](target) or [text](target "title").
	linkRE = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:[ \t]+"[^"]*")?\)`)
	// A word with a slash, after a character that cannot be part of a path.
	pathRE = regexp.MustCompile("(?:^|[\\s(`'\"\\[,;])((?:\\./)?(?:[\\w.-]+/)+[\\w.*<>{}-]*)")
	// A bare Go file name, not preceded by a path.
	// A package path's qualified identifier: the .BearerToken of internal/httpclient.BearerToken.
	qualifiedRE = regexp.MustCompile(`\.[A-Z]\w*(?:\.\w+)*$`)
	// An inline code span.
	codeSpanRE = regexp.MustCompile("`[^`]*`")
	goFileRE   = regexp.MustCompile("(?:^|[\\s(`'\"\\[,;])([\\w-]+\\.go)\\b")
)

// findPointers lists the pointers of t. topDirs are the repository's top-level
// directories: a path counts only when it starts with one of them.
func findPointers(t text, markdown bool, topDirs map[string]bool) []pointer {
	var (
		out     []pointer
		targets = map[int]bool{} // where the documents of section pointers start
	)
	for _, m := range sectionRE.FindAllStringSubmatchIndex(t.s, -1) {
		targets[m[2]] = true
		p := pointer{kind: sectionPointer, line: t.lineAt(m[2]), target: t.s[m[2]:m[3]]}
		p.sections = append(p.sections, normalize(t.s[m[4]:m[5]]))
		end := m[1]
		for {
			more := moreSectionRE.FindStringSubmatchIndex(t.s[end:])
			if more == nil {
				break
			}
			p.sections = append(p.sections, normalize(t.s[end+more[2]:end+more[3]]))
			end += more[1]
		}
		p.written = normalize(t.s[m[2]:end])
		out = append(out, p)
	}
	for _, m := range unquotedRE.FindAllStringSubmatchIndex(t.s, -1) {
		out = append(out, pointer{kind: unquotedSection, line: t.lineAt(m[0]), written: normalize(t.s[m[0]:m[1]])})
	}
	if markdown {
		// [text](url) inside `code` is not a link.
		for _, m := range linkRE.FindAllStringSubmatchIndex(blankCode(t.s), -1) {
			target, anchor, _ := strings.Cut(t.s[m[2]:m[3]], "#")
			if isExternal(target) {
				continue
			}
			out = append(out, pointer{kind: linkPointer, line: t.lineAt(m[2]), written: t.s[m[2]:m[3]], target: target, anchor: anchor})
		}
	}
	if !t.paths {
		return out
	}
	for _, m := range pathRE.FindAllStringSubmatchIndex(t.s, -1) {
		if targets[m[2]] {
			continue // a section pointer's document: checked with its sections
		}
		if path, ok := repoPath(t.s[m[2]:m[3]], topDirs); ok {
			out = append(out, pointer{kind: pathPointer, line: t.lineAt(m[2]), written: t.s[m[2]:m[3]], target: path})
		}
	}
	if t.goFile {
		for _, m := range goFileRE.FindAllStringSubmatchIndex(t.s, -1) {
			out = append(out, pointer{kind: localGoFile, line: t.lineAt(m[2]), written: t.s[m[2]:m[3]], target: t.s[m[2]:m[3]]})
		}
	}
	return out
}

// blankCode is s with its inline code spans blanked out byte by byte, so that
// offsets still match.
func blankCode(s string) string {
	return codeSpanRE.ReplaceAllStringFunc(s, func(code string) string {
		b := []byte(code)
		for i := range b {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
		return string(b)
	})
}

// isExternal reports whether a link target leaves the repository: a URL with a
// scheme (https:, mailto:) or a protocol-relative one.
func isExternal(target string) bool {
	if strings.HasPrefix(target, "//") {
		return true
	}
	scheme, _, ok := strings.Cut(target, ":")
	return ok && scheme != "" && !strings.ContainsAny(scheme, "/.#")
}

// repoPath cleans a path-like word (./store/..., docs/api.md., cmd/threadwright/)
// and reports whether it is a repository path: one whose first element is a
// top-level directory. A word with a pattern or a placeholder (bot/testdata/*.json,
// prompts/<name>.tmpl) counts up to the directory before it.
func repoPath(word string, topDirs map[string]bool) (string, bool) {
	if i := strings.IndexAny(word, "*<>{}"); i >= 0 {
		word = word[:strings.LastIndex(word[:i], "/")+1]
	}
	p := strings.TrimPrefix(word, "./")
	p = strings.TrimSuffix(p, "/...")
	p = strings.TrimRight(p, "./")
	if m := qualifiedRE.FindStringIndex(p); m != nil {
		p = p[:m[0]] // internal/httpclient.BearerToken names a package's identifier
	}
	first, _, ok := strings.Cut(p, "/")
	if !ok || !topDirs[first] {
		return "", false
	}
	return p, true
}
