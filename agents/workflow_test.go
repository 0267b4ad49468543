package agents_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/testkit/logtest"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

const (
	problemText  = "Support teams drown in unsorted tickets: **6 hours** a week go to manual triage."
	researchText = "Interviews with 12 support leads at mid-size SaaS companies. Everyone sorts tickets by hand."
)

// briefWorkflow is a product brief: research (auto), problem (draft), audience
// (choice, from the problem) and name (choice, two options, from the audience).
func briefWorkflow() *workflow.Definition {
	return &workflow.Definition{
		Name: "product-brief", Title: "Product brief", Description: "A one-page brief for a new product.",
		Artifacts: []workflow.Artifact{
			{ID: "research", Title: "Research", Mode: workflow.ModeAuto},
			{ID: "problem", Title: "Problem", Mode: workflow.ModeDraft, DependsOn: []string{"research"},
				Criteria: []workflow.Criterion{{ID: "measurable", Description: "States a measurable problem"}}},
			{ID: "audience", Title: "Audience", Description: "Who the product is for.", Mode: workflow.ModeChoice, Options: 3,
				DependsOn: []string{"problem"}, Prompt: "Name one primary audience.",
				Criteria: []workflow.Criterion{
					{ID: "specific", Description: "Names a concrete group of people"},
					{ID: "grounded", Description: "Follows from the problem"},
					{ID: "concise", Description: "At most 80 words"},
				}},
			{ID: "name", Title: "Name", Mode: workflow.ModeChoice, Options: 2, DependsOn: []string{"audience"}},
		},
	}
}

var audienceOptions = []workflow.Option{
	{Label: "A", Title: "Support leads", Text: "Heads of support at SaaS companies with 20 to 200 agents."},
	{Label: "B", Title: "Missed SLAs", Text: "Teams that breach their SLAs because tickets wait in the wrong queue."},
	{Label: "C", Title: "Founders", Text: "Founders who still answer tickets themselves."},
}

// audienceRequest is a request for the audience artifact with research and problem
// approved; edit applies changes.
func audienceRequest(edit ...func(*conversation.ArtifactRequest)) conversation.ArtifactRequest {
	def := briefWorkflow()
	r := conversation.ArtifactRequest{
		Workflow: def, Artifact: &def.Artifacts[2], Locale: "en",
		Approved: map[string]string{"research": researchText, "problem": problemText},
		History: []conversation.Message{
			{Role: conversation.RoleUser, UserID: "U1", Text: "@threadwright start product-brief"},
			{Role: conversation.RoleRevision, Text: "a revision record, not conversation"},
			{Role: conversation.RoleAssistant, Text: "Problem approved by <@U1>."},
			{Role: conversation.RoleUser, UserID: "U2", Text: "Let's focus on\nmid-size companies."},
		},
		Summary: "The team approved the research and the problem.",
	}
	for _, f := range edit {
		f(&r)
	}
	return r
}

func newWorkflowAgent(tb testing.TB, srv *openaitest.Server, edit ...func(*agents.WorkflowAgentConfig)) (*agents.WorkflowAgent, *logtest.Buffer) {
	tb.Helper()
	logger, logs := testLogger()
	cfg := agents.WorkflowAgentConfig{
		Client:     newClient(tb, srv),
		Model:      "gpt-main",
		SmallModel: "gpt-small",
		Logger:     logger,
	}
	for _, f := range edit {
		f(&cfg)
	}
	return agents.NewWorkflowAgent(cfg), logs
}

type optionArg struct {
	Label string `json:"label"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

func optionsArgs(opts ...optionArg) map[string]any { return map[string]any{"options": opts} }

var threeOptions = optionsArgs(
	optionArg{Label: "A", Title: "Support leads", Text: "Heads of support at SaaS companies."},
	optionArg{Label: "B", Title: "Ops managers", Text: "Operations managers who own the SLAs."},
	optionArg{Label: "C", Title: "Founders", Text: "Founders who still answer tickets."},
)

// parameters returns the JSON schema of the request's first tool.
func parameters(tb testing.TB, r openaitest.Request) map[string]any {
	tb.Helper()
	b, err := json.Marshal(r.Chat.Tools[0].Function.Parameters)
	if err != nil {
		tb.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatal(err)
	}
	return m
}

func TestWorkflowProposeOptions(t *testing.T) {
	ctx := context.Background()

	t.Run("HappyPath", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv)
		// Labels missing or wrong, a title prefixed with its label, one empty and one
		// too long for a button, texts with white space around.
		srv.Push(commit(agents.CommitOptionsTool, optionsArgs(
			optionArg{Label: "X", Title: "A. Support leads", Text: "  Heads of support at SaaS companies.\n"},
			optionArg{Title: "", Text: "Operations managers who own the SLAs and the queues."},
			optionArg{Label: "c", Title: strings.Repeat("Founders who still answer tickets ", 3), Text: "Founders."},
		)))
		opts, usage, err := agent.ProposeOptions(ctx, audienceRequest())
		if err != nil {
			t.Fatal(err)
		}
		want := []workflow.Option{
			{Label: "A", Title: "Support leads", Text: "Heads of support at SaaS companies."},
			{Label: "B", Title: "Operations managers who own the SLAs", Text: "Operations managers who own the SLAs and the queues."},
			{Label: "C", Title: "Founders who still answer tickets Founders who still answer…", Text: "Founders."},
		}
		if !reflect.DeepEqual(opts, want) {
			t.Errorf("options =\n%+v\nwant\n%+v", opts, want)
		}
		if usage != (conversation.Usage{PromptTokens: 100, CompletionTokens: 20}) {
			t.Errorf("usage = %+v", usage)
		}

		reqs := srv.Requests()
		if len(reqs) != 1 {
			t.Fatalf("%d requests, want 1", len(reqs))
		}
		r := reqs[0]
		checkRequest(t, r, "gpt-main", agents.CommitOptionsTool)
		system := r.SystemPrompt()
		contains(t, "system prompt", system,
			"## The document: Product brief", "A one-page brief for a new product.",
			"## The artifact now: Audience (`audience`)", "Who the product is for.", "you propose options",
			"Name one primary audience.", "- specific: Names a concrete group of people",
			"## Approved artifacts to build on\n", "### Problem (`problem`)\n"+problemText, // the dependency, in full
			"- Research (`research`): "+researchText, // another approved artifact, an excerpt
			"The team approved the research and the problem.",
			"user: Let's focus on mid-size companies.", "assistant: Problem approved by <@U1>.",
			"in English", "light Markdown", "Only what you pass to the function commit_artifact_options is saved")
		lacks(t, "system prompt", system, "a revision record")
		contains(t, "task", r.LastUserMessage(), `Propose 3 options for "Audience", labelled A, B, C.`, "Call commit_artifact_options with exactly 3 options.")
		lacks(t, "task", r.LastUserMessage(), "proposed before")

		params := parameters(t, r)
		options := params["properties"].(map[string]any)["options"].(map[string]any)
		if options["minItems"] != 3.0 || options["maxItems"] != 3.0 {
			t.Errorf("options schema = %v, want minItems and maxItems 3", options)
		}
	})

	t.Run("Regenerate", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv)
		srv.Push(commit(agents.CommitOptionsTool, optionsArgs(
			optionArg{Title: "Big", Text: "Enterprises."}, optionArg{Title: "Small", Text: "Start-ups."})))
		def := briefWorkflow()
		r := conversation.ArtifactRequest{
			Workflow: def, Artifact: &def.Artifacts[3], Options: audienceOptions[:2], Instructions: "more playful",
			Approved: map[string]string{"audience": "Support leads."},
		}
		opts, _, err := agent.ProposeOptions(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if len(opts) != 2 || opts[1].Label != "B" || opts[1].Text != "Start-ups." {
			t.Errorf("options = %+v", opts)
		}
		req, _ := srv.LastRequest()
		contains(t, "task", req.LastUserMessage(),
			`Propose 2 options for "Name", labelled A, B.`, "> more playful",
			"proposed before and not chosen", "A. Support leads: Heads of support", "B. Missed SLAs:")
		contains(t, "system prompt", req.SystemPrompt(), "Write in the language the people in the thread write in")
		lacks(t, "system prompt", req.SystemPrompt(), "## Recent messages", "## Earlier in the thread")
	})

	t.Run("HistoryBound", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv, func(c *agents.WorkflowAgentConfig) { c.History = 1 })
		srv.Push(commit(agents.CommitOptionsTool, threeOptions))
		if _, _, err := agent.ProposeOptions(ctx, audienceRequest()); err != nil {
			t.Fatal(err)
		}
		req, _ := srv.LastRequest()
		contains(t, "system prompt", req.SystemPrompt(), "user: Let's focus on mid-size companies.")
		lacks(t, "system prompt", req.SystemPrompt(), "Problem approved", "start product-brief")
	})
}

func TestWorkflowReminder(t *testing.T) {
	ctx := context.Background()

	t.Run("TextThenCommit", func(t *testing.T) {
		srv := MustServer(t)
		agent, logs := newWorkflowAgent(t, srv)
		srv.Push(text("A. Support leads\nB. Ops managers\nC. Founders"), commit(agents.CommitOptionsTool, threeOptions))
		opts, usage, err := agent.ProposeOptions(ctx, audienceRequest())
		if err != nil {
			t.Fatal(err)
		}
		if len(opts) != 3 || opts[2].Title != "Founders" {
			t.Errorf("options = %+v", opts)
		}
		if want := (conversation.Usage{PromptTokens: 190, CompletionTokens: 30}); usage != want {
			t.Errorf("usage = %+v, want %+v (both calls)", usage, want)
		}
		reqs := srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests, want 2", len(reqs))
		}
		checkRequest(t, reqs[1], "gpt-main", agents.CommitOptionsTool)
		msgs := reqs[1].Chat.Messages
		if len(msgs) != 4 || msgs[2].Role != openai.ChatMessageRoleAssistant || msgs[2].Content != "A. Support leads\nB. Ops managers\nC. Founders" {
			t.Fatalf("second request's messages = %+v, want system, task, the answer in text, reminder", msgs)
		}
		contains(t, "reminder", reqs[1].LastUserMessage(),
			"You answered without calling commit_artifact_options, so nothing was saved.",
			"Call commit_artifact_options now; if the text you wrote is what you meant, pass it to the function unchanged.")
		contains(t, "log", logs.String(), "model did not commit its work", "try=1", "tool=commit_artifact_options", "artifact=audience")
	})

	t.Run("NeverCommits", func(t *testing.T) {
		for _, tc := range []struct {
			name         string
			maxReminders int
			tries        int
		}{
			{"Default", 0, 1 + agents.DefaultMaxReminders},
			{"One", 1, 2},
			{"None", -1, 1},
		} {
			t.Run(tc.name, func(t *testing.T) {
				srv := MustServer(t)
				srv.Handle(func(openaitest.Request) openaitest.Response { return text("Here is the audience: support leads.") })
				agent, _ := newWorkflowAgent(t, srv, func(c *agents.WorkflowAgentConfig) { c.MaxReminders = tc.maxReminders })
				opts, usage, err := agent.ProposeOptions(ctx, audienceRequest())
				if !errors.Is(err, agents.ErrNoCommit) {
					t.Fatalf("err = %v, want ErrNoCommit", err)
				}
				if opts != nil {
					t.Errorf("options = %+v, want none", opts)
				}
				if n := len(srv.Requests()); n != tc.tries {
					t.Errorf("%d requests, want %d", n, tc.tries)
				}
				if want := (conversation.Usage{PromptTokens: 90 * tc.tries, CompletionTokens: 10 * tc.tries}); usage != want {
					t.Errorf("usage = %+v, want %+v", usage, want)
				}
				var ce *agents.CommitError
				if !errors.As(err, &ce) || ce.Tries != tc.tries || ce.Tool != agents.CommitOptionsTool {
					t.Fatalf("err = %#v, want a *CommitError after %d tries", err, tc.tries)
				}
				if !strings.HasPrefix(err.Error(), "agents: ") {
					t.Errorf("Error() = %q, want the package prefix", err)
				}
				wrapped := fmt.Errorf("propose options for audience: %w", err)
				tries := "tries"
				if tc.tries == 1 {
					tries = "try"
				}
				want := fmt.Sprintf("The model did not save the options for Audience after %d %s, so nothing was changed. Please try again.", tc.tries, tries)
				if got := conversation.ErrorReply(wrapped); got != want {
					t.Errorf("ErrorReply = %q\nwant %q", got, want)
				}
			})
		}
	})

	t.Run("LastTry", func(t *testing.T) {
		srv := MustServer(t)
		srv.Handle(func(openaitest.Request) openaitest.Response { return text("no") })
		agent, _ := newWorkflowAgent(t, srv)
		_, _, _ = agent.Write(ctx, audienceRequest())
		reqs := srv.Requests()
		lacks(t, "second reminder", reqs[1].LastUserMessage(), "last try")
		contains(t, "third reminder", reqs[2].LastUserMessage(), "This is the last try.")
	})
}

func TestWorkflowInvalidArguments(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		first    openaitest.Response
		problems []string // in the tool result and the reminder
	}{
		{"WrongOptionCount",
			commit(agents.CommitOptionsTool, optionsArgs(optionArg{Title: "One", Text: "One."}, optionArg{Title: "Two", Text: "Two."})),
			[]string{"the call has 2 options; exactly 3 are needed, labelled A, B, C"}},
		{"BadJSON",
			commit(agents.CommitOptionsTool, `{"options": [{"title": "One"`),
			[]string{"the arguments are not a JSON object of the function's schema (unexpected end of JSON input)"}},
		{"EmptyOptionText",
			commit(agents.CommitOptionsTool, optionsArgs(optionArg{Title: "One", Text: "One."}, optionArg{Title: "Two"}, optionArg{Title: "Three", Text: "3"})),
			[]string{"option B has no text"}},
		{"SameText",
			commit(agents.CommitOptionsTool, optionsArgs(optionArg{Title: "One", Text: "Same."}, optionArg{Title: "Two", Text: "Other."}, optionArg{Title: "Three", Text: " same. "})),
			[]string{"options A and C have the same text; every option must be different"}},
		{"Truncated",
			openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: agents.CommitOptionsTool, Arguments: `{"options": [{"title": "On`}}, FinishReason: "length"},
			[]string{"the call was cut off by the output token limit before it was complete; make the text shorter"}},
		{"WrongFunction",
			commit("save_options", threeOptions),
			[]string{`there is no function "save_options"; the function to call is commit_artifact_options`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := MustServer(t)
			agent, _ := newWorkflowAgent(t, srv)
			srv.Push(tc.first, commit(agents.CommitOptionsTool, threeOptions))
			opts, _, err := agent.ProposeOptions(ctx, audienceRequest())
			if err != nil {
				t.Fatal(err)
			}
			if len(opts) != 3 {
				t.Errorf("options = %+v", opts)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			results := reqs[1].ToolResults()
			if len(results) != 1 {
				t.Fatalf("tool results = %+v, want one answering the call", results)
			}
			for _, p := range tc.problems {
				contains(t, "tool result", results[0].Content, "error: "+p)
				contains(t, "reminder", reqs[1].LastUserMessage(), "That was not saved: "+p+".", "Call commit_artifact_options now.")
			}
		})
	}

	t.Run("AlwaysInvalid", func(t *testing.T) {
		srv := MustServer(t)
		srv.Handle(func(openaitest.Request) openaitest.Response {
			return commit(agents.CommitOptionsTool, optionsArgs(optionArg{Title: "One", Text: "One."}))
		})
		agent, _ := newWorkflowAgent(t, srv)
		_, _, err := agent.ProposeOptions(ctx, audienceRequest())
		var ce *agents.CommitError
		if !errors.As(err, &ce) || !strings.Contains(ce.Problem, "the call has 1 option; exactly 3") {
			t.Fatalf("err = %v, want a CommitError naming the count", err)
		}
		if n := len(srv.Requests()); n != 3 {
			t.Errorf("%d requests, want 3", n)
		}
	})

	t.Run("EmptyText", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv)
		srv.Push(commit(agents.CommitFinalTextTool, map[string]string{"text": "  \n"}), commit(agents.CommitFinalTextTool, map[string]string{"text": "Support leads."}))
		got, _, err := agent.Write(ctx, audienceRequest())
		if err != nil || got != "Support leads." {
			t.Fatalf("Write = %q, %v", got, err)
		}
		req, _ := srv.LastRequest()
		contains(t, "reminder", req.LastUserMessage(), `That was not saved: "text" is empty; pass the complete text.`)
	})

	t.Run("EmptyResponse", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv)
		srv.Push(openaitest.Response{}, commit(agents.CommitFinalTextTool, map[string]string{"text": "Support leads."}))
		if got, _, err := agent.Write(ctx, audienceRequest()); err != nil || got != "Support leads." {
			t.Fatalf("Write = %q, %v", got, err)
		}
		req, _ := srv.LastRequest()
		if n := len(req.Chat.Messages); n != 3 {
			t.Errorf("%d messages, want system, task and reminder (no empty assistant message)", n)
		}
	})
}

func TestWorkflowInterpretReply(t *testing.T) {
	ctx := context.Background()
	r := audienceRequest(func(r *conversation.ArtifactRequest) { r.Options = audienceOptions })

	for _, tc := range []struct {
		reply string
		model any // the scripted commit_artifact_selection arguments
		want  conversation.Selection
	}{
		{"b but shorter", map[string]any{"label": "b", "instructions": "shorter", "regenerate": false},
			conversation.Selection{Label: "B", Instructions: "shorter"}},
		{"the second one", map[string]any{"label": "B", "instructions": "", "regenerate": false},
			conversation.Selection{Label: "B"}},
		{"none of these, more playful", map[string]any{"label": "", "instructions": "more playful", "regenerate": true},
			conversation.Selection{Instructions: "more playful", Regenerate: true}},
		{"Вариант Б, но короче", map[string]any{"label": "Б", "instructions": "короче", "regenerate": false},
			conversation.Selection{Label: "B", Instructions: "короче"}},
		{"founders, please, but mention bootstrapped ones", map[string]any{"label": "Founders", "instructions": "mention bootstrapped ones"},
			conversation.Selection{Label: "C", Instructions: "mention bootstrapped ones"}},
		{"something like C but new ones", map[string]any{"label": "C", "instructions": "", "regenerate": "true"},
			conversation.Selection{Instructions: "like option C", Regenerate: true}},
		{"hmm, let me think", map[string]any{"label": "none", "instructions": "", "regenerate": false},
			conversation.Selection{}},
	} {
		t.Run(tc.reply, func(t *testing.T) {
			srv := MustServer(t)
			agent, _ := newWorkflowAgent(t, srv)
			srv.Push(commit(agents.CommitSelectionTool, tc.model))
			sel, usage, err := agent.InterpretReply(ctx, r, tc.reply)
			if err != nil {
				t.Fatal(err)
			}
			if sel != tc.want {
				t.Errorf("selection = %+v, want %+v", sel, tc.want)
			}
			if usage.PromptTokens != 100 {
				t.Errorf("usage = %+v", usage)
			}
			req, _ := srv.LastRequest()
			checkRequest(t, req, "gpt-small", agents.CommitSelectionTool)
			contains(t, "task", req.LastUserMessage(), "> "+tc.reply, "A. Support leads: Heads of support", "exactly one of A, B, C")
			lacks(t, "system prompt", req.SystemPrompt(), problemText) // a short prompt for the small model
			label := parameters(t, req)["properties"].(map[string]any)["label"].(map[string]any)
			if fmt.Sprint(label["enum"]) != "[ A B C]" {
				t.Errorf("label enum = %v", label["enum"])
			}
		})
	}

	t.Run("BareLabelWithoutModel", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv)
		for reply, want := range map[string]string{
			"B": "B", " b. ": "B", "Option C": "C", "вариант Б": "B", "Б": "B", "В": "B", "А": "A", "2": "B", "*A*": "A", "Missed SLAs": "B",
		} {
			sel, usage, err := agent.InterpretReply(ctx, r, reply)
			if err != nil || sel != (conversation.Selection{Label: want}) || usage != (conversation.Usage{}) {
				t.Errorf("InterpretReply(%q) = %+v, %+v, %v; want label %s", reply, sel, usage, err, want)
			}
		}
		if n := len(srv.Requests()); n != 0 {
			t.Errorf("%d model calls for bare labels, want 0", n)
		}
	})

	t.Run("UnknownLabel", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv)
		srv.Push(
			commit(agents.CommitSelectionTool, map[string]any{"label": "Z", "instructions": "", "regenerate": false}),
			commit(agents.CommitSelectionTool, map[string]any{"label": "A", "instructions": "", "regenerate": false}),
		)
		sel, _, err := agent.InterpretReply(ctx, r, "the zebra one")
		if err != nil || sel.Label != "A" {
			t.Fatalf("selection = %+v, %v", sel, err)
		}
		req, _ := srv.LastRequest()
		contains(t, "reminder", req.LastUserMessage(), `That was not saved: the label "Z" is not one of the options' labels (A, B, C)`)
	})

	t.Run("NeverCommits", func(t *testing.T) {
		srv := MustServer(t)
		srv.Handle(func(openaitest.Request) openaitest.Response { return text("They chose B.") })
		agent, _ := newWorkflowAgent(t, srv)
		_, _, err := agent.InterpretReply(ctx, r, "the better one")
		if !errors.Is(err, agents.ErrNoCommit) {
			t.Fatalf("err = %v", err)
		}
		contains(t, "user message", conversation.ErrorReply(err), "could not work out what your reply means after 3 tries", "Pick an option with its button")
	})

	t.Run("SmallModelDefault", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv, func(c *agents.WorkflowAgentConfig) { c.SmallModel = "" })
		srv.Push(commit(agents.CommitSelectionTool, map[string]any{"label": "A"}))
		if _, _, err := agent.InterpretReply(ctx, r, "the first"); err != nil {
			t.Fatal(err)
		}
		req, _ := srv.LastRequest()
		if req.Chat.Model != "gpt-main" {
			t.Errorf("model = %q, want the main model", req.Chat.Model)
		}
	})
}

func TestWorkflowWrite(t *testing.T) {
	ctx := context.Background()

	t.Run("FromOption", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv)
		srv.Push(commit(agents.CommitFinalTextTool, map[string]string{"text": "\n**Support leads** at SaaS companies with 20–200 agents.\n"}))
		r := audienceRequest(func(r *conversation.ArtifactRequest) {
			r.Options, r.Selected, r.Instructions = audienceOptions, &audienceOptions[1], "shorter"
		})
		got, usage, err := agent.Write(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if got != "**Support leads** at SaaS companies with 20–200 agents." || usage.CompletionTokens != 20 {
			t.Errorf("Write = %q, %+v", got, usage)
		}
		req, _ := srv.LastRequest()
		checkRequest(t, req, "gpt-main", agents.CommitFinalTextTool)
		contains(t, "system prompt", req.SystemPrompt(), problemText, "in English", "function commit_artifact_final_text")
		contains(t, "task", req.LastUserMessage(), `Write "Audience" in full.`,
			`The team chose option B, "Missed SLAs":`+"\n> Teams that breach their SLAs", "> shorter")
		lacks(t, "task", req.LastUserMessage(), "earlier version")
	})

	t.Run("RussianLocale", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv)
		srv.Push(commit(agents.CommitFinalTextTool, map[string]string{"text": "Руководители поддержки."}))
		def := briefWorkflow()
		r := conversation.ArtifactRequest{
			Workflow: def, Artifact: &def.Artifacts[1], Locale: "ru-RU",
			Approved: map[string]string{"research": "Интервью с 12 руководителями поддержки."},
			Current:  "Старая версия.",
		}
		got, _, err := agent.Write(ctx, r)
		if err != nil || got != "Руководители поддержки." {
			t.Fatalf("Write = %q, %v", got, err)
		}
		req, _ := srv.LastRequest()
		contains(t, "system prompt", req.SystemPrompt(),
			"in Russian (русский), even though these instructions are in English",
			"### Research (`research`)\nИнтервью с 12 руководителями поддержки.",
			"you write it, and people review it")
		contains(t, "task", req.LastUserMessage(), "An earlier version of this artifact", "> Старая версия.")
	})

	t.Run("Locales", func(t *testing.T) {
		for locale, want := range map[string]string{
			"de":          "in German (Deutsch)",
			"pt-BR":       "in Brazilian Portuguese",
			"zh_TW":       "in Traditional Chinese",
			"uk-UA":       "in Ukrainian",
			"tlh":         `in the language of the BCP 47 tag "tlh"`,
			"":            "Write in the language the people in the thread write in",
			"en-US-x-foo": "in English,",
		} {
			srv := MustServer(t)
			agent, _ := newWorkflowAgent(t, srv)
			srv.Push(commit(agents.CommitFinalTextTool, map[string]string{"text": "ok"}))
			if _, _, err := agent.Write(ctx, audienceRequest(func(r *conversation.ArtifactRequest) { r.Locale = locale })); err != nil {
				t.Fatal(err)
			}
			req, _ := srv.LastRequest()
			contains(t, "system prompt for "+locale, req.SystemPrompt(), want)
		}
	})
}

func TestWorkflowRevise(t *testing.T) {
	ctx := context.Background()
	srv := MustServer(t)
	agent, _ := newWorkflowAgent(t, srv)
	srv.Push(commit(agents.CommitFinalTextTool, `{"text": "Support leads at companies with 20-200 agents, who lose 6 hours a week."}`))
	r := audienceRequest(func(r *conversation.ArtifactRequest) {
		r.Current, r.Instructions = "Support leads.", "Add the time they lose."
	})
	got, _, err := agent.Revise(ctx, r)
	if err != nil || got != "Support leads at companies with 20-200 agents, who lose 6 hours a week." {
		t.Fatalf("Revise = %q, %v", got, err)
	}
	req, _ := srv.LastRequest()
	checkRequest(t, req, "gpt-main", agents.CommitFinalTextTool)
	contains(t, "task", req.LastUserMessage(), `Revise "Audience"`, "The current text:\n> Support leads.", "The team's request:\n> Add the time they lose.")

	t.Run("NoCurrentText", func(t *testing.T) {
		before := len(srv.Requests())
		if _, _, err := agent.Revise(ctx, audienceRequest()); err == nil || !strings.Contains(err.Error(), "no current text") {
			t.Errorf("err = %v", err)
		}
		if len(srv.Requests()) != before {
			t.Error("a model call without a text to revise")
		}
	})
}

func TestWorkflowEvaluate(t *testing.T) {
	ctx := context.Background()
	const written = "Support leads at SaaS companies with 20-200 agents."

	t.Run("MissingAndUnknownCriteria", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv)
		srv.Push(commit(agents.CommitEvaluationTool, map[string]any{"results": []map[string]any{
			{"id": "grounded", "pass": "true", "reason": "Follows from\nthe problem."},
			{"id": "tone", "pass": true, "reason": "Not a criterion."},
			{"id": "Specific", "pass": false, "reason": "Which SaaS companies?"},
			{"id": "specific", "pass": true, "reason": "A repeat, ignored."},
		}}))
		got, usage, err := agent.Evaluate(ctx, audienceRequest(), written)
		if err != nil {
			t.Fatal(err)
		}
		want := []workflow.CriterionResult{
			{ID: "specific", Pass: false, Reason: "Which SaaS companies?"},
			{ID: "grounded", Pass: true, Reason: "Follows from the problem."},
			{ID: "concise", Pass: false, Reason: "Not evaluated: the model gave no result for this criterion."},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("results =\n%+v\nwant\n%+v", got, want)
		}
		if usage.PromptTokens != 100 {
			t.Errorf("usage = %+v", usage)
		}
		req, _ := srv.LastRequest()
		checkRequest(t, req, "gpt-main", agents.CommitEvaluationTool) // the main model judges
		contains(t, "task", req.LastUserMessage(), "> "+written, "- concise: At most 80 words", "one result per criterion")
		contains(t, "system prompt", req.SystemPrompt(), problemText)
		lacks(t, "system prompt", req.SystemPrompt(), "## Recent messages", "mid-size companies")
	})

	t.Run("NoKnownCriterion", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv)
		srv.Push(
			commit(agents.CommitEvaluationTool, map[string]any{"results": []map[string]any{{"id": "tone", "pass": true, "reason": "ok"}}}),
			commit(agents.CommitEvaluationTool, `{"results": "[{\"id\": \"concise\", \"pass\": 1, \"reason\": \"Short.\"}]"}`), // encoded twice
		)
		got, _, err := agent.Evaluate(ctx, audienceRequest(), written)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[2] != (workflow.CriterionResult{ID: "concise", Pass: true, Reason: "Short."}) || got[0].Pass {
			t.Errorf("results = %+v", got)
		}
		req, _ := srv.LastRequest()
		contains(t, "reminder", req.LastUserMessage(), "no result names a criterion; give one result for each of specific, grounded, concise")
	})

	t.Run("NoCriteria", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv)
		def := briefWorkflow()
		got, usage, err := agent.Evaluate(ctx, conversation.ArtifactRequest{Workflow: def, Artifact: &def.Artifacts[0]}, written)
		if err != nil || got != nil || usage != (conversation.Usage{}) || len(srv.Requests()) != 0 {
			t.Errorf("Evaluate = %+v, %+v, %v after %d calls; want nothing, without a call", got, usage, err, len(srv.Requests()))
		}
	})
}

func TestWorkflowSummarize(t *testing.T) {
	srv := MustServer(t)
	agent, _ := newWorkflowAgent(t, srv)
	srv.Push(commit(agents.CommitDocsetTool, map[string]string{"summary": "A brief for a triage tool for support leads."}))
	r := conversation.ArtifactRequest{
		Workflow: briefWorkflow(), Locale: "ru",
		Approved: map[string]string{"research": researchText, "problem": problemText, "audience": "Support leads.", "extra": "Not declared."},
	}
	got, _, err := agent.Summarize(context.Background(), r)
	if err != nil || got != "A brief for a triage tool for support leads." {
		t.Fatalf("Summarize = %q, %v", got, err)
	}
	req, _ := srv.LastRequest()
	checkRequest(t, req, "gpt-main", agents.CommitDocsetTool)
	system := req.SystemPrompt()
	contains(t, "system prompt", system, "### Research (`research`)\n"+researchText, "### Problem (`problem`)\n"+problemText,
		"### Audience (`audience`)\nSupport leads.", "### extra (`extra`)", "in Russian")
	lacks(t, "system prompt", system, "## The artifact now")
	if strings.Index(system, "### Research") > strings.Index(system, "### Problem") || strings.Index(system, "### Audience") > strings.Index(system, "### extra") {
		t.Error("approved artifacts are not in the workflow's order, undeclared ones last")
	}
	contains(t, "task", req.LastUserMessage(), `Every artifact of "Product brief" is done`, "Call commit_final_docset")
}

func TestWorkflowErrors(t *testing.T) {
	ctx := context.Background()

	t.Run("ModelError", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv)
		srv.Push(openaitest.Response{Status: 400, ErrorMessage: "bad tool_choice"})
		_, _, err := agent.Write(ctx, audienceRequest())
		var apiErr *openai.APIError
		if errors.Is(err, agents.ErrNoCommit) || !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 {
			t.Errorf("err = %v, want the API error", err)
		}
		if len(srv.Requests()) != 1 {
			t.Errorf("%d requests, want 1 (no reminder after a failed call)", len(srv.Requests()))
		}
	})

	t.Run("Cancelled", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, _, err := agent.Write(cctx, audienceRequest()); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})

	t.Run("BadRequest", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv)
		if _, _, err := agent.Write(ctx, conversation.ArtifactRequest{Workflow: briefWorkflow()}); err == nil {
			t.Error("Write without an artifact: no error")
		}
		if _, _, err := agent.Summarize(ctx, conversation.ArtifactRequest{}); err == nil {
			t.Error("Summarize without a workflow: no error")
		}
	})

	t.Run("ErrNoCommitUserMessage", func(t *testing.T) {
		if !strings.HasPrefix(agents.ErrNoCommit.Error(), "agents: ") || conversation.ErrorReply(agents.ErrNoCommit) == "" {
			t.Errorf("ErrNoCommit = %v", agents.ErrNoCommit)
		}
	})

	t.Run("NewPanics", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("NewWorkflowAgent without a client did not panic")
			}
		}()
		agents.NewWorkflowAgent(agents.WorkflowAgentConfig{Model: "m"})
	})
}
