package eval_test

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/eval"
)

// runOf is a run of the tests with the checks named in passed (passing) and failed.
func runOf(n int, status string, passed, failed []string) eval.RunResult {
	r := eval.RunResult{Run: n, Status: status, WallMS: 1200, LatencyMS: 700,
		Usage: eval.Usage{Calls: 2, PromptTokens: 1000, CompletionTokens: 200}}
	for _, name := range passed {
		r.Checks = append(r.Checks, eval.Check{Name: name, Pass: true})
	}
	for _, name := range failed {
		r.Checks = append(r.Checks, eval.Check{Name: name, Detail: name + " went wrong"})
	}
	return r
}

// report is a report of the tests: cases by name, each with its runs.
func report(cases ...eval.CaseResult) *eval.Report {
	return &eval.Report{Version: eval.ReportVersion, Started: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC), WallMS: 4200,
		Model: eval.ModelInfo{Mode: "replay", Model: "gpt-x"}, Repeat: 1, Cases: cases}
}

// TestCompare: a case that went from pass to fail regressed, with why; one whose
// check passed less often regressed although its status did not change; one that
// now passes is fixed; new and removed cases are named; only regressions count.
func TestCompare(t *testing.T) {
	old := report(
		eval.CaseResult{Name: "arithmetic", Status: eval.StatusPass, PassRate: 1, Runs: []eval.RunResult{runOf(1, eval.StatusPass, []string{"tools", "answer"}, nil)}},
		eval.CaseResult{Name: "flaky", Status: eval.StatusPass, PassRate: 1, Runs: []eval.RunResult{
			runOf(1, eval.StatusPass, []string{"answer"}, nil), runOf(2, eval.StatusPass, []string{"answer"}, nil)}},
		eval.CaseResult{Name: "retrieval", Status: eval.StatusPass, PassRate: 1, Runs: []eval.RunResult{{Status: eval.StatusPass, Retrieval: &eval.RetrievalScore{Recall: 1, MRR: 1}}}},
		eval.CaseResult{Name: "broken", Status: eval.StatusFail, Runs: []eval.RunResult{runOf(1, eval.StatusFail, nil, []string{"answer"})}},
		eval.CaseResult{Name: "gone", Status: eval.StatusPass, PassRate: 1},
	)
	cur := report(
		eval.CaseResult{Name: "arithmetic", Status: eval.StatusFail, Runs: []eval.RunResult{runOf(1, eval.StatusFail, []string{"tools"}, []string{"answer"})}},
		eval.CaseResult{Name: "flaky", Status: eval.StatusPass, PassRate: 0.5, Runs: []eval.RunResult{
			runOf(1, eval.StatusPass, []string{"answer"}, nil), runOf(2, eval.StatusFail, nil, []string{"answer"})}},
		eval.CaseResult{Name: "retrieval", Status: eval.StatusPass, PassRate: 1, Runs: []eval.RunResult{{Status: eval.StatusPass, Retrieval: &eval.RetrievalScore{Recall: 0.5, MRR: 1}}}},
		eval.CaseResult{Name: "broken", Status: eval.StatusPass, PassRate: 1, Runs: []eval.RunResult{runOf(1, eval.StatusPass, []string{"answer"}, nil)}},
		eval.CaseResult{Name: "added", Status: eval.StatusPass, PassRate: 1},
	)
	cmp := eval.Compare(old, cur)
	changes := map[string]eval.CaseChange{}
	for _, c := range cmp.Cases {
		changes[c.Name] = c
	}
	want := map[string]string{"arithmetic": eval.ChangeRegressed, "flaky": eval.ChangeRegressed, "retrieval": eval.ChangeRegressed,
		"broken": eval.ChangeFixed, "added": eval.ChangeNew, "gone": eval.ChangeRemoved}
	for name, change := range want {
		if changes[name].Change != change {
			t.Errorf("%s: %+v; want %s", name, changes[name], change)
		}
	}
	if cmp.Regressions != 3 {
		t.Errorf("%d regressions", cmp.Regressions)
	}
	why := strings.Join(changes["arithmetic"].Why, "; ")
	if why != "pass → fail; answer 1/1 → 0/1" {
		t.Errorf("why arithmetic: %q", why)
	}
	if why := strings.Join(changes["flaky"].Why, "; "); why != "pass rate 100% → 50%; answer 2/2 → 1/2" {
		t.Errorf("why flaky: %q", why)
	}
	if why := strings.Join(changes["retrieval"].Why, "; "); why != "recall@k 1.00 → 0.50" {
		t.Errorf("why retrieval: %q", why)
	}
	var b bytes.Buffer
	if err := cmp.Write(&b); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"arithmetic", "✗ regressed", "pass 100%", "fail 0%", "✓ fixed", "removed", "new", "arithmetic regressed: pass → fail", "3 cases regressed"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("the comparison lacks %q:\n%s", s, b.String())
		}
	}
}

// TestReportJSONAndJUnit: a report survives its JSON, refuses another version, and
// its JUnit XML has a testcase per run with a failure per failed check and an error
// per run that could not be done.
func TestReportJSONAndJUnit(t *testing.T) {
	rep := report(
		eval.CaseResult{Name: "ok", File: "cases/ok.yaml", Status: eval.StatusPass, Runs: []eval.RunResult{runOf(1, eval.StatusPass, []string{"tools"}, nil)}},
		eval.CaseResult{Name: "bad", Status: eval.StatusFail, Runs: []eval.RunResult{
			runOf(1, eval.StatusFail, []string{"tools"}, []string{"answer", "citations"}),
			{Run: 2, Status: eval.StatusDrift, Error: "cassette: drift: …"}}},
	)
	dir := t.TempDir()
	p := filepath.Join(dir, "r.json")
	var b bytes.Buffer
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	back, err := eval.ReadReport(p)
	if err != nil || len(back.Cases) != 2 || back.Cases[1].Runs[1].Error != "cassette: drift: …" || !back.Started.Equal(rep.Started) {
		t.Errorf("read back: %+v %v", back, err)
	}
	if err := os.WriteFile(p, []byte(`{"version": 7}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := eval.ReadReport(p); err == nil || !strings.Contains(err.Error(), "report version 7") {
		t.Errorf("another version: %v", err)
	}

	b.Reset()
	if err := eval.WriteJUnit(&b, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Suite    struct {
			Cases []struct {
				Name     string `xml:"name,attr"`
				File     string `xml:"file,attr"`
				Failures []struct {
					Message string `xml:"message,attr"`
					Type    string `xml:"type,attr"`
				} `xml:"failure"`
				Error *struct {
					Type string `xml:"type,attr"`
				} `xml:"error"`
				Out string `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	cs := doc.Suite.Cases
	if doc.Tests != 3 || doc.Failures != 1 || doc.Errors != 1 || len(cs) != 3 {
		t.Fatalf("%+v", doc)
	}
	if cs[0].Name != "ok" || cs[0].File != "cases/ok.yaml" || len(cs[0].Failures) != 0 || !strings.Contains(cs[0].Out, "✓ tools") {
		t.Errorf("ok: %+v", cs[0])
	}
	if cs[1].Name != "bad [run 1]" || len(cs[1].Failures) != 2 || cs[1].Failures[0].Type != "answer" || cs[1].Failures[0].Message != "answer: answer went wrong" {
		t.Errorf("bad run 1: %+v", cs[1])
	}
	if cs[2].Name != "bad [run 2]" || cs[2].Error == nil || cs[2].Error.Type != eval.StatusDrift {
		t.Errorf("bad run 2: %+v", cs[2])
	}
}

// TestWriteTable: the table has a line per case and the failures under it; the
// progress shows a bar on a terminal and a line per run elsewhere.
func TestWriteTable(t *testing.T) {
	rep := report(
		eval.CaseResult{Name: "ok", Status: eval.StatusPass, Runs: []eval.RunResult{runOf(1, eval.StatusPass, []string{"tools"}, nil)}},
		eval.CaseResult{Name: "bad", Status: eval.StatusFail, Runs: []eval.RunResult{runOf(1, eval.StatusFail, nil, []string{"answer"})}},
	)
	rep.Summary = eval.Summary{Cases: 2, Passed: 1, Failed: 1, Runs: 2, RunsPassed: 1, PassRate: 0.5,
		Checks: map[string]eval.Score{"tools": {1, 1}, "answer": {0, 1}}, Usage: eval.Usage{Calls: 4, PromptTokens: 2000, CompletionTokens: 400}}
	var b bytes.Buffer
	if err := eval.WriteTable(&b, rep); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"2 cases × 1 run on gpt-x (replay)", "ok    ✓ pass", "bad   ✗ fail", "1,200", "  bad ✗ answer: answer went wrong",
		"Checks: answer 0/1, tools 1/1", "Result: 1 of 2 cases passed (1 failed, 0 errors, 0 drift); runs 1/2 (50.0%); 2,400 tokens in 4 model calls"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("the table lacks %q:\n%s", s, b.String())
		}
	}
	b.Reset()
	p := eval.NewProgress(&b) // not a terminal
	c := &eval.Case{Name: "ok"}
	p.Update(1, 2, c, runOf(1, eval.StatusPass, nil, nil))
	p.Update(2, 2, c, runOf(2, eval.StatusFail, nil, nil))
	if b.String() != "[1/2] ✓ pass ok (run 1, 1.2s)\n[2/2] ✗ fail ok (run 2, 1.2s)\n" {
		t.Errorf("progress lines: %q", b.String())
	}
}
