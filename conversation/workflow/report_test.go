package workflow_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// texts gives every artifact of d a short text.
func texts(d *workflow.Definition) map[string]string {
	m := map[string]string{}
	for _, a := range d.Artifacts {
		m[a.ID] = "Text of " + a.Title + ".\n\nSecond paragraph.\n"
	}
	return m
}

func TestRenderReport_Complete(t *testing.T) {
	for _, name := range []string{"proposal", "product-brief", "blog"} {
		t.Run(name, func(t *testing.T) {
			d := builtin(t, name)
			approved := map[string]bool{}
			for _, a := range d.Artifacts {
				approved[a.ID] = true
			}
			got, err := d.RenderReport(workflow.ReportData{Artifacts: texts(d), Approved: approved})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(got, "_(") || strings.Contains(got, "Draft") {
				t.Errorf("complete report has draft markers:\n%s", got)
			}
			golden(t, name+".md", got)
		})
	}
}

func TestRenderReport_Draft(t *testing.T) {
	d := builtin(t, "proposal")
	all := texts(d)
	data := workflow.ReportData{
		Workflow: d,
		Artifacts: map[string]string{
			"research":          all["research"],
			"solution":          all["solution"],
			"problem_statement": all["problem_statement"],
			"methodology":       all["methodology"], // written, not approved
		},
		Approved: map[string]bool{"research": true, "solution": true, "problem_statement": true},
		Draft:    true,
	}
	got, err := d.RenderReport(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## 3. Methodology\n\n" + workflow.MarkerNotApproved + "\n\nText of Methodology.",
		"## 5. Budget\n\n" + workflow.MarkerNotWritten + "\n",
		"## 1. Problem statement\n\nText of Problem statement.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("draft report lacks %q", want)
		}
	}
	golden(t, "proposal-draft.md", got)
	if len(data.Artifacts) != 4 || len(data.Approved) != 3 {
		t.Error("RenderReport changed the caller's maps")
	}
}

func TestRenderReport_Functions(t *testing.T) {
	d, err := workflow.Parse("f.yaml", []byte(yaml(`name: f
title: Functions
artifacts:
	- id: a
		title: First
	- id: b
		title: Second
report: |
	{{title "a"}}={{artifact "a"}} approved:{{approved "a"}} written:{{written "a"}}
	{{title "b"}}={{artifact "b"}} approved:{{approved "b"}} written:{{written "b"}}
	raw:{{.Artifacts.b}} draft:{{.Draft}} workflow:{{.Workflow.Name}}



	end
`)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		data workflow.ReportData
		want string
	}{
		{"Final", workflow.ReportData{Artifacts: map[string]string{"a": " A text\n", "b": "B"}, Approved: map[string]bool{"a": true, "b": true}},
			"First=A text approved:true written:true\nSecond=B approved:true written:true\nraw:B draft:false workflow:f\n\nend\n"},
		{"DraftUnwritten", workflow.ReportData{Artifacts: map[string]string{"a": "A"}, Approved: map[string]bool{"a": true}, Draft: true},
			"First=A approved:true written:true\nSecond=_(not written yet)_ approved:false written:false\nraw: draft:true workflow:f\n\nend\n"},
		{"DraftUnapproved", workflow.ReportData{Artifacts: map[string]string{"b": "B"}, Draft: true},
			"First=_(not written yet)_ approved:false written:false\nSecond=_(draft, not approved yet)_\n\nB approved:false written:true\nraw:B draft:true workflow:f\n\nend\n"},
		{"NotDraftIgnoresApproval", workflow.ReportData{Artifacts: map[string]string{"b": "B"}},
			"First= approved:false written:false\nSecond=B approved:false written:true\nraw:B draft:false workflow:f\n\nend\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := d.RenderReport(tt.data)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestRenderReport_Default(t *testing.T) {
	d, err := workflow.Parse("d.yaml", []byte("name: d\ntitle: Plain\nartifacts:\n  - {id: a, title: Alpha}\n  - {id: b, title: Beta}\n"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.RenderReport(workflow.ReportData{Artifacts: map[string]string{"a": "one", "b": "two"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "# Plain\n\n## Alpha\n\none\n\n## Beta\n\ntwo\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A Definition built in Go renders without Validate, and renderings may run
// concurrently (go test -race).
func TestRenderReport_Concurrent(t *testing.T) {
	d := &workflow.Definition{Name: "g", Title: "G", Artifacts: []workflow.Artifact{{ID: "a", Title: "A"}}}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text := strings.Repeat("x", i+1)
			got, err := d.RenderReport(workflow.ReportData{Artifacts: map[string]string{"a": text}, Draft: i%2 == 0})
			if err != nil {
				t.Error(err)
				return
			}
			if !strings.Contains(got, text) {
				t.Errorf("rendering %d: %q", i, got)
			}
		}()
	}
	wg.Wait()
}
