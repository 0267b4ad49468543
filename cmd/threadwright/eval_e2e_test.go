package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/eval"
	"github.com/threadwright/threadwright/eval/cassette"
	"github.com/threadwright/threadwright/eval/evalset"
	"github.com/threadwright/threadwright/playground/demo"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// These tests run threadwright eval as a team would: the shipped set on the offline
// demo model, and on the fake OpenAI server (the real go-openai client) recorded and
// replayed; and cases scripted so that each expectation fails.

// evalEnv points the configuration at the fake model ai.
func evalEnv(t *testing.T, ai *openaitest.Server) {
	t.Setenv("OPENAI_BASE_URL", ai.URL())
	t.Setenv("OPENAI_API_KEY", "sk-eval-test-secret")
	t.Setenv("OPENAI_MODEL", "gpt-eval")
	t.Setenv("OPENAI_SMALL_MODEL", "gpt-eval-small")
	t.Setenv("MODEL_TIMEOUT", "30s")
}

// writeCase writes a case file named name.yaml in dir and returns its path.
func writeCase(t *testing.T, dir, name, yaml string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// runCases runs the cases of paths with r (its Launcher set when nil) and returns
// the report.
func runCases(t *testing.T, r *eval.Runner, paths ...string) *eval.Report {
	t.Helper()
	cases, err := eval.Load(paths...)
	if err != nil {
		t.Fatal(err)
	}
	if r.Launcher == nil {
		r.Launcher = &evalLauncher{}
	}
	if r.Timeout == 0 {
		r.Timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rep, err := r.Run(ctx, cases)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// onlyRun returns the run of the report's one case.
func onlyRun(t *testing.T, rep *eval.Report) eval.RunResult {
	t.Helper()
	if len(rep.Cases) != 1 || len(rep.Cases[0].Runs) != 1 {
		t.Fatalf("want one case with one run, got %+v", rep.Cases)
	}
	return rep.Cases[0].Runs[0]
}

// check returns the check named name of run, failing the test when there is none.
func check(t *testing.T, run eval.RunResult, name string) eval.Check {
	t.Helper()
	for _, c := range run.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %s check in %+v (run %s: %s)", name, run.Checks, run.Status, run.Error)
	return eval.Check{}
}

// TestEvalShippedSetOnDemo runs `threadwright eval --demo` on the shipped set: every
// case passes, the JSON report and the JUnit XML say so, and the scores and the wall
// time are logged.
func TestEvalShippedSetOnDemo(t *testing.T) {
	dir := t.TempDir()
	jsonPath, junitPath := filepath.Join(dir, "report.json"), filepath.Join(dir, "junit.xml")
	var stdout, stderr bytes.Buffer
	start := time.Now()
	err := run(context.Background(), []string{"eval", "--demo", "--json", jsonPath, "--junit", junitPath}, &stdout, &stderr)
	wall := time.Since(start)
	t.Logf("threadwright eval --demo (wall %s):\n%s", wall.Round(time.Millisecond), stdout.String())
	if err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr.String())
	}
	rep, err := eval.ReadReport(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := eval.LoadFS(evalset.FS, ".", "builtin")
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Summary; s.Cases != len(cases) || s.Passed != s.Cases || len(cases) < 30 {
		t.Errorf("summary %+v; want all %d shipped cases passed", s, len(cases))
	}
	if rep.Model.Mode != "demo" || rep.Model.Model != demo.ModelName {
		t.Errorf("model %+v", rep.Model)
	}
	for _, want := range []string{"tools", "answer", "citations", "approvals", "scope", "workflow", "retrieval", "tokens", "latency"} {
		if sc := rep.Summary.Checks[want]; sc.Total == 0 || sc.Passed != sc.Total {
			t.Errorf("checks %s: %+v; want some, all passed", want, sc)
		}
	}
	if r := rep.Summary.Retrieval; r == nil || r.Recall < 0.99 || r.MRR < 0.99 {
		t.Errorf("retrieval %+v", r)
	}
	var junit struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
	}
	data, err := os.ReadFile(junitPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(data, &junit); err != nil || junit.Tests != len(cases) || junit.Failures+junit.Errors != 0 {
		t.Errorf("JUnit: %+v, %v", junit, err)
	}
	if !strings.Contains(stdout.String(), "Result: "+itoa(len(cases))+" of "+itoa(len(cases))+" cases passed") {
		t.Errorf("the table does not end with the result:\n%s", stdout.String())
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestEvalShippedSetRecordReplay runs the shipped set on the fake OpenAI server (the
// demo model behind it, through the real go-openai client), recording a cassette,
// then replays the cassette with the server closed: no call goes out, nothing
// drifts, every case passes again, and every reply in every thread is the same, byte
// for byte.
func TestEvalShippedSetRecordReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("the shipped set twice")
	}
	ai := openaitest.NewServer()
	ai.Handle(demoHandler(demo.New()))
	evalEnv(t, ai)
	cases, err := eval.LoadFS(evalset.FS, ".", "builtin")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rec := cassette.NewRecorder("gpt-eval", "gpt-eval-small")
	launcher := &evalLauncher{fetcher: demo.SourceFetcher{}}
	recorded, err := (&eval.Runner{Launcher: launcher, Record: rec, Timeout: 5 * time.Minute}).Run(ctx, cases)
	if err != nil {
		t.Fatal(err)
	}
	if !recorded.Passed() {
		t.Fatalf("recording: %d of %d passed:\n%s", recorded.Summary.Passed, recorded.Summary.Cases, table(t, recorded))
	}
	path := filepath.Join(t.TempDir(), "cassette.json")
	if err := rec.Save(path); err != nil {
		t.Fatal(err)
	}
	calls := len(ai.Requests())
	ai.Close()

	c, err := cassette.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Interactions) != calls {
		t.Errorf("the cassette holds %d calls; the server answered %d", len(c.Interactions), calls)
	}
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1") // nothing listens: a call out would fail
	replayed, err := (&eval.Runner{Launcher: &evalLauncher{models: [2]string{c.Model, c.SmallModel}, fetcher: demo.SourceFetcher{}},
		Replay: cassette.NewPlayer(c), Timeout: 5 * time.Minute}).Run(ctx, cases)
	if err != nil {
		t.Fatal(err)
	}
	if !replayed.Passed() || replayed.Summary.Drift != 0 {
		t.Fatalf("replay: %+v\n%s", replayed.Summary, table(t, replayed))
	}
	for i, rc := range recorded.Cases {
		a, b := rc.Runs[0].Transcript, replayed.Cases[i].Runs[0].Transcript
		if len(a.Steps) != len(b.Steps) || len(a.ModelCalls) != len(b.ModelCalls) {
			t.Errorf("%s: recorded %d steps and %d model calls, replayed %d and %d", rc.Name, len(a.Steps), len(a.ModelCalls), len(b.Steps), len(b.ModelCalls))
			continue
		}
		for j := range a.Steps {
			// The bot says how long a pipeline took: not the model's words.
			if elapsed.ReplaceAllString(a.Steps[j].Reply, "in …") != elapsed.ReplaceAllString(b.Steps[j].Reply, "in …") {
				t.Errorf("%s: step %d's reply differs:\nrecorded %q\nreplayed %q", rc.Name, j+1, a.Steps[j].Reply, b.Steps[j].Reply)
			}
		}
		if rc.Runs[0].Usage.Tokens() != replayed.Cases[i].Runs[0].Usage.Tokens() {
			t.Errorf("%s: recorded %d tokens, replayed %d", rc.Name, rc.Runs[0].Usage.Tokens(), replayed.Cases[i].Runs[0].Usage.Tokens())
		}
	}
}

// elapsed is a duration the bot reports ("finished in 2s").
var elapsed = regexp.MustCompile(`\bin \d[\dhms.]*\b`)

// table renders rep for a failure message.
func table(t *testing.T, rep *eval.Report) string {
	var b bytes.Buffer
	if err := eval.WriteTable(&b, rep); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestEvalExpectationsFail: scripted answers through the real pipeline fail each
// kind of expectation, with a detail that says why; the run's status is fail.
func TestEvalExpectationsFail(t *testing.T) {
	call := func(name, args string) openaitest.Response {
		return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: name, Arguments: args}}}
	}
	text := func(s string) openaitest.Response { return openaitest.Response{Text: s} }
	for _, tc := range []struct {
		name   string
		yaml   string
		script []openaitest.Response
		check  string
		detail string
	}{{
		name: "WrongTool",
		yaml: `thread: [{say: "@threadwright what is 17 * 23?"}]
expect:
  tools: {match: exact, calls: [{name: calculate, args: {expression: '17\s*\*\s*23'}}]}`,
		script: []openaitest.Response{call("current_time", `{}`), text("It is noon.")},
		check:  "tools", detail: "expected calculate(expression~17\\s*\\*\\s*23) (exact); got current_time()",
	}, {
		name: "WrongArgument",
		yaml: `thread: [{say: "@threadwright what is 17 * 23?"}]
expect:
  tools: {match: in_order, calls: [{name: calculate, args: {expression: '17\s*\*\s*23'}}]}`,
		script: []openaitest.Response{call("calculate", `{"expression": "17 + 23"}`), text("40")},
		check:  "tools", detail: `got calculate({"expression": "17 + 23"})`,
	}, {
		name: "MissingFact",
		yaml: `thread: [{say: "@threadwright what is 17 * 23?"}]
expect:
  answer: {contains: ["391"], not_contains: ["maybe"]}`,
		script: []openaitest.Response{text("It is maybe 400.")},
		check:  "answer", detail: `lacks "391"; says "maybe"`,
	}, {
		name: "CitedSourceNoToolReturned",
		yaml: `thread: [{say: "@threadwright where is the leave policy?"}]`,
		script: []openaitest.Response{call("current_time", `{}`),
			text("The policy is at <https://made-up.example/leave-policy|the leave policy page>.")},
		check: "citations", detail: "cites https://made-up.example/leave-policy, which no tool returned",
	}, {
		name: "UnapprovedSideEffect",
		yaml: `tools:
  - {name: delete_record, description: Delete a record of the CRM., result: deleted}
thread: [{say: "@threadwright delete record 42"}]`,
		script: []openaitest.Response{call("delete_record", `{"id": "42"}`), text("Deleted record 42.")},
		check:  "approvals", detail: "delete_record, a tool with side effects, ran in step 1 without an approval",
	}, {
		name: "ScopeVerdict",
		yaml: `settings: {SCOPE_DESCRIPTION: "questions about the handbook"}
thread: [{say: "@threadwright what is 17 * 23?"}]
expect:
  scope: in`,
		script: []openaitest.Response{call("classify_scope", `{"in_scope": false, "reason": "arithmetic is not the handbook"}`)},
		check:  "scope", detail: "expected in; step 1 was out (arithmetic is not the handbook)",
	}, {
		name: "Tokens",
		yaml: `thread: [{say: "@threadwright hi"}]
expect:
  max: {tokens: 100}`,
		script: []openaitest.Response{{Text: "Hello!", Usage: openaitest.Usage{PromptTokens: 900, CompletionTokens: 50}}},
		check:  "tokens", detail: "950 tokens in 1 model calls (at most 100)",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			ai := openaitest.NewServer()
			defer ai.Close()
			evalEnv(t, ai)
			ai.Push(tc.script...)
			path := writeCase(t, t.TempDir(), strings.ToLower(tc.name), tc.yaml)
			run := onlyRun(t, runCases(t, &eval.Runner{}, path))
			c := check(t, run, tc.check)
			if c.Pass || !strings.Contains(c.Detail, tc.detail) || run.Status != eval.StatusFail {
				t.Errorf("%s check %+v (run %s); want it failed, saying %q", tc.check, c, run.Status, tc.detail)
			}
			if ai.Pending() != 0 {
				t.Errorf("%d scripted answers left: the pipeline did not ask what the script expected", ai.Pending())
			}
		})
	}
}

// TestEvalApprovedSideEffect: a tool that needs approval waits for the card's
// Approve, which the case clicks; the run records the approval, the tool runs in
// that step, and the approvals check passes.
func TestEvalApprovedSideEffect(t *testing.T) {
	ai := openaitest.NewServer()
	defer ai.Close()
	evalEnv(t, ai)
	ai.Push(openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "delete_record", Arguments: `{"id": "42"}`}}},
		openaitest.Response{Text: "Deleted record 42."})
	path := writeCase(t, t.TempDir(), "approved", `tools:
  - {name: delete_record, description: Delete a record of the CRM., needs_approval: true, result: deleted}
thread:
  - say: "@threadwright delete record 42"
  - click: Approve
expect:
  tools: {match: exact, calls: [{name: delete_record, args: {id: '^42$'}}]}
  answer: {contains: ["Deleted record 42"]}`)
	run := onlyRun(t, runCases(t, &eval.Runner{}, path))
	if run.Status != eval.StatusPass {
		t.Fatalf("run %s %s: %+v", run.Status, run.Error, run.Checks)
	}
	if c := check(t, run, "approvals"); !c.Pass || c.Detail != "1 side effects, each approved" {
		t.Errorf("approvals %+v", c)
	}
	ap := run.Transcript.Approvals
	if len(ap) != 1 || ap[0].Tool != "delete_record" || !ap[0].Approved || ap[0].Step != 1 || run.Transcript.Tools[0].Step != 1 {
		t.Errorf("approvals %+v, tools %+v", ap, run.Transcript.Tools)
	}
}

// TestEvalReplayDrift: a case recorded with one set of executor instructions and
// replayed with others finds no recorded response for the executor's request: the
// run is drift, naming where the request differs, and nothing is called.
func TestEvalReplayDrift(t *testing.T) {
	ai := openaitest.NewServer()
	ai.Handle(demoHandler(demo.New()))
	evalEnv(t, ai)
	const tmpl = `name: instructed
settings: {EXECUTOR_INSTRUCTIONS: "${FILES}/rules.md"}
files: {rules.md: "%s"}
thread: [{say: "@threadwright what is 17 * 23?"}]
expect: {answer: {contains: ["391"]}}`
	oldPath := writeCase(t, filepath.Join(t.TempDir(), "old"), "instructed", strings.Replace(tmpl, "%s", "Answer in one sentence.", 1))
	rec := cassette.NewRecorder("gpt-eval", "gpt-eval-small")
	if run := onlyRun(t, runCases(t, &eval.Runner{Record: rec}, oldPath)); run.Status != eval.StatusPass {
		t.Fatalf("recording: %s %s %+v", run.Status, run.Error, run.Checks)
	}
	path := filepath.Join(t.TempDir(), "cassette.json")
	if err := rec.Save(path); err != nil {
		t.Fatal(err)
	}
	calls := len(ai.Requests())
	c, err := cassette.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	replay := func(casePath string) eval.RunResult {
		return onlyRun(t, runCases(t, &eval.Runner{Launcher: &evalLauncher{models: [2]string{c.Model, c.SmallModel}}, Replay: cassette.NewPlayer(c)}, casePath))
	}
	if run := replay(oldPath); run.Status != eval.StatusPass {
		t.Errorf("the same case replayed: %s %s", run.Status, run.Error)
	}
	newPath := writeCase(t, filepath.Join(t.TempDir(), "new"), "instructed", strings.Replace(tmpl, "%s", "Answer in French.", 1))
	run := replay(newPath)
	t.Logf("drift: %s", run.Error)
	if run.Status != eval.StatusDrift || !strings.Contains(run.Error, "drift") || !strings.Contains(run.Error, "messages[0] (system)") ||
		!strings.Contains(run.Error, "French") {
		t.Errorf("replay after the instructions changed: %s %q; want drift at messages[0] naming the change", run.Status, run.Error)
	}
	if got := len(ai.Requests()); got != calls {
		t.Errorf("the replays called the model %d times", got-calls)
	}
}

// TestEvalCompareFlagsRegression: `threadwright eval --compare` on a report where a
// case passed and one where it fails names the case, says it regressed and how, and
// fails; the reverse says fixed and succeeds.
func TestEvalCompareFlagsRegression(t *testing.T) {
	ai := openaitest.NewServer()
	defer ai.Close()
	evalEnv(t, ai)
	dir := t.TempDir()
	path := writeCase(t, filepath.Join(dir, "cases"), "arithmetic", `thread: [{say: "@threadwright what is 17 * 23?"}]
expect: {answer: {contains: ["391"]}}`)
	report := func(answer, name string) string {
		ai.Push(openaitest.Response{Text: answer})
		out := filepath.Join(dir, name)
		var stdout, stderr bytes.Buffer
		_ = run(context.Background(), []string{"eval", "--json", out, path}, &stdout, &stderr)
		return out
	}
	good, bad := report("It is 391.", "good.json"), report("It is 400.", "bad.json")
	var stdout bytes.Buffer
	err := run(context.Background(), []string{"eval", "--compare", good, bad}, &stdout, &bytes.Buffer{})
	if err == nil || !strings.Contains(stdout.String(), "arithmetic") || !strings.Contains(stdout.String(), "✗ regressed") ||
		!strings.Contains(stdout.String(), "pass → fail") || !strings.Contains(stdout.String(), "answer 1/1 → 0/1") {
		t.Errorf("compare good → bad: %v\n%s", err, stdout.String())
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"eval", "--compare", bad, good}, &stdout, &bytes.Buffer{}); err != nil ||
		!strings.Contains(stdout.String(), "✓ fixed") || !strings.Contains(stdout.String(), "0 cases regressed") {
		t.Errorf("compare bad → good: %v\n%s", err, stdout.String())
	}
}

// TestEvalCLI: bad flags and a missing model are refused with a message that says
// what to do; --list lists the cases; a case that fails makes the command fail.
func TestEvalCLI(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	ctx := context.Background()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "--repeat", "0", "--demo"}, "--repeat and --concurrency are whole numbers above 0"},
		{[]string{"eval", "--record", "a", "--replay", "b"}, "--record and --replay go alone"},
		{[]string{"eval", "--pass-rate", "2", "--demo"}, "--pass-rate is a share above 0"},
		{[]string{"eval", "--knowledge", "mine", "--demo"}, `--knowledge "mine"`},
		{[]string{"eval"}, "no model: set OPENAI_API_KEY (or OPENAI_BASE_URL), or use --demo or --replay FILE"},
		{[]string{"eval", "--demo", "--run", "nothing-matches-this"}, `--run "nothing-matches-this" matches no case`},
		{[]string{"eval", "--demo", "no/such/dir"}, "no/such/dir"},
		{[]string{"eval", "--replay", "no/such/cassette.json"}, "cassette: open no/such/cassette.json"},
		{[]string{"eval", "--compare", "one.json"}, "--compare takes two reports"},
		{[]string{"eval", "--bogus"}, "flag provided but not defined: -bogus"},
	} {
		err := run(ctx, tc.args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v; want %q", tc.args, err, tc.want)
		}
	}
	var out bytes.Buffer
	if err := run(ctx, []string{"eval", "--list", "--run", "^react-"}, &out, &bytes.Buffer{}); err != nil ||
		!strings.Contains(out.String(), "react-calculate\tbuiltin/react-calculate.yaml\tThe ReAct executor calls calculate") ||
		strings.Contains(out.String(), "scope-") {
		t.Errorf("--list: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"eval", "--help"}, &out, &bytes.Buffer{}); err != nil || !strings.Contains(out.String(), "--compare OLD.json NEW.json") {
		t.Errorf("--help: %v\n%s", err, out.String())
	}
	path := writeCase(t, t.TempDir(), "fails", "thread: [{say: \"@threadwright what is 17 * 23?\"}]\nexpect: {answer: {contains: [\"392\"]}}\n")
	out.Reset()
	err := run(ctx, []string{"eval", "--demo", path}, &out, &bytes.Buffer{})
	if err == nil || err.Error() != "eval: 1 of 1 cases did not pass" || !strings.Contains(out.String(), `fails ✗ answer: lacks "392"`) {
		t.Errorf("a failing case: %v\n%s", err, out.String())
	}
	dir := t.TempDir()
	writeCase(t, dir, "unknown-setting", "settings: {NOT_A_SETTING: x}\nthread: [{say: hi}]\n")
	writeCase(t, dir, "bad-setting", "settings: {MAX_STEPS: many}\nthread: [{say: hi}]\n")
	out.Reset()
	err = run(ctx, []string{"eval", "--demo", dir}, &out, &bytes.Buffer{})
	for _, want := range []string{"unknown-setting ! error: eval: start the bot: settings: unknown environment variable NOT_A_SETTING (docs/configuration.md lists the settings)",
		`bad-setting ! error: eval: start the bot: settings: MAX_STEPS: expected a whole number, got "many"`} {
		if err == nil || !strings.Contains(out.String(), want) {
			t.Errorf("bad settings: %v; want %q in\n%s", err, want, out.String())
		}
	}
}

// TestEvalRubric: --rubric grades a case's thread with a MODEL_PROFILES profile
// (here a second fake server) priced by MODEL_PRICES; the grade is reported apart
// and a failing grade does not fail the run; without a price for the judge, the
// cost bound cannot hold and the command says so.
func TestEvalRubric(t *testing.T) {
	judge := openaitest.NewServer()
	defer judge.Close()
	dir := t.TempDir()
	profiles, prices := filepath.Join(dir, "profiles.yaml"), filepath.Join(dir, "prices.yaml")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(profiles, "judge:\n  base_url: "+judge.URL()+"\n  model: judge-model\n  api_key: sk-judge\n")
	write(prices, "judge-model: {input: 1, output: 1}\n")
	t.Setenv("MODEL_PROFILES", profiles)
	t.Setenv("MODEL_PRICES", prices)
	judge.Push(openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "grade_against_rubric",
		Arguments: `{"score": 0.25, "pass": false, "reason": "It shows no working."}`}}, Usage: openaitest.Usage{PromptTokens: 1000, CompletionTokens: 20}})
	path := writeCase(t, filepath.Join(dir, "cases"), "graded", "thread: [{say: \"@threadwright what is 17 * 23?\"}]\n"+
		"expect: {answer: {contains: [\"391\"]}}\nrubric: The answer shows how it got 391.\n")
	out := filepath.Join(dir, "report.json")
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"eval", "--demo", "--rubric", "judge", "--json", out, path}, &stdout, &bytes.Buffer{}); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	rep, err := eval.ReadReport(out)
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Cases[0].Runs[0]
	if r.Status != eval.StatusPass || r.Rubric == nil || r.Rubric.Score != 0.25 || r.Rubric.Pass || r.Rubric.Reason != "It shows no working." {
		t.Errorf("run %+v, rubric %+v", r.Status, r.Rubric)
	}
	if s := rep.Summary.Rubric; s == nil || s.Judged != 1 || s.CostUSD == nil || *s.CostUSD != 0.00102 || rep.Model.Rubric != "judge-model" {
		t.Errorf("summary rubric %+v", s)
	}
	if !strings.Contains(stdout.String(), "Rubric (apart from the checks): 1 judged, mean score 0.25, 0 passed") ||
		!strings.Contains(stdout.String(), "graded rubric 0.25 (not a check): It shows no working.") {
		t.Errorf("table:\n%s", stdout.String())
	}
	req, ok := judge.LastRequest()
	if !ok || req.Chat.Model != "judge-model" || !strings.Contains(req.LastUserMessage(), "The answer shows how it got 391.") {
		t.Errorf("the judge's request: %+v", req.Chat)
	}
	write(prices, "{}\n")
	err = run(context.Background(), []string{"eval", "--demo", "--rubric", "judge", path}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "MODEL_PRICES has no price for judge-model, which --rubric-max-cost needs") {
		t.Errorf("unpriced judge: %v", err)
	}
}

// TestEvalConfiguredKnowledge: with --knowledge configured, search_knowledge searches
// the configured store's knowledge base (filled by threadwright ingest), while each
// run's conversations stay in its own store; a case that brings documents of its own
// is refused rather than written into the shared knowledge base.
func TestEvalConfiguredKnowledge(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("DATABASE_URL", "")
	t.Setenv("DATA_DIR", filepath.Join(dir, "data"))
	docs := filepath.Join(dir, "handbook")
	if err := os.MkdirAll(docs, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, "leave.md"), []byte("# Leave\n\n## Parental leave\n\nEvery employee gets 20 weeks of parental leave.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := run(ctx, []string{"ingest", docs}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	cases := filepath.Join(dir, "cases")
	writeCase(t, cases, "asks", "thread: [{say: \"@threadwright how many weeks of parental leave do I get?\"}]\n"+
		"expect: {answer: {contains: [\"20 weeks\"]}, tools: {match: exact, calls: [{name: search_knowledge}]}}\n")
	out := filepath.Join(dir, "report.json")
	var stdout bytes.Buffer
	if err := run(ctx, []string{"eval", "--demo", "--knowledge", "configured", "--json", out, cases}, &stdout, &bytes.Buffer{}); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	brings := writeCase(t, filepath.Join(dir, "more"), "brings", "knowledge: [{source: x.md, text: \"# X\"}]\nthread: [{say: \"@threadwright hi\"}]\n")
	stdout.Reset()
	err := run(ctx, []string{"eval", "--demo", "--knowledge", "configured", brings}, &stdout, &bytes.Buffer{})
	if err == nil || !strings.Contains(stdout.String(), "the case has knowledge documents, but the run has no knowledge base of its own") {
		t.Errorf("a case with documents: %v\n%s", err, stdout.String())
	}
	var listed bytes.Buffer
	if err := run(ctx, []string{"ingest", "--list"}, &listed, &bytes.Buffer{}); err != nil || strings.Contains(listed.String(), "x.md") {
		t.Errorf("the shared knowledge base: %v\n%s", err, listed.String())
	}
}

// TestEvalReportScrubsSecrets: a configured secret that a tool returns, and the
// model repeats, appears nowhere in the report: not in the transcript's tool result
// nor in the reply (the bot scrubs what it posts) nor in a check's detail.
func TestEvalReportScrubsSecrets(t *testing.T) {
	ai := openaitest.NewServer()
	defer ai.Close()
	evalEnv(t, ai)
	const secret = "sk-eval-test-secret"
	ai.Push(openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "read_config", Arguments: `{"key": "` + secret + `"}`}}},
		openaitest.Response{Text: "The key is " + secret + "."})
	dir := t.TempDir()
	path := writeCase(t, filepath.Join(dir, "cases"), "leaky", `tools:
  - {name: read_config, description: Read the configuration., read_only: true, result: "OPENAI_API_KEY=`+secret+`"}
thread: [{say: "@threadwright what is the API key?"}]
expect: {answer: {contains: ["no such text"]}}`)
	out := filepath.Join(dir, "report.json")
	var stdout bytes.Buffer
	_ = run(context.Background(), []string{"eval", "--json", out, path}, &stdout, &bytes.Buffer{})
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), secret) || strings.Contains(stdout.String(), secret) {
		t.Errorf("the report holds the secret:\n%s", data)
	}
	if !strings.Contains(string(data), "read_config") || !strings.Contains(string(data), "OPENAI_API_KEY=") {
		t.Errorf("the tool run is not in the report:\n%s", data)
	}
}
