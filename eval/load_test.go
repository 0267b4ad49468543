package eval_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/threadwright/threadwright/eval"
	"github.com/threadwright/threadwright/eval/evalset"
)

// write writes files (path → content) under dir.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLoad: a directory's cases load recursively, in lexical order, with their
// defaults and the documents they name beside them; hidden files are left out.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"b.yaml":             "thread: [{say: \"@threadwright hi\"}]\n",
		"sub/a.yml":          "name: first\nchannel: dm\nknowledge: [{file: ../docs/leave.md}]\nthread: [{say: hi, answer: {contains: [x]}}]\nexpect: {tools: {calls: [{name: calculate}]}}\n",
		"docs/leave.md":      "# Leave\n\n16 weeks.",
		".hidden/skip.yaml":  "not: a case",
		"notes.txt":          "not a case",
		"sub/.ignored.yaml":  "not: a case",
		"retrieval-only.yml": "retrieval: {questions: [{question: leave, expect: [docs/leave.md]}]}\nknowledge: [{source: docs/leave.md, text: \"# Leave\"}]\n",
	})
	cases, err := eval.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cases {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "b,retrieval-only,first" {
		t.Fatalf("names %v", names)
	}
	b, first, retr := cases[0], cases[2], cases[1]
	if b.Channel != "general" || b.Thread[0].User != "alice" || b.Thread[0].Kind() != "say" || b.Path != filepath.ToSlash(dir)+"/b.yaml" {
		t.Errorf("defaults: %+v", b)
	}
	if first.Channel != "dm" || first.Knowledge[0].Source != "../docs/leave.md" || first.Knowledge[0].Text != "# Leave\n\n16 weeks." ||
		first.Expect.Tools.Match != eval.MatchExact || first.Thread[0].Answer == nil {
		t.Errorf("first: %+v", first)
	}
	if retr.Retrieval.K != 5 {
		t.Errorf("retrieval k %d", retr.Retrieval.K)
	}
	one, err := eval.Load(filepath.Join(dir, "sub", "a.yml"))
	if err != nil || len(one) != 1 || one[0].Name != "first" {
		t.Errorf("a file: %v %v", one, err)
	}
}

// TestLoadErrors: a broken case is refused with its file and what is wrong, with the
// line where the YAML has one.
func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"UnknownField", "thread: [{say: hi}]\nexpectations: {}\n", "line 2: field expectations not found"},
		{"UnknownStepKey", "thread:\n  - say: hi\n  - type: hello\n", "line 3: unknown step key \"type\""},
		{"TwoThingsAtOnce", "thread:\n  - {say: hi, click: Approve}\n", "line 2: a step does exactly one thing"},
		{"StartsWithAClick", "thread:\n  - click: Approve\n", "the thread starts with a message (say) or a command"},
		{"UnderAlone", "thread:\n  - {say: hi, under: x}\n", "under goes with click or choose"},
		{"UnknownUser", "thread:\n  - {say: hi, user: carol}\n", "user \"carol\": expected alice or bob"},
		{"BobInAliceDM", "channel: dm\nthread:\n  - {say: hi, user: bob}\n", "bob is not in it"},
		{"CommandInDM", "channel: dm\nthread:\n  - command: start blog\n", "slash commands from channels only"},
		{"UnknownChannel", "channel: ops\nthread: [{say: hi}]\n", "channel \"ops\""},
		{"NothingToDo", "description: empty\n", "neither a thread nor retrieval questions"},
		{"MatchMode", "thread: [{say: hi}]\nexpect: {tools: {match: fuzzy}}\n", "match \"fuzzy\""},
		{"BadPattern", "thread: [{say: hi}]\nexpect: {answer: {matches: [\"(\"]}}\n", "answer: matches: error parsing regexp"},
		{"BadArgPattern", "thread: [{say: hi}]\nexpect: {tools: {calls: [{name: c, args: {x: \"[\"}}]}}\n", "calls[0] (c): args x"},
		{"Scope", "thread: [{say: hi}]\nexpect: {scope: maybe}\n", "scope \"maybe\""},
		{"Status", "thread: [{say: hi}]\nexpect: {workflow: {artifacts: {plan: done}}}\n", "plan: status \"done\""},
		{"CriteriaAll", "thread: [{say: hi}]\nexpect: {workflow: {criteria: [all, plan]}}\n", "all goes alone"},
		{"FixedSetting", "settings: {OPENAI_MODEL: x}\nthread: [{say: hi}]\n", "OPENAI_MODEL is chosen by threadwright eval itself"},
		{"SettingName", "settings: {scope: x}\nthread: [{say: hi}]\n", "\"scope\" is not a setting's name"},
		{"FileOutside", "files: {../x: y}\nthread: [{say: hi}]\n", "give a relative path inside"},
		{"DocumentMissing", "knowledge: [{file: nowhere.md}]\nthread: [{say: hi}]\n", "knowledge[0]: open"},
		{"DocumentTwice", "knowledge: [{file: a.md, text: x}]\nthread: [{say: hi}]\n", "the document's text or its file"},
		{"ToolNoDescription", "tools: [{name: t}]\nthread: [{say: hi}]\n", "needs a description"},
		{"Retrieval", "retrieval: {k: 50, questions: [{question: q, expect: [a]}]}\n", "k 50: expected 1 to 20"},
		{"Duration", "timeout: soon\nthread: [{say: hi}]\n", "expected a duration such as 90s"},
		{"Name", "name: \"a b\"\nthread: [{say: hi}]\n", "name \"a b\""},
		{"Empty", "", "the file is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, map[string]string{"case.yaml": tc.yaml})
			_, err := eval.Load(filepath.Join(dir, "case.yaml"))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "case.yaml") {
				t.Errorf("got %v; want an error naming case.yaml and saying %q", err, tc.want)
			}
		})
	}
	dir := t.TempDir()
	write(t, dir, map[string]string{"a/x.yaml": "thread: [{say: hi}]", "b/x.yaml": "thread: [{say: hi}]"})
	if _, err := eval.Load(dir); err == nil || !strings.Contains(err.Error(), `the name "x" is the name of`) {
		t.Errorf("two cases named x: %v", err)
	}
}

// TestShippedSetLoads: the shipped set loads, with 5 or more cases for each part of
// the original design, and each of its knowledge documents is used by a case.
func TestShippedSetLoads(t *testing.T) {
	cases, err := eval.LoadFS(evalset.FS, ".", "builtin")
	if err != nil {
		t.Fatal(err)
	}
	byTag := map[string]int{}
	used := map[string]bool{}
	for _, c := range cases {
		for _, tag := range c.Tags {
			byTag[tag]++
		}
		for _, d := range c.Knowledge {
			used[d.Source] = true
		}
	}
	for _, tag := range []string{"react", "scope", "knowledge", "planner", "blog", "product-brief", "proposal"} {
		if byTag[tag] < 3 {
			t.Errorf("%d cases tagged %s", byTag[tag], tag)
		}
	}
	if byTag["product-brief"]+byTag["proposal"] < 5 || byTag["react"] < 5 || byTag["scope"] < 5 || byTag["knowledge"] < 5 || byTag["planner"] < 5 || byTag["blog"] < 5 {
		t.Errorf("fewer than 5 cases for a part of the design: %v", byTag)
	}
	docs, _ := evalset.FS.ReadDir("handbook")
	for _, d := range docs {
		if !used["handbook/"+d.Name()] {
			t.Errorf("handbook/%s is used by no case", d.Name())
		}
	}
}

// TestLoadFS reads cases from an fs.FS, naming them as shown.
func TestLoadFS(t *testing.T) {
	fsys := fstest.MapFS{
		"set/one.yaml":     {Data: []byte("knowledge: [{file: docs/a.md}]\nthread: [{say: hi}]\n")},
		"set/docs/a.md":    {Data: []byte("# A")},
		"set/two/two.yaml": {Data: []byte("thread: [{command: start blog}]\n")},
	}
	cases, err := eval.LoadFS(fsys, "set", "builtin")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 2 || cases[0].Path != "builtin/one.yaml" || cases[1].Path != "builtin/two/two.yaml" || cases[0].Knowledge[0].Text != "# A" {
		t.Errorf("%+v", cases)
	}
}
