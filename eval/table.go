package eval

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// statusMark is how the table shows a status.
func statusMark(s string) string {
	switch s {
	case StatusPass:
		return "✓ pass"
	case StatusFail:
		return "✗ fail"
	case StatusDrift:
		return "⚠ drift"
	case StatusError:
		return "! error"
	}
	return s
}

// WriteTable writes r for a terminal: a line per case (status, runs passed, checks
// passed, tokens, cost, slowest step), what failed under it, and the scores.
func WriteTable(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "threadwright eval: %d cases × %d %s on %s (%s), %s\n\n", len(r.Cases), r.Repeat, plural(r.Repeat, "run"),
		r.Model.Model, r.Model.Mode, (time.Duration(r.WallMS) * time.Millisecond).Round(100*time.Millisecond))
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CASE\tSTATUS\tRUNS\tCHECKS\tTOKENS\tCOST\tSLOWEST STEP")
	var notes []string
	for _, c := range r.Cases {
		passed, checks, checksOK, tokens, slowest := 0, 0, 0, int64(0), int64(0)
		cost, priced := 0.0, true
		for _, run := range c.Runs {
			if run.Status == StatusPass {
				passed++
			}
			for _, ch := range run.Checks {
				checks++
				if ch.Pass {
					checksOK++
				}
			}
			tokens += run.Usage.Tokens()
			if run.Usage.CostUSD != nil {
				cost += *run.Usage.CostUSD
			} else {
				priced = false
			}
			slowest = max(slowest, run.LatencyMS)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d/%d\t%s\t%s\t%s\n", c.Name, statusMark(c.Status), passed, len(c.Runs), checksOK, checks,
			thousands(tokens), money(cost, priced), (time.Duration(slowest) * time.Millisecond).Round(10*time.Millisecond))
		notes = append(notes, caseNotes(c)...)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(notes) > 0 {
		b.WriteString("\n" + strings.Join(notes, "\n") + "\n")
	}
	writeScores(&b, r)
	_, err := io.WriteString(w, b.String())
	return err
}

// caseNotes are the lines that say what went wrong in c's runs.
func caseNotes(c CaseResult) []string {
	var out []string
	for _, run := range c.Runs {
		prefix := fmt.Sprintf("  %s", c.Name)
		if len(c.Runs) > 1 {
			prefix += fmt.Sprintf(" (run %d)", run.Run)
		}
		if run.Error != "" {
			out = append(out, fmt.Sprintf("%s %s: %s", prefix, statusMark(run.Status), clip(oneLine(run.Error), 600)))
		}
		for _, ch := range run.Failed() {
			out = append(out, fmt.Sprintf("%s ✗ %s: %s", prefix, ch.Name, clip(oneLine(ch.Detail), 600)))
		}
		if rr := run.Rubric; rr != nil && rr.Skipped == "" && !rr.Pass {
			out = append(out, fmt.Sprintf("%s rubric %.2f (not a check): %s", prefix, rr.Score, clip(oneLine(rr.Reason), 300)))
		}
	}
	return out
}

// writeScores writes the summary's scores.
func writeScores(b *strings.Builder, r *Report) {
	s := r.Summary
	var checks []string
	for _, name := range slices.Sorted(maps.Keys(s.Checks)) {
		sc := s.Checks[name]
		checks = append(checks, fmt.Sprintf("%s %d/%d", name, sc.Passed, sc.Total))
	}
	if len(checks) == 0 {
		checks = []string{"none"}
	}
	fmt.Fprintf(b, "\nChecks: %s\n", strings.Join(checks, ", "))
	if rs := s.Retrieval; rs != nil {
		fmt.Fprintf(b, "Retrieval: %d questions, recall@k %.2f, MRR %.2f\n", rs.Questions, rs.Recall, rs.MRR)
	}
	if rb := s.Rubric; rb != nil {
		fmt.Fprintf(b, "Rubric (apart from the checks): %d judged, mean score %.2f, %d passed, %d skipped, %s\n",
			rb.Judged, rb.Score, rb.Passed, rb.Skipped, money(deref(rb.CostUSD), rb.CostUSD != nil))
	}
	cost := "cost unknown (MODEL_PRICES prices none of " + strings.Join(s.Usage.Unpriced, ", ") + ")"
	if s.Usage.CostUSD != nil {
		cost = money(*s.Usage.CostUSD, true)
	}
	fmt.Fprintf(b, "Result: %d of %d cases passed (%d failed, %d errors, %d drift); runs %d/%d (%.1f%%); %s tokens in %d model calls, %s\n",
		s.Passed, s.Cases, s.Failed, s.Errors, s.Drift, s.RunsPassed, s.Runs, 100*s.PassRate, thousands(s.Usage.Tokens()), s.Usage.Calls, cost)
}

func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}

// Progress shows the runs of an eval as they end: on a terminal, one line redrawn
// as a bar; otherwise a line per run.
type Progress struct {
	w   io.Writer
	tty bool

	mu          sync.Mutex
	failed      int
	lastLineLen int
}

// NewProgress returns a Progress writing to w: a bar when w is a terminal (a
// character device).
func NewProgress(w io.Writer) *Progress {
	f, ok := w.(*os.File)
	if !ok {
		return &Progress{w: w}
	}
	st, err := f.Stat()
	return &Progress{w: w, tty: err == nil && st.Mode()&os.ModeCharDevice != 0}
}

// Update shows that run r of c ended, done of total; it fits Runner.Progress.
func (p *Progress) Update(done, total int, c *Case, r RunResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r.Status != StatusPass {
		p.failed++
	}
	if !p.tty {
		fmt.Fprintf(p.w, "[%d/%d] %s %s (run %d, %s)\n", done, total, statusMark(r.Status), c.Name, r.Run,
			(time.Duration(r.WallMS) * time.Millisecond).Round(10*time.Millisecond))
		return
	}
	const width = 30
	filled := width * done / max(total, 1)
	line := fmt.Sprintf("[%s%s] %d/%d runs, %d not passed  %s", strings.Repeat("█", filled), strings.Repeat("░", width-filled),
		done, total, p.failed, clip(c.Name, 40))
	pad := max(0, p.lastLineLen-len(line))
	p.lastLineLen = len(line)
	fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", pad))
	if done == total {
		fmt.Fprintln(p.w)
	}
}
