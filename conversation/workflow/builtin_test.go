package workflow_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/prompts"
)

// builtins loads the embedded built-in workflows.
func builtins(tb testing.TB) *workflow.Set {
	tb.Helper()
	defs, err := workflow.Load(prompts.Workflows, "workflows", workflow.BuiltinPrefix)
	if err != nil {
		tb.Fatal(err)
	}
	set, err := workflow.NewSet(defs...)
	if err != nil {
		tb.Fatal(err)
	}
	return set
}

func builtin(tb testing.TB, name string) *workflow.Definition {
	tb.Helper()
	d, ok := builtins(tb).Get(name)
	if !ok {
		tb.Fatalf("no built-in workflow %q", name)
	}
	return d
}

func TestBuiltins(t *testing.T) {
	set := builtins(t)
	if got, want := set.Names(), []string{"blog", "product-brief", "proposal"}; !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for _, d := range set.All() {
		t.Run(d.Name, func(t *testing.T) {
			if want := workflow.BuiltinPrefix + d.Name + ".yaml"; d.Source != want {
				t.Errorf("Source = %q, want %q", d.Source, want)
			}
			if d.Description == "" {
				t.Error("no description")
			}
			for _, a := range d.Artifacts {
				if a.Description == "" {
					t.Errorf("%s: no description", a.ID)
				}
				// A fetch artifact is not written by a model: nothing to judge. The
				// others have 2 to 4 criteria the model judges, and any checks.
				judged := 0
				for _, c := range a.Criteria {
					if c.Check == nil {
						judged++
					}
				}
				switch {
				case a.Fetch != "" && len(a.Criteria) > 0:
					t.Errorf("%s: a fetch artifact with criteria", a.ID)
				case a.Fetch == "" && (judged < 2 || judged > 4):
					t.Errorf("%s: %d criteria judged by the model, want 2 to 4", a.ID, judged)
				}
			}
		})
	}
}

func TestProposal(t *testing.T) {
	d := builtin(t, "proposal")
	modes := map[string]workflow.Mode{}
	for _, a := range d.Artifacts {
		modes[a.ID] = a.Mode
	}
	wantModes := map[string]workflow.Mode{
		"research": workflow.ModeDraft, "solution": workflow.ModeChoice, "connections": workflow.ModeDraft,
		"problem_statement": workflow.ModeChoice, "methodology": workflow.ModeDraft, "budget": workflow.ModeDraft,
		"timeline": workflow.ModeDraft, "conclusion": workflow.ModeDraft,
	}
	for id, m := range wantModes {
		if modes[id] != m {
			t.Errorf("%s: mode %q, want %q", id, modes[id], m)
		}
	}
	if len(modes) != len(wantModes) {
		t.Errorf("artifacts %v, want %v", modes, wantModes)
	}

	// Research searches, when the deployment has the tools, and every artifact has
	// a critical criterion for its verdict.
	research, _ := d.Artifact("research")
	if !slices.Equal(research.Tools, []string{"web_search", "search_knowledge"}) {
		t.Errorf("research tools = %v, want web_search and search_knowledge", research.Tools)
	}
	for _, a := range d.Artifacts {
		if !slices.ContainsFunc(a.Criteria, func(c workflow.Criterion) bool { return c.Critical }) {
			t.Errorf("%s has no critical criterion", a.ID)
		}
	}
	if got := d.PassShareOf(research); got != 0.75 {
		t.Errorf("pass share = %v, want 0.75", got)
	}

	// budget is declared before timeline but depends on it.
	wantOrder := []string{"research", "solution", "connections", "problem_statement", "methodology", "timeline", "budget", "conclusion"}
	if got := d.Order(); !slices.Equal(got, wantOrder) {
		t.Errorf("Order() = %v, want %v", got, wantOrder)
	}

	for _, tt := range []struct {
		id   string
		want []string
	}{
		{"methodology", []string{"timeline", "budget", "conclusion"}},
		{"research", wantOrder[1:]},
		{"solution", []string{"connections", "methodology", "timeline", "budget", "conclusion"}},
		{"problem_statement", []string{"methodology", "timeline", "budget", "conclusion"}},
		{"connections", []string{"conclusion"}},
		{"timeline", []string{"budget", "conclusion"}},
		{"budget", []string{"conclusion"}},
		{"conclusion", nil},
		{"nonexistent", nil},
	} {
		if got := d.Dependents(tt.id); !slices.Equal(got, tt.want) {
			t.Errorf("Dependents(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}

	for _, tt := range []struct {
		id   string
		want []string
	}{
		{"research", nil},
		{"budget", []string{"methodology", "timeline"}},
		{"conclusion", []string{"connections", "problem_statement", "methodology", "timeline", "budget"}},
		{"nonexistent", nil},
	} {
		if got := d.Dependencies(tt.id); !slices.Equal(got, tt.want) {
			t.Errorf("Dependencies(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}
}

func TestProductBrief(t *testing.T) {
	d := builtin(t, "product-brief")
	want := []string{"problem", "audience", "value_proposition", "positioning", "name"}
	if got := d.Order(); !slices.Equal(got, want) {
		t.Fatalf("Order() = %v, want %v", got, want)
	}
	for i, a := range d.Artifacts {
		if a.Mode != workflow.ModeChoice {
			t.Errorf("%s: mode %q, want choice", a.ID, a.Mode)
		}
		// Each option set is generated from every approved artifact before it.
		if got := d.Dependencies(a.ID); !slices.Equal(got, want[:i]) && !(i == 0 && got == nil) {
			t.Errorf("Dependencies(%q) = %v, want %v", a.ID, got, want[:i])
		}
		if got := d.Dependents(a.ID); !slices.Equal(got, want[i+1:]) && !(i == len(want)-1 && got == nil) {
			t.Errorf("Dependents(%q) = %v, want %v", a.ID, got, want[i+1:])
		}
	}
}

func TestBlog(t *testing.T) {
	d := builtin(t, "blog")
	if d.Title != "Blog article" {
		t.Errorf("Title = %q", d.Title)
	}
	want := []string{"plan", "research", "sources", "brief", "sections", "article"}
	if got := d.Order(); !slices.Equal(got, want) {
		t.Fatalf("Order() = %v, want %v", got, want)
	}
	for _, tt := range []struct {
		id      string
		mode    workflow.Mode
		foreach string
		retries int
		tools   []string
		editor  bool
	}{
		{"plan", workflow.ModeChoice, "", 0, nil, false},
		{"research", workflow.ModeAuto, "plan", 2, []string{"web_search", "fetch_url", "search_knowledge"}, false},
		{"sources", workflow.ModeAuto, "plan", 0, nil, false},
		{"brief", workflow.ModeAuto, "", 1, nil, false},
		{"sections", workflow.ModeAuto, "plan", 1, nil, true},
		{"article", workflow.ModeDraft, "", 0, nil, false},
	} {
		a, _ := d.Artifact(tt.id)
		if a.Mode != tt.mode || a.Foreach != tt.foreach || a.Retries != tt.retries || !slices.Equal(a.Tools, tt.tools) || (a.Editor != nil) != tt.editor {
			t.Errorf("%s = mode %s, foreach %q, retries %d, tools %v, editor %v", a.ID, a.Mode, a.Foreach, a.Retries, a.Tools, a.Editor)
		}
	}
	if got := d.Dependents("plan"); !slices.Equal(got, want[1:]) {
		t.Errorf("Dependents(plan) = %v, want %v", got, want[1:])
	}
	// The outline is reviewed by the model before people see it; the sources are
	// the pages the research cites; every section is written from the brief and its
	// sources; the article gets an enhancement pass when the deployment has one.
	plan, _ := d.Artifact("plan")
	sources, _ := d.Artifact("sources")
	sections, _ := d.Artifact("sections")
	article, _ := d.Artifact("article")
	if !plan.SelfReview || sources.Fetch != "research" || !slices.Contains(sections.DependsOn, "brief") || !slices.Contains(sections.DependsOn, "sources") {
		t.Errorf("plan self_review %v, sources fetch %q, sections depends_on %v", plan.SelfReview, sources.Fetch, sections.DependsOn)
	}
	if article.Enhance == nil || article.Enhance.Model != "enhance" {
		t.Errorf("article enhance = %+v, want the profile enhance", article.Enhance)
	}
	checked := map[string]bool{}
	for _, c := range article.Criteria {
		checked[c.ID] = c.Check != nil
	}
	for _, id := range []string{"title", "meta_description", "meta_keywords", "image_description", "toc", "tldr", "conclusion", "references", "word_count"} {
		if !checked[id] {
			t.Errorf("article: criterion %s is not checked without the model", id)
		}
	}
	// Whatever the thread's language, the article keeps the English labels and
	// headings its checks look for: the prompt names each one.
	for _, c := range article.Criteria {
		if c.Check == nil || c.Check.Words != "" || c.Check.Line == "# " {
			continue
		}
		if want := `"` + c.Check.Line + c.Check.Heading + `"`; !strings.Contains(article.Prompt, want) {
			t.Errorf("the article's prompt does not ask to keep %s as written", want)
		}
	}
	if got := d.Profiles(); got != nil {
		t.Errorf("Profiles() = %v, want none: the built-ins run on the main model (enhance is optional)", got)
	}

	// An outline in the shape plan's prompt asks for fans out over its sections.
	outline := `# Why small teams ship faster
Angle: fewer handoffs beat more hands.
Audience: engineering managers of teams of 5 to 50.

## The cost of a handoff
What each handoff adds: a queue, lost context, a meeting.

## Evidence from DORA
What the DORA reports say about batch size and lead time.

## When to split a team
The signs that a team has outgrown itself.

## Conclusion
What to try next quarter.
`
	var titles []string
	for _, it := range workflow.Items(outline) {
		titles = append(titles, it.Title)
	}
	if want := []string{"The cost of a handoff", "Evidence from DORA", "When to split a team", "Conclusion"}; !slices.Equal(titles, want) {
		t.Errorf("Items(outline) titles = %q, want %q", titles, want)
	}
}
