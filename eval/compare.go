package eval

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// The changes of a case between two reports.
const (
	ChangeRegressed = "regressed" // it passed and no longer does, a check of it that passed fails, or its retrieval scores dropped
	ChangeFixed     = "fixed"     // it did not pass and now does
	ChangeSame      = "same"
	ChangeNew       = "new"     // only in the new report
	ChangeRemoved   = "removed" // only in the old report
)

// Comparison is what changed between two reports, case by case.
type Comparison struct {
	Cases []CaseChange
	// Regressions counts the cases that regressed: what a CI job gates on.
	Regressions int
}

// CaseChange is what changed for one case.
type CaseChange struct {
	Name      string
	Change    string
	Old, New  string // statuses ("" when absent)
	OldRate   float64
	NewRate   float64
	Why       []string // the regressions, check by check
	OldTokens int64
	NewTokens int64
}

// CompareFiles reads the JSON reports at oldPath and newPath and compares them.
func CompareFiles(oldPath, newPath string) (Comparison, error) {
	old, err := ReadReport(oldPath)
	if err != nil {
		return Comparison{}, err
	}
	cur, err := ReadReport(newPath)
	if err != nil {
		return Comparison{}, err
	}
	return Compare(old, cur), nil
}

// Compare compares the reports old and new case by case (by name), in new's order,
// then the cases only old has.
func Compare(old, new *Report) Comparison {
	var cmp Comparison
	olds := map[string]CaseResult{}
	for _, c := range old.Cases {
		olds[c.Name] = c
	}
	seen := map[string]bool{}
	for _, n := range new.Cases {
		seen[n.Name] = true
		o, ok := olds[n.Name]
		ch := CaseChange{Name: n.Name, New: n.Status, NewRate: n.PassRate, NewTokens: caseTokens(n)}
		if !ok {
			ch.Change = ChangeNew
			cmp.Cases = append(cmp.Cases, ch)
			continue
		}
		ch.Old, ch.OldRate, ch.OldTokens = o.Status, o.PassRate, caseTokens(o)
		ch.Why = regressions(o, n)
		switch {
		case len(ch.Why) > 0:
			ch.Change = ChangeRegressed
			cmp.Regressions++
		case o.Status != StatusPass && n.Status == StatusPass:
			ch.Change = ChangeFixed
		default:
			ch.Change = ChangeSame
		}
		cmp.Cases = append(cmp.Cases, ch)
	}
	for _, o := range old.Cases {
		if !seen[o.Name] {
			cmp.Cases = append(cmp.Cases, CaseChange{Name: o.Name, Change: ChangeRemoved, Old: o.Status, OldRate: o.PassRate, OldTokens: caseTokens(o)})
		}
	}
	return cmp
}

// regressions says what got worse from o to n.
func regressions(o, n CaseResult) []string {
	var why []string
	if o.Status == StatusPass && n.Status != StatusPass {
		why = append(why, fmt.Sprintf("%s → %s", o.Status, n.Status))
	} else if n.PassRate < o.PassRate {
		why = append(why, fmt.Sprintf("pass rate %.0f%% → %.0f%%", 100*o.PassRate, 100*n.PassRate))
	}
	oldChecks, newChecks := checkRates(o), checkRates(n)
	for _, name := range checkOrder(o) {
		before, after := oldChecks[name], newChecks[name]
		if after.Total > 0 && before.Total > 0 && ratio(after.Passed, after.Total) < ratio(before.Passed, before.Total) {
			why = append(why, fmt.Sprintf("%s %d/%d → %d/%d", name, before.Passed, before.Total, after.Passed, after.Total))
		}
	}
	ro, rn := meanRetrieval(o), meanRetrieval(n)
	if ro != nil && rn != nil {
		if rn.Recall < ro.Recall {
			why = append(why, fmt.Sprintf("recall@k %.2f → %.2f", ro.Recall, rn.Recall))
		}
		if rn.MRR < ro.MRR {
			why = append(why, fmt.Sprintf("MRR %.2f → %.2f", ro.MRR, rn.MRR))
		}
	}
	return why
}

// checkRates counts a case's checks by name over its runs.
func checkRates(c CaseResult) map[string]Score {
	out := map[string]Score{}
	for _, run := range c.Runs {
		for _, ch := range run.Checks {
			s := out[ch.Name]
			s.Total++
			if ch.Pass {
				s.Passed++
			}
			out[ch.Name] = s
		}
	}
	return out
}

// checkOrder lists a case's check names in the order its runs made them.
func checkOrder(c CaseResult) []string {
	var out []string
	for _, run := range c.Runs {
		for _, ch := range run.Checks {
			out = appendNew(out, ch.Name)
		}
	}
	return out
}

// meanRetrieval averages a case's retrieval scores over its runs (nil without).
func meanRetrieval(c CaseResult) *RetrievalSummary {
	var s RetrievalSummary
	n := 0
	for _, run := range c.Runs {
		if run.Retrieval != nil {
			n++
			s.Recall += run.Retrieval.Recall
			s.MRR += run.Retrieval.MRR
		}
	}
	if n == 0 {
		return nil
	}
	s.Recall /= float64(n)
	s.MRR /= float64(n)
	return &s
}

func caseTokens(c CaseResult) int64 {
	var t int64
	for _, run := range c.Runs {
		t += run.Usage.Tokens()
	}
	return t
}

// Write writes the comparison as a table, regressions first explained.
func (cmp Comparison) Write(w io.Writer) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CASE\tCHANGE\tOLD\tNEW\tTOKENS")
	for _, c := range cmp.Cases {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s → %s\n", c.Name, changeMark(c.Change), rateOf(c.Old, c.OldRate), rateOf(c.New, c.NewRate),
			thousands(c.OldTokens), thousands(c.NewTokens))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range cmp.Cases {
		if len(c.Why) > 0 {
			fmt.Fprintf(&b, "  %s regressed: %s\n", c.Name, strings.Join(c.Why, "; "))
		}
	}
	fmt.Fprintf(&b, "%d %s regressed\n", cmp.Regressions, plural(cmp.Regressions, "case"))
	_, err := io.WriteString(w, b.String())
	return err
}

func changeMark(c string) string {
	switch c {
	case ChangeRegressed:
		return "✗ regressed"
	case ChangeFixed:
		return "✓ fixed"
	}
	return c
}

func rateOf(status string, rate float64) string {
	if status == "" {
		return "-"
	}
	return fmt.Sprintf("%s %.0f%%", status, 100*rate)
}
