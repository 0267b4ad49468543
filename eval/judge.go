package eval

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// Check is the verdict of one expectation on a run.
type Check struct {
	// Name is the expectation's kind: tools, answer, step answer, thread,
	// citations, approvals, scope, workflow, tokens, cost, latency, retrieval.
	Name string `json:"name"`
	Pass bool   `json:"pass"`
	// Detail says what was expected and what happened, when it failed, or what
	// was measured.
	Detail string `json:"detail,omitempty"`
}

// Usage is the model usage of a run.
type Usage struct {
	Calls            int   `json:"calls"`
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	// CostUSD is the cost by MODEL_PRICES; nil when a model the run called has no
	// price (Unpriced names them).
	CostUSD  *float64 `json:"cost_usd,omitempty"`
	Unpriced []string `json:"unpriced,omitempty"`
}

// Tokens returns the prompt and completion tokens together.
func (u Usage) Tokens() int64 { return u.PromptTokens + u.CompletionTokens }

// usageOf sums the model calls' usage, priced with prices.
func usageOf(calls []ModelCall, prices conversation.Prices) Usage {
	var u Usage
	cost, priced := 0.0, true
	for _, c := range calls {
		u.Calls++
		u.PromptTokens += int64(c.PromptTokens)
		u.CompletionTokens += int64(c.CompletionTokens)
		if usd, ok := prices.Cost(c.Model, int64(c.PromptTokens), int64(c.CompletionTokens)); ok {
			cost += usd
		} else if !slices.Contains(u.Unpriced, c.Model) {
			priced = false
			u.Unpriced = append(u.Unpriced, c.Model)
		}
	}
	if priced {
		u.CostUSD = &cost
	}
	return u
}

// judge checks every expectation of c on the transcript tr of a run that used u.
// The checks made in every run (citations, approvals) come first, then those c
// asks for, in a fixed order.
func judge(c *Case, tr *Transcript, u Usage) []Check {
	checks := []Check{checkCitations(tr), checkApprovals(tr)}
	e := c.Expect
	if e.Tools != nil {
		ok := matchTrajectory(e.Tools.Match, e.Tools.Calls, tr.Tools)
		checks = append(checks, Check{Name: "tools", Pass: ok, Detail: trajectoryDetail(e.Tools.Match, e.Tools.Calls, tr.Tools)})
	}
	for i, s := range c.Thread {
		if s.Answer != nil && i < len(tr.Steps) {
			ch := checkFacts("step answer", s.Answer, tr.Steps[i].Reply)
			ch.Detail = strings.TrimSuffix(fmt.Sprintf("step %d: %s", i+1, ch.Detail), ": ")
			checks = append(checks, ch)
		}
	}
	if e.Answer != nil {
		checks = append(checks, checkFacts("answer", e.Answer, tr.answer))
	}
	if e.Thread != nil {
		checks = append(checks, checkFacts("thread", e.Thread, tr.thread))
	}
	if e.Scope != "" {
		checks = append(checks, checkScope(e.Scope, tr.Scope))
	}
	if e.Workflow != nil {
		checks = append(checks, checkWorkflow(e.Workflow, tr))
	}
	return append(checks, checkBounds(e.Max, tr, u)...)
}

// checkFacts checks what text must and must not say.
func checkFacts(name string, f *Facts, text string) Check {
	var bad []string
	low := strings.ToLower(text)
	for _, s := range f.Contains {
		if !strings.Contains(low, strings.ToLower(s)) {
			bad = append(bad, fmt.Sprintf("lacks %q", s))
		}
	}
	for _, s := range f.NotContains {
		if strings.Contains(low, strings.ToLower(s)) {
			bad = append(bad, fmt.Sprintf("says %q", s))
		}
	}
	for _, re := range f.matches {
		if !re.MatchString(text) {
			bad = append(bad, fmt.Sprintf("does not match /%s/", re))
		}
	}
	for _, re := range f.notMatches {
		if m := re.FindString(text); m != "" {
			bad = append(bad, fmt.Sprintf("matches /%s/ (%q)", re, clip(m, 80)))
		}
	}
	if len(bad) == 0 {
		return Check{Name: name, Pass: true}
	}
	return Check{Name: name, Detail: strings.Join(bad, "; ") + "; the text: " + clip(oneLine(text), 400)}
}

// checkScope checks that every scope check gave the verdict want (in or out).
func checkScope(want string, got []ScopeVerdict) Check {
	c := Check{Name: "scope"}
	if len(got) == 0 {
		c.Detail = "expected " + want + "; no scope check ran (is SCOPE_DESCRIPTION or a scope rule set?)"
		return c
	}
	for _, v := range got {
		verdict := "in"
		if !v.InScope {
			verdict = "out"
		}
		if v.Error != "" {
			c.Detail = fmt.Sprintf("expected %s; the scope check of step %d failed: %s", want, v.Step+1, v.Error)
			return c
		}
		if verdict != want {
			c.Detail = fmt.Sprintf("expected %s; step %d was %s (%s)", want, v.Step+1, verdict, clip(v.Reason, 200))
			return c
		}
	}
	c.Pass = true
	return c
}

// checkWorkflow checks the workflow run's state and report.
func checkWorkflow(w *WorkflowExpect, tr *Transcript) Check {
	c := Check{Name: "workflow"}
	run := tr.Workflow
	if run == nil {
		c.Detail = "no workflow ran in the thread"
		return c
	}
	var bad []string
	if w.Name != "" && run.Name != w.Name {
		bad = append(bad, fmt.Sprintf("workflow %s, expected %s", run.Name, w.Name))
	}
	if w.Status != "" && run.Status != w.Status {
		bad = append(bad, fmt.Sprintf("run %s, expected %s", run.Status, w.Status))
	}
	for _, id := range slices.Sorted(maps.Keys(w.Artifacts)) {
		a, ok := run.Artifacts[id]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("no artifact %s", id))
		case a.Status != w.Artifacts[id]:
			bad = append(bad, fmt.Sprintf("%s is %s, expected %s", id, a.Status, w.Artifacts[id]))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(w.Selected)) {
		if got := run.Artifacts[id].Selected; got != w.Selected[id] {
			bad = append(bad, fmt.Sprintf("%s has option %q picked, expected %q", id, got, w.Selected[id]))
		}
	}
	ids := w.Criteria
	if slices.Contains(ids, "all") {
		ids = nil
		for _, id := range slices.Sorted(maps.Keys(run.Artifacts)) {
			if run.Artifacts[id].Checks > 0 {
				ids = append(ids, id)
			}
		}
	}
	for _, id := range ids {
		a, ok := run.Artifacts[id]
		switch {
		case !ok || a.Checks == 0:
			bad = append(bad, fmt.Sprintf("%s has no criteria checks", id))
		case len(a.Failing) > 0:
			bad = append(bad, fmt.Sprintf("%s fails %s", id, strings.Join(a.Failing, ", ")))
		}
	}
	report := strings.ToLower(strings.Join(tr.reports, "\n"))
	for _, s := range w.Report {
		if len(tr.reports) == 0 {
			bad = append(bad, "no report was uploaded")
			break
		}
		if !strings.Contains(report, strings.ToLower(s)) {
			bad = append(bad, fmt.Sprintf("the report lacks %q", s))
		}
	}
	c.Pass = len(bad) == 0
	c.Detail = strings.Join(bad, "; ")
	if c.Pass {
		c.Detail = fmt.Sprintf("%s %s, %d artifacts", run.Name, run.Status, len(run.Artifacts))
	}
	return c
}

// checkBounds checks the run's tokens, cost and slowest step against b.
func checkBounds(b Bounds, tr *Transcript, u Usage) []Check {
	var out []Check
	if b.Tokens > 0 {
		out = append(out, Check{Name: "tokens", Pass: u.Tokens() <= b.Tokens,
			Detail: fmt.Sprintf("%d tokens in %d model calls (at most %d)", u.Tokens(), u.Calls, b.Tokens)})
	}
	if b.Cost > 0 {
		c := Check{Name: "cost"}
		if u.CostUSD == nil {
			c.Detail = fmt.Sprintf("MODEL_PRICES has no price for %s", strings.Join(u.Unpriced, ", "))
		} else {
			c.Pass = *u.CostUSD <= b.Cost
			c.Detail = fmt.Sprintf("$%.4f (at most $%.4f)", *u.CostUSD, b.Cost)
		}
		out = append(out, c)
	}
	if b.Latency > 0 {
		slowest, at := time.Duration(0), 0
		for i, s := range tr.Steps {
			if d := time.Duration(s.LatencyMS) * time.Millisecond; d > slowest {
				slowest, at = d, i
			}
		}
		out = append(out, Check{Name: "latency", Pass: slowest <= time.Duration(b.Latency),
			Detail: fmt.Sprintf("slowest step %d: %s (at most %s)", at+1, slowest, time.Duration(b.Latency))})
	}
	return out
}

// checkApprovals checks that no tool with side effects (one that is not read-only)
// ran without a person's approval: every run of one happened in the turn of an
// Approve click on that tool's confirmation card.
func checkApprovals(tr *Transcript) Check {
	c := Check{Name: "approvals", Pass: true}
	effects := 0
	for _, r := range tr.Tools {
		if r.ReadOnly {
			continue
		}
		effects++
		approved := slices.ContainsFunc(tr.Approvals, func(a Approval) bool { return a.Step == r.Step && a.Tool == r.Name && a.Approved })
		if !approved {
			c.Pass = false
			c.Detail = fmt.Sprintf("%s, a tool with side effects, ran in step %d without an approval", r.Name, r.Step+1)
			return c
		}
	}
	if effects > 0 {
		c.Detail = fmt.Sprintf("%d side effects, each approved", effects)
	}
	return c
}
