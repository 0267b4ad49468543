package prompts

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
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

// Memo renders one template of a Set and keeps the last text it rendered with that
// text's data, so that a Render with equal data (reflect.DeepEqual) returns the text
// without executing the template again. The executor's system prompt is the same for
// most turns (the same date, tools and instructions), and rendering it costs more
// than the rest of a turn's prompt building. A Memo is safe for concurrent use; data
// given to Render must not change afterwards.
type Memo[T any] struct {
	set  *Set
	name string
	last atomic.Pointer[memoEntry[T]]
}

type memoEntry[T any] struct {
	data T
	text string
}

// NewMemo returns a Memo of the template called name in s.
func NewMemo[T any](s *Set, name string) *Memo[T] {
	return &Memo[T]{set: s, name: name}
}

// Render is Set.Render of the Memo's template with data, rendered again only when
// data differs from the last data rendered. Errors: Set.Render's (not remembered).
func (m *Memo[T]) Render(data T) (string, error) {
	if e := m.last.Load(); e != nil && reflect.DeepEqual(e.data, data) {
		return e.text, nil
	}
	text, err := m.set.Render(m.name, data)
	if err != nil {
		return "", err
	}
	m.last.Store(&memoEntry[T]{data: data, text: text})
	return text, nil
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
