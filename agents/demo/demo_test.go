package demo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/demo"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
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

func TestExecutor(t *testing.T) {
	now := func() time.Time { return time.Date(2024, 5, 14, 9, 30, 0, 0, time.UTC) }
	reg := agents.NewRegistry()
	reg.MustRegister(agents.CurrentTime(now))
	reg.MustRegister(agents.Calculate())
	exec := agents.NewExecutor(agents.ExecutorConfig{Client: demo.New(), Model: demo.ModelName, Registry: reg, Now: now, Logger: quietLogger()})

	tests := []struct {
		name, text string
		wantTools  []string
		wantArgs   string
		want       []string
		russian    bool
	}{
		{"Time", "What time is it in Paris?", []string{"current_time"}, "Europe/Paris", []string{"**11:30 CEST**", "Tuesday, 14 May 2024"}, false},
		{"TimeUTC", "what's the time?", []string{"current_time"}, "{}", []string{"**09:30 UTC**"}, false},
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
	reg.MustRegister(agents.Calculate())
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
