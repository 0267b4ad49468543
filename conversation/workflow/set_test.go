package workflow_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/threadwright/threadwright/conversation/workflow"
)

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

const minimal = "name: %s\ntitle: T\nartifacts:\n  - {id: a, title: A}\n"

func minimalNamed(name string) string { return strings.Replace(minimal, "%s", name, 1) }

func TestLoad(t *testing.T) {
	fsys := fstest.MapFS{
		"wf/b.yml":        file(minimalNamed("beta")),
		"wf/a.yaml":       file(minimalNamed("alpha")),
		"wf/bad.yaml":     file("name: bad\ntitle: Bad\nartifacts:\n  - {id: a, title: A, depends_on: [zz]}\n"),
		"wf/notes.txt":    file("not a workflow"),
		"wf/.hidden.yaml": file("garbage: ["),
		"wf/sub/c.yaml":   file(minimalNamed("gamma")),
	}
	defs, err := workflow.Load(fsys, "wf", "/etc/wf/")
	var e *workflow.Error
	if !errors.As(err, &e) {
		t.Fatalf("Load error = %v, want *workflow.Error", err)
	}
	want := `/etc/wf/bad.yaml:4: artifact "a": depends_on names unknown artifact "zz"`
	if err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	var names, sources []string
	for _, d := range defs {
		names = append(names, d.Name)
		sources = append(sources, d.Source)
	}
	if !slices.Equal(names, []string{"alpha", "beta"}) || !slices.Equal(sources, []string{"/etc/wf/a.yaml", "/etc/wf/b.yml"}) {
		t.Errorf("loaded %v from %v", names, sources)
	}

	if _, err := workflow.Load(fsys, "missing", "x/"); err == nil || errors.As(err, &e) {
		t.Errorf("Load(missing) = %v, want a read error", err)
	}
	if defs, err := workflow.Load(fsys, "wf/sub", ""); err != nil || len(defs) != 1 {
		t.Errorf("Load(wf/sub) = %v, %v", defs, err)
	}
}

func TestNewSet(t *testing.T) {
	parse := func(source, src string) *workflow.Definition {
		t.Helper()
		d, err := workflow.Parse(source, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	builtinProposal := parse("builtin:proposal.yaml", minimalNamed("proposal"))
	mine := parse("/etc/wf/mine.yaml", minimalNamed("mine"))

	t.Run("OK", func(t *testing.T) {
		set, err := workflow.NewSet(mine, nil, builtinProposal)
		if err != nil {
			t.Fatal(err)
		}
		if got := set.Names(); !slices.Equal(got, []string{"mine", "proposal"}) {
			t.Errorf("Names() = %v", got)
		}
		if all := set.All(); len(all) != 2 || all[0] != mine || all[1] != builtinProposal {
			t.Errorf("All() = %v", all)
		}
		if d, ok := set.Get("proposal"); !ok || d != builtinProposal {
			t.Errorf("Get(proposal) = %v, %v", d, ok)
		}
		if _, ok := set.Get("nope"); ok {
			t.Error("Get(nope) found")
		}
	})
	t.Run("OverrideBuiltin", func(t *testing.T) {
		override := parse("/etc/wf/proposal.yaml", "# my own\n"+minimalNamed("proposal"))
		_, err := workflow.NewSet(builtinProposal, override)
		want := `/etc/wf/proposal.yaml:2: workflow "proposal" is already defined in builtin:proposal.yaml; a built-in workflow cannot be replaced, give this one another name`
		if err == nil || err.Error() != want {
			t.Errorf("err = %v, want %s", err, want)
		}
	})
	t.Run("Duplicate", func(t *testing.T) {
		other := parse("/etc/wf/other.yaml", minimalNamed("mine"))
		_, err := workflow.NewSet(mine, other)
		want := `/etc/wf/other.yaml:1: workflow "mine" is already defined in /etc/wf/mine.yaml; workflow names must be unique`
		if err == nil || err.Error() != want {
			t.Errorf("err = %v, want %s", err, want)
		}
	})
}
