package workflow

import (
	"regexp"
	"strings"
)

// The batch write of a research_strategy: batch artifact (docs/workflows.md, "Pipelines"):
// one write covers every pending item, in one text with a "## " section per item;
// SplitBatch matches the sections of text, a batch write (split by its headings as
// Items splits), to titles by title (trimmed, case-insensitive, with or without the
// prompt's "Item 2 of 5: " or a "2. " before it: batchKey): the result maps a
// title's index to its section's text. Titles that repeat take the sections of that
// title in order (the second "Examples" item the second "Examples" section). A title
// without a section, or whose section is empty, is missing from the result; sections
// beyond those asked for are ignored.
func SplitBatch(text string, titles []string) map[int]string {
	byTitle := map[string][]string{}
	found := Items(text)
	if len(titles) == 1 {
		// One item: Items needs two headings of a level to split by headings.
		if it, ok := headingSection(text, titles[0]); ok {
			found = []Item{it}
		}
	}
	for _, it := range found {
		k := batchKey(it.Title)
		byTitle[k] = append(byTitle[k], it.Body)
	}
	out := map[int]string{}
	for i, title := range titles {
		k := batchKey(title)
		bodies := byTitle[k]
		if len(bodies) == 0 {
			continue
		}
		byTitle[k] = bodies[1:]
		if strings.TrimSpace(bodies[0]) != "" {
			out[i] = bodies[0]
		}
	}
	return out
}

// listedRE matches how the batch prompt lists an item before its title ("Item 2 of
// 5: "), or a number before it ("2. ", "2) "), which a section's title may copy.
var listedRE = regexp.MustCompile(`(?i)^(?:item\s+\d+\s+of\s+\d+\s*:|\d{1,3}[.)])\s*`)

// batchKey is the key by which SplitBatch matches a section's title to an item's:
// trimmed, lower case, without a listed item's prefix.
func batchKey(title string) string {
	return strings.ToLower(strings.TrimSpace(listedRE.ReplaceAllString(strings.TrimSpace(title), "")))
}

// headingSection returns the section of text under its first heading (any level,
// outside fenced code) titled title (trimmed, case-insensitive, as Items cleans
// titles): its body runs to the next heading of that level or a shallower one.
func headingSection(text, title string) (Item, bool) {
	lines := scanLines(text)
	for i, l := range lines {
		if l.level == 0 || batchKey(l.title) != batchKey(title) {
			continue
		}
		j := i + 1
		for j < len(lines) && (lines[j].level == 0 || lines[j].level > l.level) {
			j++
		}
		end := len(text)
		if j < len(lines) {
			end = lines[j].start
		}
		return Item{Title: l.title, Body: strings.TrimSpace(text[l.next:end])}, true
	}
	return Item{}, false
}

// BatchEnded records that the batch write of running artifact id ended (its items'
// results are RecordItem's): its items still pending are written one by one from now.
// It does nothing for an artifact that no longer runs.
func (m Machine) BatchEnded(s *State, id string) {
	if st := s.Artifacts[id]; st != nil && st.Status == StatusRunning {
		st.Batched = true
	}
}
