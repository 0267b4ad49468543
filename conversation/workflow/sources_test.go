package workflow_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// sourcesBase is a workflow with a reviewed plan and research per plan item; tests
// append one artifact.
const sourcesBase = `name: blog
title: Blog
artifacts:
	- id: plan
		title: Plan
	- id: research
		title: Research
		mode: auto
		depends_on: [plan]
		foreach: plan
`

func TestParse_FetchAndStrategy(t *testing.T) {
	d, err := workflow.Parse("blog.yaml", []byte(yaml(sourcesBase+`		research_strategy: batch
	- id: sources
		title: Sources
		mode: auto
		depends_on: [plan, research]
		foreach: plan
		fetch: research
		concurrency: 2
	- id: notes
		title: Notes
		mode: auto
		depends_on: [plan]
		foreach: plan
		research_strategy: individual
`)))
	if err != nil {
		t.Fatal(err)
	}
	research, _ := d.Artifact("research")
	sources, _ := d.Artifact("sources")
	notes, _ := d.Artifact("notes")
	if research.ResearchStrategy != workflow.StrategyBatch || !research.Batch() {
		t.Errorf("research = %+v; want batch", research)
	}
	if sources.Fetch != "research" || sources.Batch() {
		t.Errorf("sources = %+v; want fetch research", sources)
	}
	if notes.Batch() {
		t.Errorf("notes is individual, Batch() = true")
	}
}

func TestParse_FetchAndStrategyProblems(t *testing.T) {
	for _, tc := range []struct {
		name, artifact string
		want           []string
	}{
		{"FetchOnDraft", `	- id: sources
		title: Sources
		depends_on: [research]
		fetch: research
`, []string{`test.yaml:14: artifact "sources": fetch needs mode: auto (mode is draft)`}},
		{"FetchOnChoice", `	- id: sources
		title: Sources
		mode: choice
		depends_on: [research]
		fetch: research
`, []string{`test.yaml:15: artifact "sources": fetch needs mode: auto (mode is choice)`}},
		{"FetchUnknown", `	- id: sources
		title: Sources
		mode: auto
		depends_on: [research]
		fetch: reserch
`, []string{`test.yaml:15: artifact "sources": fetch names unknown artifact "reserch" (did you mean "research"?)`}},
		{"FetchNotADependency", `	- id: sources
		title: Sources
		mode: auto
		depends_on: [plan]
		fetch: research
`, []string{`test.yaml:15: artifact "sources": fetch: "research" is not a dependency of "sources": add it to depends_on`}},
		{"FetchItself", `	- id: sources
		title: Sources
		mode: auto
		depends_on: [research]
		fetch: sources
`, []string{`test.yaml:15: artifact "sources": fetch names the artifact itself: name the dependency whose URLs are fetched`}},
		{"FetchWithModelFields", `	- id: sources
		title: Sources
		mode: auto
		depends_on: [research]
		fetch: research
		retries: 1
		tools: [fetch_url]
		editor: {prompt: Tighten.}
		model: writer
		prompt: Summarise.
		research_strategy: individual
`, []string{
			`test.yaml:16: artifact "sources": retries does not apply to a fetch artifact: no model writes it (remove retries or fetch)`,
			`test.yaml:17: artifact "sources": tools does not apply to a fetch artifact: no model writes it (remove tools or fetch)`,
			`test.yaml:18: artifact "sources": editor does not apply to a fetch artifact: no model writes it (remove editor or fetch)`,
			`test.yaml:19: artifact "sources": model does not apply to a fetch artifact: no model writes it (remove model or fetch)`,
			`test.yaml:20: artifact "sources": prompt does not apply to a fetch artifact: no model writes it (remove prompt or fetch)`,
			`test.yaml:21: artifact "sources": research_strategy does not apply to a fetch artifact: no model writes it`,
		}},
		{"StrategyValue", `	- id: notes
		title: Notes
		mode: auto
		depends_on: [plan]
		foreach: plan
		research_strategy: parallel
`, []string{`test.yaml:16: artifact "notes": research_strategy "parallel" is invalid: use batch or individual`}},
		{"StrategyOnDraft", `	- id: notes
		title: Notes
		depends_on: [plan]
		research_strategy: batch
`, []string{`test.yaml:14: artifact "notes": research_strategy needs mode: auto (mode is draft)`}},
		{"BatchWithoutForeach", `	- id: notes
		title: Notes
		mode: auto
		depends_on: [plan]
		research_strategy: batch
`, []string{`test.yaml:15: artifact "notes": research_strategy: batch needs foreach: it writes every item of the foreach artifact in one text`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := problems(t, yaml(sourcesBase+tc.artifact))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestURLs(t *testing.T) {
	text := `See [1](https://a.example/one) and https://a.example/one again, <https://b.example/two|two>,
"http://c.example/three?q=1#x". Also ftp://d.example/no and https://e.example/five.
https://f.example/6 https://g.example/7 https://h.example/8 https://i.example/9 https://j.example/10 https://k.example/11 https://l.example/12`
	got := workflow.URLs(text, workflow.MaxFetchURLs)
	want := []string{
		"https://a.example/one", "https://b.example/two", "http://c.example/three?q=1#x", "https://e.example/five",
		"https://f.example/6", "https://g.example/7", "https://h.example/8", "https://i.example/9", "https://j.example/10", "https://k.example/11",
	}
	if !slices.Equal(got, want) {
		t.Errorf("URLs =\n%q\nwant\n%q", got, want)
	}
	if got := workflow.URLs("no links here, http:// alone", 10); len(got) != 0 {
		t.Errorf("URLs of a text without links = %q", got)
	}
}

func TestSplitBatch(t *testing.T) {
	text := "# Research\n\n## alpha \nNotes on alpha.\n\n## Gamma\nNotes on gamma.\n\n## Unasked\nExtra.\n\n## Beta\n\n"
	got := workflow.SplitBatch(text, []string{"Alpha", "Beta", "Gamma", "Delta"})
	want := map[int]string{0: "Notes on alpha.", 2: "Notes on gamma."}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SplitBatch = %v; want %v (Beta is empty, Delta missing)", got, want)
	}
	if got := workflow.SplitBatch("## Only\nThe only item.", []string{"Only"}); got[0] != "The only item." {
		t.Errorf("SplitBatch of one item = %v", got)
	}
}

func TestBatchEndedAndRestart(t *testing.T) {
	d, err := workflow.Parse("blog.yaml", []byte(yaml(sourcesBase+"\t\tresearch_strategy: batch\n")))
	if err != nil {
		t.Fatal(err)
	}
	m := workflow.Machine{Def: d}
	s := &workflow.State{Artifacts: map[string]*workflow.ArtifactState{
		"plan":     {Status: workflow.StatusApproved, Text: "## A\na\n\n## B\nb\n"},
		"research": {Status: workflow.StatusPending},
	}}
	items, err := m.Pipeline().ItemsOf(s, "research")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Pipeline().Started(s, "research", items); err != nil {
		t.Fatal(err)
	}
	m.Pipeline().BatchEnded(s, "research")
	if !s.Artifacts["research"].Batched || !s.Clone().Artifacts["research"].Batched {
		t.Fatal("BatchEnded not recorded (or not cloned)")
	}
	s.Artifacts["research"].Status = workflow.StatusPending
	if err := m.Pipeline().Started(s, "research", items); err != nil {
		t.Fatal(err)
	}
	if s.Artifacts["research"].Batched {
		t.Error("a new run of the artifact kept Batched: its batch would never be written")
	}
}
