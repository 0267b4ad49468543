package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// writeWorkflows writes files (name → content, tabs turned into two spaces) into a
// new temporary directory and returns it.
func writeWorkflows(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(strings.ReplaceAll(content, "\t", "  ")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runWF runs "threadwright workflows args..." and returns stdout, stderr and the error,
// with a search provider and the model profile "large" configured (so that the
// built-ins validate without warnings).
func runWF(t *testing.T, workflowsDir string, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := runWorkflows(args, workflowsDir, true, map[string]bool{"large": true}, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

const customWorkflow = `name: retro
title: Team retrospective
artifacts:
	- id: went_well
		title: What went well
	- id: actions
		title: Actions
		mode: choice
		depends_on: [went_well]
`

func TestWorkflowsValidate_Problems(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // "LINE: reason", after the file's path
	}{
		{"UnknownField", "name: x\ntitle: X\nartifact:\n\t- {id: a, title: A}\n",
			`3: unknown field "artifact" in the workflow (did you mean "artifacts"?)`},
		{"MissingID", "name: x\ntitle: X\nartifacts:\n\t- id: a\n\t\ttitle: A\n\t- title: B\n",
			`6: artifact #2: missing id`},
		{"DuplicateID", "name: x\ntitle: X\nartifacts:\n\t- id: a\n\t\ttitle: A\n\t- id: a\n\t\ttitle: B\n",
			`6: duplicate artifact id "a" (first at line 4)`},
		{"UnknownDependency", "name: x\ntitle: X\nartifacts:\n\t- id: a\n\t\ttitle: A\n\t\tdepends_on: [research]\n",
			`6: artifact "a": depends_on names unknown artifact "research"`},
		{"Cycle", "name: x\ntitle: X\nartifacts:\n\t- id: a\n\t\ttitle: A\n\t\tdepends_on: [b]\n\t- id: b\n\t\ttitle: B\n\t\tdepends_on: [a]\n",
			`6: dependency cycle: a → b → a (each depends on the next)`},
		{"TemplateParse", "name: x\ntitle: X\nartifacts:\n\t- {id: a, title: A}\nreport: |\n\t# Report\n\t{{if approved \"a\"}}\n",
			`7: report template line 3: unexpected EOF`},
		{"TemplateUnknownArtifact", "name: x\ntitle: X\nartifacts:\n\t- {id: a, title: A}\nreport: |\n\t{{artifact \"b\"}}\n",
			`6: report template line 1: at <artifact "b">: no artifact "b" in workflow "x"`},
		{"Mode", "name: x\ntitle: X\nartifacts:\n\t- id: a\n\t\ttitle: A\n\t\tmode: review\n",
			`6: artifact "a": mode "review" is invalid: use choice, draft or auto`},
		{"Options", "name: x\ntitle: X\nartifacts:\n\t- id: a\n\t\ttitle: A\n\t\tmode: choice\n\t\toptions: 9\n",
			`7: artifact "a": options must be between 2 and 5, got 9`},
		{"ForeachNotADependency", "name: x\ntitle: X\nartifacts:\n\t- {id: plan, title: Plan}\n\t- id: sections\n\t\ttitle: Sections\n\t\tmode: auto\n\t\tforeach: plan\n",
			`8: artifact "sections": foreach: "plan" is not an earlier dependency of "sections": add it to depends_on`},
		{"ForeachNeedsAuto", "name: x\ntitle: X\nartifacts:\n\t- {id: plan, title: Plan}\n\t- id: sections\n\t\ttitle: Sections\n\t\tdepends_on: [plan]\n\t\tforeach: plan\n",
			`8: artifact "sections": foreach needs mode: auto (mode is draft)`},
		{"EditorWithoutPrompt", "name: x\ntitle: X\nartifacts:\n\t- id: a\n\t\ttitle: A\n\t\teditor:\n\t\t\tmodel: careful\n",
			`6: artifact "a": editor: missing prompt: what the editor does, like prompt: Tighten the prose, keep every fact`},
		{"Retries", "name: x\ntitle: X\nartifacts:\n\t- id: a\n\t\ttitle: A\n\t\tmode: auto\n\t\tretries: 10\n",
			`7: artifact "a": retries must be between 0 and 5, got 10`},
		{"UndeclaredInput", "name: x\ntitle: X\ninputs:\n\t- {id: topic, label: Topic, required: true}\nartifacts:\n\t- {id: a, title: A}\nreport: |\n\t# {{input \"audience\"}}\n",
			`8: report template line 1: at <input "audience">: no input "audience" in workflow "x"`},
		{"InputType", "name: x\ntitle: X\ninputs:\n\t- id: words\n\t\tlabel: Words\n\t\ttype: integer\nartifacts:\n\t- {id: a, title: A}\n",
			`6: input "words": type "integer" is invalid: use text or number`},
		{"PassShare", "name: x\ntitle: X\npass_share: 75\nartifacts:\n\t- {id: a, title: A}\n",
			`3: pass_share must be more than 0 and at most 1 (the share of non-critical criteria that must pass), got 75`},
		{"Critical", "name: x\ntitle: X\nartifacts:\n\t- id: a\n\t\ttitle: A\n\t\tcriteria:\n\t\t\t- {id: c, description: C, critical: yes please}\n",
			`7: artifact "a": criterion "c": critical: want true or false, got "yes please"`},
		{"Syntax", "name: x\ntitle: X\n\tartifacts: oops\n",
			`3: invalid YAML: mapping values are not allowed in this context`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeWorkflows(t, map[string]string{"x.yaml": tt.src})
			path := filepath.Join(dir, "x.yaml")
			stdout, _, err := runWF(t, "", "validate", path)
			if err == nil {
				t.Fatalf("validate succeeded; stdout:\n%s", stdout)
			}
			if want := path + ":" + tt.want + "\n"; stdout != want {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
			}
			if want := "workflows: 1 problem in 1 file"; err.Error() != want {
				t.Errorf("error %q, want %q", err, want)
			}
		})
	}
}

// pipelineWorkflow uses the pipeline fields: auto artifacts, foreach, retries,
// concurrency, an editor, a model profile and tools.
const pipelineWorkflow = `name: digest
title: News digest
artifacts:
	- id: topics
		title: Topics
		mode: choice
	- id: stories
		title: Stories
		mode: auto
		depends_on: [topics]
		foreach: topics
		retries: 2
		concurrency: 4
		tools: [web_search, fetch_url]
		editor:
			prompt: Tighten the prose; keep every link.
			model: careful
	- id: digest
		title: Digest
		depends_on: [topics, stories]
		model: writer
`

func TestWorkflowsValidate_Pipeline(t *testing.T) {
	dir := writeWorkflows(t, map[string]string{"digest.yaml": pipelineWorkflow})
	stdout, _, err := runWF(t, "", "validate", filepath.Join(dir, "digest.yaml"))
	if err != nil || stdout != "ok: 1 workflows\n" {
		t.Errorf("validate = %q, %v", stdout, err)
	}

	// The same file with the foreach over an artifact stories does not depend on.
	bad := strings.Replace(pipelineWorkflow, "depends_on: [topics]\n", "depends_on: []\n", 1)
	path := filepath.Join(writeWorkflows(t, map[string]string{"digest.yaml": bad}), "digest.yaml")
	stdout, _, err = runWF(t, "", "validate", path)
	want := path + `:11: artifact "stories": foreach: "topics" is not an earlier dependency of "stories": add it to depends_on` + "\n"
	if err == nil || stdout != want {
		t.Errorf("validate = %q, %v; want %q", stdout, err, want)
	}
}

func TestWorkflowsValidate_All(t *testing.T) {
	t.Run("BuiltinsOnly", func(t *testing.T) {
		stdout, _, err := runWF(t, "", "validate")
		if err != nil || stdout != "ok: 3 workflows\n" {
			t.Errorf("validate = %q, %v", stdout, err)
		}
	})
	t.Run("WithDir", func(t *testing.T) {
		dir := writeWorkflows(t, map[string]string{"retro.yaml": customWorkflow, "README.md": "not a workflow"})
		stdout, _, err := runWF(t, dir, "validate")
		if err != nil || stdout != "ok: 4 workflows\n" {
			t.Errorf("validate = %q, %v", stdout, err)
		}
	})
	t.Run("InvalidFilesInDir", func(t *testing.T) {
		dir := writeWorkflows(t, map[string]string{
			"retro.yaml": customWorkflow,
			"a.yaml":     "name: a\ntitle: A\nartifacts:\n\t- {id: x, title: X, depends_on: [y]}\n",
			"b.yml":      "name: b\nartifacts: []\n",
		})
		stdout, _, err := runWF(t, dir, "validate")
		want := dir + `/a.yaml:4: artifact "x": depends_on names unknown artifact "y"` + "\n" +
			dir + `/b.yml:1: missing title: the workflow's name as people read it, like title: Grant proposal` + "\n" +
			dir + `/b.yml:2: missing artifacts: a workflow needs at least one artifact` + "\n"
		if stdout != want {
			t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
		}
		if err == nil || err.Error() != "workflows: 3 problems in 2 files" {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("OverridesBuiltin", func(t *testing.T) {
		dir := writeWorkflows(t, map[string]string{"mine.yaml": strings.Replace(customWorkflow, "name: retro", "name: proposal", 1)})
		stdout, _, err := runWF(t, dir, "validate")
		want := dir + `/mine.yaml:1: workflow "proposal" is already defined in builtin:proposal.yaml; a built-in workflow cannot be replaced, give this one another name` + "\n"
		if err == nil || stdout != want {
			t.Errorf("validate = %q, %v; want %q", stdout, err, want)
		}
	})
	t.Run("MissingDir", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "nope")
		_, _, err := runWF(t, dir, "validate")
		if want := "WORKFLOWS_DIR " + dir + ": no such directory"; err == nil || err.Error() != want {
			t.Errorf("err = %v, want %s", err, want)
		}
	})
}

func TestWorkflowsValidate_Paths(t *testing.T) {
	dir := writeWorkflows(t, map[string]string{
		"one/retro.yaml": customWorkflow,
		"one/other.yml":  strings.Replace(customWorkflow, "name: retro", "name: other", 1),
		"two/retro.yaml": customWorkflow,
		"empty/notes.md": "nothing here",
	})
	t.Run("Dir", func(t *testing.T) {
		stdout, _, err := runWF(t, "", "validate", filepath.Join(dir, "one"))
		if err != nil || stdout != "ok: 2 workflows\n" {
			t.Errorf("validate = %q, %v", stdout, err)
		}
	})
	t.Run("DuplicateAcrossPaths", func(t *testing.T) {
		stdout, _, err := runWF(t, "", "validate", filepath.Join(dir, "one"), filepath.Join(dir, "two", "retro.yaml"))
		want := dir + `/two/retro.yaml:1: workflow "retro" is already defined in ` + dir + "/one/retro.yaml; workflow names must be unique\n"
		if err == nil || stdout != want {
			t.Errorf("validate = %q, %v; want %q", stdout, err, want)
		}
	})
	t.Run("MissingAndEmpty", func(t *testing.T) {
		missing := filepath.Join(dir, "missing.yaml")
		stdout, _, err := runWF(t, "", "validate", missing, filepath.Join(dir, "empty"))
		want := missing + ": no such file or directory\n" + dir + "/empty: no workflow files (*.yaml, *.yml) in this directory\n"
		if err == nil || stdout != want {
			t.Errorf("validate = %q, %v; want %q", stdout, err, want)
		}
	})
	t.Run("ExplicitFileOfAnyName", func(t *testing.T) {
		path := filepath.Join(dir, "empty", "notes.md")
		stdout, _, err := runWF(t, "", "validate", path)
		want := path + ":1: a workflow is a YAML mapping with name, title, artifacts, …\n"
		if err == nil || stdout != want {
			t.Errorf("validate = %q, %v; want %q", stdout, err, want)
		}
	})
}

func TestWorkflowsList(t *testing.T) {
	dir := writeWorkflows(t, map[string]string{"retro.yaml": customWorkflow})
	stdout, stderr, err := runWF(t, dir, "list")
	if err != nil {
		t.Fatalf("list: %v\n%s", err, stderr)
	}
	want := "NAME           TITLE               ARTIFACTS  SOURCE\n" +
		"blog           Blog article        6          builtin:blog.yaml\n" +
		"product-brief  Product brief       5          builtin:product-brief.yaml\n" +
		"proposal       Grant proposal      8          builtin:proposal.yaml\n" +
		"retro          Team retrospective  2          " + dir + "/retro.yaml\n"
	if stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
	}

	t.Run("InvalidFile", func(t *testing.T) {
		bad := writeWorkflows(t, map[string]string{"retro.yaml": customWorkflow, "bad.yaml": "name: bad\n"})
		stdout, stderr, err := runWF(t, bad, "list")
		if !strings.Contains(stdout, "retro ") {
			t.Errorf("valid workflows not listed:\n%s", stdout)
		}
		if !strings.Contains(stderr, bad+"/bad.yaml:1: missing title") {
			t.Errorf("stderr lacks the problem:\n%s", stderr)
		}
		if err == nil || !strings.Contains(err.Error(), "2 problems in 1 file") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("MissingDir", func(t *testing.T) {
		_, _, err := runWF(t, "/does/not/exist", "list")
		if err == nil || err.Error() != "WORKFLOWS_DIR /does/not/exist: no such directory" {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("DirIsAFile", func(t *testing.T) {
		_, _, err := runWF(t, filepath.Join(dir, "retro.yaml"), "list")
		if err == nil || !strings.HasSuffix(err.Error(), "retro.yaml: not a directory") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestWorkflowsUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"frobnicate"}, {"list", "extra"}} {
		_, stderr, err := runWF(t, "", args...)
		if err == nil || !strings.Contains(stderr, "threadwright workflows validate") {
			t.Errorf("%v: err %v, stderr %q", args, err, stderr)
		}
	}
	stdout, _, err := runWF(t, "", "help")
	if err != nil || !strings.Contains(stdout, "workflows list") {
		t.Errorf("help: %q, %v", stdout, err)
	}
}

func TestLoadWorkflows(t *testing.T) {
	t.Run("BuiltinsAndDir", func(t *testing.T) {
		set, err := LoadWorkflows(writeWorkflows(t, map[string]string{"retro.yml": customWorkflow}))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(set.Names(), " "); got != "blog product-brief proposal retro" {
			t.Errorf("Names() = %s", got)
		}
	})
	t.Run("NoDir", func(t *testing.T) {
		set, err := LoadWorkflows("")
		if err != nil || len(set.All()) != 3 {
			t.Errorf("LoadWorkflows(\"\") = %v, %v", set, err)
		}
	})
	t.Run("InvalidFile", func(t *testing.T) {
		dir := writeWorkflows(t, map[string]string{"bad.yaml": "name: bad\ntitle: Bad\nartifacts:\n\t- {id: a, title: A, mode: choice, options: 1}\n"})
		_, err := LoadWorkflows(dir)
		want := "invalid workflow files:\n" + dir + `/bad.yaml:4: artifact "a": options must be between 2 and 5, got 1`
		if err == nil || err.Error() != want {
			t.Fatalf("err = %v, want %s", err, want)
		}
		var e *workflow.Error
		if !errors.As(err, &e) || len(e.Problems) != 1 || e.Problems[0].Line != 4 {
			t.Errorf("problems = %+v", e)
		}
	})
	t.Run("MissingDir", func(t *testing.T) {
		_, err := LoadWorkflows("/does/not/exist")
		if err == nil || err.Error() != "WORKFLOWS_DIR /does/not/exist: no such directory" {
			t.Errorf("err = %v", err)
		}
	})
}

// TestWorkflowsValidateWarnsWithoutWebSearch checks that validate, with no search
// provider configured, warns about each artifact that names web_search (the
// built-in blog's and proposal's research) and still succeeds; with one, it does not.
func TestWorkflowsValidateWarnsWithoutWebSearch(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := runWorkflows([]string{"validate"}, "", false, nil, &stdout, &stderr); err != nil {
		t.Fatalf("validate = %v; a warning must not fail it:\n%s", err, stdout.String())
	}
	out := stdout.String()
	for _, want := range []string{
		`builtin:blog.yaml: warning: artifact "research" names web_search, but no search provider is configured (SEARXNG_URL, BRAVE_SEARCH_API_KEY or TAVILY_API_KEY)`,
		`builtin:proposal.yaml: warning: artifact "research" names web_search`,
		"ok: 3 workflows, 3 warnings",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("validate lacks %q:\n%s", want, out)
		}
	}
	if !webSearchConfigured(func(k string) string { return map[string]string{"TAVILY_API_KEY": "tvly-x"}[k] }) ||
		webSearchConfigured(func(string) string { return "" }) {
		t.Error("webSearchConfigured does not follow the environment's search settings")
	}
}

// TestWorkflowsValidatePreferredProfile checks that validate notes, as a warning
// that does not fail it, that the built-in blog's article is written on the main
// model when MODEL_PROFILES does not define "large", and says nothing when it does,
// reading the names from the MODEL_PROFILES file as the command does.
func TestWorkflowsValidatePreferredProfile(t *testing.T) {
	note := `builtin:blog.yaml: warning: artifact "article" prefers the model profile "large" (prefer_model), which MODEL_PROFILES does not define: it is written on the main model (OPENAI_MODEL)`
	for _, tt := range []struct {
		name, file string
		want       bool
	}{
		{"Unset", "", true},
		{"OtherProfile", "enhance:\n  model: m\n", true},
		{"Large", "large:\n  model: big-model\n  api_key: ${LARGE_KEY_NOT_SET}\n", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := ""
			if tt.file != "" {
				path = writeFile(t, "profiles.yaml", tt.file)
			}
			profiles, err := profileNames(path)
			if err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			if err := runWorkflows([]string{"validate"}, "", true, profiles, &stdout, &stderr); err != nil {
				t.Fatalf("validate = %v; a warning must not fail it:\n%s", err, stdout.String())
			}
			if got := strings.Contains(stdout.String(), note+"\n"); got != tt.want {
				t.Errorf("validate says the article is on the main model: %v, want %v:\n%s", got, tt.want, stdout.String())
			}
		})
	}
	if _, err := profileNames(writeFile(t, "bad.yaml", "- a list\n")); err == nil {
		t.Error("profileNames accepted a list")
	}
}

// TestLoadConfigSearchProvider checks WEB_SEARCH_PROVIDER: a provider without its key
// or URL, or an unknown one, stops start-up with the settings to set; a named one
// with its key is used.
func TestLoadConfigSearchProvider(t *testing.T) {
	for _, env := range []map[string]string{
		{"WEB_SEARCH_PROVIDER": "brave", "TAVILY_API_KEY": "tvly-key-123456"},
		{"WEB_SEARCH_PROVIDER": "bing", "BRAVE_SEARCH_API_KEY": "brave-key-123456"},
	} {
		setEnv(t, env)
		var c Config
		err := LoadConfig(&c)
		if err == nil || !strings.HasPrefix(err.Error(), "WEB_SEARCH_PROVIDER: expected searxng, brave or tavily, with its URL or key set") {
			t.Errorf("%v: error %v", env, err)
		}
	}
	setEnv(t, map[string]string{"WEB_SEARCH_PROVIDER": "Tavily", "TAVILY_API_KEY": "tvly-key-123456", "BRAVE_SEARCH_API_KEY": "brave-key-123456"})
	var c Config
	if err := LoadConfig(&c); err != nil {
		t.Fatal(err)
	}
	if sc := c.searchConfig(); sc.Provider != "Tavily" || sc.TavilyAPIKey != "tvly-key-123456" {
		t.Errorf("search config %+v", sc)
	}
}

// TestWorkflowsValidate_TaintWarning: a fetch artifact followed by one that names a
// side-effect tool (taintWorkflows, the workflow of TestE2EWorkflowTaintFromFetchedPage)
// is accepted with a warning naming both; with a tool that only reads, none
// (docs/tools.md, "Tool policy").
func TestWorkflowsValidate_TaintWarning(t *testing.T) {
	risky := taintWorkflows["fetch.yaml"]
	path := filepath.Join(writeWorkflows(t, map[string]string{"crm.yaml": risky}), "crm.yaml")
	stdout, _, err := runWF(t, "", "validate", path)
	want := path + ": warning: artifact notes names crm__note, which may change something, but its writer may read untrusted content (from pages): such a call is refused when it runs, since nobody can confirm it there\nok: 1 workflows, 1 warning\n"
	if err != nil || stdout != want {
		t.Errorf("validate = %q, %v; want %q", stdout, err, want)
	}
	// notes reviewed by people: its writer asks rather than refuses.
	path = filepath.Join(writeWorkflows(t, map[string]string{"crm.yaml": askWorkflow}), "crm.yaml")
	stdout, _, err = runWF(t, "", "validate", path)
	want = path + ": warning: artifact notes names crm__note, which may change something, but its writer may read untrusted content (from pages): such a call waits for the confirmation of the person who asked for the text, on a card in the thread\nok: 1 workflows, 1 warning\n"
	if err != nil || stdout != want {
		t.Errorf("validate of a reviewed artifact = %q, %v; want %q", stdout, err, want)
	}

	safe := strings.Replace(risky, "tools: [crm__note]", "tools: [search_knowledge, current_time]", 1)
	path = filepath.Join(writeWorkflows(t, map[string]string{"crm.yaml": safe}), "crm.yaml")
	if stdout, _, err := runWF(t, "", "validate", path); err != nil || stdout != "ok: 1 workflows\n" {
		t.Errorf("validate of read-only tools = %q, %v; want no warning", stdout, err)
	}
}
