package knowledge

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
)

// Chunk sizes, in characters (runes).
const (
	// MaxChunkChars is the size a chunk is kept under: a few paragraphs, small enough
	// that the best few fit in a prompt, large enough to hold an answer with its
	// context.
	MaxChunkChars = 1200
	// MaxFenceChars is the size up to which a fenced code block stays whole, in a chunk
	// of its own, when it does not fit in MaxChunkChars; a longer one is cut between
	// lines into fenced pieces.
	MaxFenceChars = 2 * MaxChunkChars
)

// SplitMarkdown splits a Markdown document into chunks: one section per heading (ATX,
// "## Title", or setext, a line underlined with === or ---), each cut between
// paragraphs into chunks under MaxChunkChars characters. A chunk's Heading is its
// section's heading ("" before the first) and its Text the section's paragraphs, as
// written, without the heading line. A fenced code block (``` or ~~~) is never cut
// unless it alone exceeds MaxFenceChars; a paragraph longer than MaxChunkChars is cut
// between sentences, or words. YAML front matter (between --- lines at the start) is
// dropped; its title, if any, heads the text before the first heading. Sections
// without text give no chunk. Chunks are numbered from 0; their Source is left empty.
func SplitMarkdown(md string) []conversation.Chunk {
	md = normalize(md)
	title, md := frontMatter(md)
	return pack(parseMarkdown(md, title))
}

// SplitText splits plain text into chunks under MaxChunkChars characters, between
// paragraphs (blank lines) where it can, as SplitMarkdown does a section; nothing in
// it is read as Markdown. The chunks have no heading.
func SplitText(text string) []conversation.Chunk {
	var s section
	for _, p := range paragraphs(normalize(text)) {
		s.blocks = append(s.blocks, block{text: p})
	}
	return pack([]section{s})
}

// section is the text under one heading: its blocks, paragraphs and fenced code.
type section struct {
	heading string
	blocks  []block
}

// block is a paragraph (consecutive lines that are not blank) or a fenced code block,
// as written.
type block struct {
	text  string
	fence *fence // nil for a paragraph
}

// fence is the opening of a fenced code block: its marker (``` or ~~~, or longer) and
// info string ("go").
type fence struct {
	marker, info string
}

var (
	atxHeading    = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))??(?:[ \t]+#+)?[ \t]*$`)
	setextLine    = regexp.MustCompile(`^ {0,3}(?:=+|-+)[ \t]*$`)
	fenceOpen     = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})[ \t]*([^`]*?)[ \t]*$")
	notSetextText = regexp.MustCompile(`^ {0,3}(?:[-*+>|]|\d+[.)])`)
	thematicBreak = regexp.MustCompile(`^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$`)
)

// normalize returns text with \n line ends and without a byte order mark.
func normalize(text string) string {
	text = strings.TrimPrefix(text, "\ufeff")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	return strings.ReplaceAll(text, "\r", "\n")
}

// frontMatter returns md without YAML front matter, and the front matter's title.
func frontMatter(md string) (title, rest string) {
	if !strings.HasPrefix(md, "---\n") {
		return "", md
	}
	lines := strings.SplitAfter(md, "\n")
	for i := 1; i < len(lines) && i < 200; i++ {
		switch strings.TrimRight(lines[i], " \t\n") {
		case "---", "...":
			for _, l := range lines[1:i] {
				if v, ok := strings.CutPrefix(l, "title:"); ok {
					title = strings.Trim(strings.TrimSpace(v), `"'`)
				}
			}
			return title, strings.Join(lines[i+1:], "")
		}
	}
	return "", md
}

// parseMarkdown splits md into sections and blocks; title heads the first section.
func parseMarkdown(md, title string) []section {
	sections := []section{{heading: title}}
	cur := &sections[0]
	var (
		para []string // the lines of the paragraph being read
		code []string // the lines of the fenced block being read, its opening first
		open *fence   // the fence being read, or nil
	)
	flush := func() {
		if len(para) > 0 {
			cur.blocks = append(cur.blocks, block{text: strings.Join(para, "\n")})
			para = nil
		}
	}
	for _, line := range strings.Split(md, "\n") {
		if open != nil {
			code = append(code, line)
			if closes(line, open.marker) {
				cur.blocks = append(cur.blocks, block{text: strings.Join(code, "\n"), fence: open})
				code, open = nil, nil
			}
			continue
		}
		if m := fenceOpen.FindStringSubmatch(line); m != nil {
			flush()
			code, open = []string{line}, &fence{marker: m[1], info: m[2]}
			continue
		}
		if m := atxHeading.FindStringSubmatch(line); m != nil {
			flush()
			sections = append(sections, section{heading: strings.TrimSpace(m[2])})
			cur = &sections[len(sections)-1]
			continue
		}
		if setextLine.MatchString(line) && len(para) > 0 && !notSetextText.MatchString(para[0]) {
			heading := strings.Join(strings.Fields(strings.Join(para, " ")), " ")
			para = nil
			sections = append(sections, section{heading: heading})
			cur = &sections[len(sections)-1]
			continue
		}
		if strings.TrimSpace(line) == "" || thematicBreak.MatchString(line) {
			flush() // a thematic break (---, ***, ___) has no text
			continue
		}
		para = append(para, strings.TrimRight(line, " \t"))
	}
	flush()
	if open != nil { // a fence left open runs to the end of the document
		cur.blocks = append(cur.blocks, block{text: strings.Join(code, "\n"), fence: open})
	}
	return sections
}

// closes reports whether line closes a fenced block opened with marker: the same
// character, at least as many times, and nothing else.
func closes(line, marker string) bool {
	t := strings.TrimSpace(line)
	if len(line)-len(strings.TrimLeft(line, " ")) > 3 || len(t) < len(marker) {
		return false
	}
	return strings.Trim(t, marker[:1]) == ""
}

// paragraphs returns the paragraphs of text: runs of lines that are not blank.
func paragraphs(text string) []string {
	var (
		out  []string
		para []string
	)
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			if len(para) > 0 {
				out = append(out, strings.Join(para, "\n"))
				para = nil
			}
			continue
		}
		para = append(para, strings.TrimRight(line, " \t"))
	}
	if len(para) > 0 {
		out = append(out, strings.Join(para, "\n"))
	}
	return out
}

// pack turns sections into chunks: each section's blocks, in order, fill a chunk as
// long as it stays under MaxChunkChars (blocks joined by a blank line); a block that
// does not fit in a chunk of its own is cut (see pieces).
func pack(sections []section) []conversation.Chunk {
	var chunks []conversation.Chunk
	for _, s := range sections {
		var (
			cur []string
			n   int // characters of cur, joined
		)
		emit := func() {
			if len(cur) > 0 {
				chunks = append(chunks, conversation.Chunk{Heading: s.heading, Ordinal: len(chunks), Text: strings.Join(cur, "\n\n")})
				cur, n = nil, 0
			}
		}
		for _, b := range s.blocks {
			for _, p := range pieces(b) {
				size := chars(p)
				if len(cur) > 0 && n+2+size > MaxChunkChars {
					emit()
				}
				if len(cur) > 0 {
					n += 2
				}
				cur, n = append(cur, p), n+size
				if n > MaxChunkChars { // a fence kept whole
					emit()
				}
			}
		}
		emit()
	}
	return chunks
}

// pieces returns b whole when it fits in MaxChunkChars (or, for fenced code, in
// MaxFenceChars), or else cut into pieces that do: fenced code between lines, each
// piece fenced again with b's marker and info string; a paragraph between sentences,
// or words, or, for a word longer than a chunk, anywhere.
func pieces(b block) []string {
	size := chars(b.text)
	if size <= MaxChunkChars || (b.fence != nil && size <= MaxFenceChars) {
		return []string{b.text}
	}
	if b.fence != nil {
		return fencePieces(b)
	}
	var out []string
	for _, p := range cut(b.text, MaxChunkChars, sentences) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// fencePieces cuts a fenced block longer than MaxFenceChars between its lines into
// pieces that, fenced again with the block's opening and closing lines, fit in
// MaxChunkChars.
func fencePieces(b block) []string {
	lines := strings.Split(b.text, "\n")[1:] // the opening line is rewritten on each piece
	if n := len(lines); n > 0 && closes(lines[n-1], b.fence.marker) {
		lines = lines[:n-1]
	}
	head := b.fence.marker + b.fence.info
	room := MaxChunkChars - chars(head) - chars(b.fence.marker) - 2
	var out []string
	for _, body := range cut(strings.Join(lines, "\n"), room, func(s string) []string { return strings.SplitAfter(s, "\n") }) {
		out = append(out, head+"\n"+strings.TrimRight(body, "\n")+"\n"+b.fence.marker)
	}
	return out
}

// cut cuts text into pieces of at most size characters: split returns text's parts
// (each ending with its separator), which are packed greedily; a part that alone
// exceeds size is cut after spaces, and a word that does anywhere. The pieces keep
// their spaces and line breaks.
func cut(text string, size int, split func(string) []string) []string {
	var (
		out []string
		cur strings.Builder
		n   int
	)
	add := func(part string) {
		if k := chars(part); n+k > size && n > 0 {
			out = append(out, cur.String())
			cur.Reset()
			n = 0
		}
		cur.WriteString(part)
		n += chars(part)
	}
	for _, part := range split(text) {
		if chars(part) <= size {
			add(part)
			continue
		}
		for _, w := range strings.SplitAfter(part, " ") {
			// textcut.Index is below len(w) while w has more than size characters;
			// counting the whole rest of w each time would be quadratic.
			for i := textcut.Index(w, size); i < len(w); i = textcut.Index(w, size) {
				add(w[:i])
				w = w[i:]
			}
			add(w)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// sentences splits text after each sentence: after ".", "!", "?", "…" or "。" and
// the spaces that follow, and after a line break.
func sentences(text string) []string {
	var out []string
	start := 0
	for i, r := range text {
		end := false
		switch r {
		case '\n':
			end = true
		case '.', '!', '?', '…', '。', '！', '？':
			next, _ := utf8.DecodeRuneInString(text[i+utf8.RuneLen(r):])
			end = next == utf8.RuneError || unicode.IsSpace(next) || r >= 0x3000
		}
		if end {
			j := i + utf8.RuneLen(r)
			for j < len(text) && (text[j] == ' ' || text[j] == '\t') {
				j++
			}
			if j > start {
				out = append(out, text[start:j])
				start = j
			}
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// chars returns the number of characters (runes) in s.
func chars(s string) int { return utf8.RuneCountInString(s) }
