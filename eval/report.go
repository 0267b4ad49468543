package eval

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// ReportVersion is the version of the JSON report's format.
const ReportVersion = 1

// The statuses of a run and of a case.
const (
	StatusPass  = "pass"  // every check passed
	StatusFail  = "fail"  // a check failed
	StatusError = "error" // the run could not be done: the bot did not start, a step could not be taken
	StatusDrift = "drift" // a replayed model call matched no recorded one
)

// Report is the result of an eval: every run of every case, and the scores. It is
// written as JSON (docs/eval.md, "Reading the report").
type Report struct {
	Version int       `json:"version"`
	Started time.Time `json:"started"`
	// WallMS is the wall time of the whole eval.
	WallMS int64 `json:"wall_ms"`
	// Model says what answered: Mode is live, demo, record or replay.
	Model   ModelInfo    `json:"model"`
	Repeat  int          `json:"repeat"`
	Summary Summary      `json:"summary"`
	Cases   []CaseResult `json:"cases"`
}

// ModelInfo names the model of an eval.
type ModelInfo struct {
	Mode       string `json:"mode"`
	Model      string `json:"model"`
	SmallModel string `json:"small_model,omitempty"`
	// Rubric is the rubric judge's model, when rubrics were judged.
	Rubric string `json:"rubric,omitempty"`
}

// Summary holds the scores of an eval.
type Summary struct {
	Cases  int `json:"cases"`
	Passed int `json:"passed"`
	Failed int `json:"failed"`
	Errors int `json:"errors"`
	Drift  int `json:"drift"`
	// Runs and RunsPassed count the runs; PassRate is RunsPassed over Runs.
	Runs       int     `json:"runs"`
	RunsPassed int     `json:"runs_passed"`
	PassRate   float64 `json:"pass_rate"`
	// Checks counts, per expectation kind, the checks that passed and were made.
	Checks map[string]Score `json:"checks"`
	Usage  Usage            `json:"usage"`
	// Retrieval averages the runs' retrieval scores; nil without questions.
	Retrieval *RetrievalSummary `json:"retrieval,omitempty"`
	// Rubric averages the rubric grades, apart from the checks; nil without rubrics.
	Rubric *RubricSummary `json:"rubric,omitempty"`
}

// Score counts checks.
type Score struct {
	Passed int `json:"passed"`
	Total  int `json:"total"`
}

// RetrievalSummary averages retrieval scores over the runs that have them.
type RetrievalSummary struct {
	Questions int     `json:"questions"`
	Recall    float64 `json:"recall_at_k"`
	MRR       float64 `json:"mrr"`
}

// RubricSummary sums the rubric grades.
type RubricSummary struct {
	Judged  int      `json:"judged"`
	Passed  int      `json:"passed"`
	Skipped int      `json:"skipped"`
	Score   float64  `json:"mean_score"`
	CostUSD *float64 `json:"cost_usd,omitempty"`
}

// CaseResult is the runs of a case.
type CaseResult struct {
	Name        string   `json:"name"`
	File        string   `json:"file"`
	Description string   `json:"description,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	// Status is pass when at least the runner's share of the runs passed (all, by
	// default); otherwise drift, error or fail, the first that a run had.
	Status   string      `json:"status"`
	PassRate float64     `json:"pass_rate"`
	Runs     []RunResult `json:"runs"`
}

// RunResult is one run of a case.
type RunResult struct {
	Run    int    `json:"run"`
	Status string `json:"status"`
	// Error says why the run could not be done (StatusError, StatusDrift).
	Error  string  `json:"error,omitempty"`
	WallMS int64   `json:"wall_ms"`
	Checks []Check `json:"checks"`
	Usage  Usage   `json:"usage"`
	// LatencyMS is the slowest step's latency.
	LatencyMS  int64           `json:"latency_ms"`
	Retrieval  *RetrievalScore `json:"retrieval,omitempty"`
	Rubric     *RubricResult   `json:"rubric,omitempty"`
	Transcript *Transcript     `json:"transcript,omitempty"`
	// Log holds the bot's warnings and errors of a run that did not pass.
	Log []string `json:"log,omitempty"`
}

// Failed returns the checks of r that failed.
func (r RunResult) Failed() []Check {
	var out []Check
	for _, c := range r.Checks {
		if !c.Pass {
			out = append(out, c)
		}
	}
	return out
}

// Passed reports whether every case passed: what a CI job gates on.
func (r *Report) Passed() bool { return r.Summary.Passed == r.Summary.Cases }

// WriteJSON writes r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReadReport reads a JSON report written by WriteJSON. Errors: the file's, or a file
// that is not a report of this version.
func ReadReport(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	var r Report
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&r); err != nil {
		return nil, fmt.Errorf("eval: %s: not a report: %w", path, err)
	}
	if r.Version != ReportVersion {
		return nil, fmt.Errorf("eval: %s: report version %d; this threadwright reads version %d", path, r.Version, ReportVersion)
	}
	return &r, nil
}

// summarize fills r.Summary and each case's status from the runs; passRate is the
// share of a case's runs that must pass.
func (r *Report) summarize(passRate float64) {
	t := tally{s: Summary{Checks: map[string]Score{}}, priced: true}
	for i := range r.Cases {
		c := &r.Cases[i]
		passed, worst := 0, ""
		for _, run := range c.Runs {
			t.add(run)
			if run.Status == StatusPass {
				passed++
			} else if statusRank(run.Status) > statusRank(worst) {
				worst = run.Status
			}
		}
		c.PassRate = ratio(passed, len(c.Runs))
		c.Status = StatusPass
		if len(c.Runs) == 0 || c.PassRate < passRate {
			c.Status = cmp.Or(worst, StatusError)
		}
		t.s.Cases++
		switch c.Status {
		case StatusPass:
			t.s.Passed++
		case StatusDrift:
			t.s.Drift++
		case StatusError:
			t.s.Errors++
		default:
			t.s.Failed++
		}
	}
	r.Summary = t.summary()
}

// tally sums the runs of a report.
type tally struct {
	s             Summary
	cost, rubCost float64
	priced        bool
	retr          RetrievalSummary
	retrRuns      int
	rub           RubricSummary
}

// add counts run.
func (t *tally) add(run RunResult) {
	s := &t.s
	s.Runs++
	if run.Status == StatusPass {
		s.RunsPassed++
	}
	for _, ch := range run.Checks {
		sc := s.Checks[ch.Name]
		sc.Total++
		if ch.Pass {
			sc.Passed++
		}
		s.Checks[ch.Name] = sc
	}
	s.Usage.Calls += run.Usage.Calls
	s.Usage.PromptTokens += run.Usage.PromptTokens
	s.Usage.CompletionTokens += run.Usage.CompletionTokens
	if run.Usage.CostUSD != nil {
		t.cost += *run.Usage.CostUSD
	} else {
		t.priced = false
		s.Usage.Unpriced = appendNew(s.Usage.Unpriced, run.Usage.Unpriced...)
	}
	if rs := run.Retrieval; rs != nil {
		t.retrRuns++
		t.retr.Questions += len(rs.Questions)
		t.retr.Recall += rs.Recall
		t.retr.MRR += rs.MRR
	}
	if rr := run.Rubric; rr != nil {
		if rr.CostUSD != nil {
			t.rubCost += *rr.CostUSD
		}
		switch {
		case rr.Skipped != "":
			t.rub.Skipped++
		default:
			t.rub.Judged++
			t.rub.Score += rr.Score
			if rr.Pass {
				t.rub.Passed++
			}
		}
	}
}

// summary returns the sums, with the averages.
func (t *tally) summary() Summary {
	s := t.s
	s.PassRate = ratio(s.RunsPassed, s.Runs)
	if t.priced {
		cost := t.cost
		s.Usage.CostUSD = &cost
	}
	if t.retrRuns > 0 {
		retr := t.retr
		retr.Recall /= float64(t.retrRuns)
		retr.MRR /= float64(t.retrRuns)
		s.Retrieval = &retr
	}
	if t.rub.Judged+t.rub.Skipped > 0 {
		rub := t.rub
		if rub.Judged > 0 {
			rub.Score /= float64(rub.Judged)
		}
		cost := t.rubCost
		rub.CostUSD = &cost
		s.Rubric = &rub
	}
	return s
}

// statusRank orders the statuses of runs that did not pass: a case takes its worst.
func statusRank(s string) int {
	switch s {
	case StatusFail:
		return 1
	case StatusError:
		return 2
	case StatusDrift:
		return 3
	}
	return 0
}
