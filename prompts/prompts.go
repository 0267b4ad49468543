package prompts

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"text/template"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

// The names of the embedded templates, for Set.Render. A name is the template's file
// name under templates/ without the ".tmpl" extension.
const (
	// ExecutorSystem is the ReAct executor's system prompt; data: ExecutorSystemData.
	ExecutorSystem = "executor_system"
	// FinalAnswer is the user message that asks the executor for its final answer
	// once the step bound is reached; data: FinalAnswerData.
	FinalAnswer = "final_answer"
	// ScopeSystem is the scope classifier's system prompt; data: ScopeData.
	ScopeSystem = "scope_system"
	// ScopeRequest is the message the scope classifier classifies; data: ScopeRequestData.
	ScopeRequest = "scope_request"
	// ScopeRefusal is the reply posted when a request is out of scope; data: ScopeRefusalData.
	ScopeRefusal = "scope_refusal"
)

// Set is the parsed templates. It is immutable and safe for concurrent use.
type Set struct {
	tmpl  *template.Template
	names []string
}

// Parse parses every embedded template. Call it once at start-up: it fails when a
// template does not parse, naming the file.
func Parse() (*Set, error) {
	return parseFS(templateFS, "templates/*.tmpl")
}

// MustParse is like Parse but panics on error. The embedded templates are covered by
// this package's tests, so it is safe for defaults.
func MustParse() *Set {
	s, err := Parse()
	if err != nil {
		panic(err)
	}
	return s
}

func parseFS(fsys fs.FS, pattern string) (*Set, error) {
	files, err := fs.Glob(fsys, pattern)
	if err != nil {
		return nil, fmt.Errorf("prompts: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("prompts: no templates match %q", pattern)
	}
	root := template.New("").Option("missingkey=error").Funcs(funcs)
	s := &Set{tmpl: root}
	for _, f := range files {
		text, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, fmt.Errorf("prompts: %w", err)
		}
		name := strings.TrimSuffix(path.Base(f), ".tmpl")
		if _, err := root.New(name).Parse(string(text)); err != nil {
			return nil, fmt.Errorf("prompts: parse %s: %w", f, err)
		}
		s.names = append(s.names, name)
	}
	slices.Sort(s.names)
	return s, nil
}

// Names returns the names of the parsed templates, sorted.
func (s *Set) Names() []string { return slices.Clone(s.names) }

// Render executes the template called name (see the name constants) with data and
// returns the text with surrounding white space trimmed. Errors: an unknown name, or a
// field or map key the template needs that data lacks.
func (s *Set) Render(name string, data any) (string, error) {
	t := s.tmpl.Lookup(name)
	if t == nil || !slices.Contains(s.names, name) {
		return "", fmt.Errorf("prompts: no template %q", name)
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("prompts: render %s: %w", name, err)
	}
	return strings.TrimSpace(b.String()), nil
}

// funcs are the helpers available to every template.
var funcs = template.FuncMap{
	// join joins strings with a separator: {{join .Names ", "}}.
	"join": func(elems []string, sep string) string { return strings.Join(elems, sep) },
	// trim removes surrounding white space.
	"trim": strings.TrimSpace,
	// quote indents every line of s with "> ", for quoting user text.
	"quote": func(s string) string {
		lines := strings.Split(strings.TrimSpace(s), "\n")
		for i, l := range lines {
			lines[i] = "> " + l
		}
		return strings.Join(lines, "\n")
	},
}
