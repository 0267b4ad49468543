package demo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/toolbox"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/playground/demo"
	"github.com/threadwright/threadwright/prompts"
)

// countingModel counts the demo model's calls, so tests can check that no task
// needed a reminder (one call per WorkflowAgent method).
type countingModel struct {
	m     *demo.Model
	calls atomic.Int64
}

func (c *countingModel) Complete(ctx context.Context, req openai.ChatCompletionRequest) (agents.Completion, error) {
	c.calls.Add(1)
	return c.m.Complete(ctx, req)
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// builtin returns the built-in workflow called name.
func builtin(tb testing.TB, name string) *workflow.Definition {
	tb.Helper()
	defs, err := workflow.Load(prompts.Workflows, "workflows", workflow.BuiltinPrefix)
	if err != nil {
		tb.Fatal(err)
	}
	for _, d := range defs {
		if d.Name == name {
			return d
		}
	}
	tb.Fatalf("no built-in workflow %q", name)
	return nil
}

// MustNewAgent returns a workflow agent on a counting demo model.
func MustNewAgent(tb testing.TB) (*agents.WorkflowAgent, *countingModel) {
	tb.Helper()
	cm := &countingModel{m: demo.New()}
	return agents.NewWorkflowAgent(agents.WorkflowAgentConfig{Client: cm, Model: demo.ModelName, Logger: quietLogger()}), cm
}

func optionCount(a *workflow.Artifact) int {
	if a.Options > 0 {
		return a.Options
	}
	return workflow.DefaultOptions
}

// sentences counts the sentences of s.
func sentences(s string) int {
	n := 0
	for i, r := range s {
		if strings.ContainsRune(".!?", r) && (i == len(s)-1 || s[i+1] == ' ' || s[i+1] == '\n') {
			n++
		}
	}
	return n
}

// cyrillicShare returns the share of s's letters that are Cyrillic.
func cyrillicShare(s string) float64 {
	var cyr, all float64
	for _, r := range s {
		if unicode.IsLetter(r) {
			all++
			if unicode.Is(unicode.Cyrillic, r) {
				cyr++
			}
		}
	}
	if all == 0 {
		return 0
	}
	return cyr / all
}

// TestBuiltinWorkflows walks each built-in workflow through every WorkflowAgent
// method, choosing option B each time, the way `threadwright dev` would.
func TestBuiltinWorkflows(t *testing.T) {
	tests := []struct {
		workflow string
		// wantInSummary are phrases of the options chosen (always B) that the
		// report's summary must contain.
		wantInSummary []string
		// wantInOptions: artifact id → a phrase of an earlier choice its options use.
		wantInOptions map[string]string
	}{
		{
			workflow:      "product-brief",
			wantInSummary: []string{"Weekplate", "single parents who work full time", "buy food that ends up in the bin"},
			wantInOptions: map[string]string{"positioning": "For single parents who work full time who buy food that ends up in the bin"},
		},
		{
			workflow:      "proposal",
			wantInSummary: []string{"rooftop solar with shared batteries on tenant blocks", "EUR 315,650"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.workflow, func(t *testing.T) {
			def := builtin(t, tt.workflow)
			agent, cm := MustNewAgent(t)
			ctx := context.Background()
			approved := map[string]string{}
			var passed, failed int

			for _, id := range def.Order() {
				art, _ := def.Artifact(id)
				r := conversation.ArtifactRequest{Workflow: def, Artifact: art, Locale: "en", Approved: clone(approved)}
				t.Run(id, func(t *testing.T) {
					var text string
					if art.Mode == workflow.ModeChoice {
						text = checkChoice(t, agent, r, tt.wantInOptions[id])
					} else {
						w, u, err := agent.Write(ctx, r)
						if err != nil {
							t.Fatalf("Write: %v", err)
						}
						checkText(t, "Write", w)
						if u.PromptTokens == 0 || u.CompletionTokens == 0 {
							t.Errorf("Write usage = %+v, want both counts", u)
						}
						text = w
					}
					checkRevise(t, agent, r, text)

					results, _, err := agent.Evaluate(ctx, r, text)
					if err != nil {
						t.Fatalf("Evaluate: %v", err)
					}
					if len(results) != len(art.Criteria) {
						t.Fatalf("Evaluate gave %d results, want %d", len(results), len(art.Criteria))
					}
					for i, res := range results {
						if res.ID != art.Criteria[i].ID || res.Reason == "" || strings.HasPrefix(res.Reason, "Not evaluated") {
							t.Errorf("result %d = %+v, want criterion %s with a reason", i, res, art.Criteria[i].ID)
						}
						switch {
						case res.Pass:
							passed++
						default:
							failed++
						}
						if (res.ID == "concise" || res.ID == "one_sentence") && !res.Pass {
							t.Errorf("%s fails its word limit: %s", res.ID, res.Reason)
						}
					}
					approved[id] = text
				})
			}
			if passed == 0 || failed == 0 {
				t.Errorf("evaluations: %d passed, %d failed; want both", passed, failed)
			}

			summary, u, err := agent.Summarize(ctx, conversation.ArtifactRequest{Workflow: def, Approved: approved})
			if err != nil {
				t.Fatalf("Summarize: %v", err)
			}
			if n := sentences(summary); n < 2 || n > 3 {
				t.Errorf("summary has %d sentences, want 2 or 3: %s", n, summary)
			}
			if u.CompletionTokens == 0 {
				t.Error("Summarize reported no usage")
			}
			for _, want := range tt.wantInSummary {
				if !strings.Contains(summary, want) {
					t.Errorf("summary lacks %q: %s", want, summary)
				}
			}
			if strings.Contains(summary, "{") {
				t.Errorf("summary has a placeholder left: %s", summary)
			}

			// Every method made exactly one model call: no reminders were needed.
			choice := 0
			for _, a := range def.Artifacts {
				if a.Mode == workflow.ModeChoice {
					choice++
				}
			}
			n := len(def.Artifacts)
			// Per choice artifact: 2 proposals, 1 reply, options+1 writes; per artifact:
			// 1 write (draft) or none, 2 revisions, 2 evaluations; plus the summary.
			var want int64 = 1
			for _, a := range def.Artifacts {
				if a.Mode == workflow.ModeChoice {
					want += int64(2 + 1 + optionCount(&a) + 1)
				} else {
					want++
				}
				want += 4
			}
			if got := cm.calls.Load(); got != want {
				t.Errorf("model calls = %d, want %d (%d artifacts, %d choices): a task needed a reminder", got, want, n, choice)
			}
		})
	}
}

// checkChoice proposes options, regenerates them, reads a reply and writes every
// option; it returns the text written from option B.
func checkChoice(t *testing.T, agent *agents.WorkflowAgent, r conversation.ArtifactRequest, wantInOptions string) string {
	t.Helper()
	ctx := context.Background()
	want := optionCount(r.Artifact)
	opts, u, err := agent.ProposeOptions(ctx, r)
	if err != nil {
		t.Fatalf("ProposeOptions: %v", err)
	}
	if len(opts) != want {
		t.Fatalf("ProposeOptions gave %d options, want %d", len(opts), want)
	}
	if u.PromptTokens == 0 || u.CompletionTokens == 0 {
		t.Errorf("ProposeOptions usage = %+v, want both counts", u)
	}
	titles := map[string]bool{}
	for i, o := range opts {
		if o.Label != string(rune('A'+i)) || o.Title == "" || o.Text == "" {
			t.Errorf("option %d = %+v", i, o)
		}
		if titles[o.Title] {
			t.Errorf("two options are titled %q", o.Title)
		}
		titles[o.Title] = true
		if strings.Contains(o.Text, "{") {
			t.Errorf("option %s has a placeholder left: %s", o.Label, o.Text)
		}
	}
	if wantInOptions != "" && !strings.Contains(opts[0].Text, wantInOptions) {
		t.Errorf("option A does not build on the earlier choices (%q): %s", wantInOptions, opts[0].Text)
	}

	t.Run("Regenerate", func(t *testing.T) {
		rr := r
		rr.Options = opts
		rr.Instructions = "more playful"
		again, _, err := agent.ProposeOptions(ctx, rr)
		if err != nil {
			t.Fatalf("ProposeOptions: %v", err)
		}
		if len(again) != want {
			t.Fatalf("got %d options, want %d", len(again), want)
		}
		for _, o := range again {
			if titles[o.Title] {
				t.Errorf("regenerated option %s repeats %q", o.Label, o.Title)
			}
			if !strings.Contains(o.Text, "more playful") {
				t.Errorf("regenerated option %s ignores the instructions: %s", o.Label, o.Text)
			}
		}
	})

	r.Options = opts
	sel, _, err := agent.InterpretReply(ctx, r, "B, but shorter")
	if err != nil {
		t.Fatalf("InterpretReply: %v", err)
	}
	if want := (conversation.Selection{Label: "B", Instructions: "shorter"}); sel != want {
		t.Errorf("InterpretReply(%q) = %+v, want %+v", "B, but shorter", sel, want)
	}

	written := map[string]string{}
	for i := range opts {
		o := opts[i]
		rw := r
		rw.Selected = &o
		text, _, err := agent.Write(ctx, rw)
		if err != nil {
			t.Fatalf("Write %s: %v", o.Label, err)
		}
		checkText(t, "Write "+o.Label, text)
		if !strings.Contains(text, o.Title) {
			t.Errorf("the text written from option %s does not develop it (%q): %s", o.Label, o.Title, text)
		}
		for l, other := range written {
			if other == text {
				t.Errorf("options %s and %s gave the same text", l, o.Label)
			}
		}
		written[o.Label] = text
	}

	rw := r
	rw.Selected = &opts[1]
	rw.Instructions = sel.Instructions
	short, _, err := agent.Write(ctx, rw)
	if err != nil {
		t.Fatalf("Write B, shorter: %v", err)
	}
	if !strings.Contains(short, "shorter") || len(short) >= len(written["B"]) {
		t.Errorf("Write with %q: %d bytes against %d, want shorter and saying so:\n%s", sel.Instructions, len(short), len(written["B"]), short)
	}
	return written["B"]
}

// checkRevise revises text twice: shorter, and with a request to add something.
func checkRevise(t *testing.T, agent *agents.WorkflowAgent, r conversation.ArtifactRequest, text string) {
	t.Helper()
	ctx := context.Background()
	r.Current = text
	r.Instructions = "make it shorter"
	short, _, err := agent.Revise(ctx, r)
	if err != nil {
		t.Fatalf("Revise: %v", err)
	}
	checkText(t, "Revise shorter", short)
	if len(short) >= len(text) || !strings.Contains(short, "Revised as asked: make it shorter") {
		t.Errorf("Revise %q: %d bytes against %d:\n%s", r.Instructions, len(short), len(text), short)
	}

	r.Current = short
	r.Instructions = "mention the pilot budget."
	again, _, err := agent.Revise(ctx, r)
	if err != nil {
		t.Fatalf("Revise: %v", err)
	}
	if !strings.Contains(again, "Revised as asked: mention the pilot budget.") || strings.Contains(again, "make it shorter") {
		t.Errorf("Revise %q does not show the latest request alone:\n%s", r.Instructions, again)
	}

	// A revision fixes what the evaluation found.
	results, _, err := agent.Evaluate(ctx, r, again)
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	for _, res := range results {
		if !res.Pass {
			t.Errorf("the revised text fails %s: %s", res.ID, res.Reason)
		}
	}
}

func checkText(t *testing.T, what, text string) {
	t.Helper()
	if strings.TrimSpace(text) == "" {
		t.Fatalf("%s: empty text", what)
	}
	if strings.Contains(text, "{") {
		t.Errorf("%s: a placeholder is left:\n%s", what, text)
	}
}

func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestInterpretReply(t *testing.T) {
	def := builtin(t, "product-brief")
	art, _ := def.Artifact("problem")
	agent, _ := MustNewAgent(t)
	ctx := context.Background()
	r := conversation.ArtifactRequest{Workflow: def, Artifact: art}
	opts, _, err := agent.ProposeOptions(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	r.Options = opts

	tests := []struct {
		reply string
		want  conversation.Selection
	}{
		{"B, but shorter", conversation.Selection{Label: "B", Instructions: "shorter"}},
		{"b but make it shorter", conversation.Selection{Label: "B", Instructions: "shorter"}},
		{"Let's go with the third one", conversation.Selection{Label: "C"}},
		{"option c please", conversation.Selection{Label: "C"}},
		{"A, with a number for the cost", conversation.Selection{Label: "A", Instructions: "with a number for the cost"}},
		{"A shorter version of C would be great", conversation.Selection{Label: "C"}},
		{"I like the food waste one", conversation.Selection{Label: "B"}},
		{"Food bought, food binned — but warmer", conversation.Selection{Label: "B", Instructions: "warmer"}},
		{"none of these, more playful", conversation.Selection{Regenerate: true, Instructions: "more playful"}},
		{"Can we see other options?", conversation.Selection{Regenerate: true}},
		{"Вариант Б, но короче", conversation.Selection{Label: "B", Instructions: "короче"}},
		{"второй, пожалуйста", conversation.Selection{Label: "B"}},
		{"ни один не подходит", conversation.Selection{Regenerate: true}},
		{"hmm, not sure yet", conversation.Selection{}},
	}
	for _, tt := range tests {
		t.Run(tt.reply, func(t *testing.T) {
			got, _, err := agent.InterpretReply(ctx, r, tt.reply)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("InterpretReply(%q) = %+v, want %+v", tt.reply, got, tt.want)
			}
		})
	}
}

// TestCustomWorkflow checks the generic content of a workflow the demo does not know.
func TestCustomWorkflow(t *testing.T) {
	def := &workflow.Definition{
		Name: "retro", Title: "Sprint retrospective",
		Artifacts: []workflow.Artifact{
			{
				ID: "theme", Title: "Theme of the sprint", Mode: workflow.ModeChoice, Options: 4,
				Description: "The one thing that defined the sprint, for better or worse.",
				Criteria:    []workflow.Criterion{{ID: "one_thing", Description: "Names one thing."}, {ID: "evidence", Description: "Gives an example from the sprint."}},
			},
			{
				ID: "actions", Title: "Action items", DependsOn: []string{"theme"},
				Description: "What the team will change next sprint, with owners.",
				Criteria:    []workflow.Criterion{{ID: "owners", Description: "Every action has an owner."}},
			},
		},
	}
	agent, cm := MustNewAgent(t)
	ctx := context.Background()

	r := conversation.ArtifactRequest{Workflow: def, Artifact: &def.Artifacts[0]}
	opts, _, err := agent.ProposeOptions(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(opts) != 4 {
		t.Fatalf("got %d options, want 4", len(opts))
	}
	for _, o := range opts {
		if !strings.Contains(o.Text, "Theme of the sprint") || !strings.Contains(o.Text, "defined the sprint") {
			t.Errorf("option %s does not use the artifact's title and description: %s", o.Label, o.Text)
		}
	}
	r.Selected = &opts[2]
	theme, _, err := agent.Write(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	checkText(t, "Write", theme)
	if !strings.HasPrefix(theme, "**"+opts[2].Title+".**") {
		t.Errorf("Write does not develop option C:\n%s", theme)
	}

	r = conversation.ArtifactRequest{Workflow: def, Artifact: &def.Artifacts[1], Approved: map[string]string{"theme": theme}}
	actions, _, err := agent.Write(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(actions, "with owners") || !strings.Contains(actions, "Theme of the sprint") {
		t.Errorf("draft text lacks the description or the approved artifact:\n%s", actions)
	}
	res, _, err := agent.Evaluate(ctx, r, actions)
	if err != nil || len(res) != 1 {
		t.Fatalf("Evaluate = %+v, %v", res, err)
	}
	sum, _, err := agent.Summarize(ctx, conversation.ArtifactRequest{Workflow: def, Approved: map[string]string{"theme": theme, "actions": actions}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum, "Sprint retrospective") || !strings.Contains(sum, "Action items") {
		t.Errorf("summary = %q", sum)
	}
	if got := cm.calls.Load(); got != 5 {
		t.Errorf("model calls = %d, want 5", got)
	}
}

// blogJoin joins a foreach artifact's item texts under "## " headings, as the
// pipeline does when it completes the artifact.
func blogJoin(items []workflow.Item, texts []string) string {
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = "## " + it.Title + "\n\n" + texts[i]
	}
	return strings.Join(parts, "\n\n")
}

// MustNewBlogAgent returns a workflow agent on a counting demo model with the research
// tools registered: the search tools find nothing (so the notes are the canned ones),
// and fetch_url fails the test when the model calls it.
func MustNewBlogAgent(tb testing.TB) (*agents.WorkflowAgent, *countingModel) {
	tb.Helper()
	reg := agents.NewRegistry()
	for _, name := range []string{"web_search", "search_knowledge"} {
		reg.MustRegister(agents.ToolSpec{Name: name, Description: "A search tool that finds nothing."},
			agents.ToolFunc(func(_ context.Context, raw json.RawMessage) (string, error) {
				var args struct{ Query string }
				_ = json.Unmarshal(raw, &args)
				return fmt.Sprintf("No results for %q.", args.Query), nil
			}))
	}
	reg.MustRegister(agents.ToolSpec{Name: "fetch_url", Description: "A fetch tool the demo must not call."},
		agents.ToolFunc(func(context.Context, json.RawMessage) (string, error) {
			tb.Error("the demo model called fetch_url")
			return "", nil
		}))
	cm := &countingModel{m: demo.New()}
	return agents.NewWorkflowAgent(agents.WorkflowAgentConfig{Client: cm, Model: demo.ModelName, Tools: reg, Logger: quietLogger()}), cm
}

// mustPass evaluates text and fails the test for a criterion it does not meet.
func mustPass(t *testing.T, agent *agents.WorkflowAgent, r conversation.ArtifactRequest, text string) {
	t.Helper()
	// As the engine does (docs/workflows.md, "Verdicts"): the checks without the
	// model, with the inputs' defaults when the request has none; the model asked
	// about the others.
	inputs := r.Inputs
	if inputs == nil && r.Workflow != nil {
		inputs = map[string]string{}
		for _, in := range r.Workflow.Inputs {
			inputs[in.ID] = in.Default
		}
	}
	for _, c := range workflow.RunChecks(r.Artifact, text, workflow.CheckEnv{Inputs: inputs, Artifacts: r.Approved, Workflow: r.Workflow}) {
		if !c.Pass {
			t.Errorf("%s fails the check %s: %+v", r.Artifact.ID, c.ID, c)
		}
	}
	r.Artifact = r.Artifact.Unchecked()
	if len(r.Artifact.Criteria) == 0 {
		return
	}
	results, _, err := agent.Evaluate(context.Background(), r, text)
	if err != nil {
		t.Fatalf("Evaluate %s: %v", r.Artifact.ID, err)
	}
	if len(results) != len(r.Artifact.Criteria) {
		t.Fatalf("Evaluate %s gave %d results, want %d", r.Artifact.ID, len(results), len(r.Artifact.Criteria))
	}
	for _, res := range results {
		if !res.Pass || res.Reason == "" {
			t.Errorf("%s fails %s: %s", r.Artifact.ID, res.ID, res.Reason)
		}
	}
}

var (
	demoLinkRe  = regexp.MustCompile(`\(\[demo source\]\((https://example\.com/demo/[a-z-]+)\)\)`)
	demoNoteRe  = regexp.MustCompile(`^- .+ \(demo source: (https://example\.com/demo/[a-z-]+)\)$`)
	citationRe  = regexp.MustCompile(`\[(\d+)\]`)
	referenceRe = regexp.MustCompile(`(?m)^(\d+)\. (https://example\.com/demo/[a-z-]+) `)
)

// TestBlogWorkflow drives every request of the blog workflow through the
// WorkflowAgent, once for each outline option (the three proposed and the three a
// regeneration proposes), the way the pipeline makes them: the
// outline's options and text, each section's research (with the research tools
// offered) and draft with its editor pass, the article, its revision, the
// evaluations and the summary. Each is one model call that commits valid work.
func TestBlogWorkflow(t *testing.T) {
	def := builtin(t, "blog")
	art := func(id string) *workflow.Artifact {
		a, ok := def.Artifact(id)
		if !ok {
			t.Fatalf("blog has no artifact %q", id)
		}
		return a
	}
	plan, research, sections, article := art("plan"), art("research"), art("sections"), art("article")
	if sections.Editor == nil {
		t.Fatal("the sections artifact has no editor pass")
	}
	ctx := context.Background()

	agent, _ := MustNewBlogAgent(t)
	opts, _, err := agent.ProposeOptions(ctx, conversation.ArtifactRequest{Workflow: def, Artifact: plan})
	if err != nil {
		t.Fatal(err)
	}
	if len(opts) != 3 {
		t.Fatalf("got %d options, want 3", len(opts))
	}
	// A regeneration proposes the other three angles.
	again, _, err := agent.ProposeOptions(ctx, conversation.ArtifactRequest{Workflow: def, Artifact: plan, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	titles := map[string]bool{}
	for _, o := range append(slices.Clone(opts), again...) {
		if titles[o.Title] {
			t.Errorf("two options are titled %q", o.Title)
		}
		titles[o.Title] = true
	}

	t.Run("ReviseOutline", func(t *testing.T) {
		r := conversation.ArtifactRequest{Workflow: def, Artifact: plan, Options: opts, Selected: &opts[0]}
		outline, _, err := agent.Write(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		r.Current, r.Instructions = outline, "make it shorter"
		short, _, err := agent.Revise(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		items := workflow.Items(short)
		if len(items) != 4 || !strings.Contains(short, "_Revised as asked: make it shorter._") {
			t.Fatalf("the shorter outline has %d sections, want 4 and a note:\n%s", len(items), short)
		}
		if strings.Contains(items[len(items)-1].Body, "as asked") {
			t.Errorf("the note landed in a section's brief: %q", items[len(items)-1].Body)
		}
		mustPass(t, agent, r, short)
	})

	outlines := map[string]string{}
	for i, opt := range append(slices.Clone(opts), again...) {
		name := opt.Label
		if i >= len(opts) {
			name = "Regenerated" + opt.Label
		}
		t.Run(name, func(t *testing.T) {
			agent, cm := MustNewBlogAgent(t)
			for _, want := range []string{"Working title: “", "Angle: ", "Reader: ", "Sections: "} {
				if !strings.Contains(opt.Text, want) {
					t.Errorf("option %s lacks %q: %s", opt.Label, want, opt.Text)
				}
			}

			// The outline: "# Title", angle, audience, five "## " sections with a brief.
			r := conversation.ArtifactRequest{Workflow: def, Artifact: plan, Selected: &opt, Locale: "en"}
			outline, _, err := agent.Write(ctx, r)
			if err != nil {
				t.Fatalf("Write outline: %v", err)
			}
			if !strings.HasPrefix(outline, "# ") || !strings.Contains(outline, "\nAngle: ") || !strings.Contains(outline, "\nAudience: ") {
				t.Errorf("the outline lacks its title, angle or audience:\n%s", outline)
			}
			items := workflow.Items(outline)
			if len(items) != 5 {
				t.Fatalf("the outline splits into %d items, want 5:\n%s", len(items), outline)
			}
			for _, it := range items {
				if n := sentences(it.Body); n < 1 || n > 2 {
					t.Errorf("section %q has %d sentences, want 1 or 2: %q", it.Title, n, it.Body)
				}
			}
			for l, other := range outlines {
				if other == outline {
					t.Errorf("options %s and %s gave the same outline", l, name)
				}
			}
			outlines[name] = outline
			mustPass(t, agent, r, outline)
			approved := map[string]string{"plan": outline}
			brief, _, err := agent.Write(ctx, conversation.ArtifactRequest{Workflow: def, Artifact: art("brief"), Approved: clone(approved)})
			if err != nil {
				t.Fatalf("Write brief: %v", err)
			}
			approved["brief"] = brief

			// Research, one item per section: three or four notes with demo sources.
			notes := make([]string, len(items))
			for i, it := range items {
				r := conversation.ArtifactRequest{Workflow: def, Artifact: research, Approved: clone(approved),
					Item: &conversation.Item{Index: i, Total: len(items), Title: it.Title, Brief: it.Body}}
				text, _, err := agent.Write(ctx, r)
				if i+1 == 3 { // the demo's failing research item
					// It fails its first two tries, as the pipeline's retries: 2 would
					// see, then succeeds with the recovery agent's instructions.
					var failures []string
					for try := 1; try <= 2; try++ {
						var tf *conversation.TaskFailure
						if !errors.As(err, &tf) || !strings.Contains(tf.Reason, it.Title) {
							t.Fatalf("research %d, try %d: %v; want a TaskFailure naming %q", i+1, try, err, it.Title)
						}
						failures = append(failures, tf.Reason)
						if try == 1 {
							_, _, err = agent.Write(ctx, r)
						}
					}
					rec, _, rerr := agent.Recover(ctx, r, failures)
					if rerr != nil || !strings.Contains(rec.Rationale, "Demo failure") || len(rec.Queries) != 2 {
						t.Fatalf("Recover = %+v, %v", rec, rerr)
					}
					r.Instructions = rec.Instructions + "\n\nSearch for:\n- " + strings.Join(rec.Queries, "\n- ")
					text, _, err = agent.Write(ctx, r)
				}
				if err != nil {
					t.Fatalf("Write research %d: %v", i+1, err)
				}
				var n int
				for _, l := range strings.Split(text, "\n") {
					if demoNoteRe.MatchString(l) {
						n++
					}
				}
				if n < 3 || n > 4 || strings.HasPrefix(text, "#") {
					t.Errorf("research for %q: %d notes with a demo source, want 3 or 4, and no heading:\n%s", it.Title, n, text)
				}
				notes[i] = text
			}
			approved["research"] = blogJoin(items, notes)
			mustPass(t, agent, conversation.ArtifactRequest{Workflow: def, Artifact: research, Approved: clone(approved)}, approved["research"])

			// Sections, one item per section: a draft from the notes, then the editor.
			drafts := make([]string, len(items))
			for i, it := range items {
				r := conversation.ArtifactRequest{Workflow: def, Artifact: sections, Approved: clone(approved),
					Item: &conversation.Item{Index: i, Total: len(items), Title: it.Title, Brief: it.Body}}
				draft, _, err := agent.Write(ctx, r)
				if err != nil {
					t.Fatalf("Write section %d: %v", i+1, err)
				}
				for _, l := range strings.Split(notes[i], "\n") {
					if m := demoNoteRe.FindStringSubmatch(l); m != nil && !strings.Contains(draft, "([demo source]("+m[1]+"))") {
						t.Errorf("the draft of %q does not cite its note's source %s", it.Title, m[1])
					}
				}
				r.Current, r.Instructions = draft, sections.Editor.Prompt
				edited, _, err := agent.Revise(ctx, r)
				if err != nil {
					t.Fatalf("Revise section %d: %v", i+1, err)
				}
				if edited == draft || strings.Contains(edited, "as asked") || strings.HasPrefix(edited, "#") {
					t.Errorf("the editor pass of %q did not tighten the draft, or added a note or a heading:\n%s", it.Title, edited)
				}
				if n := len(strings.Fields(edited)); n < 200 || n > 400 {
					t.Errorf("the section %q has %d words after editing, want 200 to 400", it.Title, n)
				}
				if got, want := demoLinkRe.FindAllString(edited, -1), demoLinkRe.FindAllString(draft, -1); !reflect.DeepEqual(got, want) {
					t.Errorf("the editor pass changed the citations of %q: %q, want %q", it.Title, got, want)
				}
				drafts[i] = edited
			}
			approved["sections"] = blogJoin(items, drafts)
			mustPass(t, agent, conversation.ArtifactRequest{Workflow: def, Artifact: sections, Approved: clone(approved)}, approved["sections"])

			// The article, from the outline and the drafts.
			ra := conversation.ArtifactRequest{Workflow: def, Artifact: article, Approved: clone(approved)}
			text, _, err := agent.Write(ctx, ra)
			if err != nil {
				t.Fatalf("Write article: %v", err)
			}
			checkArticle(t, text, outline, items, drafts)
			mustPass(t, agent, ra, text)

			ra.Current, ra.Instructions = text, "make it shorter"
			short, _, err := agent.Revise(ctx, ra)
			if err != nil {
				t.Fatalf("Revise article: %v", err)
			}
			if len(short) >= len(text) || !strings.Contains(short, "_Revised as asked: make it shorter._") {
				t.Errorf("Revise %q: %d bytes against %d:\n%s", ra.Instructions, len(short), len(text), short)
			}
			mustPass(t, agent, ra, short)
			approved["article"] = text

			sum, _, err := agent.Summarize(ctx, conversation.ArtifactRequest{Workflow: def, Approved: approved})
			if err != nil {
				t.Fatal(err)
			}
			title := strings.TrimPrefix(strings.SplitN(outline, "\n", 2)[0], "# ")
			if !strings.Contains(sum, title) || strings.Contains(sum, "{") {
				t.Errorf("summary lacks the title %q: %s", title, sum)
			}

			// One call per request: the outline, the brief, 5 evaluations, 5 research
			// notes (the outline's approved queries are searched before the model is
			// called, so each is one call), 5 drafts, 5 edits, the article, its revision
			// and the summary.
			if got, want := cm.calls.Load(), int64(1+1+5+5*3+1+1+1+4); got != want { // +4: two failed research tries, a recovery, and the last try's search for the recovery's queries
				t.Errorf("model calls = %d, want %d: a request needed a reminder", got, want)
			}
		})
	}
}

// checkArticle checks the article's shape: its title, meta description, TL;DR, the
// outline's sections in order with the edited drafts, the conclusion, and references
// that are exactly its citations.
func checkArticle(t *testing.T, text, outline string, items []workflow.Item, drafts []string) {
	t.Helper()
	lines := strings.Split(text, "\n")
	if title := strings.SplitN(outline, "\n", 2)[0]; lines[0] != title {
		t.Errorf("the article starts with %q, want the outline's title %q", lines[0], title)
	}
	meta, ok := "", false
	for _, l := range lines {
		if meta, ok = strings.CutPrefix(l, "Meta description: "); ok {
			break
		}
	}
	if !ok || len([]rune(meta)) > 160 {
		t.Errorf("meta description %q (%d characters), want one of at most 160", meta, len([]rune(meta)))
	}
	if i := strings.Index(text, "\n## TL;DR\n- "); i < 0 {
		t.Error("no TL;DR")
	} else if n := strings.Count(strings.SplitN(text[i:], "\n\n", 2)[0], "\n- "); n < 2 || n > 3 {
		t.Errorf("the TL;DR has %d bullets, want 2 or 3", n)
	}
	at := 0
	for i, it := range items {
		j := strings.Index(text[at:], "\n## "+it.Title+"\n")
		if j < 0 {
			t.Fatalf("section %q is missing or out of order", it.Title)
		}
		at += j
		first := strings.SplitN(drafts[i], "\n\n", 2)[0] // the lead, without citations
		if !strings.Contains(text[at:], first) {
			t.Errorf("section %q is not the edited draft", it.Title)
		}
	}
	body, refs, ok := strings.Cut(text, "\n## References\n")
	if !ok || !strings.Contains(body, "\n## Conclusion\n") || strings.Contains(body, "demo source](") {
		t.Fatalf("the article lacks its conclusion or references, or keeps a draft's link:\n%s", text)
	}
	cited := map[string]bool{}
	for _, m := range citationRe.FindAllStringSubmatch(body, -1) {
		cited[m[1]] = true
	}
	listed := referenceRe.FindAllStringSubmatch(refs, -1)
	if len(listed) != len(cited) || len(listed) < len(items)*3 {
		t.Errorf("%d references for %d cited numbers, want the same and at least 3 a section", len(listed), len(cited))
	}
	urls := map[string]bool{}
	for i, m := range listed {
		if m[1] != strconv.Itoa(i+1) || !cited[m[1]] || urls[m[2]] {
			t.Errorf("reference %s (%s) is out of order, never cited or repeated", m[1], m[2])
		}
		urls[m[2]] = true
	}
}

// researchRequest is a blog research request with the research tools and the commit
// function offered, tool_choice "required", as the workflow agent sends it.
func researchRequest() openai.ChatCompletionRequest {
	tool := func(name, params string) openai.Tool {
		return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: name, Parameters: json.RawMessage(params)}}
	}
	query := `{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`
	return openai.ChatCompletionRequest{
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: "You are threadwright.\n\n## The document: Blog article\n\n## The artifact now: Research notes (`research`)\nSourced notes for each section of the outline."},
			{Role: openai.ChatMessageRoleUser, Content: "\"Research notes\" is written one item at a time. Write this item only:\n\nItem 3 of 5: A posting window, not a meeting time\n> Replace the fixed meeting with a posting window.\n\nCall commit_artifact_final_text with the complete text of the item, without its heading."},
		},
		Tools: []openai.Tool{
			tool("web_search", query), tool("fetch_url", `{"type":"object","properties":{"url":{"type":"string"}}}`), tool("search_knowledge", query),
			tool(agents.CommitFinalTextTool, `{"type":"object","properties":{"text":{"type":"string"},"failure":{"type":"string"}},"required":["text"]}`),
		},
		ToolChoice: "required",
	}
}

// withResults returns req continued by the assistant's calls and the results of each,
// wrapped as the workflow agent wraps tool output.
func withResults(req openai.ChatCompletionRequest, calls []openai.ToolCall, results map[string]string) openai.ChatCompletionRequest {
	req.Messages = append(slices.Clone(req.Messages), openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: calls})
	for _, c := range calls {
		req.Messages = append(req.Messages, openai.ChatCompletionMessage{
			Role: openai.ChatMessageRoleTool, ToolCallID: c.ID,
			Content: agents.ToolOutput(c.Function.Name, agents.TrustUntrusted, results[c.Function.Name]),
		})
	}
	return req
}

// committedText returns the text a completion commits, failing the test unless it is
// one commit_artifact_final_text call without "failure".
func committedText(t *testing.T, c agents.Completion) string {
	t.Helper()
	if len(c.ToolCalls) != 1 || c.ToolCalls[0].Function.Name != agents.CommitFinalTextTool {
		t.Fatalf("calls = %+v, want one call of %s", c.ToolCalls, agents.CommitFinalTextTool)
	}
	var args map[string]string
	if err := json.Unmarshal([]byte(c.ToolCalls[0].Function.Arguments), &args); err != nil {
		t.Fatal(err)
	}
	if _, ok := args["failure"]; ok || len(args) != 1 {
		t.Errorf("arguments = %v, want the text alone", args)
	}
	return args["text"]
}

// TestBlogResearchSearches sends a research request with the research tools offered:
// the demo first calls web_search and search_knowledge with queries from the item,
// then, given their results, commits notes that cite them; given none, the canned
// notes with their demo sources. The same request gets the same answer.
func TestBlogResearchSearches(t *testing.T) {
	ctx := context.Background()
	req := researchRequest()
	c, err := demo.New().Complete(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, call := range c.ToolCalls {
		names = append(names, call.Function.Name)
		if !strings.Contains(strings.ToLower(call.Function.Arguments), "posting window") {
			t.Errorf("%s query %s does not name the item", call.Function.Name, call.Function.Arguments)
		}
	}
	if !reflect.DeepEqual(names, []string{"web_search", "search_knowledge"}) {
		t.Fatalf("calls = %v, want web_search then search_knowledge", names)
	}
	again, _ := demo.New().Complete(ctx, req)
	if !reflect.DeepEqual(again.ToolCalls, c.ToolCalls) {
		t.Errorf("the same request got other calls: %+v", again.ToolCalls)
	}

	t.Run("Results", func(t *testing.T) {
		web := "Results for \"posting window\":\n\n1. Async stand-ups in practice\n   https://blog.example.org/async-standups\n   Teams that post updates within a fixed morning window read them more reliably. The rest is noise.\n\n" +
			"2. Posting windows explained\n   https://docs.example.net/windows\n   A posting window is a span of hours in which everyone writes their update."
		kb := "Found 1 passage in the knowledge base for \"posting window\":\n\n[1] handbook/rituals.md — Stand-ups\nOur team posts stand-up updates between 9 and 11 local time. Nobody waits for a meeting.\n\nCite the passages you use as [n]."
		next := withResults(req, c.ToolCalls, map[string]string{"web_search": web, "search_knowledge": kb})
		c2, err := demo.New().Complete(ctx, next)
		if err != nil {
			t.Fatal(err)
		}
		text := committedText(t, c2)
		for _, want := range []string{
			"- Teams that post updates within a fixed morning window read them more reliably (source: https://blog.example.org/async-standups)",
			"(source: https://docs.example.net/windows)",
			"- Our team posts stand-up updates between 9 and 11 local time (source: handbook/rituals.md — Stand-ups)",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("the notes lack %q:\n%s", want, text)
			}
		}
		if strings.Contains(text, "example.com/demo") {
			t.Errorf("the notes mix in demo sources:\n%s", text)
		}
		c3, _ := demo.New().Complete(ctx, next)
		if committedText(t, c3) != text {
			t.Error("the same request got another text")
		}
	})
	t.Run("RecoveryQueries", func(t *testing.T) {
		req := researchRequest()
		req.Messages = slices.Clone(req.Messages)
		req.Messages[1].Content = strings.Replace(req.Messages[1].Content, "\n\nCall ",
			"\n\nThe team's instructions:\n> Research only this section.\n>\n> Search for:\n> - posting window async examples\n> - \"posting window\" stand-up\n\nCall ", 1)
		c, err := demo.New().Complete(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		var queries []string
		for _, call := range c.ToolCalls {
			if call.Function.Name == "web_search" {
				var args struct{ Query string }
				_ = json.Unmarshal([]byte(call.Function.Arguments), &args)
				queries = append(queries, args.Query)
			}
		}
		if want := []string{"posting window async examples", `"posting window" stand-up`}; !reflect.DeepEqual(queries, want) {
			t.Errorf("web queries = %q, want the recovery's %q", queries, want)
		}
	})
	t.Run("Nothing", func(t *testing.T) {
		next := withResults(req, c.ToolCalls, map[string]string{"web_search": `No results for "posting window".`, "search_knowledge": "error: the knowledge base is empty"})
		c2, err := demo.New().Complete(ctx, next)
		if err != nil {
			t.Fatal(err)
		}
		if text := committedText(t, c2); !strings.Contains(text, "(demo source: https://example.com/demo/posting-window)") {
			t.Errorf("the notes are not the section's canned ones:\n%s", text)
		}
	})
}

// TestBlogRecovery asks for a recovery plan with the recovery_plan template, for a
// research item and for a section draft.
func TestBlogRecovery(t *testing.T) {
	def := builtin(t, "blog")
	ps := prompts.MustParse()
	tool := openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: agents.CommitRecoveryTool,
		Parameters: json.RawMessage(`{"type":"object","properties":{"instructions":{"type":"string"},` +
			`"queries":{"type":"array","items":{"type":"string"}},"rationale":{"type":"string"}},"required":["instructions","rationale"]}`),
	}}
	tests := []struct {
		artifact    string
		tools       []prompts.Tool
		wantQueries int
	}{
		{"research", []prompts.Tool{{Name: "web_search", Description: "Search the web."}}, 2},
		{"sections", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.artifact, func(t *testing.T) {
			a, _ := def.Artifact(tt.artifact)
			system, err := ps.Render(prompts.WorkflowSystem, prompts.WorkflowSystemData{
				Workflow: prompts.WorkflowInfo{Title: def.Title, Description: def.Description},
				Artifact: &prompts.ArtifactInfo{ID: a.ID, Title: a.Title, Description: a.Description, Mode: string(a.Mode)},
				ToolName: agents.CommitRecoveryTool,
			})
			if err != nil {
				t.Fatal(err)
			}
			user, err := ps.Render(prompts.RecoveryPlan, prompts.RecoveryPlanData{
				Title: a.Title, Item: &prompts.Item{Number: 4, Total: 5, Title: "Make blockers impossible to miss", Brief: "Give blockers their own marker."},
				Failures: []string{"the model could not do the task: no page about blocker prefixes found"},
				Tools:    tt.tools, ToolName: agents.CommitRecoveryTool,
			})
			if err != nil {
				t.Fatal(err)
			}
			req := openai.ChatCompletionRequest{
				Messages:   []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: system}, {Role: openai.ChatMessageRoleUser, Content: user}},
				Tools:      []openai.Tool{tool},
				ToolChoice: openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: agents.CommitRecoveryTool}},
			}
			c, err := demo.New().Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.ToolCalls) != 1 || c.ToolCalls[0].Function.Name != agents.CommitRecoveryTool {
				t.Fatalf("calls = %+v", c.ToolCalls)
			}
			var got workflow.Recovery
			if err := json.Unmarshal([]byte(c.ToolCalls[0].Function.Arguments), &got); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(got.Instructions, "Make blockers impossible to miss") || !strings.Contains(got.Instructions, "item 4 of 5") {
				t.Errorf("instructions do not name the item: %s", got.Instructions)
			}
			if len(got.Queries) != tt.wantQueries {
				t.Errorf("queries = %q, want %d", got.Queries, tt.wantQueries)
			}
			if !strings.Contains(got.Rationale, "no page about blocker prefixes found") {
				t.Errorf("the rationale does not answer the failure: %s", got.Rationale)
			}
		})
	}
}

// TestCustomForeach writes and edits an item of a custom foreach artifact.
func TestCustomForeach(t *testing.T) {
	def := &workflow.Definition{
		Name: "launch", Title: "Launch plan",
		Artifacts: []workflow.Artifact{
			{ID: "channels", Title: "Channels", Description: "The channels of the launch, one heading each."},
			{
				ID: "tactics", Title: "Tactics", Mode: workflow.ModeAuto, DependsOn: []string{"channels"}, Foreach: "channels",
				Description: "What to do on each channel.", Editor: &workflow.Editor{Prompt: "Tighten the prose."},
			},
		},
	}
	agent, _ := MustNewAgent(t)
	ctx := context.Background()
	r := conversation.ArtifactRequest{
		Workflow: def, Artifact: &def.Artifacts[1], Approved: map[string]string{"channels": "## Newsletter\nOur 2,000 readers.\n\n## Podcast\nA guest spot."},
		Item: &conversation.Item{Index: 1, Total: 2, Title: "Podcast", Brief: "A guest spot."},
	}
	text, _, err := agent.Write(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(text, "**Podcast.** A guest spot.") || strings.Contains(text, "as asked") {
		t.Errorf("the item's text does not start with its title and brief:\n%s", text)
	}
	r.Current, r.Instructions = text, def.Artifacts[1].Editor.Prompt
	edited, _, err := agent.Revise(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(edited, "as asked") || !strings.HasPrefix(edited, "**Podcast.**") || strings.Count(edited, "\n- ") != strings.Count(text, "\n- ") {
		t.Errorf("the editor pass added a note or lost the text:\n%s", edited)
	}
}

func TestExecutor(t *testing.T) {
	now := func() time.Time { return time.Date(2024, 5, 14, 9, 30, 0, 0, time.UTC) }
	reg := agents.NewRegistry()
	reg.MustRegister(toolbox.CurrentTime(now))
	reg.MustRegister(toolbox.Calculate())
	exec := agents.NewExecutor(agents.ExecutorConfig{Client: demo.New(), Model: demo.ModelName, Registry: reg, Now: now, Logger: quietLogger()})

	tests := []struct {
		name, text string
		wantTools  []string
		wantArgs   string
		want       []string
		russian    bool
	}{
		{"Time", "What time is it in Paris?", []string{"current_time"}, "Europe/Paris", []string{"**11:30 CEST**", "Tuesday, 14 May 2024"}, false},
		{"TimeUTC", "what's the time?", []string{"current_time"}, "{}", []string{"It's **09:30 UTC** on Tuesday, 14 May 2024."}, false},
		{"Calc", "what is 17*23?", []string{"calculate"}, `"17*23"`, []string{"**391**"}, false},
		{"CalcBare", "(1200 * 1.2) / 8", []string{"calculate"}, "1200", []string{"**180**"}, false},
		{"Both", "What time is it, and what is 12 x 12?", []string{"current_time", "calculate"}, "", []string{"09:30", "**144**"}, false},
		{"RussianTime", "Который час в Москве?", []string{"current_time"}, "Europe/Moscow", []string{"**12:30 MSK**", "вторник, 14 мая 2024"}, true},
		{"RussianCalc", "Сколько будет 6*7?", []string{"calculate"}, "", []string{"**42**", "офлайн-демомодель"}, true},
		{"Chat", "Tell me a joke about Go", nil, "", []string{"offline demo model", "/threadwright start product-brief", "Tell me a joke about Go"}, false},
		{"RussianChat", "Привет! Что ты умеешь?", nil, "", []string{"офлайн-демомодель", "/threadwright start product-brief"}, true},
		{"RussianQuestion", "Как мне оформить отпуск?", nil, "", []string{"Как мне оформить отпуск?", "OPENAI_API_KEY"}, true},
		{"NotADate", "The release is on 2024-05-14, ok?", nil, "", []string{"offline demo model"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var progress []string
			f, err := exec.Execute(context.Background(), conversation.Prompt{Text: tt.text}, func(s string) { progress = append(progress, s) })
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tc := range f.ToolCalls {
				names = append(names, tc.Name)
				if tc.Failed {
					t.Errorf("tool call %s failed: %s", tc.Name, tc.Result)
				}
			}
			if !reflect.DeepEqual(names, tt.wantTools) {
				t.Errorf("tools = %v, want %v", names, tt.wantTools)
			}
			if tt.wantArgs != "" && !strings.Contains(f.ToolCalls[0].Arguments, tt.wantArgs) {
				t.Errorf("arguments = %s, want %s in them", f.ToolCalls[0].Arguments, tt.wantArgs)
			}
			wantSteps := 1
			if len(tt.wantTools) > 0 {
				wantSteps = 2
				if len(progress) != 1 {
					t.Errorf("progress = %q, want one status", progress)
				}
			}
			if f.Steps != wantSteps || f.Truncated {
				t.Errorf("steps = %d, truncated = %t; want %d, false", f.Steps, f.Truncated, wantSteps)
			}
			for _, w := range tt.want {
				if !strings.Contains(f.Answer, w) {
					t.Errorf("answer lacks %q:\n%s", w, f.Answer)
				}
			}
			if share := cyrillicShare(f.Answer); tt.russian != (share > 0.5) {
				t.Errorf("answer is %.0f %% Cyrillic, want Russian = %t:\n%s", share*100, tt.russian, f.Answer)
			}
			if f.Usage.PromptTokens == 0 || f.Usage.CompletionTokens == 0 {
				t.Errorf("usage = %+v", f.Usage)
			}
		})
	}

	t.Run("StepLimit", func(t *testing.T) {
		// With one step the executor asks for the final answer without tools.
		exec := agents.NewExecutor(agents.ExecutorConfig{Client: demo.New(), Model: demo.ModelName, Registry: reg, Now: now, MaxSteps: 1})
		f, err := exec.Execute(context.Background(), conversation.Prompt{Text: "what is 2+2"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !f.Truncated || f.Steps != 2 || !strings.Contains(f.Answer, "**4**") {
			t.Errorf("findings = %+v", f)
		}
	})

	t.Run("NoTools", func(t *testing.T) {
		exec := agents.NewExecutor(agents.ExecutorConfig{Client: demo.New(), Model: demo.ModelName})
		f, err := exec.Execute(context.Background(), conversation.Prompt{Text: "what is 17*23?"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.ToolCalls) != 0 || !strings.Contains(f.Answer, "offline demo model") {
			t.Errorf("findings = %+v", f)
		}
	})
}

func TestScopeChecker(t *testing.T) {
	sc := agents.NewScopeChecker(agents.ScopeConfig{Client: demo.New(), Model: demo.ModelName, Description: "questions about meal planning"})
	v, err := sc.CheckScope(context.Background(), conversation.Prompt{Text: "What's the capital of France?"})
	if err != nil {
		t.Fatal(err)
	}
	if !v.InScope || !strings.Contains(v.Reason, "demo") || v.Usage.PromptTokens == 0 {
		t.Errorf("verdict = %+v", v)
	}
}

func TestSummarizer(t *testing.T) {
	s := agents.NewSummarizer(agents.SummarizerConfig{Client: demo.New(), Model: demo.ModelName})
	msgs := []conversation.Message{
		{Role: conversation.RoleUser, UserID: "U1", Text: "We should target single parents first. They feel it most."},
		{Role: conversation.RoleAssistant, Text: "Noted: single parents first."},
		{Role: conversation.RoleContext, UserID: "U2", Text: "Budget is 20k."},
	}
	t.Run("English", func(t *testing.T) {
		sum, u, err := s.Summarize(context.Background(), conversation.SummaryRequest{Previous: "- <@U3>: Kick-off on Monday.", Messages: msgs})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"<@U3>: Kick-off on Monday.", "<@U1>: We should target single parents first.", "The assistant replied: Noted", "<@U2>: Budget is 20k."} {
			if !strings.Contains(sum, want) {
				t.Errorf("summary lacks %q:\n%s", want, sum)
			}
		}
		if strings.Contains(sum, "They feel it most") {
			t.Errorf("summary keeps more than a message's first sentence:\n%s", sum)
		}
		if u.CompletionTokens == 0 {
			t.Error("no usage")
		}
	})
	t.Run("RussianWorkflow", func(t *testing.T) {
		sum, _, err := s.Summarize(context.Background(), conversation.SummaryRequest{Messages: msgs, Locale: "ru", Workflow: "product-brief"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(sum, agents.SummaryWorkflowNote) || !strings.Contains(sum, "Ассистент ответил") {
			t.Errorf("summary:\n%s", sum)
		}
	})
	t.Run("Limit", func(t *testing.T) {
		s := agents.NewSummarizer(agents.SummarizerConfig{Client: demo.New(), Model: demo.ModelName, MaxChars: agents.MinSummaryChars})
		long := strings.Repeat("A long message about the budget and the plan. ", 20)
		var many []conversation.Message
		for i := range 10 {
			many = append(many, conversation.Message{Role: conversation.RoleUser, UserID: fmt.Sprintf("U%d", i), Text: long})
		}
		sum, _, err := s.Summarize(context.Background(), conversation.SummaryRequest{Messages: many})
		if err != nil {
			t.Fatal(err)
		}
		if n := len([]rune(sum)); n > agents.MinSummaryChars || !strings.Contains(sum, "<@U9>") {
			t.Errorf("summary of %d characters, want at most %d with the newest message:\n%s", n, agents.MinSummaryChars, sum)
		}
	})
}

func TestComplete(t *testing.T) {
	chat := openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hello"}}}

	t.Run("Plain", func(t *testing.T) {
		c, err := demo.New().Complete(context.Background(), chat)
		if err != nil {
			t.Fatal(err)
		}
		if c.FinishReason != openai.FinishReasonStop || c.Content == "" || c.Model != demo.ModelName || c.Attempts != 1 {
			t.Errorf("completion = %+v", c)
		}
		if want := (len("user") + len("hello") + 3) / 4; c.Usage.PromptTokens != want {
			t.Errorf("prompt tokens = %d, want %d (characters / 4)", c.Usage.PromptTokens, want)
		}
		if want := (len([]rune(c.Content)) + 3) / 4; c.Usage.CompletionTokens != want {
			t.Errorf("completion tokens = %d, want %d", c.Usage.CompletionTokens, want)
		}
	})

	t.Run("UnknownForcedTool", func(t *testing.T) {
		req := openai.ChatCompletionRequest{
			Messages: chat.Messages,
			Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
				Name: "plan",
				Parameters: json.RawMessage(`{"type":"object","properties":{"count":{"type":"integer","minimum":2},` +
					`"tags":{"type":"array","minItems":2,"items":{"type":"string"}},"mode":{"type":"string","enum":["fast","slow"]},` +
					`"ok":{"type":"boolean"}},"required":["count","tags","mode","ok"]}`),
			}}},
			ToolChoice: openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: "plan"}},
		}
		c, err := demo.New().Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if c.FinishReason != openai.FinishReasonToolCalls || len(c.ToolCalls) != 1 || c.ToolCalls[0].Function.Name != "plan" {
			t.Fatalf("completion = %+v", c)
		}
		var args struct {
			Count int      `json:"count"`
			Tags  []string `json:"tags"`
			Mode  string   `json:"mode"`
			OK    bool     `json:"ok"`
		}
		if err := json.Unmarshal([]byte(c.ToolCalls[0].Function.Arguments), &args); err != nil {
			t.Fatal(err)
		}
		if args.Count != 2 || len(args.Tags) != 2 || args.Mode != "fast" || !args.OK {
			t.Errorf("arguments = %s", c.ToolCalls[0].Function.Arguments)
		}
	})

	t.Run("Deterministic", func(t *testing.T) {
		a, _ := demo.New().Complete(context.Background(), chat)
		b, _ := demo.New().Complete(context.Background(), chat)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("two answers to one request differ:\n%+v\n%+v", a, b)
		}
	})

	t.Run("Delay", func(t *testing.T) {
		m := &demo.Model{Delay: 20 * time.Millisecond}
		start := time.Now()
		if _, err := m.Complete(context.Background(), chat); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d < m.Delay {
			t.Errorf("answered after %s, want at least %s", d, m.Delay)
		}
	})

	t.Run("DelayHonoursContext", func(t *testing.T) {
		m := &demo.Model{Delay: time.Hour}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := m.Complete(ctx, chat)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want context.DeadlineExceeded", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("returned after %s", d)
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		m := &demo.Model{Delay: time.Millisecond}
		def := builtin(t, "proposal")
		agent := agents.NewWorkflowAgent(agents.WorkflowAgentConfig{Client: m, Model: demo.ModelName})
		var wg sync.WaitGroup
		for _, a := range def.Artifacts {
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := conversation.ArtifactRequest{Workflow: def, Artifact: &a}
					text, _, err := agent.Write(context.Background(), r)
					if err == nil {
						_, _, err = agent.Evaluate(context.Background(), r, text)
					}
					if err != nil {
						t.Error(err)
					}
				}()
			}
		}
		wg.Wait()
	})
}

// The demo model stands in for a real one wherever an agents.Completer goes.
func Example() {
	reg := agents.NewRegistry()
	reg.MustRegister(toolbox.Calculate())
	exec := agents.NewExecutor(agents.ExecutorConfig{Client: demo.New(), Model: demo.ModelName, Registry: reg})

	f, err := exec.Execute(context.Background(), conversation.Prompt{Text: "What is 17 * 23?"}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(f.ToolCalls[0].Name, f.ToolCalls[0].Arguments)
	fmt.Println(strings.Split(f.Answer, "\n")[0])
	// Output:
	// calculate {"expression":"17 * 23"}
	// `17 * 23` = **391**
}
