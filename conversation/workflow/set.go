package workflow

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// BuiltinPrefix is the Source prefix of the built-in workflows ("builtin:proposal.yaml").
const BuiltinPrefix = "builtin:"

// Load parses every workflow file (*.yaml, *.yml) directly in dir of fsys, in name
// order; it does not descend into subdirectories. Each definition's Source is
// sourcePrefix followed by the file's name: Load(prompts.Workflows, "workflows",
// BuiltinPrefix) gives "builtin:proposal.yaml"; Load(os.DirFS(d), ".", d+"/") gives
// paths.
//
// It returns the valid definitions and, when any file is invalid or unreadable, an
// *Error listing the problems of all of them. It fails without definitions when dir
// cannot be read. Duplicate names are NewSet's to find.
func Load(fsys fs.FS, dir, sourcePrefix string) ([]*Definition, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("workflow: read %s: %w", strings.TrimSuffix(sourcePrefix+dir, "/."), err)
	}
	var (
		defs []*Definition
		all  []Problem
	)
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !IsWorkflowFile(name) {
			continue
		}
		source := sourcePrefix + name
		data, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			all = append(all, Problem{File: source, Reason: err.Error()})
			continue
		}
		d, err := Parse(source, data)
		if err != nil {
			all = append(all, problemsOf(source, err)...)
			continue
		}
		defs = append(defs, d)
	}
	if len(all) > 0 {
		return defs, &Error{Problems: all}
	}
	return defs, nil
}

// IsWorkflowFile reports whether name is a workflow file's name: it ends in .yaml or
// .yml and does not start with "." (editors' and macOS's hidden files).
func IsWorkflowFile(name string) bool {
	ext := path.Ext(name)
	return (ext == ".yaml" || ext == ".yml") && !strings.HasPrefix(name, ".")
}

// problemsOf returns the problems of err: its *Error's, or err as one problem.
func problemsOf(source string, err error) []Problem {
	if e := (*Error)(nil); errors.As(err, &e) {
		return e.Problems
	}
	return []Problem{{File: source, Reason: err.Error()}}
}

// Set is the workflows a deployment offers, by name. It is immutable and safe for
// concurrent use.
type Set struct {
	byName map[string]*Definition
	names  []string
}

// NewSet returns the set of defs (nil entries are skipped). Two definitions with the
// same name are an *Error at the later one's name line, naming the earlier one's
// source: nothing overrides anything silently, and in particular a file in
// WORKFLOWS_DIR cannot replace a built-in (pass the built-ins first).
func NewSet(defs ...*Definition) (*Set, error) {
	s := &Set{byName: map[string]*Definition{}}
	var all []Problem
	for _, d := range defs {
		if d == nil {
			continue
		}
		first, dup := s.byName[d.Name]
		if !dup {
			s.byName[d.Name] = d
			s.names = append(s.names, d.Name)
			continue
		}
		reason := fmt.Sprintf("workflow %q is already defined in %s", d.Name, first.Source)
		if strings.HasPrefix(first.Source, BuiltinPrefix) {
			reason += "; a built-in workflow cannot be replaced, give this one another name"
		} else {
			reason += "; workflow names must be unique"
		}
		all = append(all, Problem{File: d.Source, Line: d.line, Reason: reason})
	}
	if len(all) > 0 {
		return nil, &Error{Problems: all}
	}
	slices.Sort(s.names)
	return s, nil
}

// Get returns the workflow called name.
func (s *Set) Get(name string) (*Definition, bool) {
	d, ok := s.byName[name]
	return d, ok
}

// All returns the workflows sorted by name.
func (s *Set) All() []*Definition {
	all := make([]*Definition, len(s.names))
	for i, n := range s.names {
		all[i] = s.byName[n]
	}
	return all
}

// Names returns the workflows' names, sorted.
func (s *Set) Names() []string { return slices.Clone(s.names) }
