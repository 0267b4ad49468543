package workflow

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Parse reads one workflow definition from data, a YAML document (the schema is in the
// package documentation), fills the defaults (mode draft; DefaultOptions options for a
// choice artifact; DefaultReport when report is empty) and validates it.
//
// source names the file in problems and becomes Definition.Source. Parsing is strict:
// unknown fields, fields of the wrong kind and repeated keys are problems. When
// anything is wrong Parse returns a nil Definition and an *Error listing every problem
// found, each with its line, sorted by line.
func Parse(source string, data []byte) (*Definition, error) {
	ps := &problems{file: source}
	d, pos := decode(ps, data)
	if d == nil {
		return nil, ps.err()
	}
	d.Source = source
	d.check(ps, pos)
	if len(ps.list) > 0 {
		slices.SortStableFunc(ps.list, func(a, b Problem) int { return a.Line - b.Line })
		return nil, ps.err()
	}
	return d, nil
}

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

// decodePass reads v, the mapping of an artifact's model pass under key (editor,
// enhance: a prompt and a model profile, fields), for artifact what; want is the
// problem when v is not a mapping. A key without a value gives empty strings, so that
// a missing prompt is reported by the checks.
func decodePass(ps *problems, v *yaml.Node, what, key string, fieldNames []string, want string) (prompt, model string, p position) {
	p = position{line: v.Line}
	if isNull(v) {
		return "", "", p
	}
	if v.Kind != yaml.MappingNode {
		ps.addf(v.Line, "%s: %s: %s", what, key, want)
		p.broken = true
		return "", "", p
	}
	pwhat := what + ": " + key
	p = fields(ps, v, pwhat, fieldNames, func(k string, v *yaml.Node) {
		switch k {
		case "prompt":
			prompt = str(ps, v, pwhat+": prompt")
		case "model":
			model = str(ps, v, pwhat+": model")
		}
	})
	return prompt, model, p
}

func (a artifactPosition) criterion(j int) position {
	if j < len(a.criteria) {
		return a.criteria[j]
	}
	return position{line: a.at("criteria")}
}

// The fields of each mapping, in the order the schema documents them.
var (
	definitionFields = []string{"name", "title", "description", "locale", "approvers", "permissions", "inputs", "pass_share", "artifacts", "report"}
	artifactFields   = []string{"id", "title", "description", "mode", "options", "depends_on", "criteria", "pass_share", "prompt", "model", "tools", "editor", "foreach", "retries", "concurrency", "fetch", "research_strategy", "self_review", "enhance"}
	criterionFields  = []string{"id", "description", "critical", "check"}
	editorFields     = []string{"prompt", "model"}
	enhanceFields    = []string{"model", "prompt"}
	permissionFields = []string{"approve", "keep", "restart", "edit", "cancel"}
)

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// decode turns data into a Definition, recording where each part is. It reports
// syntax errors, unknown or repeated fields and values of the wrong kind; it returns
// nil when the document is not a mapping at all.
func decode(ps *problems, data []byte) (*Definition, *positions) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	err := dec.Decode(&doc)
	if errors.Is(err, io.EOF) {
		ps.addf(0, "empty file: a workflow needs at least name, title and artifacts")
		return nil, nil
	}
	if err != nil {
		syntaxProblem(ps, err, data)
		return nil, nil
	}
	var second yaml.Node
	if err := dec.Decode(&second); err == nil {
		ps.addf(second.Line, "a file holds one workflow: remove the second YAML document (from this ---)")
	} else if !errors.Is(err, io.EOF) {
		syntaxProblem(ps, err, data)
	}
	root := resolve(&doc)
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 { // only comments
			ps.addf(0, "empty file: a workflow needs at least name, title and artifacts")
			return nil, nil
		}
		root = resolve(root.Content[0])
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" && root.Value == "" {
		// "---" alone: yaml.v3 places the empty document on the line after it.
		ps.addf(0, "empty file: a workflow needs at least name, title and artifacts")
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		ps.addf(root.Line, "a workflow is a YAML mapping with name, title, artifacts, …")
		return nil, nil
	}
	d := &Definition{}
	pos := &positions{}
	pos.def = fields(ps, root, "the workflow", definitionFields, func(key string, v *yaml.Node) {
		switch key {
		case "name":
			d.Name = str(ps, v, "name")
		case "title":
			d.Title = str(ps, v, "title")
		case "description":
			d.Description = str(ps, v, "description")
		case "locale":
			d.Locale = str(ps, v, "locale")
		case "approvers":
			d.Approvers = str(ps, v, "approvers")
		case "permissions":
			pos.permissions = position{line: v.Line}
			if isNull(v) {
				return
			}
			if v.Kind != yaml.MappingNode {
				ps.addf(v.Line, "permissions: want a mapping of actions to rules, like permissions: {cancel: starter}")
				pos.permissions.broken = true
				return
			}
			pos.permissions = fields(ps, v, "permissions", permissionFields, func(key string, v *yaml.Node) {
				rule := str(ps, v, "permissions: "+key)
				switch key {
				case "approve":
					d.Permissions.Approve = rule
				case "keep":
					d.Permissions.Keep = rule
				case "restart":
					d.Permissions.Restart = rule
				case "edit":
					d.Permissions.Edit = rule
				case "cancel":
					d.Permissions.Cancel = rule
				}
			})
		case "inputs":
			decodeInputs(ps, v, d, pos)
		case "pass_share":
			d.PassShare = share(ps, v, "pass_share")
		case "report":
			if v.Kind == yaml.ScalarNode {
				d.Report = v.Value
				pos.report = v
			} else {
				ps.addf(v.Line, "report: want text (a text/template), like report: |")
			}
		case "artifacts":
			if isNull(v) {
				return
			}
			if v.Kind != yaml.SequenceNode {
				ps.addf(v.Line, "artifacts: want a list of artifacts (- id: …)")
				return
			}
			for i, item := range v.Content {
				a, ap := decodeArtifact(ps, resolve(item), i)
				d.Artifacts = append(d.Artifacts, a)
				pos.artifacts = append(pos.artifacts, ap)
			}
		}
	})
	return d, pos
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

// syntaxProblem reports a YAML syntax error, at its line when yaml.v3 names one.
func syntaxProblem(ps *problems, err error, data []byte) {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		reason := "invalid YAML: " + m[2]
		if lines := strings.Split(string(data), "\n"); line > 0 && line <= len(lines) && strings.Contains(lines[line-1], "\t") {
			reason += " (indent with spaces: YAML does not allow tabs)"
		}
		ps.addf(line, "%s", reason)
		return
	}
	ps.addf(0, "invalid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
}

func decodeArtifact(ps *problems, n *yaml.Node, i int) (Artifact, artifactPosition) {
	var a Artifact
	ap := artifactPosition{position: position{line: n.Line}}
	if n.Kind != yaml.MappingNode {
		ps.addf(n.Line, "artifact #%d: want a mapping with id, title, …", i+1)
		ap.broken = true
		return a, ap
	}
	what := fmt.Sprintf("artifact #%d", i+1)
	if id := lookup(n, "id"); id != nil && id.Kind == yaml.ScalarNode && id.Value != "" {
		what = fmt.Sprintf("artifact %q", id.Value)
	}
	ap.position = fields(ps, n, what, artifactFields, func(key string, v *yaml.Node) {
		switch key {
		case "id":
			a.ID = str(ps, v, what+": id")
		case "title":
			a.Title = str(ps, v, what+": title")
		case "description":
			a.Description = str(ps, v, what+": description")
		case "mode":
			a.Mode = Mode(str(ps, v, what+": mode"))
		case "prompt":
			a.Prompt = str(ps, v, what+": prompt")
		case "options":
			a.Options = whole(ps, v, what+": options")
		case "retries":
			a.Retries = whole(ps, v, what+": retries")
		case "concurrency":
			a.Concurrency = whole(ps, v, what+": concurrency")
		case "pass_share":
			a.PassShare = share(ps, v, what+": pass_share")
		case "foreach":
			a.Foreach = str(ps, v, what+": foreach")
		case "model":
			a.Model = str(ps, v, what+": model")
		case "fetch":
			a.Fetch = str(ps, v, what+": fetch")
		case "research_strategy":
			a.ResearchStrategy = str(ps, v, what+": research_strategy")
		case "tools":
			a.Tools, ap.tools = strList(ps, v, what+": tools", "a list of tool names, like [web_search, fetch_url]")
		case "editor":
			a.Editor = &Editor{}
			a.Editor.Prompt, a.Editor.Model, ap.editor = decodePass(ps, v, what, "editor", editorFields,
				"want a mapping with prompt (and optionally model), like editor: {prompt: Tighten the prose}")
		case "self_review":
			a.SelfReview = boolean(ps, v, what+": self_review")
		case "enhance":
			a.Enhance = &Enhance{}
			a.Enhance.Prompt, a.Enhance.Model, ap.enhance = decodePass(ps, v, what, "enhance", enhanceFields,
				"want a mapping with model and prompt, like enhance: {model: enhance, prompt: Sharpen the prose}")
		case "depends_on":
			a.DependsOn, ap.dependsOn = strList(ps, v, what+": depends_on", "a list of artifact ids, like [research]")
		case "criteria":
			if isNull(v) {
				return
			}
			if v.Kind != yaml.SequenceNode {
				ps.addf(v.Line, "%s: criteria: want a list of criteria (- id: …, description: …)", what)
				return
			}
			for j, item := range v.Content {
				item = resolve(item)
				cwhat := fmt.Sprintf("%s: criterion #%d", what, j+1)
				if item.Kind != yaml.MappingNode {
					ps.addf(item.Line, "%s: want a mapping with id and description", cwhat)
					a.Criteria = append(a.Criteria, Criterion{})
					ap.criteria = append(ap.criteria, position{line: item.Line, broken: true})
					continue
				}
				if id := lookup(item, "id"); id != nil && id.Kind == yaml.ScalarNode && id.Value != "" {
					cwhat = fmt.Sprintf("%s: criterion %q", what, id.Value)
				}
				var c Criterion
				cp := fields(ps, item, cwhat, criterionFields, func(key string, v *yaml.Node) {
					switch key {
					case "id":
						c.ID = str(ps, v, cwhat+": id")
					case "description":
						c.Description = str(ps, v, cwhat+": description")
					case "critical":
						c.Critical = boolean(ps, v, cwhat+": critical")
					case "check":
						c.Check = decodeCheck(ps, v, cwhat+": check")
					}
				})
				a.Criteria = append(a.Criteria, c)
				ap.criteria = append(ap.criteria, cp)
			}
		}
	})
	return a, ap
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
