package agents_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/testkit/logtest"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

func newSummarizer(tb testing.TB, srv *openaitest.Server, edit ...func(*agents.SummarizerConfig)) (*agents.Summarizer, *logtest.Buffer) {
	tb.Helper()
	logger, logs := testLogger()
	cfg := agents.SummarizerConfig{Client: newClient(tb, srv), Model: "gpt-small", Logger: logger}
	for _, f := range edit {
		f(&cfg)
	}
	return agents.NewSummarizer(cfg), logs
}

// foldRequest is a workflow thread's request: a previous summary (written by a
// Summarizer, so with its note) and messages of every role.
func foldRequest() conversation.SummaryRequest {
	return conversation.SummaryRequest{
		Previous: agents.SummaryWorkflowNote + "\n- <@U1> started the product brief.",
		Messages: []conversation.Message{
			{Seq: 1, Role: conversation.RoleContext, UserID: "U2", Text: "We lose 6 hours a week to triage."},
			{Seq: 2, Role: conversation.RoleUser, UserID: "U1", Text: "Focus on mid-size companies.\nBudget is €40k."},
			{Seq: 3, Role: conversation.RoleRevision, UserID: "U1", Text: "REVISION TEXT of the problem artifact"},
			{Seq: 4, Role: conversation.RoleAssistant, Text: "Noted: *mid-size companies*."},
			{Seq: 5, Role: conversation.RoleUser, UserID: "U3", Text: "   "},
			{Seq: 6, Role: conversation.RoleUser, UserID: "U3", Text: "Who decides the launch date?"},
		},
		Workflow: "product-brief",
		Locale:   "ru-RU",
	}
}

func TestSummarizeRequest(t *testing.T) {
	srv := MustServer(t)
	sum, _ := newSummarizer(t, srv)
	srv.Push(openaitest.Response{
		Text:  "\n  - <@U1> начал бриф; бюджет €40k.\n- Открытый вопрос от <@U3>: кто решает дату запуска?  \n",
		Usage: openaitest.Usage{PromptTokens: 300, CompletionTokens: 40},
	})
	got, u, err := sum.Summarize(context.Background(), foldRequest())
	if err != nil {
		t.Fatal(err)
	}
	want := agents.SummaryWorkflowNote + "\n- <@U1> начал бриф; бюджет €40k.\n- Открытый вопрос от <@U3>: кто решает дату запуска?"
	if got != want {
		t.Errorf("summary =\n%s\nwant\n%s", got, want)
	}
	if u != (conversation.Usage{PromptTokens: 300, CompletionTokens: 40}) {
		t.Errorf("usage = %+v", u)
	}

	r, _ := srv.LastRequest()
	if r.Chat.Model != "gpt-small" || len(r.Chat.Tools) != 0 || len(r.Chat.Messages) != 2 {
		t.Errorf("request: model %q, %d tools, %d messages", r.Chat.Model, len(r.Chat.Tools), len(r.Chat.Messages))
	}
	if r.Chat.Messages[0].Role != openai.ChatMessageRoleSystem || r.Chat.Messages[1].Role != openai.ChatMessageRoleUser {
		t.Errorf("roles %q, %q", r.Chat.Messages[0].Role, r.Chat.Messages[1].Role)
	}
	system := r.SystemPrompt()
	for _, s := range []string{
		"Write the summary in Russian (русский)",
		`This thread runs the workflow "product-brief"`,
		"Do not repeat artifact texts or options",
		fmt.Sprintf("At most %d characters", agents.DefaultSummaryChars-utf8.RuneCountInString(agents.SummaryWorkflowNote)-1),
	} {
		if !strings.Contains(system, s) {
			t.Errorf("system prompt lacks %q:\n%s", s, system)
		}
	}
	// The previous summary without the note, then the messages in order with their
	// authors; the revision and the blank message are left out.
	wantUser := `Previous summary:
> - <@U1> started the product brief.

New messages, oldest first:

<@U2> wrote earlier in the thread, before the assistant was asked:
> We lose 6 hours a week to triage.

<@U1> wrote:
> Focus on mid-size companies.
> Budget is €40k.

The assistant replied:
> Noted: *mid-size companies*.

<@U3> wrote:
> Who decides the launch date?

Write the updated summary.`
	if user := r.LastUserMessage(); user != wantUser {
		t.Errorf("user message =\n%s\nwant\n%s", user, wantUser)
	}
}

func TestSummarizeFreeConversation(t *testing.T) {
	srv := MustServer(t)
	sum, _ := newSummarizer(t, srv)
	srv.Push(openaitest.Response{Text: "<@U1> asked about Q3; the answer was 1.2M."})
	r := foldRequest()
	r.Workflow, r.Locale, r.Previous = "", "", ""
	got, _, err := sum.Summarize(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if got != "<@U1> asked about Q3; the answer was 1.2M." {
		t.Errorf("summary = %q", got)
	}
	req, _ := srv.LastRequest()
	system := req.SystemPrompt()
	if strings.Contains(system, "workflow") || !strings.Contains(system, "the language the conversation is mostly written in") {
		t.Errorf("system prompt:\n%s", system)
	}
	if !strings.Contains(system, fmt.Sprintf("At most %d characters", agents.DefaultSummaryChars)) {
		t.Errorf("system prompt lacks the full length bound:\n%s", system)
	}
	if !strings.HasPrefix(req.LastUserMessage(), "Previous summary:\n(none yet)\n") {
		t.Errorf("user message:\n%s", req.LastUserMessage())
	}
}

func TestSummarizeLocales(t *testing.T) {
	srv := MustServer(t)
	sum, _ := newSummarizer(t, srv)
	for locale, want := range map[string]string{
		"en-US": "in English,",
		"de":    "in German (Deutsch)",
		"xx-YY": `the BCP 47 tag "xx-YY"`,
	} {
		srv.Push(openaitest.Response{Text: "Fine."})
		r := foldRequest()
		r.Locale = locale
		if _, _, err := sum.Summarize(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		req, _ := srv.LastRequest()
		if !strings.Contains(req.SystemPrompt(), want) {
			t.Errorf("locale %q: system prompt lacks %q", locale, want)
		}
	}
}

func TestSummarizeEmptyAnswer(t *testing.T) {
	for name, resp := range map[string]openaitest.Response{
		"Blank":       {Text: "  \n "},
		"NoChoices":   {Empty: true},
		"Punctuation": {Text: "...\n---"},
		"OnlyNote":    {Text: agents.SummaryWorkflowNote},
		"EmptyFence":  {Text: "```\n```"},
		"OnlyPreface": {Text: "Here is the updated summary:"},
		"ToolCall":    {ToolCalls: []openaitest.ToolCall{{Name: "summarize"}}},
	} {
		t.Run(name, func(t *testing.T) {
			srv := MustServer(t)
			sum, _ := newSummarizer(t, srv)
			resp.Usage = openaitest.Usage{PromptTokens: 100, CompletionTokens: 1}
			srv.Push(resp)
			r := foldRequest()
			got, u, err := sum.Summarize(context.Background(), r)
			if !errors.Is(err, agents.ErrEmptySummary) {
				t.Fatalf("err = %v, want ErrEmptySummary", err)
			}
			if got != r.Previous {
				t.Errorf("summary = %q, want the previous one kept", got)
			}
			if resp.Empty {
				return // no usage without choices
			}
			if u.PromptTokens != 100 {
				t.Errorf("usage = %+v, want the failed call's", u)
			}
			if len(srv.Requests()) != 1 {
				t.Errorf("%d requests, want 1 (no retry)", len(srv.Requests()))
			}
		})
	}
}

func TestSummarizeModelError(t *testing.T) {
	srv := MustServer(t)
	sum, _ := newSummarizer(t, srv)
	srv.Push(openaitest.Response{Status: 400, ErrorMessage: "context_length_exceeded"})
	r := foldRequest()
	got, _, err := sum.Summarize(context.Background(), r)
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 || errors.Is(err, agents.ErrEmptySummary) {
		t.Fatalf("err = %v", err)
	}
	if got != r.Previous {
		t.Errorf("summary = %q, want the previous one kept", got)
	}

	t.Run("Cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		got, _, err := sum.Summarize(ctx, r)
		if !errors.Is(err, context.Canceled) || got != r.Previous {
			t.Errorf("Summarize = %q, %v", got, err)
		}
	})
}

func TestSummarizeNothingToFold(t *testing.T) {
	srv := MustServer(t)
	sum, _ := newSummarizer(t, srv)
	r := conversation.SummaryRequest{
		Previous: "- kept as is",
		Messages: []conversation.Message{
			{Role: conversation.RoleRevision, Text: "artifact text"},
			{Role: conversation.RoleUser, UserID: "U1", Text: " \n"},
		},
		Workflow: "proposal",
	}
	got, u, err := sum.Summarize(context.Background(), r)
	if err != nil || got != r.Previous || u != (conversation.Usage{}) {
		t.Errorf("Summarize = %q, %+v, %v", got, u, err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model calls, want none", n)
	}
}

func TestSummarizeMaxChars(t *testing.T) {
	var long strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&long, "Fact number %d was decided by <@U%d>. ", i, i)
	}

	t.Run("SentenceBoundary", func(t *testing.T) {
		srv := MustServer(t)
		sum, _ := newSummarizer(t, srv, func(c *agents.SummarizerConfig) { c.MaxChars = 300 })
		srv.Push(openaitest.Response{Text: long.String()})
		got, _, err := sum.Summarize(context.Background(), foldRequest())
		if err != nil {
			t.Fatal(err)
		}
		if n := utf8.RuneCountInString(got); n > 300 || n < 200 {
			t.Errorf("summary has %d characters, want at most 300 (and not much less):\n%s", n, got)
		}
		body, ok := strings.CutPrefix(got, agents.SummaryWorkflowNote+"\n")
		if !ok || !strings.HasPrefix(body, "Fact number 1 was decided by <@U1>.") || !strings.HasSuffix(body, ">.") {
			t.Errorf("summary not cut after a whole sentence:\n%s", got)
		}
		req, _ := srv.LastRequest()
		if want := fmt.Sprintf("At most %d characters", 300-utf8.RuneCountInString(agents.SummaryWorkflowNote)-1); !strings.Contains(req.SystemPrompt(), want) {
			t.Errorf("system prompt lacks %q", want)
		}
	})

	t.Run("Lines", func(t *testing.T) {
		srv := MustServer(t)
		sum, _ := newSummarizer(t, srv, func(c *agents.SummarizerConfig) { c.MaxChars = 250 })
		var list strings.Builder
		for i := 1; i <= 30; i++ {
			fmt.Fprintf(&list, "- item %d without a full stop\n", i)
		}
		srv.Push(openaitest.Response{Text: list.String()})
		r := foldRequest()
		r.Workflow = ""
		got, _, err := sum.Summarize(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		if n := utf8.RuneCountInString(got); n > 250 || !strings.HasSuffix(got, "full stop") {
			t.Errorf("summary (%d characters) not cut at a line end:\n%s", n, got)
		}
	})

	t.Run("NoBoundary", func(t *testing.T) {
		srv := MustServer(t)
		sum, _ := newSummarizer(t, srv, func(c *agents.SummarizerConfig) { c.MaxChars = 200 })
		srv.Push(openaitest.Response{Text: strings.Repeat("очень длинное резюме без точек ", 30)})
		r := foldRequest()
		r.Workflow = ""
		got, _, err := sum.Summarize(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		if n := utf8.RuneCountInString(got); n > 200 || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") || strings.HasSuffix(got, " …") {
			t.Errorf("summary (%d characters) not cut at a word:\n%s", n, got)
		}
	})

	t.Run("Minimum", func(t *testing.T) {
		srv := MustServer(t)
		sum, _ := newSummarizer(t, srv, func(c *agents.SummarizerConfig) { c.MaxChars = 10 })
		srv.Push(openaitest.Response{Text: long.String()})
		got, _, err := sum.Summarize(context.Background(), foldRequest())
		if err != nil {
			t.Fatal(err)
		}
		if n := utf8.RuneCountInString(got); n > agents.MinSummaryChars || n < agents.MinSummaryChars/2 {
			t.Errorf("summary has %d characters, want MinSummaryChars (%d) at most", n, agents.MinSummaryChars)
		}
	})
}

// A cut-off answer (finish_reason "length") is kept without its unfinished sentence
// and marked; the mark is not shown to the model when the summary is folded again.
func TestSummarizeTruncated(t *testing.T) {
	srv := MustServer(t)
	sum, logs := newSummarizer(t, srv)
	srv.Push(openaitest.Response{Text: "- <@U1> set the budget to €40k.\n- <@U3> asked who decides the launch da", FinishReason: "length"})
	r := foldRequest()
	got, _, err := sum.Summarize(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	want := agents.SummaryWorkflowNote + "\n- <@U1> set the budget to €40k.\n" + agents.SummaryCutNote
	if got != want {
		t.Errorf("summary =\n%s\nwant\n%s", got, want)
	}
	if !strings.Contains(logs.String(), "cut off") {
		t.Errorf("no warning logged:\n%s", logs)
	}

	srv.Push(openaitest.Response{Text: "All good."})
	r.Previous = got
	if _, _, err := sum.Summarize(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	req, _ := srv.LastRequest()
	user := req.LastUserMessage()
	if strings.Contains(user, agents.SummaryCutNote) || strings.Contains(user, agents.SummaryWorkflowNote) ||
		!strings.HasPrefix(user, "Previous summary:\n> - <@U1> set the budget to €40k.\n\n") {
		t.Errorf("previous summary sent as:\n%s", user)
	}

	t.Run("ContentFilter", func(t *testing.T) {
		srv.Push(openaitest.Response{Text: "Budget agreed. Then", FinishReason: "content_filter"})
		r.Workflow = ""
		got, _, err := sum.Summarize(context.Background(), r)
		if want := "Budget agreed.\n" + agents.SummaryCutNote; err != nil || got != want {
			t.Errorf("Summarize = %q, %v; want %q", got, err, want)
		}
	})

	t.Run("NoCompleteSentence", func(t *testing.T) {
		srv.Push(openaitest.Response{Text: "<@U1> set the budget to", FinishReason: "length"})
		r.Workflow = ""
		got, _, err := sum.Summarize(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		if want := "<@U1> set the budget to…\n" + agents.SummaryCutNote; got != want {
			t.Errorf("summary = %q, want %q", got, want)
		}
	})
}

func TestSummarizeCleansAnswer(t *testing.T) {
	for name, text := range map[string]string{
		"Fence":    "```text\n- Budget €40k.\n- Launch date open.\n```",
		"Preface":  "**Here is the updated summary:**\n- Budget €40k.\n- Launch date open.",
		"EchoNote": agents.SummaryWorkflowNote + "\n\n- Budget €40k.\n- Launch date open.",
	} {
		t.Run(name, func(t *testing.T) {
			srv := MustServer(t)
			sum, _ := newSummarizer(t, srv)
			srv.Push(openaitest.Response{Text: text})
			got, _, err := sum.Summarize(context.Background(), foldRequest())
			if err != nil {
				t.Fatal(err)
			}
			if want := agents.SummaryWorkflowNote + "\n- Budget €40k.\n- Launch date open."; got != want {
				t.Errorf("summary =\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestSummarizeLongMessage(t *testing.T) {
	srv := MustServer(t)
	sum, _ := newSummarizer(t, srv)
	srv.Push(openaitest.Response{Text: "A long paste."})
	r := conversation.SummaryRequest{Messages: []conversation.Message{
		{Role: conversation.RoleUser, UserID: "U1", Text: strings.Repeat("paste ", 10000)},
	}}
	if _, _, err := sum.Summarize(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	req, _ := srv.LastRequest()
	if user := req.LastUserMessage(); len(user) > 5000 || !strings.Contains(user, "[truncated]") {
		t.Errorf("user message has %d bytes", len(user))
	}
}

func TestNewSummarizerPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewSummarizer without a Client did not panic")
		}
	}()
	agents.NewSummarizer(agents.SummarizerConfig{Model: "m"})
}
