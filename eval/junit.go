package eval

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// JUnit XML, as CI systems read it (the schema of Ant's JUnit report, which Jenkins,
// GitLab and GitHub's test reporters accept): one testsuite, a testcase per run of a
// case, with a failure per failed check, an error for a run that could not be done
// or drifted.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Time     string       `xml:"time,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name      string      `xml:"name,attr"`
		Tests     int         `xml:"tests,attr"`
		Failures  int         `xml:"failures,attr"`
		Errors    int         `xml:"errors,attr"`
		Time      string      `xml:"time,attr"`
		Timestamp string      `xml:"timestamp,attr"`
		Cases     []junitCase `xml:"testcase"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		File      string        `xml:"file,attr,omitempty"`
		Time      string        `xml:"time,attr"`
		Failures  []junitResult `xml:"failure"`
		Error     *junitResult  `xml:"error"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	junitResult struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
)

// WriteJUnit writes r as JUnit XML for CI.
func WriteJUnit(w io.Writer, r *Report) error {
	suite := junitSuite{Name: "threadwright eval (" + r.Model.Model + ", " + r.Model.Mode + ")",
		Time: seconds(r.WallMS), Timestamp: r.Started.Format(time.RFC3339)}
	for _, c := range r.Cases {
		for _, run := range c.Runs {
			name := c.Name
			if len(c.Runs) > 1 {
				name = fmt.Sprintf("%s [run %d]", c.Name, run.Run)
			}
			tc := junitCase{Name: name, Classname: "eval." + c.Name, File: c.File, Time: seconds(run.WallMS)}
			switch run.Status {
			case StatusError, StatusDrift:
				tc.Error = &junitResult{Message: run.Status + ": " + clip(oneLine(run.Error), 300), Type: run.Status, Text: run.Error}
				suite.Errors++
			}
			for _, ch := range run.Failed() {
				tc.Failures = append(tc.Failures, junitResult{Message: ch.Name + ": " + clip(oneLine(ch.Detail), 300), Type: ch.Name, Text: ch.Detail})
			}
			if len(tc.Failures) > 0 {
				suite.Failures++
			}
			var out []string
			for _, ch := range run.Checks {
				mark := "✓"
				if !ch.Pass {
					mark = "✗"
				}
				out = append(out, fmt.Sprintf("%s %s %s", mark, ch.Name, ch.Detail))
			}
			if rr := run.Rubric; rr != nil {
				out = append(out, fmt.Sprintf("rubric (not a check): score %.2f, pass %t %s%s", rr.Score, rr.Pass, rr.Reason, rr.Skipped))
			}
			tc.SystemOut = strings.Join(out, "\n")
			suite.Tests++
			suite.Cases = append(suite.Cases, tc)
		}
	}
	doc := junitSuites{Name: "threadwright eval", Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors,
		Time: suite.Time, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// Save writes r as JSON to jsonPath and as JUnit XML to junitPath; an empty path
// writes nothing.
func (r *Report) Save(jsonPath, junitPath string) error {
	write := func(path string, w func(io.Writer, *Report) error) error {
		if path == "" {
			return nil
		}
		out, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		return errors.Join(w(out, r), out.Close())
	}
	if err := write(jsonPath, func(w io.Writer, r *Report) error { return r.WriteJSON(w) }); err != nil {
		return err
	}
	return write(junitPath, WriteJUnit)
}

func seconds(ms int64) string { return fmt.Sprintf("%.3f", float64(ms)/1000) }
