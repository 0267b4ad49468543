package workflow

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Reading the YAML nodes of a definition: the fields of a mapping and where each
// part is (position, positions), values of each kind, and the field a misspelled key
// probably means.

// position records where a YAML mapping and its keys are.
type position struct {
	line int            // the mapping's first line
	keys map[string]int // key → line of the key
	// reported holds the known keys a problem was already reported for: their value
	// was of the wrong kind, or an unknown key was taken for a typo of them.
	reported map[string]bool
	// broken is true when the item is not a mapping at all (already reported).
	broken bool
}

// at returns the line of key, or of the mapping when key is absent.
func (p position) at(key string) int {
	if l, ok := p.keys[key]; ok {
		return l
	}
	return p.line
}

func (p position) has(key string) bool {
	_, ok := p.keys[key]
	return ok
}

// ok reports whether key needs checking: no problem was reported about it yet.
func (p position) ok(key string) bool { return !p.broken && !p.reported[key] }

// positions are the lines of a parsed definition's parts, for problems. The zero
// value (a Definition built in Go) gives line 0 everywhere.
type positions struct {
	def         position
	permissions position
	report      *yaml.Node // the report value, to map template lines to file lines
	inputs      inputPosition
	artifacts   []artifactPosition
}

type artifactPosition struct {
	position
	dependsOn []int // line of each depends_on entry
	criteria  []position
	editor    position
	enhance   position
	tools     []int // line of each tools entry
}

func (p *positions) artifact(i int) artifactPosition {
	if i < len(p.artifacts) {
		return p.artifacts[i]
	}
	return artifactPosition{}
}

func (a artifactPosition) dependency(j int) int {
	if j < len(a.dependsOn) {
		return a.dependsOn[j]
	}
	return a.at("depends_on")
}

// tool returns the line of the artifact's jth tool.
func (a artifactPosition) tool(j int) int {
	if j < len(a.tools) {
		return a.tools[j]
	}
	return a.at("tools")
}

// editorAt returns the line of key in the artifact's editor mapping, or of the
// editor key.
func (a artifactPosition) editorAt(key string) int { return a.keyIn(a.editor, "editor", key) }

// keyIn returns the line of key in m, the mapping under the artifact's key parent, or
// of parent itself when m lacks key.
func (a artifactPosition) keyIn(m position, parent, key string) int {
	if l, ok := m.keys[key]; ok {
		return l
	}
	return a.at(parent)
}

func (a artifactPosition) criterion(j int) position {
	if j < len(a.criteria) {
		return a.criteria[j]
	}
	return position{line: a.at("criteria")}
}

// inputPosition is the lines of the inputs list.
type inputPosition struct {
	list  int        // line of the inputs key's value
	items []position // each input's mapping
}

func (p inputPosition) item(i int) position {
	if i < len(p.items) {
		return p.items[i]
	}
	return position{line: p.list}
}

// fields walks the mapping n: it reports repeated and unknown keys (suggesting the
// nearest known one) and calls set for every known key with its resolved value.
func fields(ps *problems, n *yaml.Node, what string, known []string, set func(key string, v *yaml.Node)) position {
	p := position{line: n.Line, keys: map[string]int{}, reported: map[string]bool{}}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			ps.addf(k.Line, "%s: a key must be a plain word", what)
			continue
		}
		key := k.Value
		if first, ok := p.keys[key]; ok {
			ps.addf(k.Line, "%s: field %q repeated (first at line %d)", what, key, first)
			continue
		}
		p.keys[key] = k.Line
		if !slices.Contains(known, key) {
			reason := fmt.Sprintf("unknown field %q in %s", key, what)
			if s := suggest(key, known); s != "" {
				reason += fmt.Sprintf(" (did you mean %q?)", s)
				p.reported[s] = true
			} else {
				reason += " (known: " + strings.Join(known, ", ") + ")"
			}
			ps.addf(k.Line, "%s", reason)
			continue
		}
		before := len(ps.list)
		set(key, v)
		if len(ps.list) > before {
			p.reported[key] = true
		}
	}
	return p
}

// lookup returns the value of key in the mapping n, or nil.
func lookup(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Kind == yaml.ScalarNode && n.Content[i].Value == key {
			return resolve(n.Content[i+1])
		}
	}
	return nil
}

// str returns the text of a scalar, trimmed; it reports any other kind of value.
func str(ps *problems, v *yaml.Node, what string) string {
	if isNull(v) {
		return ""
	}
	if v.Kind != yaml.ScalarNode {
		ps.addf(v.Line, "%s: want text, got %s", what, describe(v))
		return ""
	}
	return strings.TrimSpace(v.Value)
}

// strList reads v, a list of strings named what ("artifact \"x\": tools"), and
// the line of each entry; null is an empty list. want says what a list should be,
// for the problem when v is not one.
func strList(ps *problems, v *yaml.Node, what, want string) (vals []string, lines []int) {
	if isNull(v) {
		return nil, nil
	}
	if v.Kind != yaml.SequenceNode {
		ps.addf(v.Line, "%s: want %s", what, want)
		return nil, nil
	}
	for _, item := range v.Content {
		item = resolve(item)
		vals = append(vals, str(ps, item, what+" entry"))
		lines = append(lines, item.Line)
	}
	return vals, lines
}

// whole returns the whole number v holds (0 when it is null); it reports any other
// value.
func whole(ps *problems, v *yaml.Node, what string) int {
	if isNull(v) {
		return 0
	}
	var n int
	if v.Kind != yaml.ScalarNode || v.Decode(&n) != nil {
		ps.addf(v.Line, "%s: want a whole number, got %s", what, describe(v))
	}
	return n
}

// share returns the pass share v holds, nil when it is null; it reports a value that
// is not a number (the range is check's).
func share(ps *problems, v *yaml.Node, what string) *float64 {
	if isNull(v) {
		return nil
	}
	var f float64
	if v.Kind != yaml.ScalarNode || v.Decode(&f) != nil {
		ps.addf(v.Line, "%s: want a number between 0 and 1, like 0.75, got %s", what, describe(v))
		return nil
	}
	return &f
}

// boolean returns the true or false v holds (false when it is null); it reports any
// other value.
func boolean(ps *problems, v *yaml.Node, what string) bool {
	if isNull(v) {
		return false
	}
	var b bool
	if v.Kind != yaml.ScalarNode || v.Decode(&b) != nil {
		ps.addf(v.Line, "%s: want true or false, got %s", what, describe(v))
	}
	return b
}

func isNull(v *yaml.Node) bool {
	return v.Kind == yaml.ScalarNode && v.Tag == "!!null"
}

// resolve follows YAML aliases (*anchor) to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// describe names a YAML value for a problem.
func describe(v *yaml.Node) string {
	switch v.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	default:
		return strconv.Quote(v.Value)
	}
}

// synonyms maps words authors write for a field to the field (when nearest would
// not find it: "retry" is three edits from "retries").
var synonyms = map[string]string{
	"retry":        "retries",
	"attempts":     "retries",
	"parallel":     "concurrency",
	"parallelism":  "concurrency",
	"each":         "foreach",
	"profile":      "model",
	"dependencies": "depends_on",
}

// suggest returns the known field an unknown key probably means, or "".
func suggest(key string, known []string) string {
	if s, ok := synonyms[strings.ToLower(key)]; ok && slices.Contains(known, s) {
		return s
	}
	return nearest(key, known)
}

// nearest returns the candidate closest to s within edit distance 2 (and less than
// the length of s), or "".
func nearest(s string, candidates []string) string {
	best, bestDist := "", min(3, len(s))
	for _, c := range candidates {
		if d := distance(s, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b, ignoring case and with "-"
// and "_" equal.
func distance(a, b string) int {
	norm := strings.NewReplacer("-", "_")
	ra, rb := []rune(norm.Replace(strings.ToLower(a))), []rune(norm.Replace(strings.ToLower(b)))
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
