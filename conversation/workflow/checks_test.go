package workflow_test

import (
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// checksYAML declares every kind of check; the words check counts the body less
// three sections.
const checksYAML = `name: c
title: C
inputs:
  - {id: wordcount, label: Words, type: number, default: 100}
  - {id: topic, label: Topic}
artifacts:
  - id: article
    title: Article
    criteria:
      - {id: title, description: Has a title, check: {line: "# "}}
      - {id: keywords, description: Has meta keywords, check: {line: "Meta keywords:"}}
      - {id: judged, description: Reads well}
      - {id: toc, description: Has a table of contents, check: {heading: "Table of contents"}}
      - id: length
        description: Within 15% of the target
        critical: true
        check: {words: wordcount, tolerance: 0.15, exclude: ["Table of contents", "TL;DR", "References"]}
`

func checksArtifact(t *testing.T) *workflow.Artifact {
	t.Helper()
	d, err := workflow.Parse("c.yaml", []byte(checksYAML))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := d.Artifact("article")
	return a
}

// words returns n words.
func words(n int) string { return strings.TrimSpace(strings.Repeat("word ", n)) }

// article is a text with a body of body words (its "## Body" heading counts one)
// after the excluded sections, which hold 50 words each.
func article(body int) string {
	return "# Title here\nMeta keywords: a, b\n\n## Table of contents\n" + words(50) +
		"\n\n## TL;DR\n- " + words(49) + "\n\n## Body\n" + words(body-1) + "\n\n## References\n1. " + words(49) + "\n"
}

func TestRunChecks(t *testing.T) {
	a := checksArtifact(t)
	in := map[string]string{"wordcount": "100"}
	tests := []struct {
		name   string
		text   string
		inputs map[string]string
		want   map[string]workflow.CheckProblem // criterion id → problem ("" passes)
		count  int                              // the words count, when not -1
	}{
		{"AllPass", article(100), in, map[string]workflow.CheckProblem{"title": "", "keywords": "", "toc": "", "length": ""}, 100},
		{"LowerBoundInclusive", article(85), in, map[string]workflow.CheckProblem{"length": ""}, 85},
		{"UpperBoundInclusive", article(115), in, map[string]workflow.CheckProblem{"length": ""}, 115},
		{"BelowBound", article(84), in, map[string]workflow.CheckProblem{"length": workflow.CheckOutOfRange}, 84},
		{"AboveBound", article(116), in, map[string]workflow.CheckProblem{"length": workflow.CheckOutOfRange}, 116},
		{"LineAbsent", strings.Replace(article(100), "Meta keywords: a, b\n", "", 1), in, map[string]workflow.CheckProblem{"keywords": workflow.CheckMissing}, -1},
		{"LineEmptyAfterPrefix", strings.Replace(article(100), "Meta keywords: a, b", "Meta keywords:  ", 1), in, map[string]workflow.CheckProblem{"keywords": workflow.CheckEmpty}, -1},
		{"LineBoldAnyCase", strings.Replace(article(100), "Meta keywords: a, b", "  **meta KEYWORDS:** a, b", 1), in, map[string]workflow.CheckProblem{"keywords": ""}, -1},
		{"LineInCodeIgnored", strings.Replace(article(100), "Meta keywords: a, b", "```\nMeta keywords: a, b\n```", 1), in, map[string]workflow.CheckProblem{"keywords": workflow.CheckMissing}, -1},
		{"TitleLineNotSubheading", strings.Replace(article(100), "# Title here\n", "", 1), in, map[string]workflow.CheckProblem{"title": workflow.CheckMissing}, -1},
		{"HeadingAnyLevelAnyCase", strings.Replace(article(100), "## Table of contents", "#### TABLE OF CONTENTS:", 1), in, map[string]workflow.CheckProblem{"toc": ""}, -1},
		{"HeadingAbsent", strings.Replace(article(100), "## Table of contents", "Table of contents", 1), in, map[string]workflow.CheckProblem{"toc": workflow.CheckMissing}, -1},
		{"ExcludedSectionsNotCounted", article(100) + "\n## More\n" + words(20), in, map[string]workflow.CheckProblem{"length": workflow.CheckOutOfRange}, 121},
		{"NoSectionsCountsAll", words(100), in, map[string]workflow.CheckProblem{"length": ""}, 100},
		{"MissingInput", article(100), map[string]string{}, map[string]workflow.CheckProblem{"length": workflow.CheckNoTarget}, 100},
		{"NonNumberInput", article(100), map[string]string{"wordcount": "many"}, map[string]workflow.CheckProblem{"length": workflow.CheckNoTarget}, 100},
		{"ZeroInput", article(100), map[string]string{"wordcount": "0"}, map[string]workflow.CheckProblem{"length": workflow.CheckNoTarget}, 100},
		{"ThousandsSeparator", article(100), map[string]string{"wordcount": "1,000"}, map[string]workflow.CheckProblem{"length": workflow.CheckOutOfRange}, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := workflow.RunChecks(a, tt.text, workflow.CheckEnv{Inputs: tt.inputs})
			var ids []string
			for _, r := range got {
				ids = append(ids, r.ID)
				if want, ok := tt.want[r.ID]; ok && (r.Problem != want || r.Pass != (want == "")) {
					t.Errorf("%s: problem %q pass %v; want %q", r.ID, r.Problem, r.Pass, want)
				}
				if r.Kind == workflow.CheckWords && tt.count >= 0 && r.Count != tt.count {
					t.Errorf("%s: count %d; want %d", r.ID, r.Count, tt.count)
				}
			}
			if strings.Join(ids, ",") != "title,keywords,toc,length" {
				t.Errorf("results for %v; want the checked criteria in order (title,keywords,toc,length)", ids)
			}
		})
	}
}

// The words result carries the numbers the reason is worded from.
func TestRunChecksWordsNumbers(t *testing.T) {
	a := checksArtifact(t)
	got := workflow.RunChecks(a, article(80), workflow.CheckEnv{Inputs: map[string]string{"wordcount": "1 500"}})
	r := got[len(got)-1]
	if r.Target != 1500 || r.Tolerance != 0.15 || r.Min != 1275 || r.Max != 1725 || r.Count != 80 || r.Want != "wordcount" || r.Value != "1 500" {
		t.Errorf("words result %+v; want target 1500, ±0.15, 1275–1725, count 80", r)
	}
	un := a.Unchecked()
	if len(un.Criteria) != 1 || un.Criteria[0].ID != "judged" || len(a.Criteria) != 5 {
		t.Errorf("Unchecked = %+v (artifact's %d criteria); want only judged, the artifact untouched", un.Criteria, len(a.Criteria))
	}
}

func TestParse_CheckProblems(t *testing.T) {
	src := yaml(`name: c
title: C
inputs:
	- {id: wordcount, label: Words, type: number}
	- {id: topic, label: Topic}
artifacts:
	- id: a
		title: A
		criteria:
			- {id: none, description: N, check: {}}
			- {id: both, description: B, check: {line: "X:", heading: "Y"}}
			- {id: unknown, description: U, check: {words: wordcont}}
			- {id: text, description: T, check: {words: topic}}
			- {id: tol, description: T, check: {words: wordcount, tolerance: 1}}
			- {id: tol0, description: T, check: {words: wordcount, tolerance: 0}}
			- {id: empty, description: E, check: {line: "  "}}
			- {id: emptyh, description: E, check: {heading: ""}}
			- {id: excl, description: E, check: {words: wordcount, exclude: [References, ""]}}
			- {id: stray, description: S, check: {heading: Intro, tolerance: 0.1}}
			- {id: kind, description: K, check: yes}
			- {id: typo, description: K, check: {heding: Intro}}
`)
	got := strings.Join(problems(t, src), "\n")
	for _, want := range []string{
		`test.yaml:10: artifact "a": criterion "none": check: want one of line, heading, words, lead, subsections, banned_openers or keywords`,
		`test.yaml:11: artifact "a": criterion "both": check: has line and heading: a check makes one test`,
		`test.yaml:12: artifact "a": criterion "unknown": check: words names unknown input "wordcont" (did you mean "wordcount"?)`,
		`test.yaml:13: artifact "a": criterion "text": check: words names input "topic", which is not a number`,
		`test.yaml:14: artifact "a": criterion "tol": check: tolerance must be more than 0 and less than 1`,
		`test.yaml:15: artifact "a": criterion "tol0": check: tolerance must be more than 0 and less than 1`,
		`test.yaml:16: artifact "a": criterion "empty": check: line is empty`,
		`test.yaml:17: artifact "a": criterion "emptyh": check: heading is empty`,
		`test.yaml:18: artifact "a": criterion "excl": check: exclude has an empty entry`,
		`test.yaml:19: artifact "a": criterion "stray": check: tolerance is only for a words or subsections check`,
		`test.yaml:20: artifact "a": criterion "kind": check: want a mapping with one of line, heading, words, lead, subsections, banned_openers or keywords`,
		`test.yaml:21: unknown field "heding" in artifact "a": criterion "typo": check (did you mean "heading"?)`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
}

// A definition built in Go is validated the same way.
func TestValidate_Check(t *testing.T) {
	d := &workflow.Definition{Name: "c", Title: "C", Artifacts: []workflow.Artifact{{ID: "a", Title: "A",
		Criteria: []workflow.Criterion{{ID: "k", Description: "K", Check: &workflow.Check{Words: "topic"}}}}}}
	err := d.Validate()
	if err == nil || !strings.Contains(err.Error(), `words names input "topic", which is not a number`) {
		t.Fatalf("Validate = %v; want the words input problem", err)
	}
}
