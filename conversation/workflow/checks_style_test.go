package workflow_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// styleYAML declares the style checks and a keywords check on the brief.
const styleYAML = `name: s
title: S
artifacts:
  - id: brief
    title: Article brief
  - id: sections
    title: Sections
    depends_on: [brief]
    criteria:
      - {id: headings, description: Opens each section with two sentences, check: {lead: 2}}
      - {id: subsections, description: Subsections of 250 to 300 words, check: {subsections: [250, 300], tolerance: 0.1}}
      - {id: endings, description: No wrap-ups, check: {banned_openers: ["In conclusion", "To conclude", "In summary"]}}
      - {id: keywords, description: Uses the brief's keywords, check: {keywords: brief}}
`

// styled is a section titled title with a lead of lead sentences, then one
// subsection per entry of subs, of that many words, with extra appended to the
// last one.
func styled(title string, lead int, extra string, subs ...int) string {
	var b strings.Builder
	b.WriteString("## " + title + "\n\n")
	for i := range lead {
		b.WriteString("Lead sentence number " + string(rune('a'+i)) + ". ")
	}
	for i, n := range subs {
		b.WriteString("\n\n### Part " + string(rune('A'+i)) + "\n\n" + words(n))
	}
	return b.String() + extra
}

func runStyle(t *testing.T, text, brief string) map[string]workflow.CheckResult {
	t.Helper()
	d, err := workflow.Parse("s.yaml", []byte(styleYAML))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := d.Artifact("sections")
	out := map[string]workflow.CheckResult{}
	for _, r := range workflow.RunChecks(a, text, workflow.CheckEnv{Artifacts: map[string]string{"brief": brief}, Workflow: d}) {
		out[r.ID] = r
	}
	return out
}

const styleBrief = "## Reader\nTeams.\n\n## Keywords\nword, lead sentence, part b\n\n## Tone\nWarm."

func TestStyleChecksPass(t *testing.T) {
	text := styled("One", 2, "", 250) + "\n\n" + styled("Two", 2, "", 330, 225)
	for id, r := range runStyle(t, text, styleBrief) {
		if !r.Pass {
			t.Errorf("%s fails: %+v", id, r)
		}
	}
	r := runStyle(t, text, styleBrief)["subsections"]
	if r.Min != 225 || r.Max != 330 || r.Want != "250–300" {
		t.Errorf("subsections bounds %d–%d (want %q); want 225–330", r.Min, r.Max, r.Want)
	}
	if k := runStyle(t, text, styleBrief)["keywords"]; k.Count != 3 || k.Want != "Article brief" {
		t.Errorf("keywords: %+v; want 3 keywords from the brief's title", k)
	}
}

func TestStyleChecksFail(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		brief string
		id    string
		want  workflow.CheckProblem
		spots []workflow.CheckSpot
	}{
		{"no opening", "Intro first.\n\n" + styled("One", 2, "", 260), styleBrief, "headings", workflow.CheckNoOpening,
			[]workflow.CheckSpot{{Problem: workflow.CheckNoOpening}}},
		{"three-sentence lead", styled("One", 2, "", 260) + "\n\n" + styled("Two", 3, "", 260), styleBrief, "headings", workflow.CheckLeadLength,
			[]workflow.CheckSpot{{Problem: workflow.CheckLeadLength, Section: "Two", Count: 3}}},
		{"one-sentence lead", styled("One", 1, "", 260), styleBrief, "headings", workflow.CheckLeadLength,
			[]workflow.CheckSpot{{Problem: workflow.CheckLeadLength, Section: "One", Count: 1}}},
		{"short subsection", styled("One", 2, "", 260, 224), styleBrief, "subsections", workflow.CheckOutOfRange,
			[]workflow.CheckSpot{{Problem: workflow.CheckOutOfRange, Section: "One", Subsection: "Part B", Count: 224}}},
		{"long subsection", styled("One", 2, "", 331), styleBrief, "subsections", workflow.CheckOutOfRange,
			[]workflow.CheckSpot{{Problem: workflow.CheckOutOfRange, Section: "One", Subsection: "Part A", Count: 331}}},
		{"no subsection", styled("One", 2, "") + "\n\n" + styled("Two", 2, "", 260), styleBrief, "subsections", workflow.CheckNoSubsections,
			[]workflow.CheckSpot{{Problem: workflow.CheckNoSubsections, Section: "One"}}},
		{"wrap-up", styled("One", 2, "", 260) + "\n\n" + styled("Two", 2, "\n\n**In summary**, it works.", 255), styleBrief, "endings", workflow.CheckBanned,
			[]workflow.CheckSpot{{Problem: workflow.CheckBanned, Section: "Two", Phrase: "In summary"}}},
		{"wrap-up mid-paragraph", styled("One", 2, " It helps. In conclusion, write it down.", 255), styleBrief, "endings", workflow.CheckBanned,
			[]workflow.CheckSpot{{Problem: workflow.CheckBanned, Section: "One", Phrase: "In conclusion"}}},
		{"no keywords", styled("One", 2, "", 260), "## Reader\nTeams.", "keywords", workflow.CheckNoKeywords, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runStyle(t, tt.text, tt.brief)[tt.id]
			if r.Pass || r.Problem != tt.want || !slices.Equal(r.Spots, tt.spots) {
				t.Errorf("%s: %+v; want problem %s at %+v", tt.id, r, tt.want, tt.spots)
			}
		})
	}
}

// A keyword missing from the text is named as the brief lists it; the brief may list
// them on a "Keywords:" line too, and the text's lines before its first "## " (a
// meta keywords line) do not count.
func TestKeywordsCheckMissing(t *testing.T) {
	text := "Meta keywords: zeppelin, word\n\n" + styled("One", 2, "", 260)
	for _, brief := range []string{
		"## Keywords\n- Zeppelin\n- word\n- Lead sentences\n\n## Tone\nzeppelin (not a keyword)",
		"Reader: teams.\n**Keywords:** Zeppelin, word, Lead sentences",
	} {
		r := runStyle(t, text, brief)["keywords"]
		if r.Pass || r.Problem != workflow.CheckMissing || !slices.Equal(r.Missing, []string{"Zeppelin"}) || r.Count != 3 {
			t.Errorf("brief %q: %+v; want only Zeppelin missing of 3", brief, r)
		}
	}
}

func TestStyleChecksValidate(t *testing.T) {
	for check, want := range map[string]string{
		`{lead: 0}`:                 "lead: want the number of sentences",
		`{lead: two}`:               "lead: want the number of sentences",
		`{subsections: [300, 250]}`: "subsections: want the least and the most words",
		`{subsections: 250}`:        "subsections: want the least and the most words",

		`{banned_openers: ["In conclusion", ""]}`: "banned_openers has an empty entry",
		`{keywords: plan}`:                        `keywords names "plan", which is not in depends_on of "sections"`,
		`{keywords: ""}`:                          "keywords is empty",
		`{lead: 2, tolerance: 0.1}`:               "tolerance is only for a words or subsections check",
		`{subsections: [250, 300], exclude: [A]}`: "exclude is only for a words check",
		`{lead: 2, keywords: brief}`:              "has lead and keywords: a check makes one test",
		`{}`:                                      "want one of line, heading, words, lead, subsections, banned_openers or keywords",
	} {
		y := strings.Replace(styleYAML, "{keywords: brief}", check, 1)
		_, err := workflow.Parse("s.yaml", []byte(y))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("check %s: %v; want a problem with %q", check, err, want)
		}
	}
	if _, err := workflow.Parse("s.yaml", []byte(styleYAML)); err != nil {
		t.Errorf("the style checks do not validate: %v", err)
	}
}

// A failed item's section ("_No result: …_", as JoinItems writes it) is not held to
// the lead-in or the subsections: its failure is shown already.
func TestStyleChecksSkipFailedItems(t *testing.T) {
	a := &workflow.Artifact{ID: "s", Foreach: "plan"}
	joined := workflow.JoinItems(a, []workflow.ItemState{
		{Title: "One", Status: workflow.ItemDone, Text: strings.TrimPrefix(styled("One", 2, "", 260), "## One\n\n")},
		{Title: "Two", Status: workflow.ItemFailed, Reason: "the search found nothing. Twice."},
	})
	for id, r := range runStyle(t, joined, styleBrief) {
		if id != "keywords" && !r.Pass {
			t.Errorf("%s fails on a failed item: %+v\n%s", id, r, joined)
		}
	}
}

// The brief's keywords are found under a heading or on a line that starts with
// Keywords, Key words or Ключевые слова (a parenthetical ignored), and match the
// text's other word forms: Russian endings and an English possessive.
func TestKeywordsCheckLabelsAndForms(t *testing.T) {
	text := "## Один\n\nИнженеров данных стало больше. Go's generics помогли им.\n\n### Часть\n\nЗдесь ключевых слов хватает."
	for _, brief := range []string{
		"## Ключевые слова\nинженеры данных, Go generics, ключевые слова\n\n## Тон\nТёплый.",
		"## Keywords (4–8)\nинженеры данных, Go generics, ключевые слова\n\n## Tone\nWarm.",
		"## Key words:\n- инженеры данных\n- Go generics\n- ключевые слова",
		"Reader: teams.\n**Ключевые слова:** инженеры данных, Go generics, ключевые слова",
		"Reader: teams.\nKeywords (4 to 8): инженеры данных, Go generics, ключевые слова",
	} {
		r := runStyle(t, text, brief)["keywords"]
		if !r.Pass || r.Count != 3 {
			t.Errorf("brief %q: %+v; want all 3 keywords found", brief, r)
		}
	}
	r := runStyle(t, text, "## Ключевые слова\nинженерами данных, кодировка, Go modules")["keywords"]
	if r.Pass || !slices.Equal(r.Missing, []string{"кодировка", "Go modules"}) {
		t.Errorf("other words: %+v; want both missing", r)
	}
}
