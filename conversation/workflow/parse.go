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
	checking{d}.check(ps, pos)
	if len(ps.list) > 0 {
		slices.SortStableFunc(ps.list, func(a, b Problem) int { return a.Line - b.Line })
		return nil, ps.err()
	}
	return d, nil
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

// The fields of each mapping, in the order the schema documents them.
var (
	definitionFields = []string{"name", "title", "description", "locale", "approvers", "permissions", "inputs", "pass_share", "artifacts", "report"}
	artifactFields   = []string{"id", "title", "description", "mode", "options", "depends_on", "criteria", "pass_share", "prompt", "model", "prefer_model", "tools", "editor", "foreach", "retries", "concurrency", "fetch", "research_strategy", "self_review", "enhance"}
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
	root := decodeRoot(ps, data)
	if root == nil {
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
			pos.permissions = decodePermissions(ps, v, &d.Permissions)
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

// decodeRoot reads data as one YAML document and returns its root mapping, or nil,
// with a problem, when there is none: an empty file, a syntax error, or a document
// that is not a mapping. A second document is a problem too.
func decodeRoot(ps *problems, data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	err := dec.Decode(&doc)
	if errors.Is(err, io.EOF) {
		ps.addf(0, "empty file: a workflow needs at least name, title and artifacts")
		return nil
	}
	if err != nil {
		syntaxProblem(ps, err, data)
		return nil
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
			return nil
		}
		root = resolve(root.Content[0])
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" && root.Value == "" {
		// "---" alone: yaml.v3 places the empty document on the line after it.
		ps.addf(0, "empty file: a workflow needs at least name, title and artifacts")
		return nil
	}
	if root.Kind != yaml.MappingNode {
		ps.addf(root.Line, "a workflow is a YAML mapping with name, title, artifacts, …")
		return nil
	}
	return root
}

// decodePermissions reads v, the permissions mapping (actions to rules), into perm
// and returns where it is.
func decodePermissions(ps *problems, v *yaml.Node, perm *Permissions) position {
	p := position{line: v.Line}
	if isNull(v) {
		return p
	}
	if v.Kind != yaml.MappingNode {
		ps.addf(v.Line, "permissions: want a mapping of actions to rules, like permissions: {cancel: starter}")
		p.broken = true
		return p
	}
	return fields(ps, v, "permissions", permissionFields, func(key string, v *yaml.Node) {
		rule := str(ps, v, "permissions: "+key)
		switch key {
		case "approve":
			perm.Approve = rule
		case "keep":
			perm.Keep = rule
		case "restart":
			perm.Restart = rule
		case "edit":
			perm.Edit = rule
		case "cancel":
			perm.Cancel = rule
		}
	})
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
		case "prefer_model":
			a.PreferModel = str(ps, v, what+": prefer_model")
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
			a.Criteria, ap.criteria = decodeCriteria(ps, v, what)
		}
	})
	return a, ap
}

// decodeCriteria reads v, the criteria list of artifact what, and returns the
// criteria with where each is (a broken position for one that is not a mapping).
func decodeCriteria(ps *problems, v *yaml.Node, what string) (criteria []Criterion, cps []position) {
	if isNull(v) {
		return nil, nil
	}
	if v.Kind != yaml.SequenceNode {
		ps.addf(v.Line, "%s: criteria: want a list of criteria (- id: …, description: …)", what)
		return nil, nil
	}
	for j, item := range v.Content {
		item = resolve(item)
		cwhat := fmt.Sprintf("%s: criterion #%d", what, j+1)
		if item.Kind != yaml.MappingNode {
			ps.addf(item.Line, "%s: want a mapping with id and description", cwhat)
			criteria = append(criteria, Criterion{})
			cps = append(cps, position{line: item.Line, broken: true})
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
		criteria = append(criteria, c)
		cps = append(cps, cp)
	}
	return criteria, cps
}
