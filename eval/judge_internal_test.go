package eval

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
)

// run is a tool run of the tests.
func runOf(step int, name, args, result, failure string, readOnly bool) ToolRun {
	return ToolRun{Step: step, Name: name, Arguments: json.RawMessage(args), Result: result, Error: failure, ReadOnly: readOnly}
}

// call is an expected call of the tests, compiled.
func call(name string, args map[string]string, fails *bool) CallExpect {
	c := CallExpect{Name: name, Args: args, Fails: fails, args: map[string]*regexp.Regexp{}}
	for k, p := range args {
		c.args[k] = regexp.MustCompile(p)
	}
	return c
}

// TestMatchTrajectory: each match mode accepts the trajectories it describes and
// refuses the others; argument patterns and the failing flag narrow a call.
func TestMatchTrajectory(t *testing.T) {
	yes, no := true, false
	calc := call("calculate", map[string]string{"expression": `17\s*\*\s*23`}, nil)
	calcFails := call("calculate", nil, &yes)
	calcOK := call("calculate", nil, &no)
	tm := call("current_time", map[string]string{"timezone": "^Asia/Tokyo$"}, nil)
	search := call("search_knowledge", nil, nil)
	limit := call("search_knowledge", map[string]string{"limit": `^3$`}, nil) // a number: its JSON

	rCalc := runOf(0, "calculate", `{"expression":"17 * 23"}`, "391", "", true)
	rCalcBad := runOf(0, "calculate", `{"expression":"17 + 23"}`, "40", "", true)
	rCalcFail := runOf(0, "calculate", `{"expression":"1/0"}`, "", "division by zero", true)
	rTime := runOf(0, "current_time", `{"timezone":"Asia/Tokyo"}`, "…", "", true)
	rSearch := runOf(0, "search_knowledge", `{"query":"leave","limit":3}`, "…", "", true)

	for _, tc := range []struct {
		name string
		mode string
		want []CallExpect
		got  []ToolRun
		ok   bool
	}{
		{"ExactSame", MatchExact, []CallExpect{calc, tm}, []ToolRun{rCalc, rTime}, true},
		{"ExactOtherOrder", MatchExact, []CallExpect{calc, tm}, []ToolRun{rTime, rCalc}, false},
		{"ExactExtra", MatchExact, []CallExpect{calc}, []ToolRun{rCalc, rTime}, false},
		{"ExactNone", MatchExact, nil, nil, true},
		{"ExactNoneButOne", MatchExact, nil, []ToolRun{rTime}, false},
		{"ExactWrongArgument", MatchExact, []CallExpect{calc}, []ToolRun{rCalcBad}, false},
		{"InOrderWithOthersBetween", MatchInOrder, []CallExpect{calc, tm}, []ToolRun{rCalc, rSearch, rTime}, true},
		{"InOrderReversed", MatchInOrder, []CallExpect{calc, tm}, []ToolRun{rTime, rCalc}, false},
		{"InOrderTwiceNeedsTwo", MatchInOrder, []CallExpect{calc, calc}, []ToolRun{rCalc}, false},
		{"AnyOrder", MatchAnyOrder, []CallExpect{calc, tm}, []ToolRun{rTime, rCalc}, true},
		{"AnyOrderExtra", MatchAnyOrder, []CallExpect{calc, tm}, []ToolRun{rTime, rCalc, rSearch}, false},
		{"AnyOrderNeedsMatching", MatchAnyOrder, []CallExpect{call("calculate", nil, nil), calc}, []ToolRun{rCalc, rCalcBad}, true},
		{"SupersetExtraAllowed", MatchSuperset, []CallExpect{tm}, []ToolRun{rCalc, rTime, rSearch}, true},
		{"SupersetMissing", MatchSuperset, []CallExpect{tm, search}, []ToolRun{rTime}, false},
		{"SubsetSomeMissing", MatchSubset, []CallExpect{tm, search}, []ToolRun{rTime}, true},
		{"SubsetExtraRefused", MatchSubset, []CallExpect{tm}, []ToolRun{rTime, rCalc}, false},
		{"SubsetCountsCalls", MatchSubset, []CallExpect{tm}, []ToolRun{rTime, rTime}, false},
		{"FailsTrue", MatchExact, []CallExpect{calcFails}, []ToolRun{rCalcFail}, true},
		{"FailsTrueButSucceeded", MatchExact, []CallExpect{calcFails}, []ToolRun{rCalc}, false},
		{"FailsFalseButFailed", MatchExact, []CallExpect{calcOK}, []ToolRun{rCalcFail}, false},
		{"NumberArgument", MatchExact, []CallExpect{limit}, []ToolRun{rSearch}, true},
		{"MissingArgument", MatchExact, []CallExpect{tm}, []ToolRun{runOf(0, "current_time", `{}`, "", "", true)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := matchTrajectory(tc.mode, tc.want, tc.got); got != tc.ok {
				t.Errorf("%s: %s", map[bool]string{true: "matched", false: "did not match"}[got], trajectoryDetail(tc.mode, tc.want, tc.got))
			}
		})
	}
}

// TestChecksFail: each check fails when what it checks is not so, with a detail
// that says what, and passes when it is.
func TestChecksFail(t *testing.T) {
	facts := &Facts{Contains: []string{"16 WEEKS"}, NotContains: []string{"maybe"}, Matches: []string{`\[1\]`}, NotMatches: []string{`(?i)i think`}}
	if err := facts.compile(); err != nil {
		t.Fatal(err)
	}
	if c := checkFacts("answer", facts, "You get 16 weeks [1]."); !c.Pass {
		t.Errorf("facts met: %+v", c)
	}
	c := checkFacts("answer", facts, "I think maybe 12 weeks.")
	for _, want := range []string{`lacks "16 WEEKS"`, `says "maybe"`, `does not match /\[1\]/`, `matches /(?i)i think/ ("I think")`} {
		if c.Pass || !strings.Contains(c.Detail, want) {
			t.Errorf("facts not met: %+v; want %q", c, want)
		}
	}

	for _, tc := range []struct {
		name   string
		want   string
		got    []ScopeVerdict
		detail string
	}{
		{"NoCheck", "out", nil, "no scope check ran"},
		{"Wrong", "out", []ScopeVerdict{{Step: 0, InScope: true, Reason: "about leave"}}, "expected out; step 1 was in (about leave)"},
		{"Failed", "in", []ScopeVerdict{{Step: 1, Error: "model down"}}, "the scope check of step 2 failed: model down"},
	} {
		if c := checkScope(tc.want, tc.got); c.Pass || !strings.Contains(c.Detail, tc.detail) {
			t.Errorf("scope %s: %+v; want %q", tc.name, c, tc.detail)
		}
	}
	if c := checkScope("in", []ScopeVerdict{{InScope: true}, {Step: 1, InScope: true}}); !c.Pass {
		t.Errorf("scope in: %+v", c)
	}

	tr := &Transcript{Workflow: &WorkflowRun{Name: "proposal", Status: "running", Artifacts: map[string]ArtifactState{
		"research": {Status: "generated", Checks: 4, Failing: []string{"sourced"}},
		"solution": {Status: "pending"},
	}}, reports: nil}
	w := &WorkflowExpect{Name: "product-brief", Status: "completed", Artifacts: map[string]string{"research": "approved", "budget": "approved"},
		Criteria: []string{"research", "solution"}, Report: []string{"Millbrook"}, Selected: map[string]string{"solution": "B"}}
	c = checkWorkflow(w, tr)
	for _, want := range []string{"workflow proposal, expected product-brief", "run running, expected completed", "no artifact budget",
		"research is generated, expected approved", "research fails sourced", `solution has option "" picked, expected "B"`, "solution has no criteria checks", "no report was uploaded"} {
		if c.Pass || !strings.Contains(c.Detail, want) {
			t.Errorf("workflow: %+v; want %q", c, want)
		}
	}
	if c := checkWorkflow(w, &Transcript{}); c.Pass || c.Detail != "no workflow ran in the thread" {
		t.Errorf("no workflow: %+v", c)
	}
	tr.reports = []string{"# Grant proposal\nMillbrook"}
	tr.Workflow.Artifacts["research"] = ArtifactState{Status: "approved", Checks: 4}
	if c := checkWorkflow(&WorkflowExpect{Artifacts: map[string]string{"research": "approved"}, Criteria: []string{"all"}, Report: []string{"millbrook"}}, tr); !c.Pass {
		t.Errorf("workflow met: %+v", c)
	}

	cost := 0.02
	steps := []StepResult{{LatencyMS: 100}, {LatencyMS: 3000}}
	bounds := checkBounds(Bounds{Tokens: 1000, Cost: 0.01, Latency: Duration(2e9)}, &Transcript{Steps: steps},
		Usage{Calls: 2, PromptTokens: 900, CompletionTokens: 200, CostUSD: &cost})
	for i, want := range []string{"1100 tokens in 2 model calls (at most 1000)", "$0.0200 (at most $0.0100)", "slowest step 2: 3s (at most 2s)"} {
		if bounds[i].Pass || bounds[i].Detail != want {
			t.Errorf("bound %d: %+v; want %q", i, bounds[i], want)
		}
	}
	if c := checkBounds(Bounds{Cost: 1}, &Transcript{}, Usage{Unpriced: []string{"gpt-x"}})[0]; c.Pass || !strings.Contains(c.Detail, "no price for gpt-x") {
		t.Errorf("unpriced cost: %+v", c)
	}
}

// TestCheckApprovals: a tool with side effects passes only in the step of an
// Approve of that tool; read-only tools need none.
func TestCheckApprovals(t *testing.T) {
	del := runOf(1, "delete_record", `{}`, "deleted", "", false)
	for _, tc := range []struct {
		name      string
		runs      []ToolRun
		approvals []Approval
		ok        bool
	}{
		{"ReadOnly", []ToolRun{runOf(0, "calculate", `{}`, "4", "", true)}, nil, true},
		{"Unapproved", []ToolRun{del}, nil, false},
		{"Approved", []ToolRun{del}, []Approval{{Step: 1, Tool: "delete_record", Approved: true}}, true},
		{"Denied", []ToolRun{del}, []Approval{{Step: 1, Tool: "delete_record", Approved: false}}, false},
		{"AnotherStep", []ToolRun{del}, []Approval{{Step: 0, Tool: "delete_record", Approved: true}}, false},
		{"AnotherTool", []ToolRun{del}, []Approval{{Step: 1, Tool: "create_record", Approved: true}}, false},
	} {
		c := checkApprovals(&Transcript{Tools: tc.runs, Approvals: tc.approvals})
		if c.Pass != tc.ok {
			t.Errorf("%s: %+v", tc.name, c)
		}
	}
}

// TestCheckCitations: the sources of an answer's list (mrkdwn and the streamed
// Markdown), and the URLs it links, must each be in a tool's result; a failed call's
// result does not count.
func TestCheckCitations(t *testing.T) {
	search := runOf(0, "search_knowledge", `{}`, "Found 1 passage:\n\n[1] handbook/leave_policy.md — Parental leave\nSixteen weeks.", "", true)
	page := runOf(0, "fetch_url", `{}`, "https://example.com/policy (fetched): …", "", true)
	failed := runOf(0, "fetch_url", `{}`, "https://example.com/secret", "timeout", true)
	for _, tc := range []struct {
		name   string
		answer string
		runs   []ToolRun
		cited  string // the source no tool returned, "" when all were
	}{
		{"KnowledgeMrkdwn", "You get 16 weeks [1].\n\n*Sources*\n[1] handbook/leave_policy.md — Parental leave", []ToolRun{search}, ""},
		{"KnowledgeMarkdown", "You get 16 weeks [1].\n\n**Sources**  \n[1] handbook/leave\\_policy.md — Parental leave", []ToolRun{search}, ""},
		{"KnowledgeNotReturned", "You get 16 weeks [1].\n\n*Sources*\n[1] handbook/leave_policy.md — Sick leave", []ToolRun{search}, "handbook/leave_policy.md — Sick leave"},
		{"SlackLink", "See [1].\n\n*Sources*\n[1] <https://example.com/policy|Leave policy>", []ToolRun{page}, ""},
		{"MarkdownLink", "See [1].\n\n**Sources**  \n[1] [Leave policy](https://example.com/policy)", []ToolRun{page}, ""},
		{"InlineInvented", "Read https://made-up.example/leave for more.", []ToolRun{search}, "https://made-up.example/leave"},
		{"FromAFailedCall", "See <https://example.com/secret>.", []ToolRun{failed}, "https://example.com/secret"},
		{"NoSources", "You get 16 weeks.", nil, ""},
	} {
		c := checkCitations(&Transcript{answers: []string{tc.answer}, Tools: tc.runs})
		if tc.cited == "" && !c.Pass || tc.cited != "" && (c.Pass || !strings.Contains(c.Detail, "cites "+tc.cited+", which no tool returned")) {
			t.Errorf("%s: %+v", tc.name, c)
		}
	}
}

// TestUsageOf sums the calls' tokens and prices them; an unpriced model leaves the
// cost unknown and is named.
func TestUsageOf(t *testing.T) {
	prices := conversation.Prices{"big": {Input: 2, Output: 10}}
	u := usageOf([]ModelCall{{Model: "big", PromptTokens: 1_000_000, CompletionTokens: 100_000}}, prices)
	if u.CostUSD == nil || *u.CostUSD != 3 || u.Tokens() != 1_100_000 {
		t.Errorf("priced: %+v", u)
	}
	u = usageOf([]ModelCall{{Model: "big"}, {Model: "small"}, {Model: "small"}}, prices)
	if u.CostUSD != nil || len(u.Unpriced) != 1 || u.Unpriced[0] != "small" || u.Calls != 3 {
		t.Errorf("unpriced: %+v", u)
	}
}
