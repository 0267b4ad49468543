package workflow_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	yamlv3 "gopkg.in/yaml.v3"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// FuzzParse: the workflow YAML parser never panics; every problem it reports names
// the file and a line of it (line 0 only for a file with no workflow in it at all,
// or YAML whose error yaml.v3 gives no line for); and a definition that parses
// validates again without a problem and without changing. Its seeds (the built-in
// workflows and files exercising each check) run in every go test; go test
// -fuzz=FuzzParse ./conversation/workflow explores further.
func FuzzParse(f *testing.F) {
	builtins, _ := filepath.Glob(filepath.Join("..", "..", "prompts", "workflows", "*.yaml"))
	for _, path := range builtins {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, src := range []string{
		"",
		"# only a comment\n",
		"name: x\ntitle: X\nartifacts:\n  - id: a\n    title: A\n",
		"name: x\ntitle: X\napprovers: starter\npermissions:\n  cancel: approvers\n  keep: starter\nartifacts:\n  - id: a\n    title: A\n",
		"name: x\ntitle: X\npermissions:\n  approve: everyone\n  keep: anyone\n  delete: x\nartifacts:\n  - id: a\n    title: A\n",
		"name: x\ntitle: X\npermissions: [a]\nartifacts:\n  - id: a\n    mode: auto\n    depends_on: [b]\n  - id: b\n    depends_on: [a]\n",
		"name: x\ntitle: X\nartifacts:\n  - id: a\n    title: A\n    foreach: b\n    editor: {prompt: p}\n    criteria:\n      - {id: c, description: d}\nreport: |\n  {{.Nope}}\n",
		"name: Bad Name\n\tartifacts: x\n",
		"a: [\n",
		"name: x\n---\nname: y\n",
		"- just\n- a list\n",
		"name: &a x\ntitle: *a\nartifacts: *a\n",
	} {
		f.Add([]byte(src))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		def, err := workflow.Parse("f.yaml", data)
		if err != nil {
			if def != nil {
				t.Fatal("a definition returned with problems")
			}
			var perr *workflow.Error
			if !errors.As(err, &perr) || len(perr.Problems) == 0 {
				t.Fatalf("error %v is not a list of problems", err)
			}
			// YAML breaks lines at "\r\n", "\n" and a lone "\r".
			lines := bytes.Count(bytes.ReplaceAll(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n")), []byte("\n")) + 1
			for _, p := range perr.Problems {
				if p.File != "f.yaml" || p.Reason == "" {
					t.Fatalf("problem %+v lacks its file or reason", p)
				}
				if p.Line < 0 || p.Line > lines {
					t.Fatalf("problem %q at line %d of a %d-line file", p, p.Line, lines)
				}
				if p.Line == 0 && !strings.HasPrefix(p.Reason, "empty file") && !strings.HasPrefix(p.Reason, "invalid YAML") {
					t.Fatalf("problem %q has no line", p)
				}
			}
			return
		}
		before, err := yamlv3.Marshal(def)
		if err != nil {
			t.Fatal(err)
		}
		if err := def.Validate(); err != nil {
			t.Fatalf("a parsed definition does not validate again: %v", err)
		}
		after, _ := yamlv3.Marshal(def)
		if !bytes.Equal(before, after) {
			t.Fatalf("validating again changed the definition:\n%s\nwas:\n%s", after, before)
		}
		for _, p := range []workflow.Permission{workflow.PermApprove, workflow.PermKeep, workflow.PermRestart, workflow.PermEdit, workflow.PermCancel} {
			switch def.Rule(p) {
			case workflow.RuleAnyone, workflow.RuleStarter, workflow.RuleApprovers:
			default:
				t.Fatalf("%s has rule %q", p, def.Rule(p))
			}
		}
		if def.Rule(workflow.PermKeep) != def.Rule(workflow.PermApprove) {
			t.Fatal("keep and approve follow different rules")
		}
	})
}
